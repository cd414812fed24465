"""Text and Markdown: structure-aware passages with anchors into the original file.

Headings, paragraphs, lists, tables and fenced code are kept whole up to twice the passage size;
small neighbouring blocks are merged up to the passage size (never across a heading or a page
break); longer blocks split at line boundaries, and a line longer than a passage (single-line
exports, scraped articles) splits at sentence boundaries with column anchors.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from ..deadline import checkpoint
from ..files.artifacts import Artifact
from ..files.lines import LineIndex
from ..select.configuration import Configuration
from ..vocabulary import Action
from .base import OutlineEntry, ParsedArtifact, Passage, PassageKind
from .page_outline import page_outline
from .plain_outline import plain_outline

MARKDOWN_SUFFIXES = frozenset({".md", ".markdown", ".mdown", ".mkd", ".mdx"})
TEXT_SUFFIXES = frozenset({".txt", ".text", ".rst", ".adoc", ".org", ""})

#: The title is `.*` with its closing `#`s and blanks stripped in Python: a lazy `(.*?)[ \t#]*$` was
#: quadratic on a heading followed by a long run of blanks.
_ATX = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*)$")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_LIST = re.compile(r"^ {0,3}(?:[-*+]|\d{1,9}[.)])[ \t]")
_CHECK_EVERY = 4096
_SENTENCE_END = re.compile(r"(?<=[.!?…。])[\"')\]]*\s+")


@dataclass(frozen=True, slots=True)
class _Block:
    first: int  # 1-based line numbers, inclusive
    last: int
    kind: PassageKind
    heading_level: int = 0
    title: str = ""


class TextReader:
    """Plain text and Markdown (the fallback reader for any text file)."""

    name = "text"
    types = frozenset({"text", "markdown"})
    actions: frozenset[Action] = frozenset({"scout", "focus", "collect", "refine", "verify", "check"})
    binary = False
    #: How it can answer (method, exposure form); a preview lists them.
    configurations: tuple[Configuration, ...] = (
        Configuration("bm25", "snippets"),
        Configuration("lexical", "snippets"),
        Configuration("needles", "snippets"),
        Configuration("any", "full_view"),
    )

    def accepts(self, path: Path) -> bool:
        suffix = path.suffix.lower()
        return suffix in MARKDOWN_SUFFIXES or suffix in TEXT_SUFFIXES

    def parse(self, artifact: Artifact, *, passage_chars: int) -> ParsedArtifact:
        suffix = Path(artifact.path).suffix.lower()
        kind = "markdown" if suffix in MARKDOWN_SUFFIXES else "text"
        index = LineIndex(artifact.text)
        passages, outline = text_structure(index, passage_chars, markdown=kind == "markdown")
        return ParsedArtifact(artifact=artifact, type=kind, lines=index, passages=passages, outline=outline)


def text_structure(
    index: LineIndex, passage_chars: int, *, markdown: bool
) -> tuple[tuple[Passage, ...], tuple[OutlineEntry, ...]]:
    """Passages and outline of any text: shared by the readers whose content becomes text (PDF, HTML)."""
    blocks = _segment(index, markdown=markdown)
    outline = _outline(index, blocks)
    if not markdown and not outline:  # plain text without pages names its sections in its own ways
        outline = plain_outline(index)
    return _build_passages(index, blocks, passage_chars), outline


def text_passages(index: LineIndex, passage_chars: int, *, markdown: bool) -> tuple[Passage, ...]:
    """text_structure's passages alone, cut at another size (its outline does not depend on the size)."""
    return _build_passages(index, _segment(index, markdown=markdown), passage_chars)


def _line(index: LineIndex, number: int) -> str:
    return index.text[index.starts[number - 1] : index.line_end(number)]


def _segment(index: LineIndex, *, markdown: bool) -> list[_Block]:
    """Split the text into blocks separated by blank lines, headings, fences and page breaks."""
    blocks: list[_Block] = []
    n = index.line_count
    number = 1
    para_start: int | None = None
    para_kind: PassageKind = "paragraph"

    def close(upto: int) -> None:
        nonlocal para_start
        if para_start is not None and upto >= para_start:
            blocks.append(_Block(para_start, upto, para_kind))
        para_start = None

    steps = 0
    while number <= n:
        steps += 1
        if steps % _CHECK_EVERY == 0:
            checkpoint()  # a large file takes seconds here: stop at the call's limit
        line = _line(index, number)
        stripped = line.strip()
        if "\f" in line:
            close(number - 1)
        if not stripped or stripped == "\f":
            close(number - 1)
            number += 1
            continue
        if markdown and (fence := _FENCE.match(line)):
            close(number - 1)
            end = _fence_end(index, number, fence.group(1))
            blocks.append(_Block(number, end, "code"))
            number = end + 1
            continue
        if markdown and (atx := _ATX.match(line.lstrip("\f"))):
            close(number - 1)
            blocks.append(_Block(number, number, "heading", len(atx.group(1)), atx.group(2).rstrip(" \t#").strip()))
            number += 1
            continue
        if (
            markdown
            and para_start is None
            and number < n
            and _SETEXT.match(_line(index, number + 1))
            and len(stripped) <= 120
            and any(c.isalnum() for c in stripped)  # `=====` over `=====` is a rule, not a heading
        ):
            level = 1 if _line(index, number + 1).strip().startswith("=") else 2
            blocks.append(_Block(number, number + 1, "heading", level, stripped))
            number += 2
            continue
        kind: PassageKind = "table" if stripped.startswith("|") else "list" if _LIST.match(line) else "paragraph"
        if para_start is None:
            para_start, para_kind = number, kind
        elif (kind != para_kind and kind == "table") or (para_kind == "table" and kind != "table"):
            close(number - 1)
            para_start, para_kind = number, kind
        number += 1
    close(n)
    return blocks


