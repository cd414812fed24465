"""A reranker that scores a passage by its best sentence (session 29): measured, not adopted unless it wins.

The gold of the long articles is one sentence; a 500-character passage holds about four. The product's
hybrid (locate/dense.py) compares the question with the whole passage's vector. Here a passage's similarity
is instead its best sentence's (or the mean of the two), each sentence encoded alone: about as many tokens
as the passage, so about the same cost. Variants of bench.location_ablation, on plain prose only (the
product's route), for MiniLM-L6 and E5.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bench.e5_reranker import CACHE, NO_PROSE_ROUTE, _get_with
from sparseread_mcp.locate import LocatorSet
from sparseread_mcp.locate.dense import DEFAULT_MODEL, HybridLocator
from sparseread_mcp.locate.sentences import sentences_of
from sparseread_mcp.readers.base import ParsedArtifact

#: How a passage's similarity is made from its sentences' and its own: "best" sentence, or the "mean" of
#: the best sentence and the whole passage.
MODES = ("best", "mean")


class SentenceHybrid(HybridLocator):
    """The product's hybrid, each passage's similarity taken from its sentences."""

    def __init__(self, mode: str, embedder: Any | None = None) -> None:
        super().__init__(DEFAULT_MODEL, CACHE.with_name("sparseread-bench-sentences"), embedder=embedder)
        self.mode = mode
        self.kept: dict[str, np.ndarray] = {}  # sentence text -> vector (the bench's own cache)

    def encoded(self, parsed: ParsedArtifact, text: str, indexes: list[int]) -> tuple[list[int], np.ndarray]:
        if not indexes:
            return [], np.zeros(0)
        query = self.embedder.encode_query(text)
        spans = {i: sentences_of(parsed, i) for i in indexes}
        texts = {parsed.artifact.text[a:b] for i in indexes for a, b in spans[i]}
        missing = [t for t in texts if t not in self.kept]
        if missing:
            for sentence, vector in zip(missing, self.embedder.encode(missing), strict=True):
                self.kept[sentence] = vector
        best = np.asarray(
            [max(float(self.kept[parsed.artifact.text[a:b]] @ query) for a, b in spans[i]) for i in indexes]
        )
        if self.mode == "best":
            return indexes, best
        _, whole = super().encoded(parsed, text, indexes)
        return indexes, (best + whole) / 2


def patch(mode: str, e5: bool) -> tuple[Any, str, Any]:
    """A variant's patch: every "hybrid" location is a `SentenceHybrid` (on E5 when `e5`)."""

    def build() -> SentenceHybrid:
        if e5:
            from sparseread_mcp.locate.e5 import E5Embedder

            return SentenceHybrid(mode, E5Embedder())
        return SentenceHybrid(mode)

    return (LocatorSet, "get", _get_with(build, f"hybrid by sentences {mode} {'e5' if e5 else 'minilm'}"))


__all__ = ["MODES", "NO_PROSE_ROUTE", "SentenceHybrid", "patch"]
