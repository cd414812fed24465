"""Location methods: one Protocol, a dict of factories."""

from __future__ import annotations

from collections.abc import Callable

from ..errors import ConfigError
from .base import Locator, Query, build_query, needle_hits
from .bm25 import Bm25Locator
from .lexical import LexicalLocator

LOCATORS: dict[str, Callable[[], Locator]] = {
    "bm25": Bm25Locator,
    "lexical": LexicalLocator,
}


def get_locator(name: str) -> Locator:
    try:
        return LOCATORS[name]()
    except KeyError:
        raise ConfigError(f"unknown location method {name!r}: choose one of {', '.join(sorted(LOCATORS))}") from None


__all__ = ["LOCATORS", "Locator", "Query", "build_query", "get_locator", "needle_hits"]
