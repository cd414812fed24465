"""PDF: per-page text in reading order, page anchors, the table of contents as outline.

The faithful full view is the extracted text, pages separated by form feeds; every anchor names its
page (`p12`, `p12:L3-L20`). Pages are extracted one at a time, so memory follows the text, not the
rendering. Scanned (no text layer), encrypted and corrupt files are refused with a clear error.
Needs the `pdf` extra: PyMuPDF, which is AGPL-licensed.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from ..commands.install import extra_hint
from ..deadline import checkpoint
from ..errors import MissingDependency, UnsupportedArtifact
from ..files.artifacts import Artifact
from ..files.lines import LineIndex
from ..progress import report
from ..select.configuration import Configuration
from ..vocabulary import Action
from .base import OutlineEntry, PageAnchors, ParsedArtifact
from .page_outline import page_outline
from .text import text_structure

#: Below this many characters per page on average the file has no usable text layer.
_MIN_CHARS_PER_PAGE = 20
MAX_PAGES_PER_READ = 20


class PdfReader:
    name = "pdf"
    types = frozenset({"pdf"})
    actions: frozenset[Action] = frozenset({"scout", "focus", "collect", "refine", "verify", "check"})
    binary = True
    #: How it can answer (method, exposure form); a preview lists them.
    configurations: tuple[Configuration, ...] = (
        Configuration("bm25", "page_snippets"),
        Configuration("page", "snippets"),
        Configuration("any", "full_view"),
    )

    def accepts(self, path: Path) -> bool:
        return path.suffix.lower() == ".pdf"

    def parse(self, artifact: Artifact, *, passage_chars: int) -> ParsedArtifact:
        pages, toc = _extract(artifact)
        text = "\f".join(pages)
        extracted = dataclasses.replace(artifact, text=text, data=None)
        index = LineIndex(text)
        passages, _ = text_structure(index, passage_chars, markdown=False)
        return ParsedArtifact(
            artifact=extracted,
            type="pdf",
            lines=index,
            passages=passages,
            outline=_outline(index, pages, toc),
            anchors=PageAnchors(),
            max_pages_per_read=MAX_PAGES_PER_READ,
        )


def _extract(artifact: Artifact) -> tuple[list[str], list[tuple[int, str, int]]]:
    try:
        import pymupdf
    except ImportError as exc:
        raise MissingDependency(f"reading PDF needs PyMuPDF (AGPL): {extra_hint('pdf')}") from exc
    try:
        document = pymupdf.open(stream=artifact.data or b"", filetype="pdf")
    except Exception as exc:  # PyMuPDF raises its own types for every kind of damage
        raise UnsupportedArtifact(f"{artifact.path} is not a readable PDF ({exc}); check the file") from exc
    with document:
        if document.needs_pass:
            raise UnsupportedArtifact(f"{artifact.path} is encrypted: decrypt it first (e.g. qpdf --decrypt)")
        pages: list[str] = []
        damage = (RuntimeError, ValueError, pymupdf.mupdf.FzErrorBase)  # a damaged page tree or outline
        try:
            _pages_text(document, artifact.path, pages)
        except damage as exc:
            raise _damaged(artifact.path, exc, f"page {len(pages) + 1}") from exc
        try:
            toc = [(int(level), str(title), int(page)) for level, title, page, *_ in document.get_toc(simple=True)]
        except damage as exc:
            raise _damaged(artifact.path, exc, "its outline") from exc
    if pages and sum(len(p.strip()) for p in pages) < _MIN_CHARS_PER_PAGE * len(pages):
        raise UnsupportedArtifact(
            f"{artifact.path} has no text layer ({len(pages)} pages, scanned?): run OCR first (e.g. ocrmypdf)"
        )
    return pages, toc


def _pages_text(document: Any, path: str, pages: list[str]) -> None:
    """Each page's text onto `pages`, one page at a time, never the whole file rendered."""
    for number in range(document.page_count):
        checkpoint()
        report(number, document.page_count, f"{path}: page {number + 1} of {document.page_count}")
        # Text blocks sorted top-to-bottom, left-to-right: reading order for most layouts, and fast.
        blocks = document[number].get_text("blocks", sort=True)
        page_text = "".join(block[4] for block in blocks if block[6] == 0)
        pages.append(page_text if page_text.endswith("\n") or not page_text else page_text + "\n")


def _damaged(path: str, exc: Exception, where: str) -> UnsupportedArtifact:
    reason = (str(exc).splitlines() or [type(exc).__name__])[0][:120]
    return UnsupportedArtifact(f"{path} is a damaged PDF ({reason}, at {where}); check the file")


def _outline(index: LineIndex, pages: list[str], toc: list[tuple[int, str, int]]) -> tuple[OutlineEntry, ...]:
    starts = [index.line_of(index.page_span(n)[0]) if index.page_count else 1 for n in range(1, len(pages) + 1)]

    def page_lines(first_page: int, last_page: int) -> tuple[int, int]:
        last_line = starts[last_page] - 1 if last_page < len(pages) else index.line_count
        return starts[first_page - 1], max(starts[first_page - 1], last_line)

    entries = []
    if toc:
        for i, (level, title, page) in enumerate(toc):
            page = min(max(page, 1), len(pages))
            following = next((p for lv, _, p in toc[i + 1 :] if lv <= level), len(pages) + 1)
            first, last = page_lines(page, max(page, min(following - 1, len(pages))))
            entries.append(
                OutlineEntry(title=title.strip(), anchor=f"p{page}", first_line=first, last_line=last, level=level)
            )
        return tuple(entries)
    # No table of contents: the pages that begin with a title, each spanning the untitled pages after it.
    return page_outline(index)
