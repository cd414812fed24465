"""Check-before-delivery: fit a batch to the response budget, then to the ledger, or fall back.

A sparse batch is chosen under the response budget, serialized, and only then checked against the
ledger: E + payload <= L, the payload being the items as serialized (pointers and escapes included),
so reading a whole file in pieces costs more than reading it once. A batch that would not fit intact
is withheld and the faithful full view is delivered instead, once, paged with a cursor when it exceeds
the response budget; earlier sparse items are listed in `retire` and the episode closes. Hence every
episode delivers at most 2L.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field

from ..anchors import format_pointer
from ..deadline import checkpoint
from ..errors import BudgetTooSmall
from ..evidence import Candidate, item_for
from ..models import (
    ArtifactRef,
    EpisodeRef,
    EvidenceItem,
    EvidencePack,
    Exposure,
    Gate,
    GateDecision,
    OpResult,
    Preview,
    Selection,
    SlotCoverage,
    Verification,
)
from ..protocol.session import DeliveredItem, Episode
from ..readers.base import ParsedArtifact
from ..tokens import TokenCounter, stamp_tokens

#: Tokens kept free for the `tokens` field itself and JSON separators.
_SLACK_TOKENS = 16

CoverageFn = Callable[[list[tuple[int, int]]], tuple[list[SlotCoverage], list[str]]]


@dataclass(kw_only=True)
class Extras:
    """Everything in a pack besides items, coverage, exposure and the gate."""

    scope: str
    result: OpResult | None = None
    verification: Verification | None = None
    message: str | None = None
    next: list[str] = field(default_factory=list)
    invalidated: list[str] = field(default_factory=list)
    preview: Preview | None = None
    left_out: str | None = None
    selection: Selection | None = None
    #: Why nothing was proposed, when the caller knows better than "no passage matches".
    empty_reason: str | None = None


@dataclass(kw_only=True)
class Delivery:
    parsed: ParsedArtifact
    episode: Episode
    counter: TokenCounter
    budget_tokens: int
    action: str
    view: str
    coverage: CoverageFn

    def render(self, pack: EvidencePack) -> tuple[str, int]:
        text = pack.model_dump_json(exclude_none=True)
        return text, self.counter.count(text)

    def finish(self, pack: EvidencePack) -> EvidencePack:
        """Stamp the response's own token count (counted on its serialized form)."""
        return stamp_tokens(pack, self.counter)

    def fit(self, pack: EvidencePack) -> EvidencePack:
        """Finish a pack without evidence items, dropping hints (never evidence) until it fits the budget."""
        pack = self.finish(pack)
        while pack.tokens > self.budget_tokens and (pack.next or pack.already_delivered):
            update = {"next": pack.next[:-1]} if pack.next else {"already_delivered": []}
            pack = self.finish(pack.model_copy(update=update))
        if pack.tokens > self.budget_tokens:
            raise BudgetTooSmall(
                f"budget_tokens={self.budget_tokens} is below this response's frame ({pack.tokens} tokens); "
                "raise budget_tokens"
            )
        return pack

    def commit(self, pack: EvidencePack) -> EvidencePack:
        """Remember the coverage a delivered pack reported, for the session card."""
        self.episode.coverage.update({c.slot: c for c in pack.coverage})
        return pack

    def pack(
        self,
        *,
        items: list[EvidenceItem],
        spans: list[tuple[int, int]],
        decision: GateDecision,
        reason: str,
        extras: Extras,
        retire: list[str] | None = None,
        already: list[str] | None = None,
        cursor: str | None = None,
        full_chars: int = 0,
    ) -> EvidencePack:
        episode, artifact = self.episode, self.parsed.artifact
        payload = full_chars or serialized_chars(items)
        sparse = 0 if full_chars else payload
        coverage, unresolved = self.coverage(spans)
        return EvidencePack(
            episode=EpisodeRef(
                id=episode.id,
                artifact=ArtifactRef(path=artifact.path, type=self.parsed.type, fingerprint=artifact.fingerprint),
                objective=episode.objective,
            ),
            action=self.action,
            view=self.view,
            items=items,
            result=extras.result,
            verification=extras.verification,
            coverage=coverage,
            unresolved=unresolved,
            scope=extras.scope,
            exposure=Exposure(
                payload_chars=payload,
                payload_tokens=sum(self.counter.count(i.text) for i in items),
                episode_chars=episode.ledger.sparse_chars + sparse,
                full_view_chars=episode.ledger.full_view_chars,
                full_view_tokens=episode.full_view_tokens,
                remaining_chars=max(0, episode.ledger.remaining - sparse),
                full_view_delivered_chars=episode.ledger.full_chars + full_chars,
            ),
            gate=Gate(decision=decision, reason=reason),
            selection=extras.selection,
            retire=retire or [],
            already_delivered=already or [],
            invalidated=extras.invalidated,
            next=extras.next,
            message=extras.message,
            left_out=extras.left_out,
            preview=extras.preview,
            tokenizer=self.counter.name,
            cursor=cursor,
        )


