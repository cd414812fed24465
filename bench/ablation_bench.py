"""Location ablations, one run, every development set side by side (issue #13, item 3).

Not a test. Run:  python -m bench.ablation_bench [--data ../shared/data] [--no-dense]

Every request with gold spans of every set under --data is answered at the live focus exposure (1,500
characters) by BM25 and by one change at a time:
- passage granularity: sentence-sized passages (250 characters) and paragraph-sized ones (1,000) against
  the shipped 500, exposure unchanged;
- query building for clause-style goals (`... related to "X" ... Details: ...`): the quoted name
  weighted twice, and the quoted name alone standing for the sentence that quotes it;
- stemming off (plain lower-cased terms);
- windows grown around one hit against three;
- exposure: snippets, windows, context, and `spread` (best-first growth: a neighbour of a shown passage
  inherits its score times a decay), with the decay chosen on the other sets only (leave one set out);
- dense reranking: hybrid (BM25 candidates fused with MiniLM) and dense against BM25 on the held-out
  (evaluation) half of every set, with the verdict whether hybrid beats BM25 on every set's half.
Baselines in the same run: BM25 snippets, grep + windows, one full read. Cells are hit rate @ median
exposure in characters; a hit covers at least 80% of the gold characters; macro = mean over sets.
"""

from __future__ import annotations

import argparse
import heapq
import re
import statistics
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from bench.evidence_bench import grep_windows
from sparseread_mcp.locate import LocatorSet, build_query
from sparseread_mcp.locate import exposure as exposure_module
from sparseread_mcp.locate import terms as terms_module
from sparseread_mcp.locate.base import Query
from sparseread_mcp.locate.exposure import Span, plan_exposure, regions
from sparseread_mcp.protocol.actions import exposure_chars
from sparseread_mcp.readers.base import ParsedArtifact
from sparseread_mcp.select.calibrate import SUCCESS_SHARE, Request, covered, half_of, requests
from sparseread_mcp.vocabulary import ExposureForm

REPO = Path(__file__).resolve().parent.parent
PASSAGE_CHARS = 500
DECAYS = (0.3, 0.5, 0.7, 0.9)
Ranking = list[tuple[int, float]]
Result = tuple[bool, int]

_QUOTED = re.compile(r'"([^"]{2,80})"|“([^”]{2,80})”')
_SENTENCE = re.compile(r"(?<=[.?!])\s+")
_LABEL = re.compile(r"^\s*[A-Z][a-z]+:\s*")


def quoted_twice(question: str) -> Query:
    """The plain query, the terms of every quoted phrase counted once more."""
    plain = build_query([question], [])
    extra = tuple(t for m in _QUOTED.finditer(question) for t in terms_module.terms(m.group(1) or m.group(2)))
    return Query(
        terms=plain.terms + extra, needles=plain.needles, patterns=plain.patterns, cue=plain.cue, text=plain.text
    )


def quoted_subject(question: str) -> Query:
    """A sentence that quotes a name is read as that name (the rest is phrasing); a leading `Label:` goes."""
    parts: list[str] = []
    for sentence in _SENTENCE.split(question):
        names = [m.group(1) or m.group(2) for m in _QUOTED.finditer(sentence)]
        parts.extend(names or [_LABEL.sub("", sentence)])
    return build_query([" ".join(parts)], [])


