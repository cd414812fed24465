"""Location methods: one Protocol, a set of named methods built from the settings."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

from ..errors import ConfigError
from ..vocabulary import LocationMethod
from .base import Locator, Query, build_query, needle_hits
from .bm25 import Bm25Locator
from .dense import DEFAULT_MODEL, DenseLocator, HybridLocator, semantic_available
from .lexical import LexicalLocator

#: Methods that need the `semantic` extra.
SEMANTIC_METHODS: tuple[LocationMethod, ...] = ("dense", "hybrid")
_PLAIN: dict[str, Callable[[], Locator]] = {"bm25": Bm25Locator, "lexical": LexicalLocator}


class LocatorSet:
    """Every method this installation can run, each built once on first use."""

    def __init__(self, *, semantic_model: str = DEFAULT_MODEL, cache_dir: Path | None = None) -> None:
        self.semantic_model = semantic_model
        self.cache_dir = cache_dir
        self.semantic = semantic_available()
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
                    locator = factory(self.semantic_model, self.cache_dir)  # ConfigError without the extra
                elif name in _PLAIN:
                    locator = _PLAIN[name]()
                else:
                    known = ", ".join([*_PLAIN, *SEMANTIC_METHODS])
                    raise ConfigError(f"unknown location method {name!r}: choose one of {known}")
                self._built[name] = locator
            return locator


__all__ = ["SEMANTIC_METHODS", "Locator", "LocatorSet", "Query", "build_query", "needle_hits", "semantic_available"]
