"""Where a model encodes text: under a server, in a worker process; for a library caller, here.

Both models are native code (E5's C engine, the BERT forward pass's BLAS) that a thread's deadline cannot
stop, so the server installs `encoded_by` around each call and the encoding runs where a kill is harmless.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Literal

import numpy as np

#: The model name that means multilingual-e5-small (the `e5` extra); any other is a BERT model's folder.
E5_MODEL = "multilingual-e5-small"

Kind = Literal["query", "passage"]
#: Encodes texts of one kind with one model into L2-normalised float32 rows; the server installs one that
#: runs in a worker.
Encoder = Callable[[str, Kind, tuple[str, ...]], np.ndarray]
_ENCODER: ContextVar[Encoder | None] = ContextVar("sparseread_encoder", default=None)


@contextmanager
def encoded_by(encoder: Encoder) -> Iterator[None]:
    """Encode with `encoder` inside this block (the server: in a worker process)."""
    token = _ENCODER.set(encoder)
    try:
        yield
    finally:
        _ENCODER.reset(token)


def encode(model: str, kind: Kind, texts: tuple[str, ...], here: Encoder) -> np.ndarray:
    """Rows for `texts`, by the installed encoder (a worker) or else by `here`, in this process."""
    return (_ENCODER.get() or here)(model, kind, texts)