def spread(parsed: ParsedArtifact, ranking: Ranking, max_chars: int, decay: float) -> list[Span]:
    """Best first: the highest-priority passage not yet shown, where a neighbour (same page or section) of
    a shown passage has priority max(its own score, the shown one's priority x decay)."""
    if not ranking:
        return []
    region = regions(parsed)
    floor = ranking[0][1] * exposure_module.RELATIVE_CUTOFF
    own = {i: s for i, s in ranking[: exposure_module.SNIPPET_DEPTH] if s >= floor}
    heap = [(-s, i) for i, s in own.items()]
    heapq.heapify(heap)
    shown: dict[int, float] = {}
    used = 0
    while heap and used < max_chars:
        negative, index = heapq.heappop(heap)
        passage = parsed.passages[index]
        if index in shown or used + passage.end - passage.start > max_chars:
            continue
        shown[index] = -negative
        used += passage.end - passage.start
        for neighbour in (index + 1, index - 1):
            if 0 <= neighbour < len(parsed.passages) and neighbour not in shown and region[neighbour] == region[index]:
                heapq.heappush(heap, (-max(own.get(neighbour, 0.0), -negative * decay), neighbour))
    runs: list[list[int]] = []
    for index in sorted(shown):
        if runs and runs[-1][1] == index - 1:
            runs[-1][1] = index
        else:
            runs.append([index, index])
    return [
        Span(parsed.passages[a].start, parsed.passages[b].end, max(shown[k] for k in range(a, b + 1)), a)
        for a, b in runs
    ]


@contextmanager
def patched(module: Any, name: str, value: Any) -> Iterator[None]:
    saved = getattr(module, name)
    setattr(module, name, value)
    try:
        yield
    finally:
        setattr(module, name, saved)


def shown(request: Request, spans: list[Span] | list[tuple[int, int]]) -> Result:
    pairs = [(s.start, s.end) if isinstance(s, Span) else s for s in spans]
    return covered(pairs, request.gold) >= SUCCESS_SHARE, sum(e - s for s, e in pairs)


def answer(
    rows: list[Request],
    locators: LocatorSet,
    method: str,
    plan: Callable[[ParsedArtifact, Ranking], list[Span]],
    query: Callable[[str], Query] = lambda q: build_query([q], []),
) -> dict[str, list[Result]]:
    by_set: dict[str, list[Result]] = defaultdict(list)
    for request in rows:
        ranking = locators.get(method).rank(request.parsed, query(request.question))
        by_set[request.set_name].append(shown(request, plan(request.parsed, ranking)))
    return by_set


def form(name: ExposureForm, budget: int) -> Callable[[ParsedArtifact, Ranking], list[Span]]:
    return lambda parsed, ranking: plan_exposure(parsed, ranking, name, budget)


def fresh(rows: list[Request]) -> None:
    """Forget indexes built with other terms (the BM25 index lives with the parse)."""
    for request in rows:
        request.parsed.locator_state.clear()


def run(data: Path, *, dense: bool, cache_dir: Path | None = None) -> dict[str, dict[str, tuple[float, float, int]]]:
    budget = exposure_chars(None, PASSAGE_CHARS)
    rows = list(requests(data, half="all", passage_chars=PASSAGE_CHARS))
    locators = LocatorSet(cache_dir=cache_dir)
    table: dict[str, dict[str, list[Result]]] = {}
    table["baseline: BM25 snippets"] = answer(rows, locators, "bm25", form("snippets", budget))
    table["baseline: grep + windows"] = group(rows, lambda r: shown(r, grep_windows(r, budget)))
    table["baseline: one full read"] = group(rows, lambda r: (True, len(r.parsed.artifact.text)))
    for chars, label in ((250, "sentence-sized"), (1000, "paragraph-sized")):
        resized = list(requests(data, half="all", passage_chars=chars))
        table[f"passages {label} ({chars}) x snippets"] = answer(resized, locators, "bm25", form("snippets", budget))
        table[f"passages {label} ({chars}) x context"] = answer(resized, locators, "bm25", form("context", budget))
        del resized
    table["query: quoted name x2"] = answer(rows, locators, "bm25", form("snippets", budget), quoted_twice)
    table["query: quoted name for its sentence"] = answer(
        rows, locators, "bm25", form("snippets", budget), quoted_subject
    )
    fresh(rows)
    with patched(terms_module, "stem", lambda word: word):
        table["terms: no stemming"] = answer(rows, locators, "bm25", form("snippets", budget))
    fresh(rows)
    for hits in (1, 3):
        with patched(exposure_module, "WINDOW_HITS", hits):
            table[f"windows around {hits} hit(s)"] = answer(rows, locators, "bm25", form("windows", budget))
    table["exposure: context"] = answer(rows, locators, "bm25", form("context", budget))
    by_decay = {d: answer(rows, locators, "bm25", lambda p, rk, d=d: spread(p, rk, budget, d)) for d in DECAYS}
    for decay in DECAYS:
        table[f"exposure: spread, decay {decay}"] = by_decay[decay]
    if len(next(iter(by_decay.values()))) > 1:  # a decay can be chosen on the other sets only when there are some
        table["exposure: spread, decay chosen leaving the set out"] = loso_decay(by_decay)
    if dense and locators.semantic:
        held_out = [r for r in rows if half_of(r.qid) == "evaluation"]
        for method in ("bm25", "hybrid", "dense"):
            table[f"held-out half: {method} x snippets"] = answer(held_out, locators, method, form("snippets", budget))
    return {name: {s: score(results) for s, results in by_set.items()} for name, by_set in table.items()}