def serialized_chars(items: list[EvidenceItem]) -> int:
    """A sparse batch is charged what it costs the reader: each item as serialized, pointer included."""
    return sum(len(item.model_dump_json(exclude_none=True)) for item in items)


def deliver_sparse(
    d: Delivery, candidates: list[Candidate], extras: Extras, *, max_items: int, resend: bool = False
) -> EvidencePack:
    """Deliver the best candidates that fit the budget, or the full view when the ledger says so.

    `resend` is for dereferencing (a pointer or an explicit anchor): its text is delivered, and counted
    in E, even when it was delivered before; "never resend" is a rule for search results only.
    """
    episode = d.episode
    if episode.full_view_started and not resend:
        return _already_full(d, candidates, extras)
    fresh: list[Candidate] = []
    already: list[str] = []
    for c in candidates:
        if not resend and episode.overlaps_delivered(c.start, c.end):
            already.append(item_for(d.parsed, c).pointer)
        else:
            fresh.append(c)

    def build(chosen: list[tuple[Candidate, EvidenceItem]]) -> EvidencePack:
        if chosen:
            reason = f"sparse read: {len(chosen)} passage(s) within E <= L"
        elif already:
            reason = "nothing new to deliver: every match was delivered already in this episode"
        else:
            reason = _empty_reason(extras)
        items = [item for _, item in chosen]
        spans = [(c.start, c.end) for c, _ in chosen]
        return d.finish(
            d.pack(items=items, spans=spans, decision="sparse", reason=reason, extras=extras, already=already[:5])
        )

    # Greedy by rank, each addition checked on the serialized response, so the budget is exact.
    chosen: list[tuple[Candidate, EvidenceItem]] = []
    pack = build(chosen)
    if pack.tokens > d.budget_tokens:
        pack = d.fit(pack)  # drops hints until the frame fits, or says the budget is too small
        extras.next, already = list(pack.next), list(pack.already_delivered)
    smallest_missing: int | None = None
    page_limit = d.parsed.max_pages_per_read
    for c in fresh:
        if len(chosen) >= max_items:
            break
        item = item_for(d.parsed, c)
        pages = {i.page for _, i in chosen}
        if page_limit is not None and item.page not in pages and len(pages) >= page_limit:
            continue  # at most `page_limit` pages per read
        trial = build([*chosen, (c, item)])
        if trial.tokens <= d.budget_tokens:
            chosen.append((c, item))
            pack = trial
        elif smallest_missing is None or trial.tokens < smallest_missing:
            smallest_missing = trial.tokens
    if fresh and not chosen and smallest_missing is not None:
        raise BudgetTooSmall(
            f"budget_tokens={d.budget_tokens} cannot hold even one passage: the best one needs "
            f"{smallest_missing} tokens; raise budget_tokens or narrow the target with an anchor"
        )
    payload = serialized_chars([item for _, item in chosen])
    checkpoint()  # the last moment a cancelled call can stop with nothing recorded
    if not episode.ledger.fits(payload):
        return _fallback(d, extras, payload)
    episode.ledger.charge_sparse(payload)
    for c, item in chosen:
        episode.delivered.append(
            DeliveredItem(pointer=item.pointer, start=c.start, end=c.end, slots=c.slots, support={})
        )
    return d.commit(pack)


