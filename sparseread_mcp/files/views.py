"""The coarse views: outline and card, and the degradation chain that ends in them.

full -> the sections or lines that fit (paged, with `cursor` and `left_out`) -> outline -> card.
A view that does not fit never truncates silently: the pack names the view actually returned.
"""

from __future__ import annotations

from ..errors import BudgetTooSmall
from ..gate.delivery import Delivery, Extras, deliver_full, deliver_sparse
from ..gate.respond import MIN_OUTLINE_TOKENS, shrink_preview
from ..gate.route import Route
from ..models import EvidencePack
from ..preview import build_preview
from ..readers.base import ParsedArtifact
from ..tokens import TokenCounter, stamp_tokens
from ..vocabulary import GateDecision


def outline_pack(
    d: Delivery, route: Route, counter: TokenCounter, extras: Extras, *, lines: tuple[int, int] | None = None
) -> EvidencePack:
    """The outline (of `lines` only, when given), fitted with its pack to the budget (gate/respond.py);
    the card when not even a few entries fit."""
    preview = build_preview(
        d.parsed,
        full_view_tokens=d.episode.full_view_tokens,
        route=route,
        counter=counter,
        budget_tokens=None,
        line_range=lines,
    )
    room = d.budget_tokens - _frame_tokens(d, extras)
    if room < MIN_OUTLINE_TOKENS:
        return card_pack(d, route, counter, extras)
    extras.preview = shrink_preview(preview, room, counter)
    d.view = "outline"
    try:
        return deliver_sparse(d, [], extras, max_items=0)
    except BudgetTooSmall:
        return card_pack(d, route, counter, extras)


def card_pack(d: Delivery, route: Route, counter: TokenCounter, extras: Extras) -> EvidencePack:
    """Type, size, fingerprint, L and signals: the smallest honest answer about an artifact."""
    preview = build_preview(
        d.parsed, full_view_tokens=d.episode.full_view_tokens, route=route, counter=counter, budget_tokens=None
    )
    update = {"outline": [], "samples": [], "outline_complete": False, "content": None}
    extras.preview = stamp_tokens(preview.model_copy(update=update), counter)
    d.view = "card"
    return deliver_sparse(d, [], extras, max_items=0)


def full_or_degraded(
    d: Delivery,
    route: Route,
    counter: TokenCounter,
    extras: Extras,
    *,
    decision: GateDecision,
    reason: str,
    start: int = 0,
) -> EvidencePack:
    """The full view (its pages beginning at `start`), or what fits of it; with no room for any text, the
    outline, else the card."""
    try:
        return deliver_full(d, extras, start=start, decision=decision, reason=reason)
    except BudgetTooSmall:
        extras.message = (
            f"the full view ({d.episode.full_view_tokens} tokens) leaves no room for text at budget_tokens="
            f"{d.budget_tokens}: here is the outline instead; raise budget_tokens or read a section by anchor"
        )
        return outline_pack(d, route, counter, extras)


def _frame_tokens(d: Delivery, extras: Extras) -> int:
    frame = d.pack(items=[], spans=[], decision="sparse", reason="", extras=extras)
    return d.render(frame)[1]


def lines_of(parsed: ParsedArtifact, start: int, end: int) -> tuple[int, int]:
    return parsed.lines.line_of(start), parsed.lines.line_of(max(start, end - 1))
