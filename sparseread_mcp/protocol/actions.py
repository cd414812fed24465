"""What each action proposes to deliver, before the budget and the gate decide.

focus: the best passages for the goal; collect: the best passages per slot; refine: the next
candidates or the neighbours of what was found, never anything already delivered; verify: the
passages that bear on a claim, with a verdict.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from ..evidence import Candidate, passage_candidate
from ..locate.base import Locator, Query
from ..locate.exposure import RELATIVE_CUTOFF, Span, plan_exposure
from ..locate.terms import terms
from ..models import Intent, Slot, Verification
from ..readers.base import ParsedArtifact
from ..select.figures import page_of_figures
from ..vocabulary import ExposureForm
from .around import AROUND_CHARS, bounds_around
from .claims import decide
from .coverage import GOAL_SLOT, PARTIAL_SUPPORT, slot_weights, support
from .intents import query_for
from .page_votes import page_votes, per_length
from .session import Episode

#: How much of a ranking an episode keeps for refine: enough to go deep, bounded in memory.
RANKING_KEPT = 200
#: ... and sends the rest of the best page only when it is at most this many characters; a longer rest gives
#: way to the next page in `page_order` (else passages). A longer page costs more than a refine usually
#: sends and is mostly prose: a filing's statements fill short pages (FinanceBench's gold pages: median
#: 2,240 characters, against 3,523 for all pages). Session 19, agent loop in process: 8,000 -> 5,000 took
#: the seeded 40's median per question 0.079 -> 0.070 (13 better, none worse) and the 11 others' total
#: 0.211 -> 0.197 (2 better, none worse); 3,500 halves more medians but sends 6 of 40 to a full read.
PAGE_REST_CHARS = 5_000
#: When the best page is a page of figures (a statement), the pages of figures up to this many pages
#: either side of it (nearest first) come before the next-voted page (0: off): a statement runs on to
#: the next page, or the answer combines it with the statement beside it.
NEIGHBOUR_PAGES = 2
#: A follow-up counts the goal's terms that nothing delivered contains this many extra times (0: off),
#: reading the terms of at most SERVED_CHARS delivered characters.
NOVELTY_WEIGHT = 1
SERVED_CHARS = 50_000

ITEMS_BY_WANT = {"fact": 4, "verbatim": 4, "count": 6, "list": 8, "table": 6, "summary": 8}


def max_items(intent: Intent | None) -> int:
    if intent is not None and intent.coverage == "exhaustive":
        return 24
    return ITEMS_BY_WANT.get(intent.want if intent and intent.want else "fact", 4)


def exposure_chars(intent: Intent | None, passage_chars: int) -> int:
    """Characters a focus may show: three quarters of its item count in passages (1,500 for a fact)."""
    return max_items(intent) * passage_chars * 3 // 4


def slots_of(intent: Intent) -> list[Slot]:
    """The intent's slots; a goal without slots is one implicit slot named `goal`."""
    if intent.slots:
        return list(intent.slots)
    question = intent.goal or " ".join(intent.needles or [])
    if not question:
        return []  # nothing asked (a refine with only `want`, an empty goal): no implicit slot
    return [Slot(id=GOAL_SLOT, question=question, aliases=list(intent.needles or []))]


def tag_slots(text: str, slots: list[Slot]) -> tuple[str, ...]:
    return tuple(slot.id for slot in slots if support(slot, text) >= PARTIAL_SUPPORT)


def focus(
    parsed: ParsedArtifact,
    intent: Intent,
    locator: Locator,
    episode: Episode,
    *,
    form: ExposureForm = "snippets",
    max_chars: int = 2_000,
) -> tuple[list[Candidate], list[tuple[int, float]]]:
    """The best evidence for the goal in the chosen exposure form, within `max_chars`: every planned passage.
    A focus used to stop one passage after the first that coverage's word test calls `found`; that test is
    wrong often enough (8% on the articles) that the cut put the first read below plain BM25 snippets on
    every article column, for 4-6% of an agent's tokens (bench/results/issue33_location.md, session 33)."""
    query = query_for(intent)
    ranking = locator.rank(parsed, query)
    slots = slots_of(intent)
    if parsed.focus_context:
        top = _top(parsed, ranking, slots, limit=max(8, max_items(intent) * 2), skip=episode.overlaps_delivered)
        return _with_context(parsed, top, parsed.focus_context, episode), ranking
    spans = plan_exposure(parsed, ranking, form, max_chars, skip=episode.overlaps_delivered, query=query)
    return [_span_candidate(parsed, span, slots) for span in spans], ranking


