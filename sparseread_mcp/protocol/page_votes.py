"""Which pages a refine on a paged document reads first: the votes of the goal's best passages, the page's
whole text matched against the goal, and the page's own title (its first lines) matched against the goal.

A passage votes alone: a page whose answer is spread over its lines (a paragraph that names the cost, a
table whose rows name the segments, the year in its head) matches the goal in several small places, none
of which reaches the best thirty. The page read as one document (BM25 over pages) sees those matches
together, so it votes too, in proportion to its score against the best page's.

A statement or a table answers on a page of figures whose passages share few words with the question; its
title says what it is ("Consolidated Statements of Income"). Titles are already indexed with every passage
beneath them (locate/context.py), but a page none of whose passages reaches the goal's best thirty casts no
vote at all. Here each page's title also votes, by the share of the goal's weight (each distinct word by its
rarity among the titles; a word in over half of them, a running header's, weighs nothing) that it holds.

The title that votes is the page's head read deeper than the indexed one (its first three lines): a filing's
page opens with running lines ("Table of Contents", "PART II", "Item 8") and names its statement below them
("INCOME STATEMENTS" on the fifth line). The running lines' words are in most pages' heads and weigh nothing,
so reading past them costs no precision; the head ends at running text or at the first line of figures.

The votes a refine orders pages by are then weighed per unit of the page's length (`per_length`).
"""

from __future__ import annotations

import math
from collections import Counter

import numpy as np

from ..locate.bm25 import Bm25Corpus
from ..locate.context import TITLE_CHARS
from ..locate.terms import terms
from ..readers.base import ParsedArtifact

#: A refine on a paged document weighs pages by the scores of this many of the best passages.
PAGE_VOTES = 30
#: A title holding all of the goal's weight votes this share of the best page's passage votes (0: off).
TITLE_VOTES = 1.0
#: A page read whole votes this share of the best passage vote, times its BM25 score over the best page's (0:
#: off). Session 21, FinanceBench's agent loop (stdio, a server per question), seeded 40 / the other 11,
#: median per question and total against 0.0696 / 0.105 and 0.0351 / 0.086: 0.125 gives 0.0616 / 0.095 and
#: 0.0350 / 0.061; 0.25 gives 0.0571 / 0.102 and 0.0327 / 0.055; 0.5 gives 0.0566 / 0.127 and 0.0326 / 0.052.
#: 0.25 is the one that lowers all four figures the most: 0.5 sends one more question to the full view.
PAGE_TEXT_VOTES = 0.25
#: A page's voting title: its first lines, up to this many short ones (3: the indexed title's depth). Session
#: 18, FinanceBench's agent loop (seeded 40, stdio): 3 -> 8 took the median per question 0.089 -> 0.083 and
#: the total 0.165 -> 0.151; the 11 questions outside them held (median 0.035, total 0.212 both).
TITLE_LINES = 8
#: Votes are divided by the page's length relative to the document's mean page, to this power (0: off): a
#: page's passage votes are a sum, so a long page of prose collects more of them by its length alone, and
#: reading it costs its length. Session 19, agent loop in process (with PAGE_REST_CHARS 5,000): 0.5 / 0.75 /
#: 1.0 took FinanceBench's seeded 40 from median 0.070 and total 0.134 to 0.070 / 0.068 / 0.064 and 0.130 /
#: 0.127 / 0.132; at 1.0 two more questions whose statement fills a long page fell to a full read. The 11
#: others (not seen while choosing): total 0.197 -> 0.191 (2 better, 1 worse), median 0.035 unchanged.
LENGTH_NORM = 0.75
#: ... and no page counts as shorter than this share of the mean (a divider page of one line).
SHORTEST_SHARE = 0.25
_STATE_KEY = "page_votes.titles"
_PAGES_KEY = "page_votes.pages"