def group(rows: list[Request], one: Callable[[Request], Result]) -> dict[str, list[Result]]:
    by_set: dict[str, list[Result]] = defaultdict(list)
    for request in rows:
        by_set[request.set_name].append(one(request))
    return by_set


def loso_decay(by_decay: dict[float, dict[str, list[Result]]]) -> dict[str, list[Result]]:
    """Per set, the results of the decay with the best macro hit rate over the *other* sets."""
    sets = sorted(next(iter(by_decay.values())))

    def rate(results: list[Result]) -> float:
        return sum(hit for hit, _ in results) / len(results)

    chosen: dict[str, list[Result]] = {}
    for left_out in sets:
        best = max(by_decay, key=lambda d: (statistics.mean(rate(by_decay[d][s]) for s in sets if s != left_out), -d))
        chosen[left_out] = by_decay[best][left_out]
        print(f"  spread decay chosen without {left_out}: {best}")
    return chosen


def score(results: list[Result]) -> tuple[float, float, int]:
    return 100 * sum(h for h, _ in results) / len(results), statistics.median(e for _, e in results), len(results)


def report(table: dict[str, dict[str, Any]]) -> list[str]:
    sets = sorted({s for row in table.values() for s in row})
    sizes = {s: max(row[s][2] for row in table.values() if s in row) for s in sets}
    lines = [
        "| variant | " + " | ".join(f"{s} ({sizes[s]})" for s in sets) + " | macro |",
        "|---" * (len(sets) + 2) + "|",
    ]
    for name, row in table.items():
        cells = [f"{row[s][0]:.1f}% @ {row[s][1]:,.0f}" if s in row else "" for s in sets]
        macro = f"{statistics.mean(row[s][0] for s in sets if s in row):.1f}% @ "
        macro += f"{statistics.mean(row[s][1] for s in sets if s in row):,.0f}"
        lines.append(f"| {name} | " + " | ".join(cells) + f" | {macro} |")
    hybrid, bm25 = table.get("held-out half: hybrid x snippets"), table.get("held-out half: bm25 x snippets")
    if hybrid and bm25:
        wins = {s: hybrid[s][0] > bm25[s][0] for s in sets}
        lines += [
            "",
            "hybrid beats BM25 on the held-out half of: "
            + ", ".join(f"{s} {'yes' if w else 'no'} ({hybrid[s][0]:.1f} vs {bm25[s][0]:.1f})" for s, w in wins.items())
            + f"; offered by `auto`: {'yes' if all(wins.values()) else 'no'}",
        ]
    return lines


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--no-dense", action="store_true", help="skip dense and hybrid (the semantic extra)")
    parser.add_argument("--cache-dir", type=Path, default=None, help="embedding cache (default: none)")
    args = parser.parse_args(argv)
    table = run(args.data, dense=not args.no_dense, cache_dir=args.cache_dir)
    print("\n".join(report(table)))
    return table


if __name__ == "__main__":
    main()
