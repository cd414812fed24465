"""One response path: every answer is built here and fitted here to its budget.

Every EvidencePack (file, directory, large-file range, pointer verdict), every Preview (file, directory,
large or binary card) and the session Card leaves the server through `fit_pack`, `fit_preview` or
`fit_card`: stamped with its own token count, counted on the wire form (`wire.wire_json`), so the budget
measured is the budget the agent pays. When an answer is over its budget it sheds, rung by rung:

    hints (next steps, already-delivered pointers) -> the preview's samples, extras and outline
    -> echoes clipped (objective, scope, reasons, message) -> per-slot coverage pointers
    -> retire/invalidated lists (the card keeps them) -> result rows (marked capped), then all of an
    exact result but its value -> the message and left_out -> the preview (the pack is the card)

Evidence items are never cut here. Which passages fit is chosen by the gate (gate/delivery.py) against the
frame fitted here: fewer items, then pointers and anchors only (`left_out`), then the card. The E <= L
check is the ledger's (gate/ledger.py), made on the serialized payload before delivery, in delivery.py.
The margins are named once, below, and used nowhere else.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

from ..config import HARD_RESPONSE_CAP_TOKENS
from ..errors import BudgetTooSmall
from ..models import (
    Card,
    EpisodeRef,
    EvidenceItem,
    EvidencePack,
    Exposure,
    Gate,
    OpResult,
    OutlineItem,
    Preview,
    Selection,
    SlotCoverage,
    Verification,
)
from ..tokens import TokenCounter, stamp_tokens
from ..vocabulary import CARD_TOOL, READ_TOOL
from ..wire import wire_json

#: Tokens kept free for the `tokens` field's own digits and the JSON separators around an added part.
SLACK_TOKENS = 16
#: Kept free when a full-view page is sized before it is measured: its coverage pointers grow with it.
PAGE_MARGIN_TOKENS = 80
#: A page smaller than this many tokens of text is no page: the full view degrades to the outline.
MIN_PAGE_TOKENS = 32
#: The gate's reason on a follow-up about a file the agent already holds whole.
HELD_WHOLE = "already sent whole: cite its pointers"
#: A frame allowance for a full view delivered whole: below budget minus this, it is one page.
WHOLE_FRAME_TOKENS = 1_000
#: Kept free when a preview's outline is sized from its entries' counts before it is measured.
OUTLINE_MARGIN_TOKENS = 32
#: Below this many tokens left for an outline, only the card is worth sending.
MIN_OUTLINE_TOKENS = 120
#: Echoes of what the agent sent or what the server chose, clipped this short on the last rungs.
CLIP_CHARS = 80


def evidence_pack(
    *,
    episode: EpisodeRef,
    action: str,
    view: str,
    items: list[EvidenceItem],
    exposure: Exposure,
    gate: Gate,
    scope: str,
    tokenizer: str,
    coverage: list[SlotCoverage] | None = None,
    unresolved: list[str] | None = None,
    result: OpResult | None = None,
    verification: Verification | None = None,
    selection: Selection | None = None,
    retire: list[str] | None = None,
    already: list[str] | None = None,
    invalidated: list[str] | None = None,
    next_steps: list[str] | None = None,
    message: str | None = None,
    left_out: str | None = None,
    preview: Preview | None = None,
    cursor: str | None = None,
) -> EvidencePack:
    """The one constructor of an EvidencePack: every reader, the directory search, large-file ranges and
    pointer verdicts build their answers here (unstamped: `fit_pack` stamps and fits it)."""
    return EvidencePack(
        episode=episode,
        action=action,
        view=view,
        items=items,
        result=result,
        verification=verification,
        coverage=coverage or [],
        unresolved=unresolved or [],
        scope=scope,
        exposure=exposure,
        gate=gate,
        selection=selection,
        retire=retire or [],
        already_delivered=already or [],
        invalidated=invalidated or [],
        next=next_steps or [],
        message=message,
        left_out=left_out,
        preview=preview,
        tokenizer=tokenizer,
        cursor=cursor,
    )


def shrink_pack(pack: EvidencePack, budget: int, counter: TokenCounter) -> EvidencePack:
    """`pack` stamped, shed rung by rung (never its items) until it fits `budget`, or as small as it gets."""
    pack = stamp_tokens(pack, counter)
    for rung in _PACK_RUNGS:
        if pack.tokens <= budget:
            return pack
        pack = rung(pack, budget, counter)
    return pack


def fit_pack(pack: EvidencePack, budget: int, counter: TokenCounter) -> EvidencePack:
    """The budget guarantee of an EvidencePack: stamped and within `budget`, or BudgetTooSmall."""
    fitted = shrink_pack(pack, budget, counter)
    if fitted.tokens > budget:
        what = f"{len(fitted.items)} passage(s) and their frame" if fitted.items else "this response's frame"
        raise BudgetTooSmall(
            f"budget_tokens={budget} is below {what} ({fitted.tokens} tokens, hints left out); raise "
            "budget_tokens or narrow the target with an anchor"
        )
    return fitted


def minimal_frame(pack: EvidencePack, counter: TokenCounter) -> EvidencePack:
    """The frame of an answer about a file the agent already holds whole (a small file sent natively): no
    hints, echoes clipped, coverage without the pointers that `already_delivered` names; its verdict,
    pointers and ledger stay. Such a follow-up costs a verdict and pointers, not a second frame's worth."""
    # The reader and method (`scope`) located nothing new; the decision and `already_delivered` say why.
    held = pack.gate.model_copy(update={"reason": HELD_WHOLE})
    pack = _clip_echoes(pack.model_copy(update={"next": [], "scope": "", "gate": held}), 0, counter)
    return _coverage_without_pointers(pack, 0, counter)


