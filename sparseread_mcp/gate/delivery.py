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
from typing import Any

from ..deadline import checkpoint
from ..errors import BudgetTooSmall
from ..evidence import Candidate, item_for
from ..files.anchors import format_pointer
from ..models import (
    ArtifactRef,
    EpisodeRef,
    EvidenceItem,
    EvidencePack,
    Exposure,
    Gate,
    OpResult,
    Preview,
    Selection,
    SlotCoverage,
    Verification,
)
from ..protocol.session import DeliveredItem, Episode
from ..readers.base import ParsedArtifact
from ..tokens import TokenCounter, stamp_tokens
from ..vocabulary import GateDecision
from ..wire import wire_json
from .respond import (
    MIN_PAGE_TOKENS,
    PAGE_MARGIN_TOKENS,
    SLACK_TOKENS,
    WHOLE_FRAME_TOKENS,
    evidence_pack,
    fit_pack,
    pointers_note,
    shrink_pack,
)

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
    #: Where a full view should begin for this request (its best-located passage); 0 when unknown.
    origin: Callable[[], int] | None = None

    def render(self, pack: EvidencePack) -> tuple[str, int]:
        text = wire_json(pack)
        return text, self.counter.count(text)

    def finish(self, pack: EvidencePack) -> EvidencePack:
        """Stamp the response's own token count (counted on its serialized form)."""
        return stamp_tokens(pack, self.counter)

    def fit(self, pack: EvidencePack) -> EvidencePack:
        """Finish a pack within the budget, shedding hints and echoes (never evidence), or BudgetTooSmall."""
        return fit_pack(pack, self.budget_tokens, self.counter)

    def shrink(self, pack: EvidencePack) -> EvidencePack:
        """Finish a pack, shed as far as it goes toward the budget (it may still be over)."""
        return shrink_pack(pack, self.budget_tokens, self.counter)

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
        return evidence_pack(
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
            retire=retire,
            already=already,
            invalidated=extras.invalidated,
            next_steps=extras.next,
            message=extras.message,
            left_out=extras.left_out,
            preview=extras.preview,
            tokenizer=self.counter.name,
            cursor=cursor,
        )


def serialized_chars(items: list[EvidenceItem]) -> int:
    """A sparse batch is charged what it costs the reader: each item as serialized, pointer included."""
    return sum(len(wire_json(item)) for item in items)


