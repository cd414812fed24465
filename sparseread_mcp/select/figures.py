"""Pages of figures: a statement or a table printed as text on a page of a paged document (a filing's
cash flow statement), where the evidence is a stretch of the page under its title, not one passage.

On such a page a robust choice reads in windows (`Selector.choose(..., on_figures=True)`); on a page of
running prose (a contract's clauses printed in pages) it stays as chosen, since a clause is one passage
and spreading the budget over several hits finds it more often (bench/paged_bench.py measures both).
"""

from __future__ import annotations

import re

from ..readers.base import ParsedArtifact

#: A page is figures when at least this share of its words are figures (1,488  (370)  12.5%  $5,363).
#: Running prose stays under one word in twenty; a printed statement is one in four or more.
FIGURES_SHARE = 0.15
#: The page is judged on at most this many characters each side of the best hit (a page may be huge).
_AROUND = 8_000
_FIGURE = re.compile(r"[(\[$€£-]*\d[\d,.]*[)\]%]*")


def figures_share(text: str) -> float:
    words = text.split()
    return sum(1 for w in words if _FIGURE.fullmatch(w)) / len(words) if words else 0.0


def best_on_figures(parsed: ParsedArtifact, ranking: list[tuple[int, float]]) -> bool:
    """Whether the best-ranked passage lies on a page of figures of pages of prose (never a sheet, a
    row or a record: `ParsedArtifact.prose_pages`)."""
    if not ranking or not parsed.prose_pages:
        return False
    passage = parsed.passages[ranking[0][0]]
    page = parsed.lines.page_of(passage.start)
    if page is None:
        return False
    start, end = parsed.lines.page_span(page)
    start, end = max(start, passage.start - _AROUND), min(end, passage.end + _AROUND)
    return figures_share(parsed.artifact.text[start:end]) >= FIGURES_SHARE
