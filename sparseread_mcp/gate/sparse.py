"""Check-before-delivery: fit a batch to the response budget, then to the ledger, or fall back.

A sparse batch is chosen under the response budget, serialized, and only then checked against the
ledger: E + payload <= L, the payload being the items as serialized (pointers and escapes included),
so reading a whole file in pieces costs more than reading it once. A batch that would not fit intact
is withheld and the faithful full view is delivered instead, once, paged with a cursor when it exceeds
the response budget (pages.py); earlier sparse items are listed in `retire` and the episode closes.
Hence every episode delivers at most 2L.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from ..deadline import checkpoint
from ..errors import BudgetTooSmall
from ..evidence import Candidate, item_for
from ..models import EvidenceItem, EvidencePack
from ..protocol.session import DeliveredItem
from ..vocabulary import HELD_IN_SESSION
from .delivery import Delivery, Extras, serialized_chars
from .pages import deliver_full, next_ranked_page
from .respond import pointers_note

#: Builds the pack of a chosen batch, for this delivery and these extras.
_Build = Callable[[list[tuple[Candidate, EvidenceItem]], Delivery, Extras], EvidencePack]


def deliver_sparse(
    d: Delivery, candidates: list[Candidate], extras: Extras, *, max_items: int, resend: bool = False
) -> EvidencePack:
    """Deliver the best candidates that fit the budget, or the full view when the ledger says so.

    A match this episode delivered, or this session received whole in another episode (`d.held`: a verify
    of what a collect sent, a second focus with other words), is named in `already_delivered`, not sent
    again, and its text still counts for coverage. `resend` is for dereferencing (a pointer or an explicit
    anchor): its text is delivered, and counted in E, even when it was delivered before; "never resend" is
    a rule for search results only.
    """
    episode = d.episode
    if episode.full_view_started and not resend:
        return next_ranked_page(d, candidates, extras)
    fresh: list[Candidate] = []
    already: list[str] = []
    held: list[DeliveredItem] = []  # received in another episode of this session
    for c in candidates:
        if resend:
            fresh.append(c)
        elif episode.overlaps_delivered(c.start, c.end):
            already.append(item_for(d.parsed, c).pointer)
        elif d.held is not None and d.held(c.start, c.end):
            pointer = item_for(d.parsed, c).pointer
            already.append(pointer)
            held.append(DeliveredItem(pointer=pointer, start=c.start, end=c.end, slots=c.slots, support={}))
        else:
            fresh.append(c)
    elsewhere = [(h.start, h.end) for h in held]  # what the agent holds: support for coverage

    def build(chosen: list[tuple[Candidate, EvidenceItem]], d: Delivery, extras: Extras) -> EvidencePack:
        if chosen:
            reason = f"sparse read: {len(chosen)} passage(s) within E <= L"
        elif elsewhere:
            reason = HELD_IN_SESSION
        elif already:
            reason = "nothing new to deliver: every match was delivered already in this episode"
        else:
            reason = _empty_reason(extras)
        items = [item for _, item in chosen]
        spans = [(c.start, c.end) for c, _ in chosen]
        return d.finish(
            d.pack(
                items=items,
                spans=spans,
                decision="sparse",
                reason=reason,
                extras=extras,
                already=already[:5],
                support=elsewhere,
            )
        )

    chosen, passed, pack = _greedy(d, extras, fresh, build, max_items=max_items)
    if fresh and not chosen and passed:
        if resend:
            raise BudgetTooSmall(
                f"budget_tokens={d.budget_tokens} cannot hold this passage ({passed[0].pointer}); raise "
                "budget_tokens or narrow the target with an anchor"
            )
        pack = _pointers_only(d, extras, [i.pointer for i in passed], build)
    payload = serialized_chars([item for _, item in chosen])
    checkpoint()  # the last moment a cancelled call can stop with nothing recorded
    if not episode.ledger.fits(payload):
        return _fallback(d, extras, payload)
    episode.ledger.charge_sparse(payload)
    for c, item in chosen:
        episode.delivered.append(
            DeliveredItem(pointer=item.pointer, start=c.start, end=c.end, slots=c.slots, support={})
        )
    episode.delivered.extend(held)  # the episode's evidence too (a refine reads on past it), charged where sent
    return d.commit(pack)


def _greedy(
    d: Delivery, extras: Extras, fresh: list[Candidate], build: _Build, *, max_items: int
) -> tuple[list[tuple[Candidate, EvidenceItem]], list[EvidenceItem], EvidencePack]:
    """The passages chosen greedily by rank, those passed over, and the pack of the chosen.

    Each addition is checked on the serialized response, so the budget is exact. When the frame is over
    the budget, or the first passage does not fit beside its hints, the trial sheds hints and echoes
    (respond.py): evidence before hints.
    """
    chosen: list[tuple[Candidate, EvidenceItem]] = []
    pack = build(chosen, d, extras)
    tight = pack.tokens > d.budget_tokens
    if tight:
        pack = d.fit(pack)  # sheds hints and echoes until the frame fits, or says the budget is too small
    page_limit = d.parsed.max_pages_per_read
    passed: list[EvidenceItem] = []
    for c in fresh:
        if len(chosen) >= max_items:
            break
        item = item_for(d.parsed, c)
        pages = {i.page for _, i in chosen}
        if page_limit is not None and item.page not in pages and len(pages) >= page_limit:
            continue  # at most `page_limit` pages per read
        trial = build([*chosen, (c, item)], d, extras)
        if trial.tokens > d.budget_tokens and (tight or not chosen):
            trial = d.shrink(trial)
        if trial.tokens <= d.budget_tokens:
            chosen.append((c, item))
            pack = trial
        else:
            passed.append(item)
    return chosen, passed, pack


def _fallback(d: Delivery, extras: Extras, payload: int) -> EvidencePack:
    episode = d.episode
    retire = [item.pointer for item in episode.delivered]
    reason = (
        f"fallback: this batch ({payload} chars) would take E past L "
        f"({episode.ledger.sparse_chars} + {payload} > {episode.ledger.full_view_chars}); "
        "the faithful full view is delivered instead, once, and the episode closes"
    )
    try:
        return deliver_full(d, extras, start=d.origin(), decision="fallback", reason=reason, retire=retire)
    except BudgetTooSmall:
        # The batch is withheld all the same; the full view waits for a budget that holds a page of it.
        waiting = replace(
            extras,
            left_out=f"the full view ({episode.full_view_tokens} tokens) is due but no page of it fits budget_tokens="
            f"{d.budget_tokens}: read with view='full' and a larger budget_tokens",
        )
        return d.fit(d.pack(items=[], spans=[], decision="fallback", reason=reason, extras=waiting, retire=retire))


#: How many pointers `left_out` names when no passage fits, tried from the most down to none.
_POINTER_COUNTS = (5, 3, 1, 0)


def _pointers_only(d: Delivery, extras: Extras, pointers: list[str], build: _Build) -> EvidencePack:
    """No passage fits the budget: the answer names the best ones by pointer (as many as fit), to read one
    at a time with a larger budget; nothing is delivered or charged."""
    d = replace(d, view="pointers")
    extras = replace(
        extras,
        empty_reason=f"nothing delivered: {len(pointers)} passage(s) match, none fits budget_tokens={d.budget_tokens}",
    )
    for count in _POINTER_COUNTS:
        named = replace(extras, left_out=pointers_note(pointers[:count], d.budget_tokens, total=len(pointers)))
        pack = d.shrink(build([], d, named))
        if pack.tokens <= d.budget_tokens and pack.left_out == named.left_out:
            return pack
    return d.fit(build([], d, replace(extras, left_out=None)))


def _empty_reason(extras: Extras) -> str:
    """Why a sparse answer holds no passage, when none was proposed: true for each kind of answer."""
    if extras.empty_reason is not None:
        return extras.empty_reason
    if extras.result is not None:
        return "no passages: the exact result is in `result`"
    if extras.verification is not None:
        return "no passages: see `verification`"
    if extras.preview is not None:
        return "no passages: a bounded preview instead"
    return "nothing delivered: no passage matches the intent"
