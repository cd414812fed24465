"""`sparseread-mcp calibrate`: rebuild the calibration table from development question sets.

Any folder with a `questions.jsonl` whose rows name a `doc_file` (or a `doc_id` with one file
`docs/<doc_id>.*`) and gold character spans (`gold_spans` [{start, end}], `gold_spans_merged`
[[start, end]] or `gold_row_spans`) is a calibration set. Requests
are split by a hash of their id: one half calibrates, the other is kept for evaluation (the benchmark
scores the selector there, never on what it was calibrated on). Each calibration request is answered by
every configuration this installation can run, with the exposure a live `focus` uses
(`exposure_chars`); success means the evidence shown covers at least 80% of the gold characters, and a
miss is charged the escalation it causes (the full view) as follow-up exposure. A semantic method (dense,
hybrid) must earn its place: its configurations enter the table only if each beats BM25 with the same
exposure form on the evaluation half of every set; the others are listed as withheld, with the figures.
Only counts and mean exposures are written, never the data.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from ..errors import SparsereadError
from ..files.artifacts import load_artifact
from ..files.roots import Roots
from ..locate import SEMANTIC_METHODS, LocatorSet
from ..locate.base import build_query
from ..locate.exposure import EXPOSURE_FORMS, plan_exposure
from ..locate.passage_size import parse_in_passages
from ..protocol.actions import exposure_chars
from ..readers.base import ParsedArtifact
from ..readers.registry import default_registry
from .configuration import FULL_VIEW, Configuration
from .figures import best_on_figures
from .selector import RobustStats, Selector, group_of, intent_type, served_on_figures, size_band

log = logging.getLogger(__name__)

SUCCESS_SHARE = 0.8
#: Documents in this size band are long: the robust default is chosen over them.
LONG_BAND = ">32k"
#: A development set counts toward the robust default with at least this many (long-document) requests.
MIN_LONG_REQUESTS = 10
Half = Literal["calibration", "evaluation", "all"]


@dataclass(frozen=True, slots=True)
class Request:
    """One development question, its document parsed, and its gold evidence spans."""

    set_name: str
    qid: str
    question: str
    parsed: ParsedArtifact
    gold: list[tuple[int, int]]

    @property
    def group(self) -> str:
        kind = intent_type(query=False, verbatim=False, multi_file=False)
        return group_of(self.parsed.type, len(self.parsed.artifact.text), kind)


def half_of(qid: str) -> Half:
    return "calibration" if hashlib.sha256(qid.encode()).digest()[0] % 2 == 0 else "evaluation"


def requests(data: Path, *, half: Half = "calibration", passage_chars: int = 500) -> Iterator[Request]:
    """Every request with gold spans in every set under `data`, each document parsed once."""
    registry = default_registry()
    for questions in sorted(data.glob("*/questions.jsonl")):
        roots = Roots((questions.parent,))
        parsed_by_doc: dict[str, ParsedArtifact | None] = {}
        for number, line in enumerate(questions.read_text().splitlines()):
            row = json.loads(line)
            qid = str(row.get("qid", f"{questions.parent.name}-{number}"))
            gold = gold_spans(row)
            doc = doc_file(questions.parent, row)
            if not gold or doc is None or (half != "all" and half_of(qid) != half):
                continue
            if doc not in parsed_by_doc:
                parsed_by_doc[doc] = _parse(roots, registry, doc, passage_chars)
            parsed = parsed_by_doc[doc]
            if parsed is not None:
                yield Request(questions.parent.name, qid, str(row.get("question", "")), parsed, gold)


def doc_file(folder: Path, row: dict[str, Any]) -> str | None:
    """The row's document: its `doc_file`, else the one file `docs/<doc_id>.*` in the set's folder."""
    if "doc_file" in row:
        return str(row["doc_file"])
    doc_id = str(row.get("doc_id", ""))
    docs = folder / "docs"
    if not doc_id or not docs.is_dir():
        return None
    found = [p.name for p in docs.iterdir() if p.is_file() and p.stem == doc_id]
    return f"docs/{found[0]}" if len(found) == 1 else None


def _parse(roots: Roots, registry: Any, doc: str, passage_chars: int) -> ParsedArtifact | None:
    try:
        location = roots.resolve(doc)
        reader = registry.reader_for(location.absolute)
        return parse_in_passages(reader, load_artifact(location, binary=reader.binary), passage_chars)
    except SparsereadError as exc:
        log.warning("skipping %s: %s", doc, exc)
        return None


def answer(
    request: Request, locators: LocatorSet, configuration: Configuration, max_chars: int
) -> tuple[list[tuple[int, int]], float]:
    """The spans a configuration shows for a request, and the share of the gold they cover."""
    query = build_query([request.question], [])
    ranking = locators.get(configuration.location).rank(request.parsed, query)
    planned = plan_exposure(request.parsed, ranking, configuration.exposure, max_chars, query=query)
    spans = [(s.start, s.end) for s in planned]
    return spans, covered(spans, request.gold)


def on_figures(request: Request, locators: LocatorSet) -> bool:
    """Whether the request's best BM25 hit lies on a page of figures (as the live policy asks it)."""
    if not request.parsed.prose_pages:
        return False
    return best_on_figures(
        request.parsed, locators.get("bm25").rank(request.parsed, build_query([request.question], []))
    )


