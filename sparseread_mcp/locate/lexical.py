"""Lexical location: distinct query terms present in a passage (the baseline)."""

from __future__ import annotations

from ..readers.base import ParsedArtifact
from .base import Query, concept_terms, needle_hits
from .terms import terms

_STATE_KEY = "lexical.terms"


class LexicalLocator:
    name = "lexical"

    def rank(self, parsed: ParsedArtifact, query: Query) -> list[tuple[int, float]]:
        passage_terms = parsed.locator_state.get(_STATE_KEY)
        if passage_terms is None:
            passage_terms = [frozenset(terms(parsed.text_of(p) + " " + p.keywords)) for p in parsed.passages]
            parsed.locator_state[_STATE_KEY] = passage_terms
        assert isinstance(passage_terms, list)
        wanted = set(concept_terms(parsed, query))
        hits = needle_hits(parsed, query)
        scored = []
        for passage, present in zip(parsed.passages, passage_terms, strict=True):
            score = float(len(wanted & present)) + 10.0 * hits.get(passage.index, 0)
            if score > 0:
                scored.append((passage.index, score))
        scored.sort(key=lambda pair: (-pair[1], pair[0]))
        return scored
