"""HTML: the main content as Markdown-like text with its heading structure.

Scripts, styles, navigation, headers, footers, asides and forms are dropped; when the page has a
<main> or <article>, only that is kept. The extracted text is the full view and anchors point into
it; every extracted line also remembers the source line it came from (`source_lines` on items).
"""

from __future__ import annotations

import dataclasses
import re
from html.parser import HTMLParser
from pathlib import Path

from ..errors import UnsupportedArtifact
from ..files.artifacts import Artifact
from ..files.lines import LineIndex
from ..select.configuration import Configuration
from ..vocabulary import Action
from .base import ParsedArtifact
from .text import text_structure

SUFFIXES = frozenset({".html", ".htm", ".xhtml"})
_SKIP = frozenset(
    {
        "script",
        "style",
        "noscript",
        "template",
        "svg",
        "nav",
        "header",
        "footer",
        "aside",
        "form",
        "head",
        "iframe",
        "button",
    }
)
_BLOCK = frozenset(
    {
        "p",
        "div",
        "section",
        "article",
        "main",
        "ul",
        "ol",
        "table",
        "tr",
        "blockquote",
        "pre",
        "figure",
        "figcaption",
        "dl",
        "dt",
        "dd",
        "br",
        "hr",
        "body",
    }
)
_HEADING = re.compile(r"^h([1-6])$")
_MAIN = re.compile(r"<(main|article)[\s>]", re.IGNORECASE)
_ANY_HEADING = re.compile(r"<h[1-6][\s>]", re.IGNORECASE)
_LOOKS_LIKE_HEADING = re.compile(r"#{1,6}(?:[ \t]|$)")
_BOLD = frozenset({"b", "strong"})
#: Longest block taken for a heading because it is all bold (in a page with no <h1>-<h6>).
_BOLD_TITLE_CHARS = 100


class _Extractor(HTMLParser):
    def __init__(self, *, main_only: bool, bold_headings: bool = False) -> None:
        super().__init__(convert_charrefs=True)
        self.main_only = main_only
        #: Generated pages without heading tags (pydoc's, a word processor's) mark sections by a block
        #: that is all bold: with this set, such a block becomes a heading.
        self.bold_headings = bold_headings
        self._bold = 0
        self._in_term = False
        self._bold_chars = 0
        self._plain_chars = 0
        self.lines: list[tuple[str, int]] = []  # (extracted line, source line)
        self._current: list[str] = []
        #: Whether `_current` holds any text yet: kept, not recomputed by joining the list on every piece of
        #: data (200,000 `<` made that quadratic: 60 s).
        self._current_blank = True
        self._current_source = 1
        self._skip_depth = 0
        self._main_depth = 0
        self._prefix = ""
        self._pre = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _SKIP:
            self._skip_depth += 1
            return
        if tag in ("main", "article"):
            self._main_depth += 1
        if tag in _BOLD:
            self._bold += 1
        if tag == "pre":
            self._flush()
            if self.lines and self.lines[-1][0]:
                self.lines.append(("", self.getpos()[0]))
            self._pre += 1
            return
        if heading := _HEADING.match(tag):
            self._flush()
            self._prefix = "#" * int(heading.group(1)) + " "
        elif tag == "li":
            self._flush()
            self._prefix = "- "
        elif tag in ("td", "th"):
            self._add(" | ")
        elif tag in _BLOCK:
            self._flush()
            self._in_term = tag == "dt"  # a definition's term (pydoc's attributes) is bold, but no heading

    def handle_endtag(self, tag: str) -> None:
        if tag in _SKIP:
            self._skip_depth = max(0, self._skip_depth - 1)
            return
        if tag in ("main", "article"):
            self._main_depth = max(0, self._main_depth - 1)
        if tag in _BOLD:
            self._bold = max(0, self._bold - 1)
        if tag == "pre":
            self._flush()
            self._pre = max(0, self._pre - 1)
            return
        if _HEADING.match(tag) or tag in _BLOCK or tag == "li":
            self._flush()

    def handle_data(self, data: str) -> None:
        if self._skip_depth or (self.main_only and not self._main_depth):
            return
        if self._current_blank:
            self._current_source = self.getpos()[0]
        if self._pre:
            for i, part in enumerate(data.split("\n")):
                if i:
                    self._flush(keep_empty=True)
                    self._current_source = self.getpos()[0] + i
                self._add(part)
        else:
            self._add(data)
            if self.bold_headings and (visible := len(data) - data.count(" ") - data.count("\n")):
                if self._bold:
                    self._bold_chars += visible
                else:
                    self._plain_chars += visible

    def _add(self, text: str) -> None:
        self._current.append(text)
        if self._current_blank and text.strip():
            self._current_blank = False

    def _flush(self, *, keep_empty: bool = False) -> None:
        raw = "".join(self._current)
        text = raw.rstrip() if self._pre else " ".join(raw.split()).strip(" |")
        if self._all_bold() and len(text) <= _BOLD_TITLE_CHARS and " | " not in text and any(c.isalnum() for c in text):
            self._prefix = "# "
        self._bold_chars = self._plain_chars = 0
        if not self._prefix and not self._pre and _LOOKS_LIKE_HEADING.match(text):
            text = "\\" + text  # a `# comment` in a paragraph is text: escaped as Markdown escapes it
        if text or keep_empty:
            if self.lines and self.lines[-1][0] and not self._pre:
                self.lines.append(("", self._current_source))  # blank line between blocks
            self.lines.append((self._prefix + text, self._current_source))
        self._current = []
        self._current_blank = True
        self._prefix = ""

    def _all_bold(self) -> bool:
        """Whether the block so far is bold text only, and may be a heading (not a list item, term or code)."""
        return bool(self._bold_chars) and not (self._plain_chars or self._prefix or self._pre or self._in_term)

    def close(self) -> None:
        super().close()
        self._flush()


class HtmlReader:
    name = "html"
    types = frozenset({"html"})
    actions: frozenset[Action] = frozenset({"scout", "focus", "collect", "refine", "verify", "check"})
    binary = False
    #: How it can answer (method, exposure form); a preview lists them.
    configurations: tuple[Configuration, ...] = (
        Configuration("bm25", "snippets"),
        Configuration("section", "snippets"),
        Configuration("any", "full_view"),
    )

    def accepts(self, path: Path) -> bool:
        return path.suffix.lower() in SUFFIXES

    def parse(self, artifact: Artifact, *, passage_chars: int) -> ParsedArtifact:
        has_main = _MAIN.search(artifact.text) is not None
        extractor = _Extractor(main_only=has_main, bold_headings=_ANY_HEADING.search(artifact.text) is None)
        try:
            extractor.feed(artifact.text)
            extractor.close()
        except AssertionError as exc:  # the stdlib parser's own check on markup it cannot scan, such as `<![<`
            raise UnsupportedArtifact(
                f"{artifact.path} has markup the HTML parser cannot read ({_where(str(exc))})"
            ) from exc
        lines = extractor.lines
        text = "\n".join(line for line, _ in lines) + ("\n" if lines else "")
        index = LineIndex(text)
        passages, outline = text_structure(index, passage_chars, markdown=True)
        return ParsedArtifact(
            artifact=dataclasses.replace(artifact, text=text),
            type="html",
            lines=index,
            passages=passages,
            outline=outline,
            source_lines=tuple(source for _, source in lines),
        )


def _where(message: str) -> str:
    """What the parser's message names, without the file's own text (which it quotes)."""
    return message.split(" at ", 1)[0][:80] or "an unknown place"
