"""Which pages a refine on a paged document reads first: the votes of the goal's best passages, and the
page's own title (its first lines) matched against the goal.

A statement or a table answers on a page of figures whose passages share few words with the question; its
title says what it is ("Consolidated Statements of Income"). Titles are already indexed with every passage
beneath them (locate/context.py), but a page none of whose passages reaches the goal's best thirty casts no
vote at all. Here each page's title also votes, by the share of the goal's weight (each distinct word by its
rarity among the titles; a word in over half of them, a running header's, weighs nothing) that it holds.
"""

from __future__ import annotations

import math
from collections import Counter

from ..locate.context import passage_titles
from ..locate.terms import terms
from ..readers.base import ParsedArtifact

#: A refine on a paged document weighs pages by the scores of this many of the best passages.
PAGE_VOTES = 30
#: A title holding all of the goal's weight votes this share of the best page's passage votes (0: off).
TITLE_VOTES = 1.0
_STATE_KEY = "page_votes.titles"


def page_votes(
    parsed: ParsedArtifact, ranking: list[tuple[int, float]], goal_terms: tuple[str, ...]
) -> dict[int, float]:
    """Page -> its vote: the scores of its passages among the ranking's first PAGE_VOTES, and its title's
    share of the goal's words (by rarity among titles) times TITLE_VOTES times the best passage vote."""
    lines = parsed.lines
    votes: dict[int, float] = {}
    for index, score in ranking[:PAGE_VOTES]:
        if score > 0 and (page := lines.page_of(parsed.passages[index].start)) is not None:
            votes[page] = votes.get(page, 0.0) + score
    if not TITLE_VOTES or not goal_terms or not votes:
        return votes
    titles = _page_titles(parsed)
    count = len(titles)
    held = Counter(t for words in titles.values() for t in words)
    # A word in over half the titles is a running header's: it says nothing about any page.
    weights = {
        t: math.log(1 + (count - held[t] + 0.5) / (held[t] + 0.5)) if held[t] <= count / 2 else 0.0
        for t in dict.fromkeys(goal_terms)
    }
    total = sum(weights.values())
    if not total:
        return votes
    top = max(votes.values())
    for page, words in titles.items():
        share = sum(w for t, w in weights.items() if t in words) / total
        if share > 0:
            votes[page] = votes.get(page, 0.0) + TITLE_VOTES * top * share
    return votes


def _page_titles(parsed: ParsedArtifact) -> dict[int, frozenset[str]]:
    """Page -> the terms of its title (the first short lines: locate/context.py), once per file version."""
    cached = parsed.locator_state.get(_STATE_KEY)
    if isinstance(cached, dict):
        return cached
    lines = parsed.lines
    out: dict[int, frozenset[str]] = {}
    for passage, title in zip(parsed.passages, passage_titles(parsed), strict=True):
        page = lines.page_of(passage.start)
        if page is not None and page not in out:
            out[page] = frozenset(terms(title))
    parsed.locator_state[_STATE_KEY] = out
    return out
