"""Anchors and evidence pointers: parse and format, one grammar.

Anchors (the part after `#`):
  `L12`, `L12-L18`        1-based inclusive line range
  `L5:C100-C900`         1-based inclusive character columns on one line (single-line documents)
  `p12`, `p12:L3-L20`     a page, optionally lines (or `p12:L3:C5-C90` columns) within it
  `row=17`, `Sheet1!R17`  a table row (data rows from 1), a workbook row (as numbered in the sheet)
  `$.a.b`                a key path
  anything else          a section: heading text or symbol name (`Renewal`, `Store.load`)

Pointers: `path@rev#anchor`, where `rev` is a git commit (7-40 hex digits) or `sha256:` plus 12 hex
digits of the content hash.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from .errors import AnchorError

AnchorKind = Literal["lines", "columns", "page", "row", "keypath", "section"]

_LINES = re.compile(r"^L(\d+)(?:-L?(\d+))?$")
_COLUMNS = re.compile(r"^L(\d+):C(\d+)-C?(\d+)$")
_PAGE = re.compile(r"^p(\d+)(?::L(\d+)(?:-L?(\d+)|:C(\d+)-C?(\d+))?)?$")
_ROW = re.compile(r"^row=(\d+)$")
_SHEET_ROW = re.compile(r"^(.+)!R(\d+)$")
_REV = re.compile(r"^(?:sha256:[0-9a-f]{12}|[0-9a-f]{7,40})$")


@dataclass(frozen=True, slots=True, kw_only=True)
class Anchor:
    """A location inside one artifact."""

    kind: AnchorKind
    first_line: int | None = None
    last_line: int | None = None
    first_col: int | None = None
    last_col: int | None = None
    page: int | None = None
    row: int | None = None
    name: str | None = None

    def format(self) -> str:
        match self.kind:
            case "lines":
                return format_lines(_num(self.first_line), _num(self.last_line))
            case "columns":
                return f"L{self.first_line}:C{self.first_col}-C{self.last_col}"
            case "page":
                base = f"p{self.page}"
                if self.first_line is None:
                    return base
                if self.first_col is not None:
                    return f"{base}:L{self.first_line}:C{self.first_col}-C{self.last_col}"
                return f"{base}:{format_lines(self.first_line, _num(self.last_line))}"
            case "row":
                return f"{self.name}!R{self.row}" if self.name else f"row={self.row}"
            case "keypath" | "section":
                if self.name is None:  # pragma: no cover - constructor invariant
                    raise AnchorError("a section anchor needs a name")
                return self.name


def format_lines(first: int, last: int) -> str:
    return f"L{first}" if first == last else f"L{first}-L{last}"


def parse_anchor(text: str) -> Anchor:
    """Parse the part after `#`; raise AnchorError for a malformed numeric anchor."""
    text = text.strip()
    if not text:
        raise AnchorError("empty anchor after '#': use L12-L18, L5:C1-C80, p3, row=7, $.key or a heading")
    if m := _LINES.match(text):
        first = int(m.group(1))
        last = int(m.group(2)) if m.group(2) else first
        _check_order(text, first, last)
        return Anchor(kind="lines", first_line=first, last_line=last)
    if m := _COLUMNS.match(text):
        first_col, last_col = int(m.group(2)), int(m.group(3))
        _check_order(text, first_col, last_col)
        line = int(m.group(1))
        _check_order(text, 1, line)
        return Anchor(kind="columns", first_line=line, last_line=line, first_col=first_col, last_col=last_col)
    if m := _PAGE.match(text):
        page = int(m.group(1))
        _check_order(text, 1, page)
        if m.group(4):
            line, first_col, last_col = int(m.group(2)), int(m.group(4)), int(m.group(5))
            _check_order(text, 1, line)
            _check_order(text, first_col, last_col)
            return Anchor(
                kind="page", page=page, first_line=line, last_line=line, first_col=first_col, last_col=last_col
            )
        if m.group(2):
            first = int(m.group(2))
            last = int(m.group(3)) if m.group(3) else first
            _check_order(text, first, last)
            return Anchor(kind="page", page=page, first_line=first, last_line=last)
        return Anchor(kind="page", page=page)
    if m := _ROW.match(text):
        return Anchor(kind="row", row=int(m.group(1)))
    if m := _SHEET_ROW.match(text):
        return Anchor(kind="row", row=int(m.group(2)), name=m.group(1))
    if text.startswith("$"):
        return Anchor(kind="keypath", name=text)
    if re.fullmatch(r"L\d.*", text):
        raise AnchorError(f"malformed line anchor {text!r}: use L12, L12-L18 or L5:C100-C900 (1-based, inclusive)")
    return Anchor(kind="section", name=text)


@dataclass(frozen=True, slots=True, kw_only=True)
class Target:
    """What `sro_read` was asked for: a path, maybe a revision (pointer) and an anchor."""

    path: str
    rev: str | None = None
    anchor: Anchor | None = None

    @property
    def is_pointer(self) -> bool:
        return self.rev is not None and self.anchor is not None


def parse_target(text: str) -> Target:
    """Split `path[@rev][#anchor]`."""
    text = text.strip()
    if not text:
        raise AnchorError("empty target: pass a path, path#anchor or an evidence pointer path@rev#anchor")
    path_part, sep, anchor_text = text.partition("#")
    anchor = parse_anchor(anchor_text) if sep else None
    rev: str | None = None
    head, at, maybe_rev = path_part.rpartition("@")
    if at and head and _REV.match(maybe_rev):
        path_part, rev = head, maybe_rev
    return Target(path=path_part, rev=rev, anchor=anchor)


def format_pointer(path: str, rev: str, anchor: Anchor) -> str:
    return f"{path}@{rev}#{anchor.format()}"


def _check_order(text: str, first: int, last: int) -> None:
    if first < 1 or last < first:
        raise AnchorError(f"anchor {text!r} is out of order: numbers are 1-based and first <= last")


def _num(value: int | None) -> int:
    if value is None:  # pragma: no cover - constructor invariant
        raise AnchorError("incomplete line anchor")
    return value
