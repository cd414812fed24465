"""Location methods: one Protocol, a set of named methods built from the settings."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

from ..errors import ConfigError
from ..vocabulary import LocationMethod
from .base import Locator, Query, build_query, needle_hits
from .bm25 import Bm25Locator
from .dense import DEFAULT_MODEL, DenseLocator, HybridLocator, model_available, semantic_available
from .e5 import E5Embedder, e5_available
from .encoding import E5_MODEL
from .lexical import LexicalLocator

#: The model setting's default: E5 where the `e5` extra is installed, else MiniLM-L6 (the `semantic` extra).
AUTO_MODEL = "auto"


def resolve_semantic_model(name: str) -> str:
    """The model a setting names; `auto` picks E5 when its extra is installed."""
    if name != AUTO_MODEL:
        return name
    return E5_MODEL if e5_available() else DEFAULT_MODEL


#: Methods that need the `semantic` extra.
SEMANTIC_METHODS: tuple[LocationMethod, ...] = ("dense", "hybrid")
_PLAIN: dict[str, Callable[[], Locator]] = {"bm25": Bm25Locator, "lexical": LexicalLocator}


class LocatorSet:
    """Every method this installation can run, each built once on first use."""

    def __init__(self, *, semantic_model: str = AUTO_MODEL, cache_dir: Path | None = None) -> None:
        self.semantic_model = resolve_semantic_model(semantic_model)
        self.cache_dir = cache_dir
        #: Dense and hybrid run on E5 (the `e5` extra); else on a BERT model in numpy (the `semantic` extra).
        self.e5 = self.semantic_model == E5_MODEL
        self.semantic = e5_available() if self.e5 else model_available(self.semantic_model)
        self._built: dict[str, Locator] = {}
        self._lock = threading.Lock()

    @property
    def available(self) -> tuple[LocationMethod, ...]:
        return ("lexical", "bm25", *(SEMANTIC_METHODS if self.semantic else ()))

    def get(self, name: str) -> Locator:
        with self._lock:
            locator = self._built.get(name)
            if locator is None:
                if name in SEMANTIC_METHODS:
                    factory = DenseLocator if name == "dense" else HybridLocator
                    embedder = E5Embedder() if self.e5 else None  # ConfigError without the extra
                    locator = factory(self.semantic_model, self.cache_dir, embedder=embedder)
                elif name in _PLAIN:
                    locator = _PLAIN[name]()
                else:
                    known = ", ".join([*_PLAIN, *SEMANTIC_METHODS])
                    raise ConfigError(f"unknown location method {name!r}: choose one of {known}")
                self._built[name] = locator
            return locator


__all__ = [
    "AUTO_MODEL",
    "DEFAULT_MODEL",
    "SEMANTIC_METHODS",
    "Locator",
    "LocatorSet",
    "Query",
    "build_query",
    "model_available",
    "needle_hits",
    "resolve_semantic_model",
    "semantic_available",
]
