"""Where a page of the full view begins: where the matches the agent has not read are densest.

A full view is the fallback after sparse reads missed, paged so that an agent that stops early has seen the
likeliest part first. Page 1 holds the best match not yet sent (`likeliest_region`), placed so that it also
holds as many of the episode's ranked passages the agent has not read as one page can. Each next page
(`densest_unread`) begins at the unread ranked passage whose page would hold the most of them, by score:
the best single passage has usually been read by then, and the evidence sparse reads missed is likelier
where weaker matches cluster than in the rows that follow page 1. Pages used to run on from page 1 in text
order (then from the beginning): an agent whose evidence lay before the best match read most of the file.
Each page is still a stretch never sent before, so the pages together remain one full view, every character
once, within 2L (gate/pages.py); when no ranked passage is left unread, the pages run on in text order.
"""

from __future__ import annotations

from ..locate.base import Locator
from ..models import Intent
from ..protocol.actions import RANKING_KEPT
from ..protocol.intents import query_for, says_what_to_locate
from ..protocol.session import Episode
from ..readers.base import ParsedArtifact
from .respond import WHOLE_FRAME_TOKENS

#: A page that begins at a match begins at the start of its line when that is at most this far before.
LINE_START_REACH = 1_000
#: A next page may begin at any of this many of the best unread passages.
START_CANDIDATES = 30
#: A page of a full view whose episode sent passages before it (the agent asked for it after its refines
#: missed, or the gate fell back to it) answers within at most this many tokens, whatever the call's budget
#: (0: off): the agent is looking for what the ranked passages missed and stops on the page that holds it,
#: so a page costs what it holds up to that one. Session 22, agent loop (stdio, 40 a set), total against one
#: full read with pages of the default budget (8,000): contracts 0.182 -> 0.160 at 4,000 (0.159 at 2,500;
#: chosen there), then FinanceBench 0.102 -> 0.087, the one-line articles 0.077 -> 0.068; medians unchanged.
AFTER_SPARSE_PAGE_TOKENS = 4_000


def page_budget(episode: Episode, budget_tokens: int) -> int:
    """The budget a page of this episode's full view answers within: the call's, and at most
    AFTER_SPARSE_PAGE_TOKENS once the episode has sent passages of sparse reads."""
    if AFTER_SPARSE_PAGE_TOKENS and any(not item.full_view for item in episode.delivered):
        return min(budget_tokens, AFTER_SPARSE_PAGE_TOKENS)
    return budget_tokens


def full_view_spans(episode: Episode) -> list[tuple[int, int]]:
    """The parts of the full view this episode has delivered, in text order."""
    return sorted((item.start, item.end) for item in episode.delivered if item.full_view)


def likeliest_region(
    parsed: ParsedArtifact, locator: Locator, intent: Intent, episode: Episode | None = None, budget_tokens: int = 0
) -> int:
    """Where a full view should begin: at the best passage (needles included) not yet sent in the episode,
    or before it, as far as the passages that page would hold too outweigh those it would leave (what
    `budget_tokens` surely holds beside a frame); at the start of its line when that is near. An episode
    with no ranking yet keeps this one, for its next pages."""
    if not says_what_to_locate(intent):
        return 0
    if episode is not None:
        budget_tokens = page_budget(episode, budget_tokens)
    sent = full_view_spans(episode) if episode is not None else []
    ranking = locator.rank(parsed, query_for(intent))[:RANKING_KEPT]
    if episode is not None and not episode.ranking:
        episode.ranking = ranking
    for index, _ in ranking:
        passage = parsed.passages[index]
        if any(s < passage.end and passage.start < e for s, e in sent):
            continue
        if episode is None:
            return page_start(parsed, sent, passage.start)
        reach = _chars(parsed, episode, budget_tokens - WHOLE_FRAME_TOKENS)
        unread = _unread(parsed, episode, ranking)
        starts = [passage.start, *(s for s, _ in unread if passage.start - reach < s < passage.start)]
        return page_start(parsed, sent, max(starts, key=lambda start: _weight(unread, start, reach)))
    return 0


def densest_unread(parsed: ParsedArtifact, episode: Episode, budget_tokens: int) -> int | None:
    """Where the next page begins: the start of the unread ranked passage (among the best
    START_CANDIDATES) whose page would hold the most of the episode's unread ranked passages, by score;
    None when the episode has no ranking or the agent has read every ranked passage."""
    unread = _unread(parsed, episode, episode.ranking)
    if not unread:
        return None
    pages = [d.end - d.start for d in episode.delivered if d.full_view]
    # One page's reach: the latest page sent (the next is cut to the same budget), else the budget.
    reach = pages[-1] if pages else _chars(parsed, episode, page_budget(episode, budget_tokens))
    best = max((s for s, _ in unread[:START_CANDIDATES]), key=lambda start: _weight(unread, start, reach))
    return page_start(parsed, full_view_spans(episode), best)


def page_start(parsed: ParsedArtifact, sent: list[tuple[int, int]], offset: int) -> int:
    """Where a page showing `offset` begins: the start of its line when that is near and not yet sent
    (so pages stay whole lines), else `offset` itself (a passage start, on a single long line too)."""
    line_start = parsed.lines.starts[parsed.lines.line_of(offset) - 1]
    if offset - line_start <= LINE_START_REACH and not any(s < offset and line_start < e for s, e in sent):
        return line_start
    return offset


def _unread(parsed: ParsedArtifact, episode: Episode, ranking: list[tuple[int, float]]) -> list[tuple[int, float]]:
    """(start, score) of the ranked passages nothing in the episode has sent, best first."""
    passages = parsed.passages
    return [
        (passages[index].start, score)
        for index, score in ranking
        if score > 0
        and index < len(passages)
        and not episode.overlaps_delivered(passages[index].start, passages[index].end)
    ]


def _weight(unread: list[tuple[int, float]], start: int, reach: int) -> float:
    """The scores of the unread passages a page beginning at `start` would hold (ties: the first best)."""
    return sum(score for s, score in unread if start <= s < start + reach)


def _chars(parsed: ParsedArtifact, episode: Episode, tokens: int) -> int:
    """`tokens` of this text, in its characters (none below 0)."""
    return max(0, tokens) * len(parsed.artifact.text) // max(1, episode.full_view_tokens)
