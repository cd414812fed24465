"""The coarse views: outline and card, and the degradation chain that ends in them.

full -> the sections or lines that fit (paged, with `cursor` and `left_out`) -> outline -> card.
A view that does not fit never truncates silently: the pack names the view actually returned.
"""

from __future__ import annotations

from dataclasses import replace

from ..errors import BudgetTooSmall
from ..evidence import Candidate, pointer_for
from ..gate.delivery import Delivery, Extras
from ..gate.pages import deliver_full
from ..gate.respond import MIN_OUTLINE_TOKENS, shrink_preview
from ..gate.route import Route, choose_route
from ..gate.sparse import deliver_sparse
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
    outline = replace(extras, preview=shrink_preview(preview, room, counter))
    try:
        return deliver_sparse(replace(d, view="outline"), [], outline, max_items=0)
    except BudgetTooSmall:
        return card_pack(d, route, counter, extras)


def card_pack(d: Delivery, route: Route, counter: TokenCounter, extras: Extras) -> EvidencePack:
    """Type, size, fingerprint, L and signals: the smallest honest answer about an artifact."""
    preview = build_preview(
        d.parsed, full_view_tokens=d.episode.full_view_tokens, route=route, counter=counter, budget_tokens=None
    )
    update = {"outline": [], "samples": [], "outline_complete": False, "content": None}
    card = replace(extras, preview=stamp_tokens(preview.model_copy(update=update), counter))
    return deliver_sparse(replace(d, view="card"), [], card, max_items=0)


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
        message = (
            f"the full view ({d.episode.full_view_tokens} tokens) leaves no room for text at budget_tokens="
            f"{d.budget_tokens}: here is the outline instead; raise budget_tokens or read a section by anchor"
        )
        return outline_pack(d, route, counter, replace(extras, message=message))


def _frame_tokens(d: Delivery, extras: Extras) -> int:
    frame = d.pack(items=[], spans=[], decision="sparse", reason="", extras=extras)
    return d.render(frame)[1]


def lines_of(parsed: ParsedArtifact, start: int, end: int) -> tuple[int, int]:
    return parsed.lines.line_of(start), parsed.lines.line_of(max(start, end - 1))


def anchored_pack(d: Delivery, start: int, end: int, extras: Extras) -> EvidencePack:
    """An explicit range is delivered whole or not at all; too large, its outline and sub-ranges to read."""
    candidate = Candidate(start=start, end=end, score=1.0)
    try:
        return deliver_sparse(d, [candidate], extras, max_items=1, resend=True)
    except BudgetTooSmall:
        inside = [p for p in d.parsed.passages if p.start >= start and p.end <= end]
        hints = [pointer_for(d.parsed, p.start, p.end).split("#", 1)[1] for p in inside[:12]]
        message = (
            f"the range is larger than budget_tokens={d.budget_tokens}: here is its outline; read a "
            "sub-range (see `next`) or raise budget_tokens"
        )
        outline = replace(extras, message=message, next=tuple(f"sub-range: #{h}" for h in hints))
        route = choose_route(full_view_tokens=d.episode.full_view_tokens, native_fit_tokens=0, intent=None)
        return outline_pack(d, route, d.counter, outline, lines=lines_of(d.parsed, start, end))
