"""Location recall within the scripted agent's first reads, every development set, in process (issue #13).

Not a test. Run:  python -m bench.recall_bench [--data ../shared/data] [--limit 40] [--reads 5] [--variants ...]

The agent of `bench.agent_bench` without the stdio and the tokens: per question a fresh session of the
library engine, `collect` with the question as goal and as its one slot, then `refine` until `--reads`
reads are spent. Every set is read sparsely (native fit off), so the short sets say what their sparse
reading does too. Per set: hit after the first read (the top-1 answer, at most 1,500 characters), hit
within the reads (the agent's hit: what it read covers >= 80% of the gold characters) and the median
characters read until the gold was held (or all of them, on a miss).

Variants switch one mechanism at a time (off, or on, against the defaults in the same run), each a row
over every set, plus the title weight chosen on the other sets only (leave one set out); baselines in the
same run at the same character schedule (1,500 characters, then 2,000 per follow-up): plain BM25 snippets
of the question (passages by their own text), grep + windows, one full read. Macro = mean over sets.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from bench.ablation_bench import patched
from bench.evidence_bench import grep_windows
from sparseread_mcp import Settings
from sparseread_mcp.engine import ReadEngine, ReadRequest
from sparseread_mcp.locate import LocatorSet, bm25, build_query, concepts, context
from sparseread_mcp.locate import base as locate_base
from sparseread_mcp.locate.exposure import plan_exposure
from sparseread_mcp.models import Intent, Slot
from sparseread_mcp.protocol import actions
from sparseread_mcp.select.calibrate import SUCCESS_SHARE, Request, covered, doc_file, gold_spans, requests

REPO = Path(__file__).resolve().parent.parent
FIRST_CHARS = 1_500
FOLLOW_CHARS = 2_000
Json = dict[str, Any]
#: What a variant sets: (module or class, attribute, value).
Switches = list[tuple[Any, str, Any]]


def variants() -> dict[str, Switches]:
    """The mechanisms measured, each by the module constant that switches it (empty: the defaults)."""
    return {
        "defaults": [],
        "before: titles off, novelty off": [(bm25, "TITLE_WEIGHT", 0), (actions, "NOVELTY_WEIGHT", 0)],
        "titles off (passages scored by their own text)": [(bm25, "TITLE_WEIGHT", 0)],
        "titles counted once": [(bm25, "TITLE_WEIGHT", 1)],
        "titles counted twice": [(bm25, "TITLE_WEIGHT", 2)],
        "titles counted four times": [(bm25, "TITLE_WEIGHT", 4)],
        "titles counted six times": [(bm25, "TITLE_WEIGHT", 6)],
        "headings only where a line begins (none inside long lines)": [(context, "INLINE_HEADINGS", False)],
        "repeated titles kept (running headers and footers count as headings)": [(context, "REPEATED_TITLES", 0)],
        "follow-ups: the same ranking (novelty off)": [(actions, "NOVELTY_WEIGHT", 0)],
        "follow-ups: unread terms x3": [(actions, "NOVELTY_WEIGHT", 2)],
        "before: no pages of figures beside the best page (votes alone)": [(actions, "NEIGHBOUR_PAGES", 0)],
        "pages of figures beside the best page: 1 each side": [(actions, "NEIGHBOUR_PAGES", 1)],
        "pages of figures beside the best page: 3 each side": [(actions, "NEIGHBOUR_PAGES", 3)],
        "coordination 0.5 (scores x share of distinct terms matched ^ 0.5)": [
            (bm25.Bm25Corpus, "scores", coordinated(0.5))
        ],
        "coordination 1": [(bm25.Bm25Corpus, "scores", coordinated(1.0))],
        "concept glossary off (a question's own words only)": [(locate_base, "EXPAND_CONCEPTS", False)],
        "concepts expand also where the document spells them as asked": [(concepts, "ONLY_WHERE_UNSPELLED", False)],
        "contract clauses off (a CUAD label brings no drafting words)": [(concepts, "EXPAND_CLAUSES", False)],
    }


def coordinated(power: float) -> Callable[[bm25.Bm25Corpus, tuple[str, ...] | list[str]], np.ndarray]:
    """BM25 scores scaled by (distinct query terms a passage matches / distinct query terms) ** power: one
    rare word of the phrasing cannot outrank a passage that matches the rest (Lucene's old `coord`)."""

    def scores(corpus: bm25.Bm25Corpus, query_terms: tuple[str, ...] | list[str]) -> np.ndarray:
        counts = Counter(t for t in query_terms if t in corpus.vocab)
        if not counts:
            return np.zeros(0)
        total: np.ndarray = np.zeros(0)
        matched: np.ndarray = np.zeros(0)
        for term, count in counts.items():
            alone = np.asarray(corpus.model.get_scores([term]), dtype=np.float64)
            total = count * alone if not total.size else total + count * alone
            matched = (alone > 0).astype(np.float64) if not matched.size else matched + (alone > 0)
        return np.asarray(total * (matched / len(counts)) ** power, dtype=np.float64)

    return scores


@contextmanager
def switched(switches: Switches) -> Iterator[None]:
    with ExitStack() as stack:
        for module, name, value in switches:
            stack.enter_context(patched(module, name, value))
        yield


def agent_reads(engine: ReadEngine, key: str, request: Request, target: str, reads: int) -> list[list[tuple[int, int]]]:
    """The spans the engine delivered after each read: collect, then refine."""
    ask = request.question[:8000]
    intent = Intent(goal=ask, slots=[Slot(id="answer", question=ask)])
    after: list[list[tuple[int, int]]] = []
    engine.read(key, ReadRequest(target=target, action="collect", intent=intent))
    after.append(delivered(engine, key))
    for _ in range(reads - 1):
        engine.read(key, ReadRequest(target=target, action="refine"))
        after.append(delivered(engine, key))
    return after


def delivered(engine: ReadEngine, key: str) -> list[tuple[int, int]]:
    session = engine.sessions.get(key)
    return [(d.start, d.end) for episode in session.episodes.values() for d in episode.delivered]


def outcome(gold: list[tuple[int, int]], after: list[list[tuple[int, int]]]) -> Json:
    """First-read hit, hit within the reads, characters read until held (all of them on a miss)."""
    shares = [covered(spans, gold) for spans in after]
    chars = [sum(e - s for s, e in spans) for spans in after]
    held = next((k for k, share in enumerate(shares) if share >= SUCCESS_SHARE), None)
    return {
        "first": shares[0] >= SUCCESS_SHARE,
        "hit": held is not None,
        "reads": None if held is None else held + 1,
        "chars": chars[held if held is not None else -1],
        "first_chars": chars[0],
    }


def baseline(request: Request, spans_for: Callable[[int], list[tuple[int, int]]], reads: int) -> Json:
    """A baseline at the agent's character schedule: its spans at each read's cumulative budget."""
    budgets = [FIRST_CHARS + FOLLOW_CHARS * k for k in range(reads)]
    return outcome(request.gold, [spans_for(budget) for budget in budgets])


def bm25_snippets(request: Request, locators: LocatorSet) -> Callable[[int], list[tuple[int, int]]]:
    ranking = locators.get("bm25").rank(request.parsed, build_query([request.question], []))
    return lambda budget: [(s.start, s.end) for s in plan_exposure(request.parsed, ranking, "snippets", budget)]


def sample(rows: list[Request], limit: int | None, seed: int) -> list[Request]:
    by_set: dict[str, list[Request]] = defaultdict(list)
    for row in rows:
        by_set[row.set_name].append(row)
    picked: list[Request] = []
    for name in sorted(by_set):
        group = by_set[name]
        if limit is not None and len(group) > limit:
            group = [group[i] for i in sorted(random.Random(seed).sample(range(len(group)), limit))]
        picked.extend(group)
    return picked


def targets(data: Path) -> dict[tuple[str, str], str]:
    """(set, qid) -> the document path relative to its set's folder."""
    found: dict[tuple[str, str], str] = {}
    for questions in sorted(data.glob("*/questions.jsonl")):
        for line in questions.read_text().splitlines():
            row = json.loads(line)
            doc = doc_file(questions.parent, row)
            if doc and gold_spans(row):
                found[(questions.parent.name, str(row.get("qid")))] = doc
    return found


def run(
    data: Path, *, limit: int | None, seed: int, reads: int, only: list[str] | None, sets: list[str] | None = None
) -> dict[str, dict[str, Json]]:
    rows = [r for r in requests(data, half="all") if sets is None or r.set_name in sets]
    rows = sample(rows, limit, seed)
    where = targets(data)
    locators = LocatorSet()
    results: dict[str, dict[str, list[Json]]] = defaultdict(lambda: defaultdict(list))
    for request in rows:
        # The plainest BM25: passages by their own text, the question's own words.
        with patched(bm25, "TITLE_WEIGHT", 0), patched(locate_base, "EXPAND_CONCEPTS", False):
            request.parsed.locator_state.clear()
            snippets = bm25_snippets(request, locators)
        request.parsed.locator_state.clear()
        results["baseline: BM25 snippets"][request.set_name].append(baseline(request, snippets, reads))
        grep = baseline(request, lambda budget, r=request: grep_windows(r, budget), reads)
        results["baseline: grep + windows"][request.set_name].append(grep)
        whole = len(request.parsed.artifact.text)
        full = {"first": True, "hit": True, "reads": 1, "chars": whole, "first_chars": whole}
        results["baseline: one full read"][request.set_name].append(full)
    chosen = {k: v for k, v in variants().items() if only is None or k in only or k == "defaults"}
    for name, switches in chosen.items():
        with switched(switches):
            engines: dict[str, ReadEngine] = {}
            for number, request in enumerate(rows):
                engine = engines.get(request.set_name)
                if engine is None:
                    settings = Settings(roots=(data / request.set_name,), native_fit_tokens=0)
                    engine = engines[request.set_name] = ReadEngine(settings)
                target = where[(request.set_name, request.qid)]
                after = agent_reads(engine, f"{name}-{number}", request, target, reads)
                results[name][request.set_name].append({"qid": request.qid, **outcome(request.gold, after)})
    if all(name in results for name in TITLE_WEIGHTS.values()) and len(results["defaults"]) > 1:
        results["titles: the weight chosen leaving the set out"] = loso_weight(results)
    return {name: {s: summary(runs) for s, runs in by_set.items()} for name, by_set in results.items()}


#: The title weights measured, by the variant that runs each.
TITLE_WEIGHTS = {
    0: "titles off (passages scored by their own text)",
    1: "titles counted once",
    2: "titles counted twice",
    3: "defaults",
    4: "titles counted four times",
    6: "titles counted six times",
}


def loso_weight(results: dict[str, dict[str, list[Json]]]) -> dict[str, list[Json]]:
    """Per set, the runs of the title weight that is best on the *other* sets (hit within the reads, then
    hit after the first read, macro; a tie goes to the smaller weight)."""
    sets = sorted(results["defaults"])

    def rate(runs: list[Json], key: str) -> float:
        return sum(r[key] for r in runs) / len(runs)

    chosen: dict[str, list[Json]] = {}
    for left_out in sets:
        others = [s for s in sets if s != left_out]

        def merit(weight: int, others: list[str] = others) -> tuple[float, float, int]:
            runs = results[TITLE_WEIGHTS[weight]]
            hit = statistics.mean(rate(runs[s], "hit") for s in others)
            return hit, statistics.mean(rate(runs[s], "first") for s in others), -weight

        best = max(TITLE_WEIGHTS, key=merit)
        chosen[left_out] = results[TITLE_WEIGHTS[best]][left_out]
        print(f"  title weight chosen without {left_out}: {best}")
    return chosen


def summary(runs: list[Json]) -> Json:
    n = len(runs)
    return {
        "n": n,
        "first": 100 * sum(r["first"] for r in runs) / n,
        "first_chars": statistics.median(r["first_chars"] for r in runs),
        "hit": 100 * sum(r["hit"] for r in runs) / n,
        "chars": statistics.median(r["chars"] for r in runs),
        "misses": [r["qid"] for r in runs if "qid" in r and not r["hit"]],
    }


def report(table: dict[str, dict[str, Json]], reads: int) -> list[str]:
    sets = sorted({s for row in table.values() for s in row})
    sizes = {s: max(row[s]["n"] for row in table.values() if s in row) for s in sets}
    lines = [
        f"Cells: hit after the first read @ its median chars / hit within {reads} reads @ median chars read "
        "until held (all, on a miss).",
        "| variant | " + " | ".join(f"{s} ({sizes[s]})" for s in sets) + " | macro |",
        "|---" * (len(sets) + 2) + "|",
    ]
    for name, row in table.items():
        cells = [
            f"{row[s]['first']:.1f}% @ {row[s]['first_chars']:,.0f} / {row[s]['hit']:.1f}% @ {row[s]['chars']:,.0f}"
            if s in row
            else ""
            for s in sets
        ]
        present = [row[s] for s in sets if s in row]
        macro = (
            f"{statistics.mean(r['first'] for r in present):.1f}% / {statistics.mean(r['hit'] for r in present):.1f}%"
        )
        lines.append(f"| {name} | " + " | ".join(cells) + f" | {macro} |")
    return lines


def main(argv: list[str] | None = None) -> dict[str, dict[str, Json]]:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--limit", type=int, default=None, help="questions per set, a seeded sample (all)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--reads", type=int, default=5, help="reads per question: collect, then refines (5)")
    parser.add_argument("--variants", nargs="+", help="only these variants (the defaults always run)")
    parser.add_argument("--sets", nargs="+", help="only these sets (all under --data)")
    parser.add_argument("--json", type=Path, help="write the numbers here")
    args = parser.parse_args(argv)
    table = run(args.data, limit=args.limit, seed=args.seed, reads=args.reads, only=args.variants, sets=args.sets)
    print("\n".join(report(table, args.reads)))
    if args.json:
        args.json.write_text(json.dumps(table, indent=1))
    return table


if __name__ == "__main__":
    main()
