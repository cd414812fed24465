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
    #: The question asks for a quantity: passages dense in numbers get a boost (an answer-type cue).
    wants_number: bool = False
    #: The question in words, for methods that read sentences rather than terms (dense location).
    text: str = ""

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
    wants_number = any(_QUANTITY.search(text) for text in texts)
    return Query(
        terms=tuple(term_list),
        needles=tuple(plain),
        patterns=tuple(patterns),
        wants_number=wants_number,
        text=" ".join([*texts, *plain]).strip(),
    )


_QUANTITY = re.compile(
    r"\b(how (much|many|long|often)|amount|total|sum|average|ratio|percent(age)?|rate|margin|price|cost|"
    r"revenue|expenses?|income|value|number of|count|million|billion|thousand|usd|eur)\b|[$€£%]",
    re.IGNORECASE,
)
_NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")
#: How strongly number density lifts a passage for quantity questions (at most 1 + NUMBER_BOOST).
NUMBER_BOOST = 0.5


def number_density(text: str) -> float:
    """Numbers per 40 characters, capped at 1: tables and figures score high, prose low."""
    return min(1.0, len(_NUMBER.findall(text)) / max(1.0, len(text) / 40))


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