def pointers_note(pointers: Sequence[str], budget: int, *, total: int, what: str = "passage(s)") -> str:
    """What `left_out` says when no passage fits: how many, and the best pointers to read one at a time."""
    if not pointers:
        return f"{total} {what} did not fit budget_tokens={budget}: raise it or narrow the target with an anchor"
    more = f" and {total - len(pointers)} more" if total > len(pointers) else ""
    return (
        f"{total} {what} did not fit budget_tokens={budget}: {', '.join(pointers)}{more}; read one by its "
        "pointer with a larger budget_tokens"
    )


# -- the rungs of a pack ---------------------------------------------------------------------------


def _drop_hints(pack: EvidencePack, budget: int, counter: TokenCounter) -> EvidencePack:
    """Next steps go first, from the last; then the pointers of matches delivered earlier."""
    while pack.tokens > budget and (pack.next or pack.already_delivered):
        update = {"next": pack.next[:-1]} if pack.next else {"already_delivered": []}
        pack = stamp_tokens(pack.model_copy(update=update), counter)
    return pack


def _shrink_preview(pack: EvidencePack, budget: int, counter: TokenCounter) -> EvidencePack:
    """A preview inside a pack gives up what it must, as a preview on its own would."""
    if pack.preview is None:
        return pack
    room = pack.preview.tokens - (pack.tokens - budget)
    preview = shrink_preview(pack.preview, room, counter)
    view = "card" if pack.view == "outline" and not preview.outline else pack.view  # the view it now is
    return stamp_tokens(pack.model_copy(update={"preview": preview, "view": view}), counter)


def _clip_echoes(pack: EvidencePack, budget: int, counter: TokenCounter) -> EvidencePack:
    """What the agent sent (the objective) and what the server explained, shortened with a marker."""
    episode = pack.episode.model_copy(update={"objective": clip(pack.episode.objective)})
    update: dict[str, Any] = {
        "episode": episode,
        "scope": clip(pack.scope),
        "gate": pack.gate.model_copy(update={"reason": clip(pack.gate.reason)}),
        "selection": None
        if pack.selection is None
        else pack.selection.model_copy(update={"reason": clip(pack.selection.reason)}),
        "message": None if pack.message is None else clip(pack.message, 2 * CLIP_CHARS),
        "left_out": None if pack.left_out is None else clip(pack.left_out, 6 * CLIP_CHARS),
    }
    if pack.verification is not None:
        update["verification"] = pack.verification.model_copy(
            update={"reason": clip(pack.verification.reason), "diff": None}
        )
    return stamp_tokens(pack.model_copy(update=update), counter)


def _coverage_without_pointers(pack: EvidencePack, budget: int, counter: TokenCounter) -> EvidencePack:
    """Per-slot status stays; the pointers behind it are the items' own (or the card's)."""
    coverage = [c.model_copy(update={"pointers": []}) for c in pack.coverage]
    return stamp_tokens(pack.model_copy(update={"coverage": coverage, "selection": None}), counter)


def _drop_lists(pack: EvidencePack, budget: int, counter: TokenCounter) -> EvidencePack:
    """Retire and invalidated pointers: the session card lists them too (retirable), so they are named by
    count and left to it."""
    dropped = len(pack.retire) + len(pack.invalidated)
    if not dropped:
        return pack
    note = f"{dropped} retire/invalidated pointer(s) left out to fit budget_tokens={budget}: {CARD_TOOL} lists them"
    left_out = note if pack.left_out is None else f"{clip(pack.left_out)}; {note}"
    update = {"retire": [], "invalidated": [], "left_out": left_out}
    return stamp_tokens(pack.model_copy(update=update), counter)


