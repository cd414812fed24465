"""The location contract: rank an artifact's passages for a query."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal, Protocol

from ..readers.base import ParsedArtifact
from .concepts import Concept, expansion_terms, named_concepts
from .patterns import NeedlePattern, compile_needle, count_matches
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
    #: Phrases the question quotes (`related to "Renewal Term"`): where the text quotes one too, it defines
    #: or names it, and that passage is lifted (`quoted_hits`).
    quoted: tuple[str, ...] = ()
    #: Concepts the question names that a document may spell otherwise ("COGS": "cost of revenue"); a
    #: locator adds their terms where the document never says them the question's way (`concept_terms`).
    concepts: tuple[Concept, ...] = ()


#: Whether a concept the question names brings the glossary's other spellings of it (locate/concepts.py).
#: Off: a hand-written list stays on only where it helps a set it was not written from, and neither the
#: financial glossary nor the CUAD clause list moved one question on any other development set
#: (bench/results/issue33_location.md: articles in both layouts, TAT-QA, FeTaQA, and contracts or
#: FinanceBench for the other list). Kept to be measured, and for a deployment that knows its domain.
EXPAND_CONCEPTS = False


def concept_terms(parsed: ParsedArtifact, query: Query) -> tuple[str, ...]:
    """The query's terms, with the other spellings of each concept this document never spells as asked."""
    return query.terms + tuple(expansion_terms(query.concepts, query.terms, parsed))


def build_query(texts: list[str], needles: list[str], *, known_terms: tuple[str, ...] = (), context: str = "") -> Query:
    """Terms from free text (and `known_terms`, already terms); a needle written `/like this/` is a
    regular expression. Phrases quoted in the texts or in `context` (the goal beside a slot's question)
    become `quoted`."""
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
        quoted=quoted_phrases(" ".join([*texts, context])),
        concepts=named_concepts(" ".join(texts)) if EXPAND_CONCEPTS else (),
    )


#: Double quotes, straight or curly, paired in order: `"a" and "b"` quotes a and b, never ` and `.
_QUOTE_MARK = re.compile('["\u201c\u201d]')
#: A quoted phrase of more words or characters is a quotation, not a term.
_QUOTED_WORDS = 5
_QUOTED_CHARS = 60
#: At most this many phrases a query (a goal that quotes a whole paragraph of terms says little by each).
MAX_QUOTED = 4
#: How far a passage that quotes a quoted phrase is lifted, as a share of the best score: as far as a needle
#: (1 + 0.1 per match), so it comes first among the passages that match the words, after the needles.
QUOTED_BOOST = 1.0


def quoted_phrases(text: str) -> tuple[str, ...]:
    """The phrases of one to five words the text puts in double quotes, each once, at most `MAX_QUOTED`."""
    marks = [m.start() for m in _QUOTE_MARK.finditer(text)]
    found: list[str] = []
    for opening, closing in zip(marks[::2], marks[1::2], strict=False):
        phrase = " ".join(text[opening + 1 : closing].split()).casefold()
        fits = 2 <= len(phrase) <= _QUOTED_CHARS and len(phrase.split()) <= _QUOTED_WORDS
        if fits and any(ch.isalnum() for ch in phrase) and phrase not in found:
            found.append(phrase)
            if len(found) >= MAX_QUOTED:
                break
    return tuple(found)


def quoted_hits(parsed: ParsedArtifact, query: Query) -> set[int]:
    """Passages that put one of the query's quoted phrases in quotes themselves (`the "Renewal Term"`,
    `each a "Party"`): a term defined or named there. Literal patterns: linear in the text."""
    if not query.quoted:
        return set()
    quote = "[\"'\u201c\u201d\u2018\u2019]"
    words = [r"\s+".join(re.escape(w) for w in phrase.split()) for phrase in query.quoted]
    pattern = re.compile(quote + r"\s?(?:" + "|".join(words) + r")s?" + quote, re.IGNORECASE)
    return {p.index for p in parsed.passages if pattern.search(parsed.text_of(p))}


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
    texts = [parsed.text_of(passage) for passage in parsed.passages]
    matched = count_matches(query.patterns, texts) if query.patterns else [[] for _ in texts]
    for passage, text, pattern_counts in zip(parsed.passages, texts, matched, strict=True):
        folded = text.casefold()
        count = sum(folded.count(n) for n in lowered) + sum(pattern_counts)
        if count:
            hits[passage.index] = count
    return hits


class Locator(Protocol):
    name: str

    def rank(self, parsed: ParsedArtifact, query: Query) -> list[tuple[int, float]]:
        """Passages with a positive score, best first: (passage index, score)."""
        ...
