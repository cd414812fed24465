"""The Object Preview: a bounded first look at an artifact, and the gate's route for it."""

from __future__ import annotations

from .files.artifacts import magic_kind
from .files.roots import ResolvedPath
from .gate.respond import shrink_preview
from .gate.route import Route
from .models import ArtifactInfo, EvidenceItem, OutlineItem, Preview
from .readers.base import OutlineEntry, ParsedArtifact
from .tokens import TokenCounter, stamp_tokens

_SAMPLE_CHARS = 240
#: Samples in a preview: the intent's best matches, else passages spread through the file.
PREVIEW_SAMPLES = 3


def build_preview(
    parsed: ParsedArtifact,
    *,
    full_view_tokens: int,
    route: Route,
    counter: TokenCounter,
    budget_tokens: int | None,
    configurations: list[str] | None = None,
    line_range: tuple[int, int] | None = None,
    matches: list[int] | None = None,
) -> Preview:
    """Outline, samples and signals; shed toward `budget_tokens` (gate/respond.py) when one is given, else
    whole (a pack that carries it fits it to what the pack leaves). The samples open the passages
    `matches` (indexes, best first: what the preview's intent located), else passages spread through it."""
    artifact = parsed.artifact
    entries = list(parsed.outline)
    if line_range is not None:
        entries = [e for e in entries if line_range[0] <= e.first_line <= line_range[1]]
    native = route.native
    preview = Preview(
        artifact=ArtifactInfo(
            path=artifact.path, type=parsed.type, fingerprint=artifact.fingerprint, size_bytes=artifact.size_bytes
        ),
        full_view_chars=len(artifact.text),
        full_view_tokens=full_view_tokens,
        outline=[_outline_item(e) for e in entries],
        samples=[] if native else _samples(parsed, matches),
        # The whole content is here: signals and other ways to read it would only repeat what it shows.
        signals={} if native else _signals(parsed),
        route="native" if native else "sparse",
        reason=route.reason,
        content=artifact.text if native else None,
        configurations=[] if native else configurations or [],
        tokenizer=counter.name,
    )
    if budget_tokens is None:
        return stamp_tokens(preview, counter)
    fitted = shrink_preview(preview, budget_tokens, counter)
    if fitted.content is None and native:
        # The content did not fit: what it would have made redundant is worth its tokens again.
        again = preview.model_copy(
            update={
                "content": None,
                "reason": fitted.reason,
                "signals": _signals(parsed),
                "configurations": configurations or [],
            }
        )
        fitted = shrink_preview(again, budget_tokens, counter)
    return fitted


def _outline_item(entry: OutlineEntry) -> OutlineItem:
    return OutlineItem(
        title=entry.title,
        anchor=entry.anchor,
        lines=(entry.first_line, entry.last_line),
        level=entry.level,
        signature=entry.signature,
    )


def _samples(parsed: ParsedArtifact, matches: list[int] | None) -> list[EvidenceItem]:
    """The opening of a few passages, each cut at a line or space so it stays verbatim: the matches given,
    else body passages spread through the file."""
    from .evidence import Candidate, item_for

    out: list[EvidenceItem] = []
    if matches:
        chosen = [parsed.passages[i] for i in matches[:PREVIEW_SAMPLES]]
    else:
        body = [p for p in parsed.passages if p.kind != "heading" and len(parsed.text_of(p).strip()) > 40]
        chosen = body[:: max(1, len(body) // PREVIEW_SAMPLES)][:PREVIEW_SAMPLES]
    for passage in chosen:
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
