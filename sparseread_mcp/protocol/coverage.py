"""Coverage: which slots have supporting evidence. It never says the evidence is sufficient."""

from __future__ import annotations

from collections.abc import Callable

from ..evidence import pointer_for
from ..locate.terms import terms
from ..models import Slot, SlotCoverage, SlotStatus
from ..readers.base import ParsedArtifact
from .session import Episode

GOAL_SLOT = "goal"
FOUND_SUPPORT = 0.6
PARTIAL_SUPPORT = 0.25


def slot_terms(slot: Slot) -> set[str]:
    return set(terms(slot.question)) | {t for alias in slot.aliases for t in terms(alias)}


def support(slot: Slot, text: str) -> float:
    """Share of the slot's words present in `text`; an exact alias counts as full support."""
    folded = text.casefold()
    if any(alias.strip() and alias.casefold() in folded for alias in slot.aliases):
        return 1.0
    wanted = slot_terms(slot)
    if not wanted:
        return 0.0
    return len(wanted & set(terms(text))) / len(wanted)


def status_of(best: float, has_items: bool) -> SlotStatus:
    if has_items and best >= FOUND_SUPPORT:
        return "found"
    if has_items and best >= PARTIAL_SUPPORT:
        return "partial"
    return "missing"


def summarize(slot_ids: list[str], evidence: dict[str, list[tuple[str, float]]]) -> list[SlotCoverage]:
    """One entry per slot: status from the best support seen, pointers best first."""
    out = []
    for slot_id in slot_ids:
        found = sorted(evidence.get(slot_id, []), key=lambda pair: -pair[1])
        best = found[0][1] if found else 0.0
        out.append(SlotCoverage(slot=slot_id, status=status_of(best, bool(found)), pointers=[p for p, _ in found[:5]]))
    return out


def episode_coverage(
    parsed: ParsedArtifact, episode: Episode, slots: list[Slot], *, unit_limit: int
) -> Callable[[list[tuple[int, int]]], tuple[list[SlotCoverage], list[str]]]:
    """Coverage over everything the episode delivered plus a pending batch of spans.

    A span longer than `unit_limit` (a full-view page) is judged passage by passage, so its pointers
    name the passages that carry the support rather than the whole page.
    """

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
                    if (value := support(slot, text)) > 0:
                        evidence.setdefault(slot.id, []).append((pointer_for(parsed, s, e), value))
        result = summarize([s.id for s in slots], evidence)
        return result, [c.slot for c in result if c.status != "found"]

    return coverage
