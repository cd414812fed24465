"""Exposure forms: which spans of a ranked artifact to show within a character budget.

`snippets` shows the best passages wherever they are; `windows` grows contiguous text around the best
hits in turn (the best first, as far as the budget allows), each inside its region (the page of a paged
document, else the section, else the whole artifact), which suits evidence that spans several passages
(a statement table, neighbouring rows). Passages the ranking scores exactly as high as the best (a tie it
cannot break: pages alike but for a number) are each taken before any window grows, so a window never
spends the budget on one of them and leaves out the other. Both never
show a passage twice, never cross into what `skip` rejects, and stop at the budget: the measured
calibration and the live reads use this one function, so what was calibrated is what is served.

On a paged document, when the best snippets spread over pages (another page's best scores within
`SPREAD_CLOSE` of the best: the ranking cannot tell which page holds the evidence), snippets show the best
sentence of each page's best passage instead of whole passages: more pages reached in the same budget
(FinanceBench's gold page in a focus 60.8% -> 66.7%, and 72.5% with the shorter sentences of session 16;
no char hit changed on any development set; see bench/results/issue33_location.md, sessions 15 and 16).
A confident ranking keeps whole passages.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..readers.base import ParsedArtifact
from ..vocabulary import ExposureForm
from .base import Query
from .sentences import best_sentences

EXPOSURE_FORMS: tuple[ExposureForm, ...] = ("snippets", "windows", "context", "pages")

#: Passages scoring below this share of the best one are not worth exposing.
RELATIVE_CUTOFF = 0.35
#: How deep in the ranking snippets look for passages that still fit.
SNIPPET_DEPTH = 50
#: Windows grow around at most this many distinct hits, the best first.
WINDOW_HITS = 3
#: Snippets on a paged document spread over pages when another page's best passage scores at least this
#: share of the best (0.7, 0.8 and 0.9 gave the same figures on every development set: nothing fitted).
SPREAD_CLOSE = 0.8
#: The spread's switch. Session 15 shipped it off: its pieces ended just past a line break, which no
#: line-and-column anchor names verbatim (CI: `L7940:C1-L7946:C5`); pieces are trimmed to text since.
SPREAD_ON = True


@dataclass(frozen=True, slots=True)
class Span:
    start: int
    end: int
    score: float
    #: The ranked passage this span was built around.
    passage: int


def plan_exposure(
    parsed: ParsedArtifact,
    ranking: list[tuple[int, float]],
    form: ExposureForm,
    max_chars: int,
    *,
    cutoff: float = RELATIVE_CUTOFF,
    skip: Callable[[int, int], bool] | None = None,
    query: Query | None = None,
) -> list[Span]:
    """The spans `form` shows of `ranking` within `max_chars`; `query` (the ranking's own) lets snippets
    on a paged document spread over pages by their best sentences."""
    if not ranking or max_chars <= 0:
        return []
    ranked = _above_cutoff(ranking, cutoff)
    if query is not None and spreads(parsed, ranking, form, query=query, cutoff=cutoff):
        firsts = _one_per_region(parsed, ranked)[: len({regions(parsed)[i] for i, _ in ranked})]
        return [Span(*piece) for piece in best_sentences(parsed, firsts, query, max_chars, skip=skip)]
    if form == "windows":
        return _windows(parsed, ranked, max_chars, skip)
    if form == "context":
        return _in_context(parsed, _snippets(parsed, ranked, max_chars, skip), max_chars, skip)
    if form == "pages":
        return _snippets(parsed, _one_per_region(parsed, ranked), max_chars, skip)
    return _snippets(parsed, ranked, max_chars, skip)


def spreads(
    parsed: ParsedArtifact,
    ranking: list[tuple[int, float]],
    form: ExposureForm,
    *,
    query: Query | None = None,
    cutoff: float = RELATIVE_CUTOFF,
) -> bool:
    """Whether `plan_exposure` shows the best sentence of each page: the ranking cannot tell the pages
    apart, so no one of its passages is the answer by rank alone."""
    if not ranking or form != "snippets" or query is None or not SPREAD_ON:
        return False
    return _spread_over_pages(parsed, _above_cutoff(ranking, cutoff))


def _above_cutoff(ranking: list[tuple[int, float]], cutoff: float) -> list[tuple[int, float]]:
    floor = ranking[0][1] * cutoff
    return [(i, s) for i, s in ranking[:SNIPPET_DEPTH] if s >= floor]


def regions(parsed: ParsedArtifact) -> list[int]:
    """A region number per passage: consecutive passages on one page (or in one section) share it."""
    cached = parsed.locator_state.get("exposure.regions")
    if isinstance(cached, list):
        return cached
    paged = bool(parsed.lines.page_count)
    numbers: list[int] = []
    current, last = -1, None
    for passage in parsed.passages:
        key = parsed.lines.page_of(passage.start) if paged else passage.section
        if key != last or not numbers:
            current, last = current + 1, key
        numbers.append(current)
    parsed.locator_state["exposure.regions"] = numbers
    return numbers


def _spread_over_pages(parsed: ParsedArtifact, ranked: list[tuple[int, float]]) -> bool:
    """Whether another page's best passage scores within `SPREAD_CLOSE` of the best one's."""
    if not ranked or not parsed.lines.page_count:
        return False
    region = regions(parsed)
    best_region, best = region[ranked[0][0]], ranked[0][1]
    rival = next((score for index, score in ranked if region[index] != best_region), 0.0)
    return rival >= SPREAD_CLOSE * best > 0


def _size(parsed: ParsedArtifact, index: int) -> int:
    passage = parsed.passages[index]
    return passage.end - passage.start


def _snippets(
    parsed: ParsedArtifact,
    ranked: list[tuple[int, float]],
    max_chars: int,
    skip: Callable[[int, int], bool] | None,
) -> list[Span]:
    spans: list[Span] = []
    used = 0
    for index, score in ranked:
        passage = parsed.passages[index]
        size = passage.end - passage.start
        if used + size > max_chars or (skip is not None and skip(passage.start, passage.end)):
            continue
        spans.append(Span(passage.start, passage.end, score, index))
        used += size
    return spans


def _one_per_region(parsed: ParsedArtifact, ranked: list[tuple[int, float]]) -> list[tuple[int, float]]:
    """The ranking with each region's best passage first (in rank order), then the others in rank order."""
    region = regions(parsed)
    seen: set[int] = set()
    first: list[tuple[int, float]] = []
    rest: list[tuple[int, float]] = []
    for index, score in ranked:
        (rest if region[index] in seen else first).append((index, score))
        seen.add(region[index])
    return first + rest


def _windows(
    parsed: ParsedArtifact,
    ranked: list[tuple[int, float]],
    max_chars: int,
    skip: Callable[[int, int], bool] | None,
) -> list[Span]:
    region = regions(parsed)
    taken: set[int] = set()
    spans: list[Span] = []
    used = 0
    hits = 0

    def free(index: int) -> bool:
        passage = parsed.passages[index]
        return index not in taken and not (skip is not None and skip(passage.start, passage.end))

    # Every passage tied with the best is taken before any window grows (they lead the ranking).
    seeds: set[int] = set()
    for index, score in ranked:
        if score < ranked[0][1] or len(seeds) == WINDOW_HITS:
            break
        if free(index) and used + _size(parsed, index) <= max_chars:
            seeds.add(index)
            taken.add(index)
            used += _size(parsed, index)
    # The seeds grow first, in their rank; then the other hits while the budget lasts.
    for index, score in [r for r in ranked if r[0] in seeds] + [r for r in ranked if r[0] not in seeds]:
        if hits == WINDOW_HITS or (used >= max_chars and index not in seeds):
            break
        if index not in seeds:
            if not free(index) or used + _size(parsed, index) > max_chars:
                continue
            taken.add(index)
            used += _size(parsed, index)
        hits += 1
        # The best hit grows first, as far as its region and the budget allow; what is left goes to the next.
        low = high = index
        grew = True
        while grew and used < max_chars:
            grew = False
            for neighbour in (high + 1, low - 1):  # after first: evidence tends to follow its heading
                if (
                    0 <= neighbour < len(parsed.passages)
                    and region[neighbour] == region[index]
                    and free(neighbour)
                    and used + _size(parsed, neighbour) <= max_chars
                ):
                    taken.add(neighbour)
                    used += _size(parsed, neighbour)
                    low, high = min(low, neighbour), max(high, neighbour)
                    grew = True
        spans.append(Span(parsed.passages[low].start, parsed.passages[high].end, score, index))
    return spans


def _in_context(
    parsed: ParsedArtifact,
    snippets: list[Span],
    max_chars: int,
    skip: Callable[[int, int], bool] | None,
) -> list[Span]:
    """Snippets, then the budget they leave grows each of them by its neighbours in its region, one
    passage per snippet per round, the best snippet first (what follows before what precedes): several
    distinct hits like snippets, the context around each like windows."""
    region = regions(parsed)
    taken = {span.passage for span in snippets}
    bounds = [[span.passage, span.passage] for span in snippets]
    used = sum(span.end - span.start for span in snippets)
    grew = True
    while grew and used < max_chars:
        grew = False
        for k, span in enumerate(snippets):
            for side in (1, 0):
                neighbour = bounds[k][1] + 1 if side else bounds[k][0] - 1
                if not 0 <= neighbour < len(parsed.passages) or neighbour in taken:
                    continue
                passage = parsed.passages[neighbour]
                size = _size(parsed, neighbour)
                if region[neighbour] != region[span.passage] or used + size > max_chars:
                    continue
                if skip is not None and skip(passage.start, passage.end):
                    continue
                taken.add(neighbour)
                used += size
                bounds[k][side] = neighbour
                grew = True
    return [
        Span(parsed.passages[low].start, parsed.passages[high].end, span.score, span.passage)
        for span, (low, high) in zip(snippets, bounds, strict=True)
    ]
