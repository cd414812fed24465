"""Session 15 candidates for location on pages of figures (issue #33), measured in bench.location_ablation.

None needs a vocabulary; each reads a structure of the document or of the question:
- `period_heads`: the years a question names (`FY2018`, `2021 Q1`, `FY22`) against the years a page (or a
  section) carries as column heads: short lines holding a year and no other figure (`2018`, `2022  2021
  Change`, `January 28, 2017`). A quantity for FY2018 is on a page whose columns are headed 2018; a cover,
  a table of contents, an exhibit list or a page of prose is not. Passages on such a page are lifted by
  the share of the question's years its heads carry.
- `contents_lowered`: pages that are a table of contents (many short lines that are page numbers of this
  document, in ascending order) are lowered: they name every statement the question names.
- `period_terms`: a question token that joins letters and a year (`fy2018`) also counts as the year alone.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable
from typing import Any

import numpy as np

from bench.location_candidates import Scoring, _cached, plain
from sparseread_mcp.locate import bm25
from sparseread_mcp.locate.base import Query, concept_terms
from sparseread_mcp.locate.exposure import regions
from sparseread_mcp.readers.base import ParsedArtifact

#: A year as a question or a column head writes it, alone or inside `FY2018`.
_YEAR = re.compile(r"(?<!\d)((?:19|20)\d\d)(?!\d)")
#: `FY22`, `FY 19`: a fiscal year in two digits.
_SHORT_FY = re.compile(r"\bFY\s?(\d\d)\b", re.IGNORECASE)
#: Any number on a line; a head line holds years and at most small numbers (a date's day) besides.
_NUMBER = re.compile(r"\d[\d,.]*")
#: A column head is a short line.
HEAD_LINE_CHARS = 40


def question_years(text: str) -> set[str]:
    found = set(_YEAR.findall(text))
    found |= {f"20{two}" for two in _SHORT_FY.findall(text)}
    return found


def _head_years(line: str) -> set[str]:
    """The years of a column-head line, or none when the line holds another figure or runs long."""
    stripped = line.strip(" |\t")
    if not stripped or len(stripped) > HEAD_LINE_CHARS:
        return set()
    years = set(_YEAR.findall(stripped))
    if not years:
        return set()
    for number in _NUMBER.findall(stripped):
        if number not in years and len(number.rstrip(".,")) > 2:
            return set()
    return years


def region_heads(parsed: ParsedArtifact) -> tuple[list[int], dict[int, set[str]]]:
    """Each passage's region and each region's head years (over its whole text)."""

    def build() -> tuple[list[int], dict[int, set[str]]]:
        region = regions(parsed)
        heads: dict[int, set[str]] = {}
        text = parsed.artifact.text
        bounds: dict[int, list[int]] = {}
        for r, p in zip(region, parsed.passages, strict=True):
            span = bounds.setdefault(r, [p.start, p.end])
            span[0], span[1] = min(span[0], p.start), max(span[1], p.end)
        for r, (start, end) in bounds.items():
            heads[r] = set().union(*(_head_years(line) for line in text[start:end].split("\n")))
        return region, heads

    return _cached(parsed, "candidates.heads", build)  # type: ignore[no-any-return]


def period_heads(lift: float = 0.5, *, paged_only: bool = True) -> Scoring:
    """Passages of a region whose column heads carry the question's years x (1 + `lift` x their share)."""

    def score(parsed: ParsedArtifact, query: Query) -> np.ndarray:
        base = plain(parsed, query)
        years = question_years(query.text)
        if not base.size or not years or (paged_only and not parsed.lines.page_count):
            return base
        region, heads = region_heads(parsed)
        share = {r: len(years & h) / len(years) for r, h in heads.items()}
        return base * np.asarray([1.0 + lift * share[r] for r in region])

    return score


def contents_pages(parsed: ParsedArtifact, least: int = 6) -> set[int]:
    """Regions that read as a table of contents: at least `least` lines that are a page number of this
    document alone, and those numbers mostly ascending."""

    def build() -> set[int]:
        pages = parsed.lines.page_count or 0
        if not pages:
            return set()
        region = regions(parsed)
        text = parsed.artifact.text
        bounds: dict[int, list[int]] = {}
        for r, p in zip(region, parsed.passages, strict=True):
            span = bounds.setdefault(r, [p.start, p.end])
            span[0], span[1] = min(span[0], p.start), max(span[1], p.end)
        found = set()
        for r, (start, end) in bounds.items():
            numbers = [int(s) for s in (line.strip(" |\t") for line in text[start:end].split("\n")) if s.isdigit()]
            numbers = [n for n in numbers if 1 <= n <= pages]
            if len(numbers) >= least:
                rising = sum(b >= a for a, b in itertools.pairwise(numbers))
                if rising >= 0.8 * (len(numbers) - 1):
                    found.add(r)
        return found

    return _cached(parsed, "candidates.contents", build)  # type: ignore[no-any-return]


