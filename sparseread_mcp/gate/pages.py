"""The full view in pages: each character of the text delivered once, the likeliest part first.

A full view begins where the evidence most likely is (`start` > 0 on the first call), and each next page
where the matches the agent has not read are densest (page_place.py); once none is left unread, the pages
run on in text order, then from the beginning, so every character is delivered exactly once and an agent
that stops early has seen the likeliest parts first. While it is paged, a new request in
the episode (focus, collect, refine) may start the next page at its own best match, as long as that
text was not delivered yet: the pages are the parts of the text not yet sent, never a part twice.
A full view that follows sparse reads in its episode comes in smaller pages (`page_place.page_budget`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, replace

from ..deadline import checkpoint
from ..errors import BudgetTooSmall
from ..evidence import Candidate, item_for
from ..files.anchors import format_pointer
from ..models import EvidenceItem, EvidencePack
from ..protocol.session import DeliveredItem
from ..readers.base import ParsedArtifact
from ..vocabulary import GateDecision
from .delivery import Delivery, Extras
from .page_place import full_view_spans, page_budget, page_start
from .respond import MIN_PAGE_TOKENS, PAGE_MARGIN_TOKENS, SLACK_TOKENS, WHOLE_FRAME_TOKENS


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
    """Deliver the full view from `start`, one page that fits the budget; a cursor names the rest (see
    the module's docstring for the order of the pages). After sparse reads a page answers within the smaller
    `page_budget`, unless its frame leaves no room for text there: then within the call's budget."""
    smaller = page_budget(d.episode, d.budget_tokens) if decision != "native_fit" else d.budget_tokens
    if smaller < d.budget_tokens:
        try:
            return _deliver_page(replace(d, budget_tokens=smaller), extras, start, decision, reason, retire, continuing)
        except BudgetTooSmall:
            pass  # a frame as large as the smaller budget (a long `retire`): the page takes the call's budget
    return _deliver_page(d, extras, start, decision, reason, retire, continuing)


def _deliver_page(
    d: Delivery,
    extras: Extras,
    start: int,
    decision: GateDecision,
    reason: str,
    retire: list[str] | None,
    continuing: bool,
) -> EvidencePack:
    bounds = _page_bounds(d, start, continuing=continuing)
    if bounds is None:
        return _already_full(d, [], extras)
    start, stop = bounds
    frame = d.pack(items=[], spans=[], decision=decision, reason=reason, extras=extras, retire=retire, cursor="x" * 40)
    capacity, tight = _page_capacity(d, frame)
    page = _fitted_page(d, extras, start, stop, capacity, tight, decision=decision, reason=reason, retire=retire)
    checkpoint()  # a cancelled call stops here with nothing recorded
    episode = d.episode
    episode.ledger.charge_full(page.end - page.start)
    episode.full_view_next = page.following
    episode.full_view_done = page.following is None
    episode.closed = True
    if page.item:
        episode.delivered.append(
            DeliveredItem(
                pointer=page.item.pointer, start=page.start, end=page.end, slots=(), support={}, full_view=True
            )
        )
    return d.commit(page.pack)


@dataclass(frozen=True, slots=True)
class _Page:
    pack: EvidencePack
    start: int
    end: int
    item: EvidenceItem | None
    #: Where the next page begins; None: this page completes the full view.
    following: int | None


def _page_bounds(d: Delivery, start: int, *, continuing: bool) -> tuple[int, int] | None:
    """Where this page begins and the furthest it may run (the next part already delivered); None when
    the full view was delivered whole already."""
    episode, text = d.episode, d.parsed.artifact.text
    if not continuing:
        if episode.full_view_done:
            return None
        if episode.full_view_next is None:
            if episode.full_view_tokens + WHOLE_FRAME_TOKENS <= d.budget_tokens:
                start = 0  # the whole view fits one response: it begins at the beginning
            episode.full_view_origin = start
    sent = full_view_spans(episode)
    begin = _undelivered_from(text, sent, start)
    if begin is None:
        episode.full_view_next, episode.full_view_done = None, True
        return None
    start = begin
    stop = next((s for s, _ in sent if s > start), len(text))
    if stop < len(text) and stop - 1 > start and text[stop - 1] == "\n":
        stop -= 1  # a page ends before the newline that ends the line above the next delivered page
    if stop - start > 1 and text[start] == "\n" and any(e == start for _, e in sent):
        start += 1  # pages end before a newline; the next page starts after it
    return start, stop


def _page_capacity(d: Delivery, frame: EvidencePack) -> tuple[int, bool]:
    """Tokens left for the page's text beside its frame, and whether the frame itself must shed.

    Only a frame that leaves no room for a page sheds (hints first, then echoes; respond.py), and the
    pages with it: otherwise the page gives way, never the page's own left_out or the hints.
    """
    frame_tokens = d.finish(frame).tokens
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
    return capacity, tight


def _fitted_page(
    d: Delivery,
    extras: Extras,
    start: int,
    stop: int,
    capacity: int,
    tight: bool,
    *,
    decision: GateDecision,
    reason: str,
    retire: list[str] | None,
) -> _Page:
    """The largest page from `start` whose whole answer fits the budget."""
    text, sent = d.parsed.artifact.text, full_view_spans(d.episode)
    while True:
        end = min(stop, _section_aligned(d.parsed, start, _page_end(d, text, start, capacity)))
        end = _whole_lines_before(d.parsed, start, end)
        if stop == len(text) and text[end:] == "\n":
            end = len(text)  # the final newline ends the last page; it does not make a page of its own
        item = item_for(d.parsed, Candidate(start=start, end=end, score=1.0)) if end > start else None
        after = sorted([*sent, (start, end)])
        following = _undelivered_from(text, after, end)
        cursor = f"{d.episode.id}:{following}" if following is not None else None
        view, left_out = _page_view(d.parsed, start, end, _gaps(text, after) if following is not None else [])
        page = replace(d, view=view)
        pack = (page.shrink if tight else page.finish)(
            page.pack(
                items=[item] if item else [],
                spans=[(start, end)],
                decision=decision,
                reason=reason,
                extras=replace(extras, left_out=left_out),
                retire=retire,
                cursor=cursor,
                full_chars=end - start,
            )
        )
        overshoot = pack.tokens - d.budget_tokens
        if overshoot <= 0:
            return _Page(pack, start, end, item, following)
        # Coverage pointers grow with the page; shrink the page by the overshoot and measure again.
        capacity -= overshoot + SLACK_TOKENS
        if capacity < MIN_PAGE_TOKENS:
            raise BudgetTooSmall(
                f"budget_tokens={d.budget_tokens} leaves no room for full-view text; raise budget_tokens"
            )


def next_ranked_page(d: Delivery, candidates: list[Candidate], extras: Extras) -> EvidencePack:
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
    extras = extras.hinted(*(f"already in the full view: {p}" for p in where))
    if not paging:
        extras = extras.hinted("state a new goal to open a new episode if the full view is no longer in context")
    cursor = f"{d.episode.id}:{d.episode.full_view_next}" if paging else None
    return d.fit(d.pack(items=[], spans=[], decision="full_view", reason=reason, extras=extras, cursor=cursor))


def _page_end(d: Delivery, text: str, start: int, capacity: int) -> int:
    """End offset of the largest page from `start` whose JSON text fits `capacity` tokens.

    Pages end at a line end; a line too long for one page is cut at a space between columns, so every
    page is whole lines, or the rest of a line and the whole lines after it, or a column range of one
    line, and its anchor names exactly its text. A page that begins inside a long line (at a match,
    where a contract's paragraph is one line) runs on past that line's end: it used to stop there, and a
    page 1 of a few hundred tokens left the text right after the best match to a page much later.
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

    if not fits(line_end):
        return _largest_fitting(start, line_end, fits, text)
    # The rest of the first line fits: whole lines follow while they fit. Gallop, then bisect on lines.
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
