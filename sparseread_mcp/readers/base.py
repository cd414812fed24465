"""The one contract between the control plane and every reader."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Protocol

from ..errors import AnchorError
from ..files.anchors import Anchor
from ..files.artifacts import Artifact
from ..files.lines import LineIndex
from ..models import OpResult
from ..select.configuration import Configuration
from ..vocabulary import Action

PassageKind = Literal["heading", "paragraph", "list", "table", "code", "symbol", "sentences", "lines"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Passage:
    """A unit of evidence: a verbatim span [start, end) of the artifact text."""

    index: int
    start: int
    end: int
    kind: PassageKind
    section: str = ""
    #: Extra words indexed with weight but never shown (a symbol's name, signature and docstring).
    keywords: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class OutlineEntry:
    title: str
    anchor: str
    first_line: int
    last_line: int
    level: int
    signature: str | None = None


class QueryRunner(Protocol):
    def run(self, query: str) -> OpResult: ...

    def project(self, destination: Path, *, quota_bytes: int) -> OpResult:
        """Write a calculation-ready TSV of the whole table to `destination`, within the disk quota that
        every projection in its folder shares."""
        ...


class AnchorScheme(Protocol):
    """How a reader names spans of its text: lines by default, pages, rows or key paths."""

    #: Its anchors name records (a row, a key path): evidence is the record, never a stretch of a page.
    records: bool

    def anchor_for(self, parsed: ParsedArtifact, start: int, end: int) -> Anchor: ...

    def span_of(self, parsed: ParsedArtifact, anchor: Anchor) -> tuple[int, int]: ...


class LineAnchors:
    """Lines and columns (`L12-L18`, `L5:C1-C80`), pages of form-feed text, and sections by heading."""

    records: bool = False

    def anchor_for(self, parsed: ParsedArtifact, start: int, end: int) -> Anchor:
        return parsed.lines.anchor_for(start, end)

    def span_of(self, parsed: ParsedArtifact, anchor: Anchor) -> tuple[int, int]:
        if anchor.kind == "section":
            span = parsed.section_span(anchor.name or "")
            if span is None:
                titles = ", ".join(repr(e.title) for e in parsed.outline[:12]) or "none (no headings)"
                raise AnchorError(
                    f"no section named {anchor.name!r} in {parsed.artifact.path}; outline: {titles}; "
                    "or use a line anchor like #L10-L40"
                )
            return span
        if anchor.kind in ("row", "keypath"):
            raise AnchorError(
                f"anchor {anchor.format()!r} needs a table or JSON reader; {parsed.artifact.path} is "
                f"{parsed.type}: use a line anchor like #L10-L40"
            )
        return parsed.lines.span_of(anchor)


class PageAnchors(LineAnchors):
    """Paged documents (PDF): every anchor names its page, lines count from the top of that page."""

    def anchor_for(self, parsed: ParsedArtifact, start: int, end: int) -> Anchor:
        return parsed.lines.page_anchor_for(start, end)


@dataclass(slots=True, kw_only=True)
class ParsedArtifact:
    """A parsed artifact, built once per fingerprint. `locator_state` caches per-method indexes."""

    artifact: Artifact
    type: str
    lines: LineIndex
    passages: tuple[Passage, ...]
    outline: tuple[OutlineEntry, ...]
    locator_state: dict[str, object] = field(default_factory=dict)
    #: A lossy compact rendering (code without comments and blank lines); never the faithful full view.
    compact_text: str | None = None
    anchors: AnchorScheme = field(default_factory=LineAnchors)
    #: Paged formats bound how many pages one response may span.
    max_pages_per_read: int | None = None
    #: Tables answer `intent.query` (one read-only SELECT) exactly, over every row.
    queries: QueryRunner | None = None
    #: Reader-specific signals for the preview (log levels, time range, ...).
    signals: dict[str, int | str | None] = field(default_factory=dict)
    #: Passages of context added on each side of a focus hit (log records read best in context).
    focus_context: int = 0
    #: For extracted text (HTML): the source file's line for each extracted line (1-based, by index).
    source_lines: tuple[int, ...] | None = None

    def text_of(self, passage: Passage) -> str:
        return self.artifact.text[passage.start : passage.end]

    def anchor_of(self, passage: Passage) -> Anchor:
        return self.anchors.anchor_for(self, passage.start, passage.end)

    def anchor_for(self, start: int, end: int) -> Anchor:
        return self.anchors.anchor_for(self, start, end)

    def span_of(self, anchor: Anchor) -> tuple[int, int]:
        """The character span an anchor names; raises AnchorError with the valid choices."""
        return self.anchors.span_of(self, anchor)

    def page_of(self, passage: Passage) -> int | None:
        return self.lines.page_of(passage.start)

    @property
    def prose_pages(self) -> bool:
        """Pages of running text (a PDF, text with form feeds), where a page is a unit of evidence; not a
        workbook's sheets, a table's rows, structured records or log records, whose anchors must stay."""
        return (
            bool(self.lines.page_count) and self.queries is None and not self.focus_context and not self.anchors.records
        )

    def section_span(self, name: str) -> tuple[int, int] | None:
        """Character span of the outline entry whose title best matches `name`, if any."""
        entry = find_outline_entry(self.outline, name)
        if entry is None:
            return None
        return self.lines.lines_span(entry.first_line, entry.last_line)


class Reader(Protocol):
    """A reader handles artifact types, never scenarios; it is cheap to ask `accepts`."""

    name: str
    types: frozenset[str]
    actions: frozenset[Action]
    #: True when the reader extracts its own text from the bytes (PDF, workbooks).
    binary: bool
    #: The configurations (method, exposure form) this reader offers; a preview lists them.
    configurations: tuple[Configuration, ...]

    def accepts(self, path: Path) -> bool: ...

    def parse(self, artifact: Artifact, *, passage_chars: int) -> ParsedArtifact: ...


def find_outline_entry(outline: tuple[OutlineEntry, ...], name: str) -> OutlineEntry | None:
    """Exact title, then slug, then a path like `Parent/Child`, then a unique prefix."""
    wanted = name.strip().casefold()
    if not wanted:
        return None
    for entry in outline:
        if entry.title.casefold() == wanted:
            return entry
    for entry in outline:
        if slugify(entry.title) == slugify(wanted):
            return entry
    last = wanted.replace(" > ", "/").rsplit("/", 1)[-1].strip()
    if last != wanted:
        found = find_outline_entry(outline, last)
        if found is not None:
            return found
    by_leaf = [e for e in outline if e.title.casefold().rsplit(".", 1)[-1] == wanted]
    if len(by_leaf) == 1:
        return by_leaf[0]
    prefixed = [e for e in outline if e.title.casefold().startswith(wanted)]
    return prefixed[0] if len(prefixed) == 1 else None


def slugify(title: str) -> str:
    """GitHub-style heading slug: lower case, punctuation dropped, spaces to dashes."""
    kept = "".join(ch for ch in title.casefold() if ch.isalnum() or ch in " -_")
    return kept.strip().replace(" ", "-")


#: Rough per-object costs for the parse cache's memory estimate (CPython, 64-bit).
PASSAGE_BYTES = 200
LINE_BYTES = 40


def parsed_bytes(parsed: ParsedArtifact) -> int:
    """Approximate memory of a parsed artifact: its text four times (the locators' indexes, built on it
    later, measure about three times the text), raw bytes kept for binary formats, a compact rendering,
    passages and line starts."""
    artifact = parsed.artifact
    return (
        4 * sys.getsizeof(artifact.text)
        + len(artifact.data or b"")
        + (sys.getsizeof(parsed.compact_text) if parsed.compact_text else 0)
        + PASSAGE_BYTES * len(parsed.passages)
        + LINE_BYTES * parsed.lines.line_count
    )
