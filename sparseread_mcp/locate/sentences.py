"""Sentences of a passage, and the best sentence of each of several passages within one budget.

A passage (about 500 characters) is the unit the ranking scores, but the evidence is often one sentence of
it. Where a focus should reach several places at once (the best hits spread over several pages of a
filing), showing the sentence of each passage that holds most of the query's rare terms reaches twice as
many places in the same budget. The split is bounded: a run without a boundary (a flattened table, a
minified line) is cut at a space every `MAX_SENTENCE` characters.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable

from ..readers.base import ParsedArtifact
from .base import Query, concept_terms
from .bm25 import passage_index
from .terms import terms

#: A sentence ends at . ! ? followed by space (closing quotes or brackets allowed), or at a line break.
_BOUNDARY = re.compile(r"(?<=[.!?])[\"'\u201d\u2019)\]]*\s+|\n\s*")
#: A sentence shorter than this brings its neighbour along (a heading, `(a)`, a table cell). Short pieces
#: let one budget reach more pages: FinanceBench's gold page in a focus 66.7% at 120, 70.6-72.5% at 30 to
#: 60, 72.5% at 40 and 70.6% chosen with each company held out (bench/results/issue33_location.md,
#: session 16); pieces are used only by the pages spread, so no other set moves.
MIN_SENTENCE = 40
#: A run longer than this without a boundary is cut at a space.
MAX_SENTENCE = 400
#: Rounds of growth: after every passage's best sentence, its next best, and so on.
MAX_ROUNDS = 8
_STATE_KEY = "sentences.split"

#: (start, end, score, passage index) of a chosen piece of text.
Piece = tuple[int, int, float, int]


def sentences_of(parsed: ParsedArtifact, index: int) -> list[tuple[int, int]]:
    """The sentences of passage `index` as absolute [start, end) spans covering it, cached per passage."""
    cache = parsed.locator_state.setdefault(_STATE_KEY, {})
    assert isinstance(cache, dict)
    found = cache.get(index)
    if found is None:
        found = cache[index] = _split(parsed, index)
    return list(found)


def _split(parsed: ParsedArtifact, index: int) -> list[tuple[int, int]]:
    passage = parsed.passages[index]
    text = parsed.text_of(passage)
    cuts = [0, *(m.end() for m in _BOUNDARY.finditer(text)), len(text)]
    spans: list[tuple[int, int]] = []
    for a, b in itertools.pairwise(cuts):
        while b - a > MAX_SENTENCE:
            space = text.rfind(" ", a + MAX_SENTENCE // 2, a + MAX_SENTENCE)
            cut = space + 1 if space > a else a + MAX_SENTENCE
            spans.append((a, cut))
            a = cut
        if b > a and text[a:b].strip():
            spans.append((a, b))
    merged: list[list[int]] = []
    for a, b in spans:
        if merged and merged[-1][1] - merged[-1][0] < MIN_SENTENCE:
            merged[-1][1] = b
        else:
            merged.append([a, b])
    if len(merged) > 1 and merged[-1][1] - merged[-1][0] < MIN_SENTENCE:
        last = merged.pop()
        merged[-1][1] = last[1]
    trimmed = [_trim(text, a, b) for a, b in merged]
    return [(passage.start + a, passage.start + b) for a, b in trimmed] or [(passage.start, passage.end)]


def _trim(text: str, a: int, b: int) -> tuple[int, int]:
    """[a, b) without the blanks at either end. A sentence cut at a line break would otherwise end just
    past it (with the next line's indent): an item's text then ends in a newline its anchor can only name
    as a column past its line's end, which a page anchor clamps away and line-and-column readers (editors,
    `sed`) never return, so the text is not verbatim at its anchor."""
    piece = text[a:b]
    lead = len(piece) - len(piece.lstrip())
    return a + lead, a + len(piece.rstrip())


def best_sentences(
    parsed: ParsedArtifact,
    ranked: list[tuple[int, float]],
    query: Query,
    max_chars: int,
    *,
    skip: Callable[[int, int], bool] | None = None,
) -> list[Piece]:
    """The best sentence of each ranked passage in rank order while the budget lasts; then the next best
    sentences of the shown passages, the best passage first; picks of one passage with only blanks between
    them merge. Best score first."""
    corpus = passage_index(parsed)
    weights = {t: corpus.rarity(t) for t in set(concept_terms(parsed, query))}
    queues: list[tuple[int, float, list[tuple[int, int]]]] = []
    for index, score in ranked:
        scored = []
        for start, end in sentences_of(parsed, index):
            words = set(terms(parsed.artifact.text[start:end]))
            scored.append((sum(weights.get(t, 0.0) for t in words), -start, (start, end)))
        scored.sort(reverse=True)
        queues.append((index, score, [span for _, _, span in scored]))
    picked: dict[int, Piece] = {}
    used = 0
    for _round in range(MAX_ROUNDS):
        added = False
        for index, score, queue in queues:
            while queue:
                start, end = queue.pop(0)
                if skip is not None and skip(start, end):
                    continue
                if used + end - start <= max_chars:
                    picked[start] = (start, end, score, index)
                    used += end - start
                    added = True
                break
        if not added or used >= max_chars:
            break
    text = parsed.artifact.text
    pieces: list[Piece] = []
    for start in sorted(picked):
        s, e, score, index = picked[start]
        if pieces and pieces[-1][3] == index and not text[pieces[-1][1] : s].strip():  # only blanks between
            last = pieces[-1]
            pieces[-1] = (last[0], e, max(last[2], score), index)
        else:
            pieces.append((s, e, score, index))
    return sorted(pieces, key=lambda piece: (-piece[2], piece[0]))
