"""BM25 location with `bm25s`, the index built once per fingerprint; needles boost exact matches."""

from __future__ import annotations

import logging
import math
from collections import Counter

import numpy as np

from ..readers.base import ParsedArtifact
from .base import CUE_BOOST, QUOTED_BOOST, Query, concept_terms, cue_density, needle_hits, quoted_hits
from .context import heading_vocabulary, passage_titles
from .terms import terms

_STATE_KEY = "bm25.index"
#: How many times the titles a passage falls under (its page's, its sections') count among its terms
#: (bench/recall_bench.py measures off, 1, 2, 3, 4 and 6 on every set: 3 is best on contracts and ties
#: the best on FinanceBench, the other sets do not move).
TITLE_WEIGHT = 3
#: A passage without a letter (a page number, a lone figure) takes its titles' words only when it has at
#: least this many terms of its own.
MIN_TITLED_TERMS = 2
#: A goal word that none of the document's headings uses weighs this share of a word they use, when the
#: goal has a word of each (1: off). A request's frame (`Highlight the parts of this contract ... reviewed
#: by a lawyer`, `Answer the following question`) is rare in a document and outscores the subject; the
#: document's headings say what it is about, and hold the subject's words, not the frame's. Plain text,
#: Markdown and HTML with headings only (`heading_vocabulary`). Contracts 48.4 -> 56.0% held out by
#: contract (the value chosen on the other 13 among 0.25 to 0.85: 0.6 for all 14); no other development set
#: has headings and none moved (bench/results/issue33_location.md, session 17).
UNTITLED_WEIGHT = 0.6


class Bm25Corpus:
    """A BM25 index over documents given as term lists (passages of a file, or files of a directory)."""

    def __init__(self, documents: list[list[str]]) -> None:
        import bm25s  # heavy import kept off the server's start-up path

        # bm25s sets its own logger to DEBUG at import and announces every index build.
        logging.getLogger("bm25s").setLevel(logging.WARNING)
        self.model = bm25s.BM25()
        if documents:
            self.model.index([d or [""] for d in documents], show_progress=False)
        self.vocab: dict[str, int] = self.model.vocab_dict if documents else {}
        self.size = len(documents)

    def rarity(self, term: str) -> float:
        """BM25's inverse document frequency of `term` here (0 for a term no document has). The index
        already holds it: a term's column of the score matrix has one entry per document that has it."""
        column = self.vocab.get(term)
        if column is None or not term:
            return 0.0
        indptr = self.model.scores["indptr"]
        found = int(indptr[column + 1] - indptr[column])
        return math.log(1 + (self.size - found + 0.5) / (found + 0.5)) if found else 0.0

    def scores(self, query_terms: tuple[str, ...] | list[str]) -> np.ndarray:
        """One score per document; empty when no query term is in the vocabulary."""
        known = [t for t in query_terms if t in self.vocab]
        if not known:
            return np.zeros(0)
        return np.asarray(self.model.get_scores(known), dtype=np.float64)


def passage_index(parsed: ParsedArtifact) -> Bm25Corpus:
    """The BM25 index of `parsed`'s passages, built once per file version."""
    index = parsed.locator_state.get(_STATE_KEY)
    if index is None:
        index = _passage_corpus(parsed)
        parsed.locator_state[_STATE_KEY] = index
    assert isinstance(index, Bm25Corpus)
    return index


def _passage_corpus(parsed: ParsedArtifact) -> Bm25Corpus:
    # Keywords (names, signatures, docstrings) count twice, the titles a passage falls under
    # (locate/context.py) TITLE_WEIGHT times: they say what a passage is about.
    titles = passage_titles(parsed) if TITLE_WEIGHT else [""] * len(parsed.passages)
    documents = []
    for passage, title in zip(parsed.passages, titles, strict=True):
        text = parsed.text_of(passage)
        own = terms(text) + 2 * terms(passage.keywords)
        # A page number or a lone figure is not about its title: with the title's words and nothing of its
        # own it is the shortest document there is, and outranked the page's real passages on the title alone.
        bare = len(own) < MIN_TITLED_TERMS and not any(ch.isalpha() for ch in text)
        documents.append(own if bare else own + TITLE_WEIGHT * terms(title))
    return Bm25Corpus(documents)


def passage_scores(parsed: ParsedArtifact, query: Query) -> np.ndarray:
    """BM25's score of every passage for the query's terms (empty when no term is in the vocabulary); the
    one step `bench/location_candidates.py` swaps for the query-expansion and term-weighting candidates."""
    corpus = passage_index(parsed)
    asked = concept_terms(parsed, query)
    topical = heading_vocabulary(parsed) if UNTITLED_WEIGHT < 1 else frozenset()
    if not any(t in topical for t in asked) or all(t in topical for t in asked if t in corpus.vocab):
        return corpus.scores(asked)
    counts = Counter(t for t in asked if t in corpus.vocab)
    out = np.zeros(corpus.size)
    for term, times in counts.items():
        out += times * (1.0 if term in topical else UNTITLED_WEIGHT) * corpus.scores([term])
    return out


class Bm25Locator:
    name = "bm25"

    def rank(self, parsed: ParsedArtifact, query: Query) -> list[tuple[int, float]]:
        if not parsed.passages:
            return []
        scores = passage_scores(parsed, query)
        hits = needle_hits(parsed, query)
        ranked: dict[int, float] = {}
        if scores.size:
            top = float(scores.max()) or 1.0
            for position in np.flatnonzero(scores > 0):
                ranked[int(position)] = float(scores[position]) / top
        if query.cue is not None:
            for index in list(ranked):
                ranked[index] *= 1.0 + CUE_BOOST * cue_density(parsed.text_of(parsed.passages[index]), query.cue)
        for index in quoted_hits(parsed, query):
            ranked[index] = ranked.get(index, 0.0) + QUOTED_BOOST
        for index, count in hits.items():
            # An exact needle outranks any purely statistical match.
            ranked[index] = ranked.get(index, 0.0) + 1.0 + min(count, 5) * 0.1
        return sorted(ranked.items(), key=lambda pair: (-pair[1], pair[0]))
