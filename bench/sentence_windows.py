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

from collections.abc import Callable
from typing import Any

from sparseread_mcp.locate.base import Query
from sparseread_mcp.locate.exposure import RELATIVE_CUTOFF, SNIPPET_DEPTH, Span
from sparseread_mcp.locate.sentences import best_sentences
from sparseread_mcp.readers.base import ParsedArtifact


def sentence_windows(
    parsed: ParsedArtifact,
    ranked: list[tuple[int, float]],
    query: Query,
    max_chars: int,
    *,
    skip: Callable[[int, int], bool] | None = None,
) -> list[Span]:
    """The best sentence of each ranked passage in rank order while the budget lasts (the shipped
    `locate.sentences.best_sentences`, as spans)."""
    return [Span(*piece) for piece in best_sentences(parsed, ranked, query, max_chars, skip=skip)]


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