@dataclass(frozen=True, slots=True)
class Answered:
    """One calibration request answered by every configuration: (success, exposed characters) each."""

    set_name: str
    group: str
    full_chars: int
    results: dict[Configuration, tuple[bool, int]]
    qid: str = ""
    #: The best hit is on a page of figures (the selector reads a robust choice in windows there).
    on_figures: bool = False

    @property
    def long(self) -> bool:
        return size_band(self.full_chars) == LONG_BAND


def answer_all(request: Request, locators: LocatorSet, max_chars: int) -> Answered:
    results: dict[Configuration, tuple[bool, int]] = {}
    for method in locators.available:
        for form in EXPOSURE_FORMS:
            configuration = Configuration(method, form)
            spans, share = answer(request, locators, configuration, max_chars)
            results[configuration] = (share >= SUCCESS_SHARE, sum(e - s for s, e in spans))
    return Answered(
        request.set_name,
        request.group,
        len(request.parsed.artifact.text),
        results,
        request.qid,
        on_figures=on_figures(request, locators),
    )


def calibrate(data: Path, *, passage_chars: int = 500, locators: LocatorSet | None = None) -> Selector:
    """The table from the calibration half; the evaluation half decides which semantic configurations
    may enter it (`withheld`)."""
    locators = locators or LocatorSet()
    max_chars = exposure_chars(None, passage_chars)
    halves: dict[str, list[Answered]] = defaultdict(list)
    for request in requests(data, half="all", passage_chars=passage_chars):
        halves[half_of(request.qid)].append(answer_all(request, locators, max_chars))
    return calibrate_from(halves["calibration"], held_out=halves["evaluation"])


def withheld(held_out: Iterable[Answered]) -> dict[Configuration, str]:
    """Semantic configurations that do not beat BM25 with the same exposure form on the held-out requests
    of every set, each with the figures that say so (hit rates per set)."""
    rates: dict[Configuration, dict[str, list[bool]]] = defaultdict(lambda: defaultdict(list))
    for answered in held_out:
        for name, (success, _) in answered.results.items():
            rates[Configuration.parse(name)][answered.set_name].append(success)
    out: dict[Configuration, str] = {}
    for name, by_set in sorted(rates.items()):
        bm25 = Configuration("bm25", name.form)
        baseline = rates.get(bm25, {})
        if name.method not in SEMANTIC_METHODS or not baseline:
            continue
        share = {s: sum(hits) / len(hits) for s, hits in by_set.items()}
        base = {s: sum(hits) / len(hits) for s, hits in baseline.items() if s in share}
        if not base or any(share[s] <= base[s] for s in base):
            figures = ", ".join(f"{s} {100 * share[s]:.1f}% vs {100 * base[s]:.1f}%" for s in sorted(base))
            out[name] = f"does not beat {bm25} on the held-out half of every set ({figures})"
    return out