def deliver_sparse(
    d: Delivery, candidates: list[Candidate], extras: Extras, *, max_items: int, resend: bool = False
) -> EvidencePack:
    """Deliver the best candidates that fit the budget, or the full view when the ledger says so.

    `resend` is for dereferencing (a pointer or an explicit anchor): its text is delivered, and counted
    in E, even when it was delivered before; "never resend" is a rule for search results only.
    """
    episode = d.episode
    if episode.full_view_started and not resend:
        return _next_ranked_page(d, candidates, extras)
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

    # Greedy by rank, each addition checked on the serialized response, so the budget is exact. When the
    # frame is over the budget, or the first passage does not fit beside its hints, the trial sheds hints
    # and echoes (respond.py): evidence before hints.
    chosen: list[tuple[Candidate, EvidenceItem]] = []
    pack = build(chosen)
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
        trial = build([*chosen, (c, item)])
        if trial.tokens > d.budget_tokens and (tight or not chosen):
            trial = d.shrink(trial)
        if trial.tokens <= d.budget_tokens:
            chosen.append((c, item))
            pack = trial
        else:
            passed.append(item)
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

    A full view begins where the evidence most likely is (`start` > 0 on the first call): its pages run
    on from there, then cover what is left from the beginning, so every character is delivered exactly
    once and an agent that stops early has seen the likeliest part first. While it is paged, a new
    request in the episode (focus, collect, refine) may start the next page at its own best match, as
    long as that text was not delivered yet: the pages are the parts of the text not yet sent, never a
    part twice.
    """
    episode, text = d.episode, d.parsed.artifact.text
    if not continuing:
        if episode.full_view_done:
            return _already_full(d, [], extras)
        if episode.full_view_next is None:
            if episode.full_view_tokens + WHOLE_FRAME_TOKENS <= d.budget_tokens:
                start = 0  # the whole view fits one response: it begins at the beginning
            episode.full_view_origin = start
    sent = full_view_spans(episode)
    begin = _undelivered_from(text, sent, start)
    if begin is None:
        episode.full_view_next, episode.full_view_done = None, True
        return _already_full(d, [], extras)
    start = begin
    stop = next((s for s, _ in sent if s > start), len(text))
    if stop < len(text) and stop - 1 > start and text[stop - 1] == "\n":
        stop -= 1  # a page ends before the newline that ends the line above the next delivered page
    if stop - start > 1 and text[start] == "\n" and any(e == start for _, e in sent):
        start += 1  # pages end before a newline; the next page starts after it
    frame = d.pack(items=[], spans=[], decision=decision, reason=reason, extras=extras, retire=retire, cursor="x" * 40)
    frame_tokens = d.finish(frame).tokens
    # Only a frame that leaves no room for a page sheds (hints first, then echoes; respond.py), and the
    # pages with it: otherwise the page gives way, never the page's own left_out or the hints.
    tight = frame_tokens + SLACK_TOKENS + MIN_PAGE_TOKENS > d.budget_tokens
    if tight:
        frame_tokens = d.shrink(frame).tokens
    room = d.budget_tokens - frame_tokens - SLACK_TOKENS
    capacity = room - min(PAGE_MARGIN_TOKENS, room // 4)
    if capacity < MIN_PAGE_TOKENS:
        raise BudgetTooSmall(
            f"budget_tokens={d.budget_tokens} leaves no room for full-view text after the "
            f"{frame_tokens}-token frame; raise budget_tokens to at least {frame_tokens + 300}"
        )
    while True:
        end = min(stop, _section_aligned(d.parsed, start, _page_end(d, text, start, capacity)))
        end = _whole_lines_before(d.parsed, start, end)
        if stop == len(text) and text[end:] == "\n":
            end = len(text)  # the final newline ends the last page; it does not make a page of its own
        item = item_for(d.parsed, Candidate(start=start, end=end, score=1.0)) if end > start else None
        after = sorted([*sent, (start, end)])
        following = _undelivered_from(text, after, end)
        more = following is not None
        cursor = f"{episode.id}:{following}" if more else None
        d.view, extras.left_out = _page_view(d.parsed, start, end, _gaps(text, after) if more else [])
        pack = (d.shrink if tight else d.finish)(
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
        capacity -= overshoot + SLACK_TOKENS
        if capacity < MIN_PAGE_TOKENS:
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


def _whole_lines_before(parsed: ParsedArtifact, start: int, end: int) -> int:
    """A page that spans lines ends at a line end: one that would stop inside a later line (where an
    earlier page began) stops before that line, which comes as a page of its own."""
    lines = parsed.lines
    text = parsed.artifact.text
    if end >= len(text) or end <= start:
        return end
    if text[end - 1] == "\n" and end - 1 > start:
        end -= 1  # a span never ends after a newline: its anchor would name the next line
    last = lines.line_of(end)
    if lines.line_of(start) == last or end == lines.line_end(last):
        return end
    previous_end = lines.line_end(last - 1)
    return previous_end if previous_end > start else end


def full_view_spans(episode: Episode) -> list[tuple[int, int]]:
    """The parts of the full view this episode has delivered, in text order."""
    return sorted((item.start, item.end) for item in episode.delivered if item.full_view)


def _gaps(text: str, sent: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """What the full view has not delivered yet, leaving out gaps of whitespace alone (page-end newlines)."""
    gaps: list[tuple[int, int]] = []
    position = 0
    for s, e in [*sent, (len(text), len(text))]:
        if s > position and text[position:s].strip():
            gaps.append((position, s))
        position = max(position, e)
    return gaps


def _undelivered_from(text: str, sent: list[tuple[int, int]], start: int) -> int | None:
    """The first undelivered offset at or after `start`, else the first one from the beginning; None when
    the whole text was delivered."""
    gaps = _gaps(text, sent)
    for s, e in gaps:
        if e > start:
            return max(s, start)
    return gaps[0][0] if gaps else None


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


def _page_view(parsed: ParsedArtifact, start: int, end: int, left: list[tuple[int, int]]) -> tuple[str, str | None]:
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
    if not left:
        return kind, f"this is the last part ({shown}); earlier parts came with earlier cursors"
    parts = [f"L{lines.line_of(s)}-L{lines.line_of(max(s, e - 1))}" for s, e in left[:4]]
    rest = ", ".join(parts) + (f" and {len(left) - 4} more part(s)" if len(left) > 4 else "")
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
    start = d.origin() if d.origin is not None else 0
    try:
        return deliver_full(d, extras, start=start, decision="fallback", reason=reason, retire=retire)
    except BudgetTooSmall:
        # The batch is withheld all the same; the full view waits for a budget that holds a page of it.
        extras.left_out = (
            f"the full view ({episode.full_view_tokens} tokens) is due but no page of it fits budget_tokens="
            f"{d.budget_tokens}: read with view='full' and a larger budget_tokens"
        )
        return d.fit(d.pack(items=[], spans=[], decision="fallback", reason=reason, extras=extras, retire=retire))


def _next_ranked_page(d: Delivery, candidates: list[Candidate], extras: Extras) -> EvidencePack:
    """While a full view is paged, a new request gets the next page at its best match not yet sent (never
    a page again); when all its matches were sent, it names them and the cursor."""
    episode = d.episode
    if episode.full_view_done:
        return _already_full(d, candidates, extras)
    sent = full_view_spans(episode)
    best = next((c for c in candidates if not any(s < c.end and c.start < e for s, e in sent)), None)
    if best is None:
        return _already_full(d, candidates, extras)
    reason = "the next page of the full view, beginning at this request's best match not yet delivered"
    start = page_start(d.parsed, sent, best.start)
    return deliver_full(d, extras, start=start, decision="full_view", reason=reason)


#: A page that begins at a match begins at the start of its line when that is at most this far before.
LINE_START_REACH = 1_000


def page_start(parsed: ParsedArtifact, sent: list[tuple[int, int]], offset: int) -> int:
    """Where a page showing `offset` begins: the start of its line when that is near and not yet sent
    (so pages stay whole lines), else `offset` itself (a passage start, on a single long line too)."""
    line_start = parsed.lines.starts[parsed.lines.line_of(offset) - 1]
    if offset - line_start <= LINE_START_REACH and not any(s < offset and line_start < e for s, e in sent):
        return line_start
    return offset


#: How many pointers `left_out` names when no passage fits, tried from the most down to none.
_POINTER_COUNTS = (5, 3, 1, 0)


def _pointers_only(
    d: Delivery, extras: Extras, pointers: list[str], build: Callable[[list[Any]], EvidencePack]
) -> EvidencePack:
    """No passage fits the budget: the answer names the best ones by pointer (as many as fit), to read one
    at a time with a larger budget; nothing is delivered or charged."""
    d.view = "pointers"
    extras.empty_reason = (
        f"nothing delivered: {len(pointers)} passage(s) match, none fits budget_tokens={d.budget_tokens}"
    )
    for count in _POINTER_COUNTS:
        extras.left_out = pointers_note(pointers[:count], d.budget_tokens, total=len(pointers))
        pack = d.shrink(build([]))
        if pack.tokens <= d.budget_tokens and pack.left_out == extras.left_out:
            return pack
    extras.left_out = None
    return d.fit(build([]))


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
