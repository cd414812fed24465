"""Files over the parse limit: their card, and line ranges read by streaming, never a full parse."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from dataclasses import dataclass

from ..deadline import checkpoint
from ..errors import AnchorError, BudgetTooSmall
from ..gate.respond import SLACK_TOKENS, evidence_pack, fit_pack, pointers_note, shrink_pack
from ..models import (
    ArtifactInfo,
    ArtifactRef,
    EpisodeRef,
    EvidenceItem,
    EvidencePack,
    Exposure,
    Gate,
    Preview,
)
from ..tokens import TokenCounter, stamp_tokens
from ..wire import wire_json
from . import safeopen
from .anchors import Anchor, Target, format_lines, format_pointer
from .artifacts import content_rev
from .roots import ResolvedPath

_BLOCK = 1 << 20
#: A line range holding more than this cannot fit any budget: refused before it fills memory.
_MAX_RANGE_BYTES = 4 << 20


@dataclass(frozen=True, slots=True, kw_only=True)
class StreamedRange:
    """Lines of a file too large to parse, with the fingerprint and size of the bytes they came from."""

    lines: list[str]
    fingerprint: str
    size: int
    sampled: bool = False


def large_card(location: ResolvedPath, found: safeopen.FileDigest, limit: int, counter: TokenCounter) -> Preview:
    """The card of a file over the parse limit, from its digest (taken in a worker)."""
    size = found.size
    sampled = (
        "; its fingerprint is of a sample (size, time, first and last MiB): the file is too large to hash whole"
        if found.sampled
        else ""
    )
    card = Preview(
        artifact=ArtifactInfo(path=location.relative, type="large", fingerprint=found.fingerprint, size_bytes=size),
        full_view_chars=size,
        full_view_tokens=size // 4,
        outline=[],
        samples=[],
        signals={"bytes": size, "parse_limit_bytes": limit},
        route="sparse",
        reason=f"{size} bytes is over the parse limit ({limit}): read line ranges (path#L1-L200); "
        f"outline and search need a smaller file or a higher SPARSEREAD_MAX_PARSE_BYTES{sampled}",
        tokenizer=counter.name,
    )
    return stamp_tokens(card, counter)


def read_range(
    location: ResolvedPath,
    target: Target,
    budget: int,
    counter: TokenCounter,
    *,
    stream: Callable[[ResolvedPath, int, int], StreamedRange],
) -> EvidencePack:
    """The lines an anchor names, streamed from the file by `stream` (in a worker); pointers carry the
    whole file's hash (a sampled one past FULL_HASH_BYTES)."""
    anchor = target.anchor
    if anchor is None or anchor.kind != "lines" or anchor.first_line is None:
        raise AnchorError(
            f"{location.relative} is over the parse limit: only line ranges can be read (e.g. "
            f"{location.relative}#L1-L200)"
        )
    first, last = anchor.first_line, anchor.last_line or anchor.first_line
    streamed = stream(location, first, last)
    lines, fingerprint, size = streamed.lines, streamed.fingerprint, streamed.size
    if len(lines) < last - first + 1:
        raise AnchorError(f"lines L{first}-L{last} run past the end of {location.relative}")
    text = "\n".join(lines)
    rev = content_rev(fingerprint)
    item = EvidenceItem(
        pointer=format_pointer(location.relative, rev, Anchor(kind="lines", first_line=first, last_line=last)),
        anchor=format_lines(first, last),
        lines=(first, last),
        page=None,
        text=text,
        score=1.0,
    )
    payload = len(wire_json(item))
    pack = evidence_pack(
        episode=EpisodeRef(
            id="range",
            artifact=ArtifactRef(path=location.relative, type="large", fingerprint=rev),
            objective=f"lines {first}-{last}",
        ),
        action="focus",
        view="lines",
        items=[item],
        scope="streamed the named lines only (the file is over the parse limit)",
        exposure=Exposure(
            payload_chars=payload,
            payload_tokens=counter.count(text),
            episode_chars=payload,
            full_view_chars=size,
            full_view_tokens=0,
            remaining_chars=0,
        ),
        gate=Gate(decision="sparse", reason="a line range of a file too large to parse"),
        tokenizer=counter.name,
    )
    fitted = shrink_pack(pack, budget, counter)
    if fitted.tokens <= budget:
        return fitted
    # An explicit range over the budget: a small structural answer, sub-ranges that each fit, not the text.
    frame = shrink_pack(pack.model_copy(update={"items": []}), budget, counter).tokens
    per_line = max(1, fitted.tokens - frame) / (last - first + 1)
    step = max(1, int(max(0, budget - frame - SLACK_TOKENS) / per_line) // 2)
    subs = [format_lines(a, min(last, a + step - 1)) for a in range(first, last + 1, step)]
    shown = [f"{location.relative}#{anchor}" for anchor in subs]
    update = {
        "items": [],
        "view": "pointers",
        "exposure": pack.exposure.model_copy(update={"payload_chars": 0, "payload_tokens": 0, "episode_chars": 0}),
        "left_out": pointers_note(shown[:3], budget, total=len(shown), what=f"sub-range(s) of about {step} lines"),
    }
    return fit_pack(pack.model_copy(update=update), budget, counter)


def stream_range(location: ResolvedPath, first: int, last: int) -> StreamedRange:
    """Lines `first`..`last`, the whole file's sha256 and its size, all from one pass over one descriptor
    opened beneath the root: the pointer's hash always describes the bytes the lines came from. Past
    FULL_HASH_BYTES the pass stops after the range and the fingerprint is the sampled one."""
    digest = hashlib.sha256()
    size = 0
    line = 1  # the number of the line the next byte belongs to
    current: list[bytes] = []
    lines: list[bytes] = []
    kept = 0
    with safeopen.opened(location.root, location.relative, label=location.relative) as (descriptor, info):
        safeopen.require_regular(info, location.relative)
        whole = info.st_size <= safeopen.FULL_HASH_BYTES
        while block := os.read(descriptor, _BLOCK):
            checkpoint()
            if whole:
                digest.update(block)
            size += len(block)
            if line > last:
                if not whole:
                    break
                continue  # past the range: only the hash still needs the bytes
            ends = block.count(b"\n")
            if line + ends < first:
                line += ends  # before the range: count lines, keep nothing
                continue
            pieces = block.split(b"\n")
            for number, piece in enumerate(pieces):
                if first <= line <= last:
                    current.append(piece)
                    kept += len(piece)
                    if kept > _MAX_RANGE_BYTES:
                        raise BudgetTooSmall(_too_wide(location.relative, first, last, line))
                if number < len(pieces) - 1:  # a newline ends this line
                    if current:
                        lines.append(b"".join(current))
                        current = []
                    line += 1
        if not whole:
            fingerprint, size = safeopen.sampled_fingerprint(descriptor, info), info.st_size
        else:
            fingerprint = digest.hexdigest()
    if any(current):
        lines.append(b"".join(current))  # the last line, with no newline after it
    decoded = [piece.decode("utf-8", "replace") for piece in lines]
    return StreamedRange(lines=decoded, fingerprint=fingerprint, size=size, sampled=not whole)


def _too_wide(relative: str, first: int, last: int, overflowing: int) -> str:
    """What to read instead of a range past the streaming limit: the part before the line that overflowed
    it, then the rest; a single line that large cannot be read by lines at all."""
    said = f"lines L{first}-L{last} of {relative} hold over {_MAX_RANGE_BYTES} bytes"
    if overflowing == first:
        return (
            f"{said} in line {first} alone, which cannot be read by lines: raise SPARSEREAD_MAX_PARSE_BYTES "
            "above the file's size so it is parsed and read in passages, or split the file"
        )
    return (
        f"{said}: read {relative}#{format_lines(first, overflowing - 1)} first, then from "
        f"{relative}#{format_lines(overflowing, last)} on in smaller steps"
    )
