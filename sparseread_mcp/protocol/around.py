"""What "around this passage" reads: the text right before and right after it.

Each side runs up to AROUND_CHARS, cut at a line (or word) boundary. On a paged text (a PDF, a filing with
form feeds) both sides stay on the passage's pages: a page is a unit (a statement, a table, a note), and the
page beside it is another one, which a plain refine reaches by its votes (and a statement's neighbours after
it). Session 25, FinanceBench's agent loop with a reader that reads around a passage cut off: sides that
crossed a page's edge where the page held no more than its footer there (200 characters) against sides that
never cross it: 15 questions differ, 13 cheaper without crossing (a statement whose first passage held its
bottom rows got the next page's top beside its own), 2 dearer (04458 0.031 -> 0.050: its table ran on over
the page); total 0.0717 -> 0.0712 of one full read, median 0.0401 -> 0.0402, questions at most 0.05x 27 ->
28 of 51.
"""

from __future__ import annotations

from ..readers.base import ParsedArtifact

#: "Around this passage": this many characters on each side of it, cut at line (or word) boundaries.
AROUND_CHARS = 1_000


def bounds_around(parsed: ParsedArtifact, span: tuple[int, int], chars: int) -> tuple[int, int]:
    """Where the text before `span` begins and where the text after it ends: at most `chars` from it on each
    side, at line (or word) boundaries, within the passage's pages on a paged text."""
    text, lines = parsed.artifact.text, parsed.lines
    start, end = span
    before = _boundary(text, max(0, start - chars), forward=True, limit=start)
    after = _boundary(text, min(len(text), end + chars), forward=False, limit=end)
    first, last = lines.page_of(start), lines.page_of(max(start, end - 1))
    if first is None or last is None:
        return before, after
    page_start, page_end = lines.page_span(first)[0], lines.page_span(last)[1]
    # A page opens at its form feed, at a line's start, and its last line ends at page_end (a passage may
    # take in the newline after it: then nothing follows it on its page).
    return min(start, max(before, page_start)), max(end, min(after, page_end))


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