def _fence_end(index: LineIndex, start: int, fence: str) -> int:
    for number in range(start + 1, index.line_count + 1):
        if _line(index, number).strip().startswith(fence):
            return number
    return index.line_count


def _build_passages(index: LineIndex, blocks: list[_Block], target: int) -> tuple[Passage, ...]:
    spans: list[tuple[int, int, PassageKind, str]] = []
    section = ""
    pending: list[_Block] = []

    def flush() -> None:
        if pending:
            start = index.starts[pending[0].first - 1]
            end = index.line_end(pending[-1].last)
            kind = pending[0].kind if len(pending) == 1 else "paragraph"
            spans.append((start, end, kind, section))
            pending.clear()

    for block in blocks:
        start = index.starts[block.first - 1]
        end = index.line_end(block.last)
        size = end - start
        if block.kind == "heading":
            flush()
            section = block.title
            pending.append(block)  # a heading travels with the text that follows it
            continue
        pending_size = index.line_end(pending[-1].last) - index.starts[pending[0].first - 1] if pending else 0
        new_page = pending and index.page_of(start) != index.page_of(index.starts[pending[0].first - 1])
        if pending and (new_page or pending_size + size > target):
            only_heading = all(b.kind == "heading" for b in pending)
            if only_heading and not new_page and pending_size + size <= 2 * target:
                pending.append(block)
                flush()
                continue
            flush()
        if size > 2 * target:
            flush()
            for s, e in _split_block(index, block, target):
                whole_lines = s == index.starts[index.line_of(s) - 1] and e == index.line_end(index.line_of(e))
                spans.append((s, e, block.kind if whole_lines else "sentences", section))
            continue
        pending.append(block)
    flush()
    return tuple(Passage(index=i, start=s, end=e, kind=k, section=sec) for i, (s, e, k, sec) in enumerate(spans))


def _split_block(index: LineIndex, block: _Block, target: int) -> list[tuple[int, int]]:
    """Split a long block between lines, preferring lines that end a sentence.

    Pieces are whole lines, so their anchors stay line ranges; a line longer than the target is split
    into sentences with column anchors.
    """
    pieces: list[tuple[int, int]] = []
    lines: list[tuple[int, int, bool]] = []  # the current group: (start, end, ends a sentence)

    def cut() -> None:
        # Close the group at its last sentence end past the middle, else at its last line.
        group_start = lines[0][0]
        split = len(lines)
        for i in range(len(lines) - 1, 0, -1):
            if lines[i - 1][2] and lines[i - 1][1] - group_start >= target // 2:
                split = i
                break
        pieces.append((group_start, lines[split - 1][1]))
        del lines[:split]

    for number in range(block.first, block.last + 1):
        s, e = index.starts[number - 1], index.line_end(number)
        content = index.text[s:e].rstrip()
        if e - s > target:
            while lines:
                cut()
            pieces.extend(_split_line(index.text, s, e, target))
            continue
        if not content:
            continue
        while lines and e - lines[0][0] > target:
            cut()
        lines.append((s, e, content.endswith((".", "!", "?", ":", ";", "。"))))
    while lines:
        cut()
    return pieces


def _split_line(text: str, start: int, end: int, target: int) -> list[tuple[int, int]]:
    """Sentence-sized spans of one long line, grouped up to `target` characters, trimmed of spaces."""
    cuts = [start]
    for match in _SENTENCE_END.finditer(text[start:end]):
        cuts.append(start + match.end())
    cuts.append(end)
    spans: list[tuple[int, int]] = []
    group_start = cuts[0]
    for i in range(1, len(cuts)):
        boundary = cuts[i]
        if boundary - group_start > target and cuts[i - 1] > group_start:
            spans.append((group_start, cuts[i - 1]))
            group_start = cuts[i - 1]
    spans.append((group_start, end))
    result: list[tuple[int, int]] = []
    for s, e in spans:
        for hs, he in _hard_split(text, s, e, 2 * target):
            while hs < he and text[hs].isspace():
                hs += 1
            while he > hs and text[he - 1].isspace():
                he -= 1
            if he > hs:
                result.append((hs, he))
    return result


def _hard_split(text: str, start: int, end: int, limit: int) -> list[tuple[int, int]]:
    """A run with no sentence end (minified text): cut at the last space before the limit."""
    spans = []
    while end - start > limit:
        cut = text.rfind(" ", start + limit // 2, start + limit)
        cut = cut + 1 if cut != -1 else start + limit
        spans.append((start, cut))
        start = cut
    spans.append((start, end))
    return spans


def _outline(index: LineIndex, blocks: list[_Block]) -> tuple[OutlineEntry, ...]:
    headings = [b for b in blocks if b.kind == "heading"]
    if headings:
        entries = []
        for i, heading in enumerate(headings):
            last = index.line_count
            # By index, not over a slice: copying the rest of the list for each heading was quadratic. The scan
            # itself is linear overall (a heading is passed only by deeper ones, at most one per level).
            for j in range(i + 1, len(headings)):
                if headings[j].heading_level <= heading.heading_level:
                    last = headings[j].first - 1
                    break
            entries.append(
                OutlineEntry(
                    title=heading.title,
                    anchor=heading.title,
                    first_line=heading.first,
                    last_line=max(last, heading.last),
                    level=heading.heading_level,
                )
            )
        return tuple(entries)
    if index.page_count:
        return page_outline(index)
    return ()