def contents_lowered(factor: float = 0.5, then: Scoring = plain) -> Scoring:
    """`then`'s scores, passages on a table-of-contents page x `factor`."""

    def score(parsed: ParsedArtifact, query: Query) -> np.ndarray:
        base = then(parsed, query)
        contents = contents_pages(parsed)
        if not base.size or not contents:
            return base
        region = regions(parsed)
        return base * np.asarray([factor if r in contents else 1.0 for r in region])

    return score


def period_terms(parsed: ParsedArtifact, query: Query) -> np.ndarray:
    """BM25 with each `fy2018`-like term also counted as its year (`2018`)."""
    extra = [y for t in query.terms if not t.isdigit() for y in _YEAR.findall(t)]
    return bm25.passage_index(parsed).scores([*concept_terms(parsed, query), *extra])


def rows() -> list[tuple[str, str, list[tuple[Any, str, Any]]]]:
    def scoring(value: Callable[[ParsedArtifact, Query], np.ndarray]) -> list[tuple[Any, str, Any]]:
        return [(bm25, "passage_scores", value)]

    return [
        ("period heads: the question's years in a page's column heads", "lift 0.5", scoring(period_heads(0.5))),
        ("period heads: the question's years in a page's column heads", "lift 1", scoring(period_heads(1.0))),
        ("period heads on every region (sections too)", "lift 0.5", scoring(period_heads(0.5, paged_only=False))),
        ("table-of-contents pages lowered", "x 0.5", scoring(contents_lowered(0.5))),
        ("years of fy2018-like terms added", "once", scoring(period_terms)),
        (
            "period heads and table-of-contents pages lowered",
            "lift 0.5, x 0.5",
            scoring(contents_lowered(0.5, period_heads(0.5))),
        ),
    ]


def _region_bounds(parsed: ParsedArtifact) -> dict[int, tuple[int, int]]:
    bounds: dict[int, list[int]] = {}
    for r, p in zip(regions(parsed), parsed.passages, strict=True):
        span = bounds.setdefault(r, [p.start, p.end])
        span[0], span[1] = min(span[0], p.start), max(span[1], p.end)
    return {r: (s, e) for r, (s, e) in bounds.items()}


def top_heads(parsed: ParsedArtifact, within: int = 600) -> dict[int, set[str]]:
    """Each region's head years found in its first `within` characters (a statement's own columns)."""

    def build() -> dict[int, set[str]]:
        text = parsed.artifact.text
        return {
            r: set().union(*(_head_years(line) for line in text[s : min(e, s + within)].split("\n")))
            for r, (s, e) in _region_bounds(parsed).items()
        }

    return _cached(parsed, f"candidates.top_heads.{within}", build)  # type: ignore[no-any-return]


def period_top_heads(lift: float = 0.5, within: int = 600) -> Scoring:
    """`period_heads` with the heads read only at the top of a page (where a statement's columns are)."""

    def score(parsed: ParsedArtifact, query: Query) -> np.ndarray:
        base = plain(parsed, query)
        years = question_years(query.text)
        if not base.size or not years or not parsed.lines.page_count:
            return base
        heads = top_heads(parsed, within)
        share = {r: len(years & h) / len(years) for r, h in heads.items()}
        return base * np.asarray([1.0 + lift * share[r] for r in regions(parsed)])

    return score


def _is_figure_line(line: str) -> bool:
    words = line.strip(" |\t").split()
    return bool(words) and all(_FIGURE_WORD.fullmatch(w) for w in words)


_FIGURE_WORD = re.compile(r"[(\[$€£—–-]{0,3}\d[\d,.]*[)\]%]{0,3}|[$€£—–-]")


def row_label_pages(parsed: ParsedArtifact) -> tuple[list[int], Any]:
    """A BM25 index over regions (idf over pages), each region's document its row labels: the lines of
    text that a line of figures follows (`Inventories` above `6,854`)."""

    def build() -> tuple[list[int], Any]:
        from sparseread_mcp.locate.terms import terms

        text = parsed.artifact.text
        bounds = _region_bounds(parsed)
        documents: list[list[str]] = [[] for _ in range(max(bounds) + 1)] if bounds else []
        for r, (s, e) in bounds.items():
            lines = [line for line in text[s:e].split("\n") if line.strip(" |\t")]
            for line, after in itertools.pairwise(lines):
                if not _is_figure_line(line) and len(line) <= 80 and _is_figure_line(after):
                    documents[r].extend(terms(line))
        return regions(parsed), bm25.Bm25Corpus(documents)

    return _cached(parsed, "candidates.row_labels", build)  # type: ignore[no-any-return]