def _fewer_rows(pack: EvidencePack, budget: int, counter: TokenCounter) -> EvidencePack:
    """An exact result's rows are halved (its value, row count and what was scanned stay), marked capped."""
    result = pack.result
    while result is not None and result.rows and pack.tokens > budget:
        result = result.model_copy(update={"rows": result.rows[: len(result.rows) // 2], "capped": True})
        pack = stamp_tokens(pack.model_copy(update={"result": result}), counter)
    return pack


def _bare_result(pack: EvidencePack, budget: int, counter: TokenCounter) -> EvidencePack:
    """An exact result keeps its value, what was scanned and what was left out; how it was computed goes."""
    result = pack.result
    if result is None:
        return pack
    left_out = None if result.left_out is None else clip(result.left_out, 2 * CLIP_CHARS)
    bare = result.model_copy(
        update={
            "provenance": [],
            "columns": None,
            "rows": None,
            "query": None,
            "scanned": clip(result.scanned),
            "left_out": left_out,
        }
    )
    return stamp_tokens(pack.model_copy(update={"result": bare}), counter)


def _drop_notes(pack: EvidencePack, budget: int, counter: TokenCounter) -> EvidencePack:
    """The message and what was left out go last of all the words, and the echoes are clipped to half: the
    gate's reason still says what this answer is."""
    half = CLIP_CHARS // 2
    update: dict[str, Any] = {
        "message": None,
        "left_out": None,
        "episode": pack.episode.model_copy(update={"objective": clip(pack.episode.objective, half)}),
        "scope": clip(pack.scope, half),
        "gate": pack.gate.model_copy(update={"reason": clip(pack.gate.reason, half)}),
    }
    return stamp_tokens(pack.model_copy(update=update), counter)


def _drop_preview(pack: EvidencePack, budget: int, counter: TokenCounter) -> EvidencePack:
    """The last rung: the pack itself is the card (artifact, fingerprint, L, E), the preview goes."""
    if pack.preview is None:
        return pack
    return stamp_tokens(pack.model_copy(update={"preview": None, "view": "card"}), counter)


_PACK_RUNGS = (
    _drop_hints,
    _shrink_preview,
    _clip_echoes,
    _coverage_without_pointers,
    _drop_lists,
    _fewer_rows,
    _bare_result,
    _drop_notes,
    _drop_preview,
)


# -- previews --------------------------------------------------------------------------------------


def fit_preview(preview: Preview, budget: int, counter: TokenCounter, *, by_level: bool = True) -> Preview:
    """The budget guarantee of a Preview: stamped and within `budget`, or BudgetTooSmall."""
    fitted = shrink_preview(preview, budget, counter, by_level=by_level)
    if fitted.tokens > budget:
        raise BudgetTooSmall(
            f"budget_tokens={budget} is below this preview's card ({fitted.tokens} tokens): raise budget_tokens"
        )
    return fitted


def shrink_preview(
    preview: Preview,
    budget: int,
    counter: TokenCounter,
    *,
    by_level: bool = True,
    keep: frozenset[str] = frozenset(),
) -> Preview:
    """The preview within `budget`, or as small as it gets: a native preview's content goes first when it
    does not fit (the reason says how to read it); then, while the card without its outline does not leave
    room for one, samples, ways to read it and signals; then the outline (its deepest level first when
    `by_level`, then its tail; the entries anchored in `keep` last); last, the reason is clipped."""
    preview = stamp_tokens(preview, counter)
    if preview.tokens <= budget:
        return preview
    if preview.content is not None:
        reason = (
            f"{preview.reason}; the content does not fit budget_tokens={budget}: read it with {READ_TOOL}(view='full')"
        )
        preview = stamp_tokens(preview.model_copy(update={"content": None, "reason": reason}), counter)
    optionals: tuple[dict[str, object], ...] = ({"samples": []}, {"configurations": []}, {"signals": {}})
    for optional in optionals:
        if preview.tokens <= budget:
            return preview
        bare = stamp_tokens(preview.model_copy(update={"outline": []}), counter)
        if bare.tokens + OUTLINE_MARGIN_TOKENS <= budget:
            break  # a tight budget keeps the card and its extras, and sheds outline entries
        preview = stamp_tokens(preview.model_copy(update=optional), counter)
    if preview.tokens > budget and preview.outline:
        preview = _fit_outline(preview, budget, counter, by_level=by_level, keep=keep)
    if preview.tokens > budget:
        preview = stamp_tokens(preview.model_copy(update={"reason": clip(preview.reason)}), counter)
    return preview


def _fit_outline(
    preview: Preview, budget: int, counter: TokenCounter, *, by_level: bool, keep: frozenset[str] = frozenset()
) -> Preview:
    """An outline that fits: whole levels dropped from the deepest (when `by_level`), then cut by a third
    at a time, so what stays is the top of the document, with room to spare rather than a ragged tail.
    Entries anchored in `keep` (where the preview's intent matched) stay until only they are left."""
    entries = list(preview.outline)
    bare = stamp_tokens(preview.model_copy(update={"outline": [], "outline_complete": False}), counter)
    room = budget - bare.tokens - OUTLINE_MARGIN_TOKENS
    costs = {id(e): counter.count(wire_json(e)) + 1 for e in entries}
    levels = sorted({e.level for e in entries}, reverse=True) if by_level else []
    while entries and sum(costs[id(e)] for e in entries) > room:
        if len(levels) > 1:
            deepest = levels.pop(0)
            entries = [e for e in entries if e.level < deepest or e.anchor in keep]
        else:
            entries = _shorter(entries, keep)
    while True:
        fitted = stamp_tokens(preview.model_copy(update={"outline": entries, "outline_complete": False}), counter)
        if fitted.tokens <= budget or not entries:
            return fitted
        entries = _shorter(entries, keep)  # the estimate was short: measured again, smaller


def _shorter(entries: list[OutlineItem], keep: frozenset[str] = frozenset()) -> list[OutlineItem]:
    """A third fewer entries, from the tail; the kept ones go only when nothing else is left."""
    others = [e for e in entries if e.anchor not in keep]
    if not others:
        return entries[: max(0, len(entries) * 2 // 3 - 1)]
    staying = {id(e) for e in others[: max(0, len(others) * 2 // 3 - 1)]}
    return [e for e in entries if e.anchor in keep or id(e) in staying]


# -- the session card ------------------------------------------------------------------------------

#: How each list of a card gives way to the budget: which end is kept (the most recent or most relevant).
_KEEP_TAIL = ("episodes", "pointers", "retirable")  # oldest first in the session, so the tail is the newest
_KEEP_HEAD = ("coverage", "changed", "next")  # sorted or ordered by importance already
_LEFT_OUT_STEP = "some entries were left out to fit budget_tokens (see left_out): pass path= or a larger budget"


def fit_card(card: Card, budget: int, counter: TokenCounter) -> Card:
    """The budget guarantee of the session card: when the whole card does not fit, every list keeps its
    most recent (or most relevant) entries, as many as fit (found by bisection), and `left_out` counts the
    rest; with no entry at all still over, the session intent's goal is clipped and the trace goes."""
    whole = stamp_tokens(card, counter)
    if whole.tokens <= budget:
        return whole
    longest = max(len(items) for items in _lists(card).values())
    fitted = _cut(card, 0, counter)
    if fitted.tokens > budget:
        fitted = _bare_card(fitted, counter)
        if fitted.tokens > budget:
            raise BudgetTooSmall(
                f"the session card's frame alone is {fitted.tokens} tokens, over budget_tokens={budget}: "
                f"use a larger budget_tokens (up to {HARD_RESPONSE_CAP_TOKENS})"
            )
        return fitted
    low, high = 0, longest  # `low` fits, `high` + 1 does not (the whole card did not)
    while low < high:
        middle = (low + high + 1) // 2
        candidate = _cut(card, middle, counter)
        if candidate.tokens <= budget:
            low, fitted = middle, candidate
        else:
            high = middle - 1
    return fitted


def _bare_card(card: Card, counter: TokenCounter) -> Card:
    intent = card.session_intent
    if intent is not None:
        intent = intent.model_copy(
            update={"goal": None if intent.goal is None else clip(intent.goal), "slots": None, "query": None}
        )
    update: dict[str, object] = {"session_intent": intent, "trace": None, "next": [_LEFT_OUT_STEP]}
    return stamp_tokens(card.model_copy(update=update), counter)


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


# -- the session handle ----------------------------------------------------------------------------


def handle_reserve(handle: str | None, counter: TokenCounter) -> int:
    """Tokens an answer must keep free for the `session` handle added to it over stateless HTTP."""
    if handle is None:
        return 0
    return counter.count(f',"session":"{handle}"') + 2  # +2: the `tokens` count may gain a digit


def clip(text: str, limit: int = CLIP_CHARS) -> str:
    """`text`, or its head with the cut marked: for echoes and explanations, never for evidence."""
    if len(text) <= limit:
        return text
    return text[: max(0, limit - 3)].rstrip() + "..."