def deliver_full(
    d: Delivery,
    extras: Extras,
    *,
    start: int,
    decision: GateDecision,
    reason: str,
    retire: list[str] | None = None,
    continuing: bool = False,
) -> EvidencePack:
    """Deliver the full view from `start`, one page that fits the budget; a cursor names the rest.

    A full view may begin where the evidence most likely is (`start` > 0 on the first call): its pages
    then run to the end and continue from the beginning back to where they began, so every character
    is delivered exactly once and an agent that stops early has seen the likeliest part first.
    """
    episode, text = d.episode, d.parsed.artifact.text
    if not continuing:
        if episode.full_view_done or episode.full_view_next is not None:
            return _already_full(d, [], extras)
        episode.full_view_origin = start
    origin = episode.full_view_origin
    # The second lap ends where the first began, before the newline that ends the line above it.
    stop = (origin - 1 if text[origin - 1] == "\n" else origin) if start < origin else len(text)
    if start < stop and text[start] == "\n" and start != origin:
        start += 1  # pages end before a newline; the next page starts after it
    frame = d.pack(items=[], spans=[], decision=decision, reason=reason, extras=extras, retire=retire, cursor="x" * 40)
    _, frame_tokens = d.render(frame)
    capacity = d.budget_tokens - frame_tokens - _SLACK_TOKENS - 80
    if capacity < 32:
        raise BudgetTooSmall(
            f"budget_tokens={d.budget_tokens} leaves no room for full-view text after the "
            f"{frame_tokens}-token frame; raise budget_tokens to at least {frame_tokens + 300}"
        )
    while True:
        end = min(stop, _section_aligned(d.parsed, start, _page_end(d, text, start, capacity)))
        if stop == len(text) and text[end:] == "\n":
            end = len(text)  # the final newline ends the last page; it does not make a page of its own
        item = item_for(d.parsed, Candidate(start=start, end=end, score=1.0)) if end > start else None
        following = end if end < stop else (0 if stop == len(text) and origin > 0 else None)
        more = following is not None
        cursor = f"{episode.id}:{following}" if more else None
        d.view, extras.left_out = _page_view(d.parsed, start, end, following, origin)
        pack = d.finish(
            d.pack(
                items=[item] if item else [],
                spans=[(start, end)],
                decision=decision,
                reason=reason,
                extras=extras,
                retire=retire,
                cursor=cursor,
                full_chars=end - start,
            )
        )
        overshoot = pack.tokens - d.budget_tokens
        if overshoot <= 0:
            break
        # Coverage pointers grow with the page; shrink the page by the overshoot and measure again.
        capacity -= overshoot + _SLACK_TOKENS
        if capacity < 32:
            raise BudgetTooSmall(
                f"budget_tokens={d.budget_tokens} leaves no room for full-view text; raise budget_tokens"
            )
    checkpoint()  # a cancelled call stops here with nothing recorded
    episode.ledger.charge_full(end - start)
    episode.full_view_next = following
    episode.full_view_done = not more
    episode.closed = True
    if item:
        episode.delivered.append(
            DeliveredItem(pointer=item.pointer, start=start, end=end, slots=(), support={}, full_view=True)
        )
    return d.commit(pack)


def _section_aligned(parsed: ParsedArtifact, start: int, end: int) -> int:
    """Pull a partial page's end back to the last section start in its second half, when there is one."""
    lines = parsed.lines
    if end >= len(parsed.artifact.text) or not parsed.outline:
        return end
    first_line, last_line = lines.line_of(start), lines.line_of(max(start, end - 1))
    middle = (first_line + last_line) // 2
    starts = [e.first_line for e in parsed.outline if middle < e.first_line <= last_line]
    if not starts:
        return end
    return lines.line_end(max(starts) - 1)


