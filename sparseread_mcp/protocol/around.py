"""What "around this passage" reads: the text right before and right after it.

Each side runs up to AROUND_CHARS, cut at a line (or word) boundary. On a paged text (a PDF, a filing with
form feeds) a side stays on the passage's page: a page is a unit (a statement, a table, a note), and the
page beside it is another one. A side crosses the page's edge only when all the page holds on that side
is its running header or footer (at most EDGE_CHARS of text): then the passage reaches the edge, and what
it cuts off goes on over it.
"""

from __future__ import annotations

from ..readers.base import ParsedArtifact

#: "Around this passage": this many characters on each side of it, cut at line (or word) boundaries.
AROUND_CHARS = 1_000
#: A page's running header or footer (a page number, "Table of Contents", a statement's name): a side with
#: no more text than this between the passage and its page's edge runs on over the edge.
EDGE_CHARS = 200


def sides(parsed: ParsedArtifact, span: tuple[int, int], chars: int) -> tuple[tuple[int, int], tuple[int, int]]:
    """The spans before and after `span`: at most `chars` each, at line (or word) boundaries, within the
    passage's pages unless that side of its page holds no more than a header or footer."""
    text, lines = parsed.artifact.text, parsed.lines
    start, end = span
    before = _boundary(text, max(0, start - chars), forward=True, limit=start)
    after = _boundary(text, min(len(text), end + chars), forward=False, limit=end)
    first, last = lines.page_of(start), lines.page_of(max(start, end - 1))
    if first is None or last is None:
        return (before, start), (end, after)
    page_start, page_end = lines.page_span(first)[0], lines.page_span(last)[1]
    if before < page_start and len(text[page_start:start].strip()) > EDGE_CHARS:
        before = page_start  # a page opens at its form feed, at a line's start
    if after > page_end and len(text[end:page_end].strip()) > EDGE_CHARS:
        after = page_end  # a page's last line ends here
    return (before, start), (end, after)


def _boundary(text: str, at: int, *, forward: bool, limit: int) -> int:
    """`at` moved to the nearest line start (forward) or line end (backward) on the span's side, else to
    a word boundary (a line longer than the window, a document on one line), never past `limit`."""
    window = text[min(at, limit) : max(at, limit)]
    if forward:
        cut = window.find("\n")
        if cut == -1 or cut + 1 >= len(window):
            cut = window.find(" ")
        return at + cut + 1 if cut != -1 else at
    cut = window.rfind("\n")
    if cut <= 0:
        cut = window.rfind(" ")
    return limit + cut if cut > 0 else at