def collect(
    parsed: ParsedArtifact,
    intent: Intent,
    locator: Locator,
    episode: Episode,
    *,
    form: ExposureForm = "snippets",
    max_chars: int = 2_000,
) -> list[Candidate]:
    """Each slot located on its own (its question and aliases, the goal as context) within an equal share
    of `max_chars`, best slot answers first. Every item names the slot it was found for (and any other
    its text supports); a slot whose best span does not even partly support it gets nothing: `missing`,
    with no filler."""
    slots = slots_of(intent)
    share = max(1, max_chars // max(1, len(slots)))
    chosen: list[Candidate] = []

    def taken(start: int, end: int) -> bool:
        return episode.overlaps_delivered(start, end) or any(c.start < end and start < c.end for c in chosen)

    per_slot: list[list[Candidate]] = []
    text = parsed.artifact.text
    weights = {slot.id: slot_weights(parsed, slot) for slot in slots}  # each slot's words by their rarity here
    for slot in slots:
        query = query_for(intent, slot_id=slot.id if intent.slots else None)
        ranking = locator.rank(parsed, query)
        spans = plan_exposure(parsed, ranking, form, share, skip=taken, query=query)
        if (
            max((support(slot, text[span.start : span.end], weights[slot.id]) for span in spans), default=0.0)
            < PARTIAL_SUPPORT
        ):
            spans = []  # nothing relevant: the slot is missing, and no filler stands for it
        found = [_span_candidate(parsed, span, slots, found_for=slot.id, weights=weights) for span in spans]
        chosen.extend(found)
        per_slot.append(found)
    # Interleave: every slot's best span comes before any slot's second.
    depth = max((len(found) for found in per_slot), default=0)
    return [found[k] for k in range(depth) for found in per_slot if k < len(found)]


def candidates_of(parsed: ParsedArtifact, ranking: list[tuple[int, float]], intent: Intent) -> list[Candidate]:
    """The best passages of a ranking for an intent, as candidates (no exposure planning)."""
    return _top(parsed, ranking, slots_of(intent), limit=max_items(intent))


def _span_candidate(
    parsed: ParsedArtifact,
    span: Span,
    slots: list[Slot],
    *,
    found_for: str | None = None,
    weights: dict[str, dict[str, float]] | None = None,
) -> Candidate:
    """A span as a candidate, tagged with the slots its text supports; in a collect (`found_for`, with each
    slot's `weights`), the slot it was found for first, then the others its text supports by their words'
    rarity here."""
    text = parsed.artifact.text[span.start : span.end]
    if found_for is None or weights is None:
        tags = tag_slots(text, slots)
    else:
        others = (s.id for s in slots if s.id != found_for and support(s, text, weights[s.id]) >= PARTIAL_SUPPORT)
        tags = (found_for, *others)
    return Candidate(start=span.start, end=span.end, score=span.score, slots=tags, passage=span.passage)


def refine(
    parsed: ParsedArtifact,
    episode: Episode,
    intent: Intent | None,
    locator: Locator,
    around: tuple[int, int] | None,
) -> list[Candidate]:
    """Neighbours of `around` (or of what was delivered), then the next ranked candidates."""
    slots = slots_of(intent) if intent else []

    def fresh(c: Candidate) -> bool:
        return not episode.overlaps_delivered(c.start, c.end)

    out: list[Candidate] = []
    if around is not None:
        out.extend(beside(parsed, episode, around, slots, chars=AROUND_CHARS))
    else:
        ranking = episode.ranking
        if intent is not None and (intent.needles or not ranking):
            ranking = locator.rank(parsed, query_for(intent))
            episode.ranking = ranking[:RANKING_KEPT]
        goal_terms = query_for(intent).terms if intent is not None else ()
        if rest := rest_of_best_page(parsed, episode, ranking, slots, goal_terms):
            return rest
        if intent is not None and NOVELTY_WEIGHT and episode.delivered:
            # Pages are voted by the goal as asked (above); the next passages favour what was not read yet.
            ranking = locator.rank(parsed, novel_query(parsed, episode, intent))
        # Delivered passages are skipped before the limit counts: each follow-up reaches further down.
        out.extend(_top(parsed, ranking, slots, limit=12, cutoff=0.0, skip=episode.overlaps_delivered))
        for delivered in episode.delivered[:3]:
            out.extend(_neighbours(parsed, (delivered.start, delivered.end), slots, width=1))
    seen: set[tuple[int, int]] = set()
    unique = []
    for c in out:
        if fresh(c) and (c.start, c.end) not in seen:
            seen.add((c.start, c.end))
            unique.append(c)
    return unique


def beside(
    parsed: ParsedArtifact, episode: Episode, span: tuple[int, int], slots: list[Slot], *, chars: int
) -> list[Candidate]:
    """The text right before and right after `span` (`bounds_around`: at most `chars` each, on a paged
    text within its pages), nearest first, less what the episode already delivered: what "around this
    passage" means, whatever the passages are."""
    text = parsed.artifact.text
    start, end = span
    before, after = bounds_around(parsed, span, chars)
    out = []
    for s, e in (*_undelivered(text, episode, before, start), *_undelivered(text, episode, end, after)):
        out.append(Candidate(start=s, end=e, score=0.0, slots=tag_slots(text[s:e], slots)))
    # nearest first: the piece that touches the span on each side, then the rest
    return sorted(out, key=lambda c: min(abs(c.end - start), abs(c.start - end)))


def novel_query(parsed: ParsedArtifact, episode: Episode, intent: Intent) -> Query:
    """The intent's query for a follow-up: the terms that nothing delivered so far contains count
    1 + NOVELTY_WEIGHT times. The agent asks again because what it read did not answer: the passages
    that match the goal's other words are the likelier ones, not the next ones matching the same words."""
    query = query_for(intent)
    read: set[str] = set()
    budget = SERVED_CHARS
    for item in episode.delivered:
        if item.full_view or budget <= 0:
            continue
        end = min(item.end, item.start + budget)
        read.update(terms(parsed.artifact.text[item.start : end]))
        budget -= end - item.start
    unread = tuple(t for t in query.terms if t not in read)
    return replace(query, terms=query.terms + NOVELTY_WEIGHT * unread)


def rest_of_best_page(
    parsed: ParsedArtifact,
    episode: Episode,
    ranking: list[tuple[int, float]],
    slots: list[Slot],
    goal_terms: tuple[str, ...] = (),
) -> list[Candidate]:
    """On a paged document, what is not yet delivered of the page where the best passages concentrate
    (the sum of their scores, per unit of page length: `per_length`): evidence on a page (a statement, a
    table) is often the whole page, and passages show only parts of it. Pages already delivered whole, or
    whose rest is over PAGE_REST_CHARS, give way to the next in `page_order`; empty when the text has no
    pages or no page qualifies."""
    lines = parsed.lines
    if not lines.page_count:
        return []
    votes = per_length(parsed, page_votes(parsed, ranking, goal_terms))
    text = parsed.artifact.text
    for page in page_order(parsed, votes):
        start, end = lines.page_span(page)
        gaps = _undelivered(text, episode, start, end)
        rest = sum(e - s for s, e in gaps)
        if gaps and rest <= PAGE_REST_CHARS:
            score = votes.get(page, 0.0)
            return [Candidate(start=s, end=e, score=score, slots=tag_slots(text[s:e], slots)) for s, e in gaps]
    return []


def page_order(parsed: ParsedArtifact, votes: dict[int, float]) -> list[int]:
    """The pages a refine reads in turn: by their votes, except that when the best page is a page of
    figures of pages of prose (`ParsedArtifact.prose_pages`: never sheets, rows or records), the pages
    of figures beside it (NEIGHBOUR_PAGES) follow it, nearest first, whether they were voted or not."""
    order = sorted(votes, key=lambda p: (-votes[p], p))
    if not order or not NEIGHBOUR_PAGES or not parsed.prose_pages or not page_of_figures(parsed, order[0]):
        return order
    best, count = order[0], parsed.lines.page_count or 0
    near = [best + k * sign for k in range(1, NEIGHBOUR_PAGES + 1) for sign in (-1, 1)]
    beside = [n for n in near if 1 <= n <= count and page_of_figures(parsed, n)]
    return [best, *beside, *(p for p in order[1:] if p not in beside)]


def _undelivered(text: str, episode: Episode, start: int, end: int) -> list[tuple[int, int]]:
    """The parts of text[start:end] no delivered item covers, trimmed of blanks at either end."""
    return gaps_between(text, [(d.start, d.end) for d in episode.delivered], start, end)


def unheld(
    parsed: ParsedArtifact, cands: list[Candidate], spans: Callable[[int, int], list[tuple[int, int]]]
) -> list[Candidate]:
    """Each candidate without the text the agent holds at either end (`spans(start, end)`: what it holds
    there): a verify's place that overlaps a passage already read sends only what is new. A candidate the
    agent holds whole, or whose new part is blank, stays as it is (delivery names it, not sends it)."""
    out: list[Candidate] = []
    for c in cands:
        held = spans(c.start, c.end)
        gaps = gaps_between(parsed.artifact.text, held, c.start, c.end) if held else []
        if len(gaps) == 1:
            out.append(replace(c, start=gaps[0][0], end=gaps[0][1], passage=None))
        else:
            out.append(c)  # held whole, new only in the middle, or not held at all: as it was
    return out


def gaps_between(text: str, spans: list[tuple[int, int]], start: int, end: int) -> list[tuple[int, int]]:
    """The parts of text[start:end] none of `spans` covers, trimmed of blanks at either end."""
    gaps: list[tuple[int, int]] = []
    cursor = start
    for a, b in sorted(spans):
        if b <= cursor or a >= end:
            continue
        if a > cursor:
            gaps.append((cursor, a))
        cursor = max(cursor, b)
    if cursor < end:
        gaps.append((cursor, end))
    trimmed = []
    for s, e in gaps:
        piece = text[s:e]
        lead = len(piece) - len(piece.lstrip())
        if lead < len(piece):
            trimmed.append((s + lead, s + len(piece.rstrip())))
    return trimmed


def verify_claim(
    parsed: ParsedArtifact, claim: str, locator: Locator, *, held: Callable[[int, int], bool] | None = None
) -> tuple[list[Candidate], Verification]:
    """The passages that decide a claim (or come closest) and the verdict: see protocol/claims.py."""
    return decide(parsed, claim, locator, held=held)


def _top(
    parsed: ParsedArtifact,
    ranking: list[tuple[int, float]],
    slots: list[Slot],
    *,
    limit: int,
    cutoff: float = RELATIVE_CUTOFF,
    skip: Callable[[int, int], bool] | None = None,
) -> list[Candidate]:
    """The best `limit` passages above the relative cutoff, leaving out those `skip` rejects."""
    if not ranking:
        return []
    floor = ranking[0][1] * cutoff
    out: list[Candidate] = []
    for index, score in ranking:
        if score < floor or len(out) >= limit:
            break
        passage = parsed.passages[index]
        if skip is not None and skip(passage.start, passage.end):
            continue
        text = parsed.text_of(passage)
        out.append(passage_candidate(parsed, index, score, tag_slots(text, slots)))
    return out


def _with_context(parsed: ParsedArtifact, hits: list[Candidate], width: int, episode: Episode) -> list[Candidate]:
    """Each hit with `width` passages either side, never overlapping a chosen or delivered span."""
    chosen: list[Candidate] = []

    def free(start: int, end: int) -> bool:
        taken = any(c.start < end and start < c.end for c in chosen)
        return not taken and not episode.overlaps_delivered(start, end)

    last = len(parsed.passages) - 1
    for hit in hits:
        if hit.passage is None:
            continue
        start = parsed.passages[max(0, hit.passage - width)].start
        end = parsed.passages[min(last, hit.passage + width)].end
        if not free(start, end):
            start, end = hit.start, hit.end
            if not free(start, end):
                continue
        chosen.append(Candidate(start=start, end=end, score=hit.score, slots=hit.slots, passage=hit.passage))
    return chosen


def _neighbours(parsed: ParsedArtifact, span: tuple[int, int], slots: list[Slot], *, width: int) -> list[Candidate]:
    passages = parsed.passages
    inside = [p.index for p in passages if p.start < span[1] and span[0] < p.end]
    if not inside:
        return []
    first, last = inside[0], inside[-1]
    indexes = [i for k in range(1, width + 1) for i in (last + k, first - k) if 0 <= i < len(passages)]
    return [passage_candidate(parsed, i, 0.0, tag_slots(parsed.text_of(passages[i]), slots)) for i in indexes]