def _page_view(
    parsed: ParsedArtifact, start: int, end: int, following: int | None = None, origin: int = 0
) -> tuple[str, str | None]:
    """The view a page actually is (full, sections or lines) and what it leaves out."""
    text = parsed.artifact.text
    if start == 0 and end >= len(text):
        return "full", None
    lines = parsed.lines
    section_starts = {e.first_line for e in parsed.outline}
    next_line = lines.line_of(min(len(text) - 1, end + 1)) if end < len(text) else None
    whole_sections = (start == 0 or lines.line_of(start) in section_starts) and (
        next_line is None or next_line in section_starts
    )
    kind = "sections" if whole_sections and parsed.outline else "lines"
    shown = parsed.lines.anchor_for(start, end).format() if end > start else f"L{lines.line_of(start)}"
    if following is None:
        return kind, f"this is the last part ({shown}); earlier parts came with earlier cursors"
    rest_from = lines.line_of(min(len(text) - 1, following + (1 if following and text[following] == "\n" else 0)))
    if origin == 0:
        rest = f"L{rest_from}-L{lines.line_count}"
    elif following >= origin:
        rest = f"L{rest_from}-L{lines.line_count}, then L1-L{lines.line_of(max(0, origin - 1))}"
    else:
        rest = f"L{rest_from}-L{lines.line_of(max(0, origin - 1))}"
    return kind, (
        f"shows {shown} of L1-L{lines.line_count}; {rest} left out: pass `cursor` "
        "for the next part, or read one section by anchor (see the outline)"
    )


def _fallback(d: Delivery, extras: Extras, payload: int) -> EvidencePack:
    episode = d.episode
    retire = [item.pointer for item in episode.delivered]
    reason = (
        f"fallback: this batch ({payload} chars) would take E past L "
        f"({episode.ledger.sparse_chars} + {payload} > {episode.ledger.full_view_chars}); "
        "the faithful full view is delivered instead, once, and the episode closes"
    )
    return deliver_full(d, extras, start=0, decision="fallback", reason=reason, retire=retire)


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


def _already_full(d: Delivery, candidates: list[Candidate], extras: Extras) -> EvidencePack:
    """After the full view, nothing is resent: name where the matches are instead."""
    where = [
        format_pointer(d.parsed.artifact.path, d.parsed.artifact.rev, d.parsed.anchor_for(c.start, c.end))
        for c in candidates[:5]
    ]
    paging = d.episode.full_view_next is not None
    reason = "the full view of this artifact was already delivered in this episode; it is not resent"
    if paging:
        reason = "the full view is being delivered in pages; continue with the cursor"
    extras.next = [*extras.next, *(f"already in the full view: {p}" for p in where)]
    if not paging:
        extras.next.append("state a new goal to open a new episode if the full view is no longer in context")
    cursor = f"{d.episode.id}:{d.episode.full_view_next}" if paging else None
    return d.fit(d.pack(items=[], spans=[], decision="full_view", reason=reason, extras=extras, cursor=cursor))


def _page_end(d: Delivery, text: str, start: int, capacity: int) -> int:
    """End offset of the largest page from `start` whose JSON text fits `capacity` tokens.

    Pages end at a line end; a line too long for one page is cut at a space between columns, so every
    page is whole lines or a column range of one line, and its anchor names exactly its text.
    """
    lines = d.parsed.lines
    max_line = lines.line_count
    if d.parsed.max_pages_per_read and lines.page_count:
        # Paged formats: one response spans at most `max_pages_per_read` pages.
        last_page = min(lines.page_count, (lines.page_of(start) or 1) + d.parsed.max_pages_per_read - 1)
        max_line = lines.line_of(max(start, lines.page_span(last_page)[1] - 1))
    line = lines.line_of(start)
    line_end = lines.line_end(line)

    def fits(end: int) -> bool:
        return d.counter.count(json.dumps(text[start:end], ensure_ascii=False)) <= capacity

    if start != lines.starts[line - 1] or not fits(line_end):
        if fits(line_end):
            return line_end
        return _largest_fitting(start, line_end, fits, text)
    # Whole lines: gallop, then bisect on line numbers.
    low, high = line, line
    step = 1
    while high < max_line and fits(lines.line_end(min(max_line, high + step))):
        low = high = min(max_line, high + step)
        step *= 2
    high = min(max_line, high + step)
    while low < high:
        mid = (low + high + 1) // 2
        if fits(lines.line_end(mid)):
            low = mid
        else:
            high = mid - 1
    return lines.line_end(low)


def _largest_fitting(start: int, limit: int, fits: Callable[[int], bool], text: str) -> int:
    low, high = start + 1, limit
    while low < high:
        mid = (low + high + 1) // 2
        if fits(mid):
            low = mid
        else:
            high = mid - 1
    space = text.rfind(" ", start + 1, low)
    return space + 1 if space > start + (low - start) // 2 else low
