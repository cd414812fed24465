"""The session card: reading state compact enough to keep at the top of a context."""

from __future__ import annotations

from typing import Any, cast

from ..config import HARD_RESPONSE_CAP_TOKENS
from ..errors import BudgetTooSmall
from ..models import ArtifactRef, Card, EpisodeState, SlotCoverage
from ..tokens import TokenCounter, stamp_tokens
from .session import Session


def build_card(
    session: Session, *, changed: list[str], only_path: str | None = None, store_problem: str | None = None
) -> Card:
    """Episodes with their ledgers, the latest coverage per slot, pointers gathered, and next steps."""
    states: list[EpisodeState] = []
    pointers: list[str] = []
    retirable: list[str] = []
    coverage: dict[str, SlotCoverage] = {}
    for episode in session.episodes.values():
        if only_path is not None and episode.path != only_path:
            continue
        states.append(
            EpisodeState(
                id=episode.id,
                artifact=ArtifactRef(path=episode.path, type=episode.type, fingerprint=episode.fingerprint),
                objective=episode.objective,
                full_view_chars=episode.ledger.full_view_chars,
                episode_chars=episode.ledger.sparse_chars,
                remaining_chars=episode.ledger.remaining,
                full_view_delivered=episode.full_view_done,
                closed=episode.closed,
                stale=episode.stale,
            )
        )
        if episode.stale:
            retirable.extend(f"{d.pointer} (stale: the file changed)" for d in episode.delivered)
        else:
            pointers.extend(d.pointer for d in episode.delivered)
            coverage.update(episode.coverage)
            if episode.full_view_started:
                retirable.extend(
                    f"{d.pointer} (superseded by the full view)" for d in episode.delivered if not d.full_view
                )
    steps = [f"re-read changed file {p}: its earlier evidence is stale" for p in changed]
    missing = [c.slot for c in coverage.values() if c.status != "found"]
    if missing:
        steps.append(f"collect or refine for unresolved slots: {', '.join(missing)}")
    if not states:
        steps.append("sro_preview a file, then sro_read with an intent")
    return Card(
        session_intent=session.intent,
        episodes=states,
        coverage=list(coverage.values()),
        pointers=pointers[-40:],
        changed=changed,
        retirable=retirable[-40:],
        next=steps,
        store=store_problem,
    )


#: How each list of a card gives way to the budget: which end is kept (the most recent or most relevant).
_KEEP_TAIL = ("episodes", "pointers", "retirable")  # oldest first in the session, so the tail is the newest
_KEEP_HEAD = ("coverage", "changed", "next")  # sorted or ordered by importance already
_LEFT_OUT_STEP = "some entries were left out to fit budget_tokens (see left_out): pass path= or a larger budget"


def fit_card(card: Card, budget_tokens: int, counter: TokenCounter) -> Card:
    """`card` stamped with its token count, within `budget_tokens`: when the whole card does not fit,
    every list keeps its most recent (or most relevant) entries, as many as fit, and `left_out` counts
    the rest. The largest per-list count that fits is found by bisection (a handful of counts)."""
    whole = stamp_tokens(card, counter)
    if whole.tokens <= budget_tokens:
        return whole
    longest = max(len(items) for items in _lists(card).values())
    fitted = _cut(card, 0, counter)
    if fitted.tokens > budget_tokens:
        raise BudgetTooSmall(
            f"the session card's frame alone is {fitted.tokens} tokens, over budget_tokens={budget_tokens}: "
            f"use a larger budget_tokens (up to {HARD_RESPONSE_CAP_TOKENS})"
        )
    low, high = 0, longest  # `low` fits, `high` + 1 does not (the whole card did not)
    while low < high:
        middle = (low + high + 1) // 2
        candidate = _cut(card, middle, counter)
        if candidate.tokens <= budget_tokens:
            low, fitted = middle, candidate
        else:
            high = middle - 1
    return fitted


def _lists(card: Card) -> dict[str, list[Any]]:
    lists: dict[str, list[Any]] = {name: list(getattr(card, name)) for name in (*_KEEP_TAIL, *_KEEP_HEAD)}
    if card.trace is not None:
        lists["trace.artifacts"] = list(card.trace.artifacts)
        lists["trace.recent"] = list(card.trace.recent)
    return lists


def _cut(card: Card, keep: int, counter: TokenCounter) -> Card:
    """The card with at most `keep` entries per list, stamped, with what was left out counted."""
    left_out: dict[str, int] = {}
    update: dict[str, object] = {}
    for name, items in _lists(card).items():
        if len(items) <= keep:
            continue
        left_out[name] = len(items) - keep
        kept = items[len(items) - keep :] if name in (*_KEEP_TAIL, "trace.recent") else items[:keep]
        update[name] = kept
    trace = card.trace
    if trace is not None:
        trace_update = {k.split(".", 1)[1]: update.pop(k) for k in ("trace.artifacts", "trace.recent") if k in update}
        update["trace"] = trace.model_copy(update=trace_update)
    steps = cast(list[str], update.get("next", card.next))
    update["next"] = [*steps, _LEFT_OUT_STEP] if left_out else steps
    update["left_out"] = left_out or None
    return stamp_tokens(card.model_copy(update=update), counter)
