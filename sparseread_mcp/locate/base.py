"""The location contract: rank an artifact's passages for a query."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Protocol

from ..errors import IntentError
from ..readers.base import ParsedArtifact
from .terms import terms


@dataclass(frozen=True, slots=True, kw_only=True)
class Query:
    """What to look for: weighted terms, exact needles (case-insensitive) and regex needles."""

    terms: tuple[str, ...] = ()
    needles: tuple[str, ...] = ()
    patterns: tuple[re.Pattern[str], ...] = field(default=())

    @property
    def empty(self) -> bool:
        return not (self.terms or self.needles or self.patterns)


def build_query(texts: list[str], needles: list[str]) -> Query:
    """Terms from free text; a needle written `/like this/` is a regular expression."""
    plain: list[str] = []
    patterns: list[re.Pattern[str]] = []
    term_list: list[str] = []
    for text in texts:
        term_list.extend(terms(text))
    for needle in needles:
        if len(needle) > 2 and needle.startswith("/") and needle.endswith("/"):
            try:
                patterns.append(re.compile(needle[1:-1], re.IGNORECASE))
            except re.error as exc:
                raise IntentError(f"needle {needle!r} is not a valid regular expression: {exc}") from exc
        elif needle.strip():
            plain.append(needle.strip())
            term_list.extend(terms(needle))
    return Query(terms=tuple(term_list), needles=tuple(plain), patterns=tuple(patterns))


def needle_hits(parsed: ParsedArtifact, query: Query) -> dict[int, int]:
    """Passage index -> number of needle matches, over every passage (exact, whole artifact)."""
    hits: dict[int, int] = {}
    if not (query.needles or query.patterns):
        return hits
    lowered = [n.casefold() for n in query.needles]
    for passage in parsed.passages:
        text = parsed.text_of(passage)
        folded = text.casefold()
        count = sum(folded.count(n) for n in lowered)
        count += sum(len(p.findall(text)) for p in query.patterns)
        if count:
            hits[passage.index] = count
    return hits


class Locator(Protocol):
    name: str

    def rank(self, parsed: ParsedArtifact, query: Query) -> list[tuple[int, float]]:
        """Passages with a positive score, best first: (passage index, score)."""
        ...
