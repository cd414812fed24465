"""Files over the parse limit: their card, and line ranges read by streaming, never a full parse."""

from __future__ import annotations

from itertools import islice

from .anchors import Anchor, Target, format_lines, format_pointer
from .artifacts import content_rev, fingerprint_of
from .errors import AnchorError, BudgetTooSmall
from .models import (
    ArtifactInfo,
    ArtifactRef,
    EpisodeRef,
    EvidenceItem,
    EvidencePack,
    Exposure,
    Gate,
    Preview,
)
from .roots import ResolvedPath
from .tokens import TokenCounter, stamp_tokens


def large_card(location: ResolvedPath, limit: int, counter: TokenCounter) -> Preview:
    size = location.absolute.stat().st_size
    card = Preview(
        artifact=ArtifactInfo(
            path=location.relative, type="large", fingerprint=fingerprint_of(location), size_bytes=size
        ),
        full_view_chars=size,
        full_view_tokens=size // 4,
        outline=[],
        samples=[],
        signals={"bytes": size, "parse_limit_bytes": limit},
        route="sparse",
        reason=f"{size} bytes is over the parse limit ({limit}): read line ranges (path#L1-L200); "
        "outline and search need a smaller file or a higher SPARSEREAD_MAX_PARSE_BYTES",
        tokenizer=counter.name,
    )
    return stamp_tokens(card, counter)


def read_range(location: ResolvedPath, target: Target, budget: int, counter: TokenCounter) -> EvidencePack:
    """The lines an anchor names, streamed from the file; pointers carry the whole file's hash."""
    anchor = target.anchor
    if anchor is None or anchor.kind != "lines" or anchor.first_line is None:
        raise AnchorError(
            f"{location.relative} is over the parse limit: only line ranges can be read (e.g. "
            f"{location.relative}#L1-L200)"
        )
    first, last = anchor.first_line, anchor.last_line or anchor.first_line
    with location.absolute.open("r", encoding="utf-8", errors="replace", newline="") as handle:
        lines = [line.rstrip("\n") for line in islice(handle, first - 1, last)]
    if len(lines) < last - first + 1:
        raise AnchorError(f"lines L{first}-L{last} run past the end of {location.relative}")
    text = "\n".join(lines)
    rev = content_rev(fingerprint_of(location))
    item = EvidenceItem(
        pointer=format_pointer(location.relative, rev, Anchor(kind="lines", first_line=first, last_line=last)),
        anchor=format_lines(first, last),
        lines=(first, last),
        page=None,
        text=text,
        score=1.0,
    )
    payload = len(item.model_dump_json(exclude_none=True))
    pack = EvidencePack(
        episode=EpisodeRef(
            id="range",
            artifact=ArtifactRef(path=location.relative, type="large", fingerprint=rev),
            objective=f"lines {first}-{last}",
        ),
        action="focus",
        view="lines",
        items=[item],
        coverage=[],
        unresolved=[],
        scope="streamed the named lines only (the file is over the parse limit)",
        exposure=Exposure(
            payload_chars=payload,
            payload_tokens=counter.count(text),
            episode_chars=payload,
            full_view_chars=location.absolute.stat().st_size,
            full_view_tokens=0,
            remaining_chars=0,
        ),
        gate=Gate(decision="sparse", reason="a line range of a file too large to parse"),
        tokenizer=counter.name,
    )
    pack = stamp_tokens(pack, counter)
    if pack.tokens > budget:
        raise BudgetTooSmall(
            f"lines L{first}-L{last} need {pack.tokens} tokens, over budget_tokens={budget}: read a narrower range"
        )
    return pack
