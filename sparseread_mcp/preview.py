"""The Object Preview: a bounded first look at an artifact, and the gate's route for it."""

from __future__ import annotations

from .artifacts import magic_kind
from .gate.route import Route
from .models import ArtifactInfo, EvidenceItem, OutlineItem, Preview
from .readers.base import OutlineEntry, ParsedArtifact
from .roots import ResolvedPath
from .tokens import TokenCounter, stamp_tokens
from .wire import wire_json

_SAMPLE_CHARS = 240
_SAMPLES = 3


def build_preview(
    parsed: ParsedArtifact,
    *,
    full_view_tokens: int,
    route: Route,
    counter: TokenCounter,
    budget_tokens: int,
    configurations: list[str] | None = None,
    line_range: tuple[int, int] | None = None,
) -> Preview:
    """Outline (levels dropped from the deepest until it fits), samples and signals within the budget."""
    artifact = parsed.artifact
    base = Preview(
        artifact=ArtifactInfo(
            path=artifact.path, type=parsed.type, fingerprint=artifact.fingerprint, size_bytes=artifact.size_bytes
        ),
        full_view_chars=len(artifact.text),
        full_view_tokens=full_view_tokens,
        outline=[],
        samples=[] if route.native else _samples(parsed),
        signals=_signals(parsed),
        route="native" if route.native else "sparse",
        reason=route.reason,
        content=artifact.text if route.native else None,
        configurations=configurations or [],
        tokenizer=counter.name,
    )
    used = counter.count(wire_json(base))
    if base.content is not None and used + 32 > budget_tokens:
        base = base.model_copy(
            update={
                "content": None,
                "reason": f"{route.reason}; the content does not fit budget_tokens="
                f"{budget_tokens}: read it with sro_read(view='full')",
            }
        )
        used = counter.count(wire_json(base))
    extras: tuple[dict[str, object], ...] = ({"samples": []}, {"configurations": []}, {"signals": {}})
    for optional in extras:
        if used + 32 <= budget_tokens:
            break
        base = base.model_copy(update=optional)  # a tight budget keeps the card, drops the extras first
        used = counter.count(wire_json(base))
    if base.content is not None:
        # The whole content is here: signals and other ways to read it would only repeat what it shows.
        base = base.model_copy(update={"configurations": [], "signals": {}})
        used = counter.count(wire_json(base))
    room = budget_tokens - used - 32
    entries = list(parsed.outline)
    if line_range is not None:
        entries = [e for e in entries if line_range[0] <= e.first_line <= line_range[1]]
    levels = sorted({e.level for e in entries}, reverse=True)
    complete = True
    while entries and _outline_tokens(entries, counter) > room:
        complete = False
        if len(levels) > 1:
            deepest = levels.pop(0)
            entries = [e for e in entries if e.level < deepest]
        else:
            entries = entries[: max(0, len(entries) * 2 // 3 - 1)]
    preview = base.model_copy(update={"outline": [_outline_item(e) for e in entries], "outline_complete": complete})
    return stamp_tokens(preview, counter)


def _outline_item(entry: OutlineEntry) -> OutlineItem:
    return OutlineItem(
        title=entry.title,
        anchor=entry.anchor,
        lines=(entry.first_line, entry.last_line),
        level=entry.level,
        signature=entry.signature,
    )


def _outline_tokens(entries: list[OutlineEntry], counter: TokenCounter) -> int:
    return sum(counter.count(wire_json(_outline_item(e))) + 1 for e in entries)


def _samples(parsed: ParsedArtifact) -> list[EvidenceItem]:
    """The opening of the first few body passages, each cut at a line or space so it stays verbatim."""
    from .evidence import Candidate, item_for

    out: list[EvidenceItem] = []
    body = [p for p in parsed.passages if p.kind != "heading" and len(parsed.text_of(p).strip()) > 40]
    step = max(1, len(body) // _SAMPLES)
    for passage in body[::step][:_SAMPLES]:
        lines = parsed.lines
        start = passage.start
        line = lines.line_of(start)
        end = passage.end if passage.end - start <= _SAMPLE_CHARS else min(passage.end, lines.line_end(line))
        if end - start > _SAMPLE_CHARS:
            space = parsed.artifact.text.rfind(" ", start + 1, start + _SAMPLE_CHARS)
            end = space if space > start else start + _SAMPLE_CHARS
        if end > start:
            out.append(item_for(parsed, Candidate(start=start, end=end, score=0.0)))
    return out


def _signals(parsed: ParsedArtifact) -> dict[str, int | str | None]:
    lines = parsed.lines
    longest = max((lines.line_end(n) - lines.starts[n - 1] for n in range(1, lines.line_count + 1)), default=0)
    return {
        **parsed.signals,
        "lines": lines.line_count,
        "pages": lines.page_count,
        "passages": len(parsed.passages),
        "headings": sum(1 for p in parsed.passages if p.kind == "heading") or len(parsed.outline),
        "longest_line_chars": longest,
    }


def binary_card(location: ResolvedPath, reason: str, counter: TokenCounter) -> Preview:
    """What can be said of a binary file without reading it as text: its card (size, hash and magic bytes
    from one descriptor opened beneath the root)."""
    found = location.digest(head=16)
    card = Preview(
        artifact=ArtifactInfo(
            path=location.relative, type="binary", fingerprint=found.fingerprint, size_bytes=found.size
        ),
        full_view_chars=0,
        full_view_tokens=0,
        outline=[],
        samples=[],
        signals={"format": magic_kind(found.head)},
        route="sparse",
        reason=reason,
        tokenizer=counter.name,
    )
    return stamp_tokens(card, counter)
