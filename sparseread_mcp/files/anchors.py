"""Anchors and evidence pointers: parse and format, one grammar.

Anchors (the part after `#`):
  `L12`, `L12-L18`        1-based inclusive line range
  `L5:C100-C900`         1-based inclusive character columns on one line (single-line documents)
  `L5:C100-L7:C20`       from a column of one line to a column of a later one (a passage cut from long lines)
  `p12`, `p12:L3-L20`     a page, optionally lines (or `p12:L3:C5-C90`, `p12:L3:C5-L4:C9` columns) within it
  `row=17`, `Sheet1!R17`  a table row (data rows from 1), a workbook row (as numbered in the sheet)
  `$.a.b`                a key path
  anything else          a section: heading text or symbol name (`Renewal`, `Store.load`)

Pointers: `path@rev#anchor`, where `rev` is a git commit (7-40 hex digits) or `sha256:` plus 12 hex
digits of the content hash.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from ..errors import AnchorError

AnchorKind = Literal["lines", "columns", "page", "row", "keypath", "section"]

_LINES = re.compile(r"^L(\d+)(?:-L?(\d+))?$")
_COLUMNS = re.compile(r"^L(\d+):C(\d+)-(?:L(\d+):C(\d+)|C?(\d+))$")
_PAGE = re.compile(r"^p(\d+)(?::(L\d+.*))?$")
_ROW = re.compile(r"^row=(\d+)$")
_SHEET_ROW = re.compile(r"^(.+)!R(\d+)$")
_REV = re.compile(r"^(?:sha256:[0-9a-f]{12}|[0-9a-f]{7,40})$")
#: `path@rev#anchor`, the path up to the last `@rev#` (a path may hold `#` and `@` too).
_POINTER = re.compile(r"^(.*)@(sha256:[0-9a-f]{12}|[0-9a-f]{7,40})#(.*)$", re.DOTALL)
#: Places a target is tried split at: a name with more `#` than this is read at its first ones only.
_MAX_SPLITS = 8
#: Digits in one anchor number: far past any real line, page or row, and short of `int`'s own limit on
#: the digits it converts (past which it raises a ValueError, not an answer).
MAX_DIGITS = 18


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
                return self._columns()
            case "page":
                base = f"p{self.page}"
                if self.first_line is None:
                    return base
                if self.first_col is not None:
                    return f"{base}:{self._columns()}"
                return f"{base}:{format_lines(self.first_line, _num(self.last_line))}"
            case "row":
                return f"{self.name}!R{self.row}" if self.name else f"row={self.row}"
            case "keypath" | "section":
                if self.name is None:  # pragma: no cover - constructor invariant
                    raise AnchorError("a section anchor needs a name")
                return self.name

    def _columns(self) -> str:
        if self.last_line is None or self.last_line == self.first_line:
            return f"L{self.first_line}:C{self.first_col}-C{self.last_col}"
        return f"L{self.first_line}:C{self.first_col}-L{self.last_line}:C{self.last_col}"


def format_lines(first: int, last: int) -> str:
    return f"L{first}" if first == last else f"L{first}-L{last}"


def parse_anchor(text: str) -> Anchor:
    """Parse the part after `#`; raise AnchorError for a malformed numeric anchor."""
    text = text.strip()
    if not text:
        raise AnchorError("empty anchor after '#': use L12-L18, L5:C1-C80, p3, row=7, $.key or a heading")
    if m := _LINES.match(text):
        first = _number(text, m.group(1))
        last = _number(text, m.group(2)) if m.group(2) else first
        _check_order(text, first, last)
        return Anchor(kind="lines", first_line=first, last_line=last)
    if m := _COLUMNS.match(text):
        return _parse_columns(text, m)
    if m := _PAGE.match(text):
        page = _number(text, m.group(1))
        _check_order(text, 1, page)
        if m.group(2) is None:
            return Anchor(kind="page", page=page)
        inner = parse_anchor(m.group(2))
        if inner.kind not in ("lines", "columns"):
            raise AnchorError(f"malformed page anchor {text!r}: use p3, p3:L2-L9 or p3:L2:C5-C90")
        return Anchor(
            kind="page",
            page=page,
            first_line=inner.first_line,
            last_line=inner.last_line,
            first_col=inner.first_col,
            last_col=inner.last_col,
        )
    if m := _ROW.match(text):
        return Anchor(kind="row", row=_number(text, m.group(1)))
    if m := _SHEET_ROW.match(text):
        return Anchor(kind="row", row=_number(text, m.group(2)), name=m.group(1))
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


def parse_target(text: str, *, exists: Callable[[str], bool] | None = None) -> Target:
    """Split `path[@rev][#anchor]`. A file name may hold `#` or `@` itself (`a.md#L1`, `x@abcdef1`): with
    `exists`, the first split that names a file and whose anchor parses is taken (the whole text as a name
    last): the usual split wins whenever its file exists and its anchor is well formed, so no file named
    `a.md#L1` shadows line 1 of `a.md`; that file is read as `a.md#L1#L1-L9` or by its pointer."""
    text = text.strip()
    if not text:
        raise AnchorError("empty target: pass a path, path#anchor or an evidence pointer path@rev#anchor")
    splits = _splits(text)
    if exists is not None and len(splits) > 1:
        for path, rev, anchor_text in splits:
            if exists(path):
                try:
                    return Target(
                        path=path, rev=rev, anchor=parse_anchor(anchor_text) if anchor_text is not None else None
                    )
                except AnchorError:
                    continue  # `a.md#L1#L2`: a file `a.md#L1`, not `a.md` with a malformed anchor
    path, rev, anchor_text = splits[0]  # nothing else names a file: the usual reading, and its errors
    return Target(path=path, rev=rev, anchor=parse_anchor(anchor_text) if anchor_text is not None else None)


def _splits(text: str) -> list[tuple[str, str | None, str | None]]:
    """The ways `text` reads as (path, rev, anchor text), the usual one first: a pointer at its last
    `@rev#`, else the path up to the first `#`; then the path up to each later `#`; then the whole text."""
    splits: list[tuple[str, str | None, str | None]] = []
    if (pointer := _POINTER.match(text)) and pointer.group(1):
        splits.append((pointer.group(1), pointer.group(2), pointer.group(3)))
    cuts = [i for i, c in enumerate(text) if c == "#"][:_MAX_SPLITS]
    for cut in cuts:
        path_part, anchor_text = text[:cut], text[cut + 1 :]
        head, at, maybe_rev = path_part.rpartition("@")
        if at and head and _REV.match(maybe_rev):
            splits.append((head, maybe_rev, anchor_text))
        splits.append((path_part, None, anchor_text))
    head, at, maybe_rev = text.rpartition("@")
    if at and head and _REV.match(maybe_rev):
        splits.append((head, maybe_rev, None))
    splits.append((text, None, None))
    return [s for i, s in enumerate(splits) if s[0] and s not in splits[:i]]


def format_pointer(path: str, rev: str, anchor: Anchor) -> str:
    return f"{path}@{rev}#{anchor.format()}"


def _parse_columns(text: str, m: re.Match[str]) -> Anchor:
    first_line, first_col = _number(text, m.group(1)), _number(text, m.group(2))
    _check_order(text, 1, first_line)
    _check_order(text, 1, first_col)
    if m.group(3) is not None:  # L5:C100-L7:C20
        last_line, last_col = _number(text, m.group(3)), _number(text, m.group(4))
        _check_order(text, first_line, last_line)
        _check_order(text, 1, last_col)
        if last_line == first_line:
            _check_order(text, first_col, last_col)
    else:
        last_line, last_col = first_line, _number(text, m.group(5))
        _check_order(text, first_col, last_col)
    return Anchor(kind="columns", first_line=first_line, last_line=last_line, first_col=first_col, last_col=last_col)


def _number(text: str, digits: str) -> int:
    """One number of `text`, refused when it has more digits than any file has lines, pages or rows."""
    if len(digits) > MAX_DIGITS:
        raise AnchorError(
            f"anchor {text[:60]!r} has a number of {len(digits)} digits, past any line, page or row: "
            "use a number the file's outline or preview shows"
        )
    return int(digits)


def _check_order(text: str, first: int, last: int) -> None:
    if first < 1 or last < first:
        raise AnchorError(f"anchor {text!r} is out of order: numbers are 1-based and first <= last")


def _num(value: int | None) -> int:
    if value is None:  # pragma: no cover - constructor invariant
        raise AnchorError("incomplete line anchor")
    return value
