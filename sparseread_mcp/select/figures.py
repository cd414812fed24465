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
#: A page is judged on at most this many characters each side of the best hit, or on twice as many from
#: its start when there is no hit to judge it around (a page may be huge).
_AROUND = 8_000
#: A figure: a number with a few signs around it. The signs are bounded: unbounded, a run of dashes made
#: every search start scan the run again (quadratic under `finditer`).
_FIGURE = re.compile(r"[(\[$€£-]{0,3}\d[\d,.]*[)\]%]{0,3}")


def figures_share(text: str) -> float:
    words = text.split()
    return sum(1 for w in words if _FIGURE.fullmatch(w)) / len(words) if words else 0.0


def page_of_figures(parsed: ParsedArtifact, page: int, near: tuple[int, int] | None = None) -> bool:
    """Whether `page` is a page of figures, judged around the span `near` (a hit on it) or from its start."""
    start, end = parsed.lines.page_span(page)
    if near is None:
        end = min(end, start + 2 * _AROUND)
    else:
        start, end = max(start, near[0] - _AROUND), min(end, near[1] + _AROUND)
    return figures_share(parsed.artifact.text[start:end]) >= FIGURES_SHARE


def best_on_figures(parsed: ParsedArtifact, ranking: list[tuple[int, float]]) -> bool:
    """Whether the best-ranked passage lies on a page of figures of pages of prose (never a sheet, a
    row or a record: `ParsedArtifact.prose_pages`)."""
    if not ranking or not parsed.prose_pages:
        return False
    passage = parsed.passages[ranking[0][0]]
    page = parsed.lines.page_of(passage.start)
    return page is not None and page_of_figures(parsed, page, near=(passage.start, passage.end))
