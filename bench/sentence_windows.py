"""Sentence windows, measured in bench.location_ablation and not shipped: the best sentences of the best
passages, several small windows within one budget.

A passage (about 500 characters) is the unit a method ranks: its words say what it is about. But the
evidence a question needs is often one sentence of it (a date, a party, a figure), and three whole passages
fill a 1,500-character focus. Here the ranking still decides where to look; within each ranked passage the
sentence that holds the most of the query's rare terms (BM25's inverse document frequency over the
passages) is shown, the best passages first, so one budget reaches twice as many places. What budget is
left grows the shown sentences by their neighbours. `bench/location_ablation.py` measures it against
whole passages, context and windows on every development set.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable
from typing import Any

from sparseread_mcp.locate.base import Query, concept_terms
from sparseread_mcp.locate.bm25 import passage_index
from sparseread_mcp.locate.exposure import RELATIVE_CUTOFF, SNIPPET_DEPTH, Span
from sparseread_mcp.locate.terms import terms
from sparseread_mcp.readers.base import ParsedArtifact

#: A sentence ends at . ! ? (or ; : before a line break) followed by space, or at a line break.
_BOUNDARY = re.compile(r"(?<=[.!?])[\"'\u201d\u2019)\]]*\s+|\n\s*")
#: A sentence shorter than this brings its neighbour along (a heading, `(a)`, a table cell).
MIN_SENTENCE = 120
#: A run longer than this without a boundary (a table flattened, a minified line) is cut at a space.
MAX_SENTENCE = 400
_STATE_KEY = "sentences.split"


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
        if merged and (merged[-1][1] - merged[-1][0] < MIN_SENTENCE):
            merged[-1][1] = b
        else:
            merged.append([a, b])
    if len(merged) > 1 and merged[-1][1] - merged[-1][0] < MIN_SENTENCE:
        last = merged.pop()
        merged[-1][1] = last[1]
    return [(passage.start + a, passage.start + b) for a, b in merged] or [(passage.start, passage.end)]


def sentence_windows(
    parsed: ParsedArtifact,
    ranked: list[tuple[int, float]],
    query: Query,
    max_chars: int,
    *,
    skip: Callable[[int, int], bool] | None = None,
) -> list[Span]:
    """The best sentence of each ranked passage in rank order while the budget lasts; then the next best
    sentences of the shown passages, the best passage first; adjacent picks merge into one span."""
    corpus = passage_index(parsed)
    weights = {t: corpus.rarity(t) for t in set(concept_terms(parsed, query))}
    picked: dict[int, tuple[int, int, float, int]] = {}  # start -> (start, end, score, passage)
    used = 0
    queues: list[tuple[int, float, list[tuple[int, int]]]] = []
    for index, score in ranked:
        scored = []
        for start, end in sentences_of(parsed, index):
            words = set(terms(parsed.artifact.text[start:end]))
            scored.append((sum(weights.get(t, 0.0) for t in words), -start, (start, end)))
        scored.sort(reverse=True)
        queues.append((index, score, [span for _, _, span in scored]))
    for _round in range(8):
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
    spans: list[Span] = []
    for start in sorted(picked):
        s, e, score, index = picked[start]
        if spans and spans[-1].end >= s - 2 and parsed.passages[spans[-1].passage].index == index:
            last = spans[-1]
            spans[-1] = Span(last.start, e, max(last.score, score), last.passage)
        else:
            spans.append(Span(s, e, score, index))
    return sorted(spans, key=lambda span: (-span.score, span.start))


def focus_in_sentences(
    parsed: ParsedArtifact, intent: Any, locator: Any, episode: Any, *, form: str = "snippets", max_chars: int = 2_000
) -> tuple[list[Any], list[tuple[int, float]]]:
    """`protocol.actions.focus` with sentence windows as the exposure (patched in by the bench)."""
    from sparseread_mcp.protocol import actions
    from sparseread_mcp.protocol.intents import query_for

    query = query_for(intent)
    ranking = locator.rank(parsed, query)
    floor = ranking[0][1] * RELATIVE_CUTOFF if ranking else 0.0
    ranked = [(i, s) for i, s in ranking[:SNIPPET_DEPTH] if s >= floor]
    spans = sentence_windows(parsed, ranked, query, max_chars, skip=episode.overlaps_delivered)
    slots = actions.slots_of(intent)
    return [actions._span_candidate(parsed, span, slots) for span in spans], ranking
