"""Line and page arithmetic over one text: offsets <-> 1-based lines, columns and form-feed pages.

Lines are split on "\\n" only (as git and editors count them), never on the other characters
`str.splitlines` treats as breaks, so anchors agree with every other tool.
"""

from __future__ import annotations

from bisect import bisect_right

from ..errors import AnchorError
from .anchors import Anchor


class LineIndex:
    def __init__(self, text: str) -> None:
        self.text = text
        starts = [0]
        find = text.find
        pos = find("\n")
        while pos != -1:
            starts.append(pos + 1)
            pos = find("\n", pos + 1)
        self.starts = starts
        feeds = []
        pos = find("\f")
        while pos != -1:
            feeds.append(pos)
            pos = find("\f", pos + 1)
        self.form_feeds = feeds

    @property
    def line_count(self) -> int:
        return len(self.starts)

    @property
    def page_count(self) -> int | None:
        return len(self.form_feeds) + 1 if self.form_feeds else None

    def line_end(self, line: int) -> int:
        """Offset just past the content of `line` (1-based), excluding its newline."""
        if line < len(self.starts):
            return self.starts[line] - 1
        return len(self.text)

    def line_of(self, offset: int) -> int:
        return bisect_right(self.starts, offset)

    def page_of(self, offset: int) -> int | None:
        """1-based page of an offset when the text has form feeds, else None."""
        if not self.form_feeds:
            return None
        return bisect_right(self.form_feeds, offset) + 1

    def page_span(self, page: int) -> tuple[int, int]:
        count = self.page_count or 1
        if not 1 <= page <= count:
            raise AnchorError(f"page p{page} is out of range: this text has pages p1..p{count}")
        start = 0 if page == 1 else self.form_feeds[page - 2]  # the form feed opens its page
        end = self.form_feeds[page - 1] if page - 1 < len(self.form_feeds) else len(self.text)
        if end > start and self.text[end - 1] == "\n":
            end -= 1  # the page is its lines; the newline before the next form feed separates pages
        return start, end

    def span_of(self, anchor: Anchor) -> tuple[int, int]:
        """Character span [start, end) named by a lines/columns/page anchor."""
        if anchor.kind == "page" and anchor.page is not None:
            start, end = self.page_span(anchor.page)
            if anchor.first_line is None:
                return start, end
            base = self.line_of(start)
            first, last = base + anchor.first_line - 1, base + (anchor.last_line or anchor.first_line) - 1
            if anchor.first_col is not None:
                line_anchor = Anchor(
                    kind="columns",
                    first_line=first,
                    last_line=last,
                    first_col=anchor.first_col,
                    last_col=anchor.last_col,
                )
                s, e = self.span_of(line_anchor)
            else:
                s, e = self.lines_span(first, last)
            return s, min(e, end)  # lines past the page's end clamp to it
        if anchor.first_line is None:
            raise AnchorError(f"anchor {anchor.format()!r} does not name lines")
        if anchor.kind == "columns":
            return self._columns_span(anchor.first_line, anchor.last_line or anchor.first_line, anchor)
        return self.lines_span(anchor.first_line, anchor.last_line or anchor.first_line)

    def _columns_span(self, first: int, last: int, anchor: Anchor) -> tuple[int, int]:
        """Columns clamp to what exists: a last column past its line's end stops at the end (its newline
        included, which a column may name); only a first column past its line's end is out of range."""
        first_col, last_col = anchor.first_col or 1, anchor.last_col or 1
        start_line, _ = self.lines_span(first, first)
        if first_col > self.line_end(first) - start_line + 1:
            raise AnchorError(
                f"column C{first_col} is out of range: line {first} has {self.line_end(first) - start_line} characters"
            )
        last_start, last_end = self.lines_span(last, last)
        newline = 1 if last < self.line_count else 0
        end = last_start + min(last_col, last_end - last_start + newline)
        return start_line + first_col - 1, max(end, start_line + first_col - 1)

    def lines_span(self, first: int, last: int) -> tuple[int, int]:
        """Lines [first, last]; a last line past the end clamps to the last line (only a first line past
        it, or a range given backwards, is out of range)."""
        if not 1 <= first <= last or first > self.line_count:
            raise AnchorError(f"lines L{first}-L{last} are out of range: this text has lines L1-L{self.line_count}")
        return self.starts[first - 1], self.line_end(min(last, self.line_count))

    def page_anchor_for(self, start: int, end: int) -> Anchor:
        """Like `anchor_for`, but as a page and lines relative to that page (`p12:L3-L20`)."""
        global_anchor = self.anchor_for(start, end)
        page = self.page_of(start) or 1
        base = self.line_of(self.page_span(page)[0]) - 1
        return Anchor(
            kind="page",
            page=page,
            first_line=(global_anchor.first_line or 1) - base,
            last_line=(global_anchor.last_line or 1) - base,
            first_col=global_anchor.first_col,
            last_col=global_anchor.last_col,
        )

    def anchor_for(self, start: int, end: int) -> Anchor:
        """The anchor naming exactly [start, end): whole lines when it covers whole lines."""
        first = self.line_of(start)
        last = self.line_of(end) if end > start else first
        whole = start == self.starts[first - 1] and end == self.line_end(last)
        if whole:
            return Anchor(kind="lines", first_line=first, last_line=last)
        if first != last:  # a passage cut from long lines: from a column of one line to one of a later line
            last = self.line_of(end - 1)
            return Anchor(
                kind="columns",
                first_line=first,
                last_line=last,
                first_col=start - self.starts[first - 1] + 1,
                last_col=end - self.starts[last - 1],
            )
        line_start = self.starts[first - 1]
        return Anchor(
            kind="columns",
            first_line=first,
            last_line=first,
            first_col=start - line_start + 1,
            last_col=end - line_start,
        )
