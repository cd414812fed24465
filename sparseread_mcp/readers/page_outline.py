"""The outline of a paged document with no headings of its own: the pages that begin with a title.

A filing's pages mostly begin mid-sentence ("by additional countries of a global minimum tax, could ..."),
with a running header ("Table of Contents", "NIKE, INC.") or with a bullet; an entry per page spends a
preview's budget on those and shows only the first forty pages of a 150-page 10-K. So an entry is made
only where a page begins with a title ("CONSOLIDATED BALANCE SHEETS", "Results of Operations"), and it
spans the pages up to the next title, like a section. Its title is the page's (`#CONSOLIDATED BALANCE
SHEETS` reads that section, `#p46` that page), as a table of contents would give it.
"""

from __future__ import annotations

from collections import Counter

from ..deadline import checkpoint
from ..files.lines import LineIndex
from .base import OutlineEntry

#: A page's title is one of its first few non-empty lines, at most this long.
TITLE_LINES = 3
TITLE_CHARS = 80
#: A line found among the first lines of more than this many pages is a running header or footer.
RUNNING_HEADER_PAGES = 2
#: A title has at most this many words.
TITLE_WORDS = 12
#: A title in sentence case has at most this many words.
SHORT_TITLE_WORDS = 6
#: Characters of an entry's title (its anchor, `p54`, says the page).
ENTRY_TITLE_CHARS = 70
#: Characters read from the top of a page to find its first lines (a page may be one huge line).
_HEAD_CHARS = 4 * TITLE_LINES * TITLE_CHARS
_CHECK_EVERY = 4096


def page_outline(index: LineIndex) -> tuple[OutlineEntry, ...]:
    """One entry per page that begins with a title, spanning the untitled pages after it."""
    pages = index.page_count or 1  # text with no form feed is one page
    firsts = []
    for page in range(1, pages + 1):
        if page % _CHECK_EVERY == 0:
            checkpoint()  # a hostile file may hold a form feed on every line
        firsts.append(_first_lines(index, page))
    met = Counter(line for lines in firsts for line in set(lines))
    titled: list[tuple[int, str]] = []  # (page, title)
    for page, lines in enumerate(firsts, start=1):
        title = next((ln for ln in lines if met[ln] <= RUNNING_HEADER_PAGES and is_title(ln)), None)
        if title is not None and (not titled or titled[-1][1] != title):
            titled.append((page, title))  # the same title on the next page continues the entry
    entries = []
    for k, (page, title) in enumerate(titled):
        last_page = titled[k + 1][0] - 1 if k + 1 < len(titled) else pages
        start, _ = index.page_span(page)
        _, end = index.page_span(last_page)
        first_line = index.line_of(start)
        entries.append(
            OutlineEntry(
                title=title[:ENTRY_TITLE_CHARS],
                anchor=f"p{page}",
                first_line=first_line,
                last_line=max(first_line, index.line_of(max(start, end - 1))),
                level=1,
            )
        )
    return tuple(entries)


def is_title(line: str) -> bool:
    """A short line that names what follows, beginning with a capital or a number and not broken off
    mid-phrase: most of its words capitalised (`Results of Operations`, `CONSOLIDATED BALANCE SHEETS`,
    `Item 7.`), or a few words with no sentence end (`Cash flows from operating activities`)."""
    words = line.split()
    if not words or len(line) > TITLE_CHARS or len(words) > TITLE_WORDS:
        return False
    if not (line[0].isupper() or line[0].isdigit()) or line[-1] in ",;-" or sum(c.isalpha() for c in line) < 3:
        return False
    capitalised = sum(1 for w in words if w[:1].isupper() or not w[:1].isalpha())
    return capitalised >= (len(words) + 1) // 2 or (len(words) <= SHORT_TITLE_WORDS and line[-1] != ".")


def _first_lines(index: LineIndex, page: int) -> list[str]:
    start, end = index.page_span(page)
    head = index.text[start : min(end, start + _HEAD_CHARS)]
    return [ln.strip() for ln in head.split("\n") if ln.strip()][:TITLE_LINES]
