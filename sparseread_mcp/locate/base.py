"""The location contract: rank an artifact's passages for a query."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal, Protocol

from ..readers.base import ParsedArtifact
from .patterns import NeedlePattern, compile_needle
from .terms import terms


@dataclass(frozen=True, slots=True, kw_only=True)
class Query:
    """What to look for: weighted terms, exact needles (case-insensitive) and regex needles."""

    terms: tuple[str, ...] = ()
    needles: tuple[str, ...] = ()
    patterns: tuple[NeedlePattern, ...] = field(default=())
    #: The answer's type, when the question says it (a quantity, a date, a name): passages dense in
    #: things of that type get a boost.
    cue: AnswerCue | None = None
    #: The question in words, for methods that read sentences rather than terms (dense location).
    text: str = ""


def build_query(texts: list[str], needles: list[str], *, known_terms: tuple[str, ...] = ()) -> Query:
    """Terms from free text (and `known_terms`, already terms); a needle written `/like this/` is a
    regular expression."""
    plain: list[str] = []
    patterns: list[NeedlePattern] = []
    term_list: list[str] = list(known_terms)
    for text in texts:
        term_list.extend(terms(text))
    for needle in needles:
        if len(needle) > 2 and needle.startswith("/") and needle.endswith("/"):
            patterns.append(compile_needle(needle))
        elif needle.strip():
            plain.append(needle.strip())
            term_list.extend(terms(needle))
    cue = answer_cue(" ".join(texts))
    return Query(
        terms=tuple(term_list),
        needles=tuple(plain),
        patterns=tuple(patterns),
        cue=cue,
        text=" ".join([*texts, *plain]).strip(),
    )


AnswerCue = Literal["number", "date", "name"]

_QUANTITY = re.compile(
    r"\b(how (much|many|long|often)|amount|total|sum|average|ratio|percent(age)?|rate|margin|price|cost|"
    r"revenue|expenses?|income|value|number of|count|million|billion|thousand|usd|eur)\b|[$€£%]",
    re.IGNORECASE,
)
_WHEN = re.compile(r"\b(when|what (year|date|month|day|time)|which (year|date|month|season)|since when)\b", re.I)
_WHO = re.compile(r"\b(who|whom|whose|which (person|player|team|company|country|city|party|artist|author))\b", re.I)
_NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")
_DATE = re.compile(
    r"\b(1[5-9]\d\d|20\d\d)\b|\b(jan(uary)?|feb(ruary)?|mar(ch)?|apr(il)?|june?|july?|aug(ust)?|"
    r"sep(tember)?|oct(ober)?|nov(ember)?|dec(ember)?)\b|\b\d{1,2}[/-]\d{1,2}[/-]\d{2,4}\b",
    re.IGNORECASE,
)
_NAME = re.compile(r"\b[A-Z][a-z]+(?:\s+(?:[A-Z][a-z]+|[A-Z]\.|de|van|von|da|del))+\b")
#: How strongly a cue lifts a passage dense in its type (at most 1 + CUE_BOOST).
CUE_BOOST = 0.5
_CUE_PATTERNS: dict[AnswerCue, re.Pattern[str]] = {"number": _NUMBER, "date": _DATE, "name": _NAME}


def answer_cue(question: str) -> AnswerCue | None:
    """What the question asks for, from its wording; dates and names before quantities (`how many years`
    is a quantity, `in which year` a date)."""
    if _WHEN.search(question):
        return "date"
    if _QUANTITY.search(question):
        return "number"
    if _WHO.search(question):
        return "name"
    return None


def cue_density(text: str, cue: AnswerCue) -> float:
    """Matches of the cue's type per 40 characters, capped at 1: tables and lists of names score high."""
    return min(1.0, len(_CUE_PATTERNS[cue].findall(text)) / max(1.0, len(text) / 40))


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
        count += sum(p.count(text) for p in query.patterns)
        if count:
            hits[passage.index] = count
    return hits


class Locator(Protocol):
    name: str

    def rank(self, parsed: ParsedArtifact, query: Query) -> list[tuple[int, float]]:
        """Passages with a positive score, best first: (passage index, score)."""
        ...