def calibrate_from(answers: Iterable[Answered], *, held_out: list[Answered] | None = None) -> Selector:
    """The table from answered requests: per group and configuration, how many development sets each
    group rests on, and every sparse configuration over long documents (for the robust default).
    With `held_out` requests, semantic configurations that do not beat BM25 there on every set are left
    out of the table (so never chosen), and listed in `withheld`."""
    selector = Selector(defaults={})
    answers = list(answers)
    if held_out is not None:
        selector.withheld = withheld(held_out)
        # No held-out request measured it: it has not earned its place either.
        measured = {Configuration.parse(name) for answered in held_out for name in answered.results}
        for name in {Configuration.parse(name) for answered in answers for name in answered.results} - measured:
            if name.method in SEMANTIC_METHODS:
                selector.withheld[name] = "no held-out request measured it"
    group_sets: dict[str, set[str]] = defaultdict(set)
    long: dict[Configuration, dict[str, list[tuple[bool, int]]]] = defaultdict(lambda: defaultdict(list))
    every: dict[Configuration, dict[str, list[tuple[bool, int]]]] = defaultdict(lambda: defaultdict(list))
    for answered in answers:
        group_sets[answered.group].add(answered.set_name)
        for text, (success, exposed) in answered.results.items():
            name = Configuration.parse(text)
            if name in selector.withheld:
                continue
            selector.record(answered.group, name, success=success, exposed_chars=exposed)
            # What follows a miss: the agent escalates to the faithful full view (the gate's fallback).
            # Charged as observed follow-up, so a cheap but often-wrong configuration costs what it causes.
            selector.observe_follow_up(answered.group, name, 0 if success else answered.full_chars)
            # The robust default is scored as it is served: in windows where the best hit is on a page of
            # figures (`Selector.in_windows`), so it is not chosen for what that rule already mends.
            served = answered.results.get(served_on_figures(name), (success, exposed)) if answered.on_figures else None
            every[name][answered.set_name].append(served or (success, exposed))
            if answered.long:
                long[name][answered.set_name].append(served or (success, exposed))
        selector.record(answered.group, FULL_VIEW, success=True, exposed_chars=answered.full_chars)
    selector.sets = {group: len(names) for group, names in group_sets.items()}
    selector.robust = _macro_stats(long)
    selector.robust_all = _macro_stats(every)
    return selector


def _macro_stats(table: dict[Configuration, dict[str, list[tuple[bool, int]]]]) -> dict[Configuration, RobustStats]:
    """Per configuration: pooled counts, the hit rate macro-averaged over the sets with enough requests,
    and its worst shortfall on any of those sets against the best configuration there (regret)."""
    rates: dict[Configuration, dict[str, float]] = {}
    stats: dict[Configuration, RobustStats] = {}
    for name, by_set in table.items():
        counted = {s: rows for s, rows in by_set.items() if len(rows) >= MIN_LONG_REQUESTS}
        pooled = [row for rows in counted.values() for row in rows]
        if not pooled:
            continue
        rates[name] = {s: sum(success for success, _ in rows) / len(rows) for s, rows in counted.items()}
        stats[name] = RobustStats(
            trials=len(pooled),
            successes=sum(success for success, _ in pooled),
            exposed_chars=sum(exposed for _, exposed in pooled) / len(pooled),
            sets=len(counted),
            macro=sum(rates[name].values()) / len(counted),
        )
    best: dict[str, float] = defaultdict(float)
    for set_rates in rates.values():
        for set_name, rate in set_rates.items():
            best[set_name] = max(best[set_name], rate)
    for name, set_rates in rates.items():
        stats[name].regret = max(best[s] - rate for s, rate in set_rates.items())
    return stats


def gold_spans(row: dict[str, Any]) -> list[tuple[int, int]]:
    """Gold character spans, from whichever of the known fields the set provides."""
    spans = row.get("gold_spans")
    if isinstance(spans, list) and spans and isinstance(spans[0], dict):
        return [(int(g["start"]), int(g["end"])) for g in spans]
    for key in ("gold_spans_merged", "gold_row_spans"):
        pairs = row.get(key)
        if isinstance(pairs, list) and pairs:
            return [(int(s), int(e)) for s, e in pairs]
    return []


def select_within(parsed: ParsedArtifact, ranking: list[tuple[int, float]], max_chars: int) -> list[tuple[int, int]]:
    """Snippets by rank within a character budget (no relative cutoff): the plain baseline."""
    return [(s.start, s.end) for s in plan_exposure(parsed, ranking, "snippets", max_chars, cutoff=0.0)]


def covered(spans: list[tuple[int, int]], gold: list[tuple[int, int]]) -> float:
    """Share of the gold characters that the spans cover (overlaps counted once)."""
    total = sum(e - s for s, e in gold)
    if not total:
        return 0.0
    hit = 0
    for gs, ge in gold:
        cursor = gs
        for s, e in sorted((max(gs, s), min(ge, e)) for s, e in spans if s < ge and gs < e):
            s = max(s, cursor)
            if e > s:
                hit += e - s
                cursor = e
    return hit / total
