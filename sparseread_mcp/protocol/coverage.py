"""Coverage: which slots have supporting evidence. It never says the evidence is sufficient."""

from __future__ import annotations

import math
import re
from collections.abc import Callable

from ..evidence import pointer_for
from ..locate.bm25 import passage_index
from ..locate.terms import terms
from ..models import Slot, SlotCoverage
from ..readers.base import ParsedArtifact
from ..vocabulary import SlotStatus
from .session import Episode

GOAL_SLOT = "goal"
FOUND_SUPPORT = 0.6
PARTIAL_SUPPORT = 0.25
#: Coverage weighs a slot's words by their rarity in the file (`slot_weights`); False: every word alike.
WEIGHTED = True


def slot_terms(slot: Slot) -> set[str]:
    return set(terms(slot.question)) | {t for alias in slot.aliases for t in terms(alias)}


# What a slot's question asks for, by its wording; a passage without one is at most `partial`.
_ASKS = {
    "number": re.compile(
        r"\b(?:how (?:much|many|long|large|big|often|old)|amount|number of|total|percentage|percent|rate|ratio"
        r"|price|cost|revenue|income|sales|margin|count|value of)\b",
        re.IGNORECASE,
    ),
    "date": re.compile(r"\b(?:when|what (?:year|date|month|day)|which (?:year|date|month))\b", re.IGNORECASE),
    "name": re.compile(r"\b(?:who|whom|whose|which (?:company|person|party|firm|entity|bank|court))\b", re.IGNORECASE),
}
_CARRIES = {
    "number": re.compile(r"\d"),
    "date": re.compile(
        r"\b(?:1[5-9]|20)\d\d\b|\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.? \d", re.IGNORECASE
    ),
    "name": re.compile(r"(?<=[^.!?\s] )[A-Z][\w&'’-]+|\b[A-Z]{2,}\b"),
}


def asks_for(slot: Slot) -> list[str]:
    """The kinds of value (number, date, name) the slot's question asks for."""
    return [kind for kind, pattern in _ASKS.items() if pattern.search(slot.question[:2_000])]


def support(slot: Slot, text: str, weights: dict[str, float] | None = None) -> float:
    """Share of the slot's words present in `text` (with `weights`, of their weight: see `slot_weights`);
    an exact alias counts as full support.

    Words are not enough for `found`: a slot that asks for a number, a date or a name is only
    partially supported by a passage that carries none.
    """
    folded = text.casefold()
    if any(alias.strip() and alias.casefold() in folded for alias in slot.aliases):
        value = 1.0
    else:
        wanted = weights if weights is not None else dict.fromkeys(slot_terms(slot), 1.0)
        total = sum(wanted.values())
        if not total:
            return 0.0
        present = set(terms(text))
        value = sum(weight for term, weight in wanted.items() if term in present) / total
    if value >= FOUND_SUPPORT and not all(_CARRIES[kind].search(text) for kind in asks_for(slot)):
        return PARTIAL_SUPPORT
    return value


def slot_weights(parsed: ParsedArtifact, slot: Slot) -> dict[str, float]:
    """Each of the slot's words weighted by its rarity in this file (BM25's idf; a word the file never
    uses weighs most): words on every page say nothing about where the answer is."""
    index = passage_index(parsed)
    unseen = math.log(1 + (index.size + 0.5) / 0.5)
    return {term: index.rarity(term) or unseen for term in slot_terms(slot)}


def status_of(best: float, has_items: bool) -> SlotStatus:
    if has_items and best >= FOUND_SUPPORT:
        return "found"
    if has_items and best >= PARTIAL_SUPPORT:
        return "partial"
    return "missing"


def summarize(slot_ids: list[str], evidence: dict[str, list[tuple[str, float]]]) -> list[SlotCoverage]:
    """One entry per slot: status from the best support seen, pointers best first: only those that support
    the slot at least partly (a passage sharing one common word with it says nothing about where it is)."""
    out = []
    for slot_id in slot_ids:
        found = sorted(evidence.get(slot_id, []), key=lambda pair: -pair[1])
        best = found[0][1] if found else 0.0
        pointers = [p for p, value in found[:5] if value >= PARTIAL_SUPPORT]
        out.append(SlotCoverage(slot=slot_id, status=status_of(best, bool(found)), pointers=pointers))
    return out


def episode_coverage(
    parsed: ParsedArtifact, episode: Episode, slots: list[Slot], *, unit_limit: int
) -> Callable[[list[tuple[int, int]]], tuple[list[SlotCoverage], list[str]]]:
    """Coverage over everything the episode delivered plus a pending batch of spans.

    A span longer than `unit_limit` (a full-view page) is judged passage by passage, so its pointers
    name the passages that carry the support rather than the whole page.
    """

    weights = {slot.id: slot_weights(parsed, slot) for slot in slots} if WEIGHTED else {}

    def coverage(spans: list[tuple[int, int]]) -> tuple[list[SlotCoverage], list[str]]:
        evidence: dict[str, list[tuple[str, float]]] = {}
        for start, end in [(d.start, d.end) for d in episode.delivered] + spans:
            units = (
                [(start, end)]
                if end - start <= unit_limit
                else [(p.start, p.end) for p in parsed.passages if p.start >= start and p.end <= end]
            )
            for s, e in units:
                text = parsed.artifact.text[s:e]
                for slot in slots:
                    if (value := support(slot, text, weights.get(slot.id))) > 0:
                        evidence.setdefault(slot.id, []).append((pointer_for(parsed, s, e), value))
        result = summarize([s.id for s in slots], evidence)
        return result, [c.slot for c in result if c.status != "found"]

    return coverage
