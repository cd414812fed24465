"""Evidence items: verbatim spans of an artifact with their anchors and pointers."""

from __future__ import annotations

from dataclasses import dataclass

from .files.anchors import Anchor, format_pointer
from .models import EvidenceItem
from .readers.base import ParsedArtifact


@dataclass(frozen=True, slots=True, kw_only=True)
class Candidate:
    """A span proposed for delivery, before the budget and the gate have their say."""

    start: int
    end: int
    score: float
    slots: tuple[str, ...] = ()
    passage: int | None = None


def pointer_for(parsed: ParsedArtifact, start: int, end: int) -> str:
    artifact = parsed.artifact
    return format_pointer(artifact.path, artifact.rev, parsed.anchor_for(start, end))


def item_for(parsed: ParsedArtifact, candidate: Candidate) -> EvidenceItem:
    anchor = parsed.anchor_for(candidate.start, candidate.end)
    return EvidenceItem(
        pointer=format_pointer(parsed.artifact.path, parsed.artifact.rev, anchor),
        anchor=anchor.format(),
        lines=_lines(parsed, candidate, anchor),
        page=parsed.lines.page_of(candidate.start),
        text=parsed.artifact.text[candidate.start : candidate.end],
        score=round(candidate.score, 4),
        slots=list(candidate.slots),
        source_lines=_source_lines(parsed, candidate),
    )


def passage_candidate(parsed: ParsedArtifact, index: int, score: float, slots: tuple[str, ...] = ()) -> Candidate:
    passage = parsed.passages[index]
    return Candidate(start=passage.start, end=passage.end, score=score, slots=slots, passage=index)


def _lines(parsed: ParsedArtifact, candidate: Candidate, anchor: Anchor) -> tuple[int, int]:
    """The anchor's own lines (page-relative for pages), else the lines the span covers (rows, keys)."""
    if anchor.first_line is not None:
        return anchor.first_line, anchor.last_line or anchor.first_line
    first = parsed.lines.line_of(candidate.start)
    last = parsed.lines.line_of(max(candidate.start, candidate.end - 1)) if candidate.end > candidate.start else first
    return first, last


def _source_lines(parsed: ParsedArtifact, candidate: Candidate) -> tuple[int, int] | None:
    if parsed.source_lines is None:
        return None
    first = parsed.lines.line_of(candidate.start)
    last = parsed.lines.line_of(max(candidate.start, candidate.end - 1))
    mapped = parsed.source_lines[first - 1 : last]
    return (min(mapped), max(mapped)) if mapped else None


@dataclass(frozen=True, slots=True, kw_only=True)
class Hit:
    """An item found in one file of a directory, with its span and the file's path."""

    item: EvidenceItem
    start: int
    end: int
    path: str