def row_labels(weight: float = 0.5) -> Scoring:
    """Passages x (1 + `weight` x their page's BM25 score over row labels, the best page 1)."""

    def score(parsed: ParsedArtifact, query: Query) -> np.ndarray:
        base = plain(parsed, query)
        if not base.size or not parsed.lines.page_count:
            return base
        region, pages = row_label_pages(parsed)
        page_scores = pages.scores(concept_terms(parsed, query))
        if not page_scores.size or page_scores.max() <= 0:
            return base
        return base * (1 + weight * page_scores[np.asarray(region)] / page_scores.max())

    return score


def more_rows() -> list[tuple[str, str, list[tuple[Any, str, Any]]]]:
    def scoring(value: Callable[[ParsedArtifact, Query], np.ndarray]) -> list[tuple[Any, str, Any]]:
        return [(bm25, "passage_scores", value)]

    return [
        ("period heads at a page's top", "lift 0.5", scoring(period_top_heads(0.5))),
        ("period heads at a page's top", "lift 1", scoring(period_top_heads(1.0))),
        ("row labels: a page-level BM25 over its table row labels", "0.5", scoring(row_labels(0.5))),
        ("row labels: a page-level BM25 over its table row labels", "1", scoring(row_labels(1.0))),
    ]


def spread_pages(windows: Callable[..., list[Any]], close: float = 0.9) -> Callable[..., list[Any]]:
    """`exposure._windows`, except when the best hits spread over pages (another page's best passage
    scores at least `close` of the best): then each page's best passage, in rank order, within the budget."""
    from sparseread_mcp.locate import exposure

    def plan(parsed: ParsedArtifact, ranked: list[tuple[int, float]], max_chars: int, skip: Any) -> list[Any]:
        region = regions(parsed)
        if ranked:
            best_region, best = region[ranked[0][0]], ranked[0][1]
            rival = next((s for i, s in ranked if region[i] != best_region), 0.0)
            if best > 0 and rival >= close * best:
                return exposure._snippets(parsed, exposure._one_per_region(parsed, ranked), max_chars, skip)
        return windows(parsed, ranked, max_chars, skip)

    return plan


def spread_rows() -> list[tuple[str, str, list[tuple[Any, str, Any]]]]:
    from sparseread_mcp.locate import exposure

    return [
        (
            "on figures: pages when the best hits spread over pages, else a window",
            f"another page >= {close}",
            [(exposure, "_windows", spread_pages(exposure._windows, close))],
        )
        for close in (0.95, 0.9, 0.8)
    ]


def spread_sentences(
    close: float = 0.9, forms: tuple[str, ...] = ("windows",), *, paged_only: bool = False
) -> Callable[..., Any]:
    """`protocol.actions.focus`, except when its form is one of `forms` and the best hits spread over pages
    or sections (another region's best passage scores at least `close` of the best): then the best
    sentence of each region's best passage, regions in rank order, while the budget lasts (more places,
    less of each); a confident ranking keeps the form as chosen (a window covers a whole statement)."""
    from bench.sentence_windows import sentence_windows
    from sparseread_mcp.locate import exposure
    from sparseread_mcp.protocol import actions
    from sparseread_mcp.protocol.intents import query_for

    shipped = actions.focus

    def focus(
        parsed: ParsedArtifact,
        intent: Any,
        locator: Any,
        episode: Any,
        *,
        form: str = "snippets",
        max_chars: int = 2_000,
    ) -> tuple[list[Any], list[tuple[int, float]]]:
        if form not in forms or (paged_only and not parsed.lines.page_count):
            return shipped(parsed, intent, locator, episode, form=form, max_chars=max_chars)  # type: ignore[no-any-return]
        query = query_for(intent)
        ranking = locator.rank(parsed, query)
        floor = ranking[0][1] * exposure.RELATIVE_CUTOFF if ranking else 0.0
        ranked = [(i, s) for i, s in ranking[: exposure.SNIPPET_DEPTH] if s >= floor]
        region = regions(parsed)
        rival = next((s for i, s in ranked if region[i] != region[ranked[0][0]]), 0.0) if ranked else 0.0
        if not ranked or rival < close * ranked[0][1]:
            return shipped(parsed, intent, locator, episode, form=form, max_chars=max_chars)  # type: ignore[no-any-return]
        firsts = exposure._one_per_region(parsed, ranked)
        firsts = firsts[: len({region[i] for i, _ in ranked})]  # each region's best only
        spans = sentence_windows(parsed, firsts, query, max_chars, skip=episode.overlaps_delivered)
        slots = actions.slots_of(intent)
        return [actions._span_candidate(parsed, span, slots) for span in spans], ranking

    return focus