def page_votes(
    parsed: ParsedArtifact, ranking: list[tuple[int, float]], goal_terms: tuple[str, ...]
) -> dict[int, float]:
    """Page -> its vote: the scores of its passages among the ranking's first PAGE_VOTES; its whole text's
    BM25 score relative to the best page's, times PAGE_TEXT_VOTES; and its title's share of the goal's words
    (by rarity among titles) times TITLE_VOTES. Both shares are of the best passage vote."""
    lines = parsed.lines
    votes: dict[int, float] = {}
    for index, score in ranking[:PAGE_VOTES]:
        if score > 0 and (page := lines.page_of(parsed.passages[index].start)) is not None:
            votes[page] = votes.get(page, 0.0) + score
    if not goal_terms or not votes:
        return votes
    top = max(votes.values())
    if PAGE_TEXT_VOTES:
        pages = _page_index(parsed)
        # A word on over half the pages (a running header's, the company's name) says nothing about any page.
        scores = pages.scores([t for t in goal_terms if pages.rarity(t) >= math.log(2)])
        best = float(scores.max()) if scores.size else 0.0
        if best > 0:
            for position in np.flatnonzero(scores > 0):
                page = int(position) + 1
                votes[page] = votes.get(page, 0.0) + PAGE_TEXT_VOTES * top * float(scores[position]) / best
    if not TITLE_VOTES:
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
    for page, words in titles.items():
        share = sum(w for t, w in weights.items() if t in words) / total
        if share > 0:
            votes[page] = votes.get(page, 0.0) + TITLE_VOTES * top * share
    return votes


def per_length(parsed: ParsedArtifact, votes: dict[int, float]) -> dict[int, float]:
    """Votes per unit of page length (LENGTH_NORM): what a page offers for what reading it costs."""
    lines = parsed.lines
    count = lines.page_count or 0
    if not LENGTH_NORM or not votes or not count:
        return votes
    mean = max(1.0, len(parsed.artifact.text) / count)

    def relative(page: int) -> float:
        start, end = lines.page_span(page)
        return max(SHORTEST_SHARE, (end - start) / mean)

    return {page: vote / relative(page) ** LENGTH_NORM for page, vote in votes.items()}


def _page_index(parsed: ParsedArtifact) -> Bm25Corpus:
    """BM25 over the document's pages, each page one document, once per file version."""
    cached = parsed.locator_state.get(_PAGES_KEY)
    if isinstance(cached, Bm25Corpus):
        return cached
    lines, text = parsed.lines, parsed.artifact.text
    spans = (lines.page_span(page) for page in range(1, (lines.page_count or 0) + 1))
    index = Bm25Corpus([terms(text[start:end]) for start, end in spans])
    parsed.locator_state[_PAGES_KEY] = index
    return index


def _page_titles(parsed: ParsedArtifact) -> dict[int, frozenset[str]]:
    """Page -> the terms of its head (`page_head`), once per file version."""
    cached = parsed.locator_state.get(_STATE_KEY)
    if isinstance(cached, dict):
        return cached
    lines, text = parsed.lines, parsed.artifact.text
    out: dict[int, frozenset[str]] = {}
    for page in range(1, (lines.page_count or 0) + 1):
        start, end = lines.page_span(page)
        out[page] = frozenset(terms(page_head(text[start : min(end, start + 2 * TITLE_CHARS * TITLE_LINES)])))
    parsed.locator_state[_STATE_KEY] = out
    return out


def page_head(text: str) -> str:
    """A page's first non-blank lines, up to TITLE_LINES of them, ending before running text (a line over
    TITLE_CHARS) or a line of figures (under half letters: a table's body has begun)."""
    kept: list[str] = []
    for line in (line.strip() for line in text.split("\n")):
        if len(kept) == TITLE_LINES or len(line) > TITLE_CHARS:
            break
        if line and sum(ch.isalpha() for ch in line) < len(line) / 2:
            break
        if line:
            kept.append(line)
    return " ".join(kept)