def sentence_rows() -> list[tuple[str, str, list[tuple[Any, str, Any]]]]:
    from sparseread_mcp.protocol import actions

    out = [
        (
            "on figures, when the best hits spread: each page's best sentence",
            f"another page >= {close}",
            [(actions, "focus", spread_sentences(close))],
        )
        for close in (0.9, 0.8)
    ]
    out += [
        (
            "any form, when the best hits spread: each region's best sentence",
            f"another region >= {close}",
            [(actions, "focus", spread_sentences(close, ("windows", "snippets", "context", "pages")))],
        )
        for close in (0.95, 0.9, 0.8)
    ]
    out += [
        (
            "paged, snippets, when the best hits spread over pages: each page's best sentence",
            f"another page >= {close}",
            [(actions, "focus", spread_sentences(close, ("snippets",), paged_only=True))],
        )
        for close in (0.9, 0.8, 0.7)
    ]
    from sparseread_mcp.locate import sentences

    out += [
        (
            "paged, snippets, when the best hits spread over pages: each page's best short sentence (60)",
            "another page >= 0.9",
            [
                (actions, "focus", spread_sentences(0.9, ("snippets",), paged_only=True)),
                (sentences, "MIN_SENTENCE", 60),
            ],
        )
    ]
    out += [
        (
            "snippets, when the best hits spread over regions: each region's best sentence",
            "another region >= 0.8",
            [(actions, "focus", spread_sentences(0.8, ("snippets",)))],
        )
    ]
    return out


def window_and_sentences(close: float = 0.9, keep: int = 1_100) -> Callable[..., Any]:
    """`protocol.actions.focus`; in windows form, when the best hits spread over pages, the window on the
    best page keeps `keep` characters and the rest goes to the best sentence of each other page."""
    from bench.sentence_windows import sentence_windows
    from sparseread_mcp.locate import exposure
    from sparseread_mcp.protocol import actions
    from sparseread_mcp.protocol.intents import query_for

    shipped = actions.focus

    def focus(
        parsed: ParsedArtifact,
        intent: Any,
        locator: Any,
        episode: Any,
        *,
        form: str = "snippets",
        max_chars: int = 2_000,
    ) -> tuple[list[Any], list[tuple[int, float]]]:
        if form != "windows" or not parsed.lines.page_count:
            return shipped(parsed, intent, locator, episode, form=form, max_chars=max_chars)  # type: ignore[no-any-return]
        query = query_for(intent)
        ranking = locator.rank(parsed, query)
        floor = ranking[0][1] * exposure.RELATIVE_CUTOFF if ranking else 0.0
        ranked = [(i, s) for i, s in ranking[: exposure.SNIPPET_DEPTH] if s >= floor]
        region = regions(parsed)
        rival = next((s for i, s in ranked if region[i] != region[ranked[0][0]]), 0.0) if ranked else 0.0
        if not ranked or rival < close * ranked[0][1]:
            return shipped(parsed, intent, locator, episode, form=form, max_chars=max_chars)  # type: ignore[no-any-return]
        top = region[ranked[0][0]]
        window = exposure.plan_exposure(parsed, ranked, "windows", keep, skip=episode.overlaps_delivered)
        used = sum(s.end - s.start for s in window)
        others = [(i, s) for i, s in exposure._one_per_region(parsed, ranked) if region[i] != top]
        others = others[: len({region[i] for i, _ in others})]
        rest = sentence_windows(parsed, others, query, max_chars - used, skip=episode.overlaps_delivered)
        slots = actions.slots_of(intent)
        return [actions._span_candidate(parsed, span, slots) for span in [*window, *rest]], ranking

    return focus


def window_rows() -> list[tuple[str, str, list[tuple[Any, str, Any]]]]:
    from sparseread_mcp.protocol import actions

    return [
        (
            "paged windows, when the best hits spread: a smaller window and other pages' best sentences",
            f"window {keep}, another page >= 0.9",
            [(actions, "focus", window_and_sentences(0.9, keep))],
        )
        for keep in (1_000, 1_200)
    ]


def session_rows() -> list[tuple[str, str, list[tuple[Any, str, Any]]]]:
    """Every session-15 candidate row, in the order of the results table."""
    return rows() + more_rows() + spread_rows() + sentence_rows() + window_rows()
