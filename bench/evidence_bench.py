"""Evidence hit at exposure: every location method x exposure form, the selector, and an agent's habits.

Not a test. Run:  python -m bench.evidence_bench [--data ../shared/data] [--budgets 750 1500 3000]

Scored on the *evaluation* half of every development set (calibrate.py splits requests by a hash of
their id; the shipped selector table was built from the other half). A request is a hit when the text
shown covers at least 80% of its gold evidence characters; exposure is the characters shown. Rows:
- each configuration (lexical, BM25, dense, hybrid x snippets, windows) at each budget;
- the selector: the configuration the shipped table picks for the request's group, at the live focus
  exposure (the full view when nothing is reliable enough);
- baselines: one full read of the document; grep for the question's keywords, then read windows of
  lines around the best hits until the budget (what an agent with Read and Grep tools does).
Also the long-document summary (documents over 32k characters) against the goal of 80% hit at no more
than 1,500 characters median exposure, and a PNG plot of hit rate against median exposure.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sparseread_mcp.locate import LocatorSet
from sparseread_mcp.locate.exposure import EXPOSURE_FORMS
from sparseread_mcp.locate.terms import STOPWORDS
from sparseread_mcp.protocol.actions import exposure_chars
from sparseread_mcp.select.calibrate import Request, answer, covered, on_figures, requests
from sparseread_mcp.select.configuration import FULL_VIEW, Configuration
from sparseread_mcp.select.policy import NOT_CHOSEN
from sparseread_mcp.select.selector import Selector

REPO = Path(__file__).resolve().parent.parent
LONG_CHARS = 32_000
GOAL_HIT, GOAL_EXPOSURE = 80.0, 1_500


@dataclass
class Score:
    hits: list[bool] = field(default_factory=list)
    exposures: list[int] = field(default_factory=list)

    def add(self, hit: bool, exposure: int) -> None:
        self.hits.append(hit)
        self.exposures.append(exposure)

    @property
    def hit_rate(self) -> float:
        return 100 * sum(self.hits) / len(self.hits) if self.hits else 0.0

    @property
    def median_exposure(self) -> float:
        return statistics.median(self.exposures) if self.exposures else 0.0


def grep_windows(request: Request, budget: int, context_lines: int = 3) -> list[tuple[int, int]]:
    """Grep for the question's keywords (case-insensitive), best lines first (most distinct keywords),
    then read `context_lines` either side of each until the budget is spent."""
    words = {w for w in re.findall(r"[A-Za-z][A-Za-z0-9\-]{2,}|\d[\d,.]*\d|\d", request.question.lower())}
    words -= STOPWORDS
    if not words:
        return []
    text = request.parsed.artifact.text
    lines = request.parsed.lines
    pattern = re.compile("|".join(re.escape(w) for w in sorted(words, key=len, reverse=True)), re.IGNORECASE)
    scored: list[tuple[int, int]] = []
    for number in range(1, lines.line_count + 1):
        start, end = lines.lines_span(number, number)
        found = {m.group(0).lower() for m in pattern.finditer(text, start, end)}
        if found:
            scored.append((-len(found), number))
    spans: list[tuple[int, int]] = []
    used = 0
    for _, number in sorted(scored):
        first, last = max(1, number - context_lines), min(lines.line_count, number + context_lines)
        start, end = lines.lines_span(first, last)
        if any(s <= start and end <= e for s, e in spans):
            continue
        if used + (end - start) > budget:
            if spans:
                break
            end = start + budget  # a single over-long window: an agent would read the first part
        spans.append((start, end))
        used += end - start
    return spans


def run(data: Path, budgets: list[int], passage_chars: int, locators: LocatorSet) -> dict[str, Any]:
    selector = Selector.load()
    live = exposure_chars(None, passage_chars)
    live_methods = [m for m in locators.available if m not in NOT_CHOSEN]  # as a live read chooses
    scores: dict[tuple[str, str, int], Score] = defaultdict(Score)
    chosen: dict[tuple[str, str], dict[str, int]] = defaultdict(lambda: defaultdict(int))
    counts: dict[str, int] = defaultdict(int)
    timings: dict[str, float] = defaultdict(float)

    def score(key: tuple[str, str, int], request: Request, spans: list[tuple[int, int]]) -> None:
        share = covered(spans, request.gold)
        scores[key].add(share >= 0.8, sum(e - s for s, e in spans))
        scores[("all sets", key[1], key[2])].add(share >= 0.8, sum(e - s for s, e in spans))
        if len(request.parsed.artifact.text) > LONG_CHARS:
            scores[("long:" + request.set_name, key[1], key[2])].add(share >= 0.8, sum(e - s for s, e in spans))

    def timed(method: str, call: Callable[[], Any]) -> Any:
        started = time.perf_counter()
        out = call()
        timings[method] += time.perf_counter() - started
        return out

    for request in requests(data, half="evaluation", passage_chars=passage_chars):
        name = request.set_name
        counts[name] += 1
        full = len(request.parsed.artifact.text)
        score((name, "full read", 0), request, [(0, full)])
        for budget in budgets:
            score((name, "grep + windows", budget), request, grep_windows(request, budget))
            for method in locators.available:
                for form in EXPOSURE_FORMS:
                    configuration = Configuration(method, form)
                    spans, _ = timed(method, lambda r=request, c=configuration, b=budget: answer(r, locators, c, b))
                    score((name, configuration, budget), request, spans)
        choice = selector.choose(
            request.group, request.parsed.type, live_methods, on_figures=on_figures(request, locators)
        )
        chosen[(name, request.group)][choice.configuration] += 1
        if choice.configuration == FULL_VIEW:
            score((name, "selector", live), request, [(0, full)])
        else:
            spans, _ = answer(request, locators, choice.configuration, live)
            score((name, "selector", live), request, spans)
    return {"scores": scores, "chosen": chosen, "counts": counts, "timings": timings, "live": live}


def table(result: dict[str, Any]) -> list[str]:
    scores: dict[tuple[str, str, int], Score] = result["scores"]
    rows: list[str] = []
    for set_name in sorted({k[0] for k in scores}):
        full = scores.get((set_name, "full read", 0))
        full_exposure = full.median_exposure if full else 0.0
        label = f"{set_name} ({len(next(s for k, s in scores.items() if k[0] == set_name).hits)} requests)"
        rows += ["", label, f"{'configuration':<22}{'budget':>7}{'hit>=80%':>10}{'median exp':>12}{'exp/full':>10}"]
        for (s, config, budget), value in sorted(scores.items(), key=lambda kv: (kv[0][1] != "full read", kv[0])):
            if s != set_name:
                continue
            ratio = value.median_exposure / full_exposure if full_exposure else 0.0
            rows.append(
                f"{config:<22}{budget or '-':>7}{value.hit_rate:>9.1f}%{value.median_exposure:>12,.0f}{ratio:>10.4f}"
            )
    rows += ["", "Selector choices (evaluation half, by group):"]
    for (set_name, group), configs in sorted(result["chosen"].items()):
        rows.append(f"  {set_name:<13}{group:<34}" + ", ".join(f"{c} x{n}" for c, n in sorted(configs.items())))
    return rows


def best_fixed(result: dict[str, Any], set_name: str) -> list[str]:
    """Does the selector do at least as well as the best fixed configuration at no more exposure?"""
    scores: dict[tuple[str, str, int], Score] = result["scores"]
    mine = scores.get((set_name, "selector", result["live"]))
    if mine is None:
        return []
    # The selector serves at the live focus exposure, so it is compared with every fixed configuration
    # there (budget = the live exposure), and with the full read.
    fixed = [
        (config, budget, s)
        for (n, config, budget), s in scores.items()
        if n == set_name and config not in ("selector", "grep + windows") and budget in (0, result["live"])
    ]
    within = [(c, b, s) for c, b, s in fixed if s.median_exposure <= mine.median_exposure]
    best = max(within, key=lambda t: t[2].hit_rate, default=None)
    if best is None:
        return [f"  {set_name}: no fixed configuration exposes as little as the selector"]
    verdict = "meets or beats" if mine.hit_rate >= best[2].hit_rate else "falls short of"
    return [
        f"  {set_name}: selector {mine.hit_rate:.1f}% at {mine.median_exposure:,.0f} chars {verdict} the best fixed "
        f"configuration at no more exposure: {best[0]} @ {best[1]} = {best[2].hit_rate:.1f}% at "
        f"{best[2].median_exposure:,.0f} chars"
    ]


def plot(result: dict[str, Any], path: Path) -> Path | None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    scores: dict[tuple[str, str, int], Score] = result["scores"]
    sets = sorted({k[0] for k in scores})
    columns = min(3, len(sets))
    rows = -(-len(sets) // columns)
    figure, axes = plt.subplots(rows, columns, figsize=(5.5 * columns, 4.4 * rows), squeeze=False)
    for axis in axes.flat[len(sets) :]:
        axis.set_visible(False)
    for axis, set_name in zip(axes.flat, sets, strict=False):
        by_config: dict[str, list[tuple[float, float]]] = defaultdict(list)
        for (n, config, _), value in scores.items():
            if n == set_name and config != "full read":
                by_config[config].append((value.median_exposure, value.hit_rate))
        for config, points in sorted(by_config.items()):
            points.sort()
            style = "*" if config == "selector" else "o-"
            axis.plot(
                [p[0] for p in points], [p[1] for p in points], style, label=config, markersize=9 if style == "*" else 4
            )
        axis.set_title(set_name)
        axis.set_xscale("log")
        axis.set_xlabel("median exposure (chars)")
        axis.set_ylabel("hit rate (>= 80% of gold), %")
        axis.set_ylim(0, 100)
        axis.grid(alpha=0.3)
    axes[0][0].legend(fontsize=7, loc="lower right")
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    return path


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--budgets", type=int, nargs="+", default=[750, 1500, 3000])
    parser.add_argument("--passage-chars", type=int, default=500)
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results", help="folder for the plot and JSON")
    parser.add_argument("--cache-dir", type=Path, default=None, help="embedding cache (default: none)")
    args = parser.parse_args(argv)
    locators = LocatorSet(cache_dir=args.cache_dir)
    started = time.perf_counter()
    result = run(args.data, args.budgets, args.passage_chars, locators)
    rows = [
        f"Evidence hit at exposure (evaluation half; methods: {', '.join(locators.available)}; "
        f"live focus exposure {result['live']} chars; {time.perf_counter() - started:.0f} s)",
        *table(result),
        "",
        "Selector against the best fixed configuration:",
    ]
    for set_name in sorted({k[0] for k in result["scores"]}):
        rows += best_fixed(result, set_name)
    long_sets = sorted({k[0] for k in result["scores"] if k[0].startswith("long:")})
    rows += ["", f"Long documents (> {LONG_CHARS:,} chars) against the goal {GOAL_HIT:.0f}% at <= {GOAL_EXPOSURE:,}:"]
    for name in long_sets:
        best = max(
            (
                (c, b, s)
                for (n, c, b), s in result["scores"].items()
                if n == name and s.median_exposure <= GOAL_EXPOSURE
            ),
            key=lambda t: t[2].hit_rate,
            default=None,
        )
        if best:
            rows.append(
                f"  {name}: best within the exposure goal {best[0]} @ {best[1]}: {best[2].hit_rate:.1f}% "
                f"at {best[2].median_exposure:,.0f} chars (goal {GOAL_HIT:.0f}%)"
            )
    rows += [
        "",
        "Location time (s, all budgets and forms): " + ", ".join(f"{m} {t:.1f}" for m, t in result["timings"].items()),
    ]
    args.out.mkdir(parents=True, exist_ok=True)
    picture = plot(result, args.out / "evidence.png")
    rows.append(f"plot: {picture}" if picture else "plot: skipped (pip install matplotlib)")
    print("\n".join(rows))
    numbers = {
        "|".join(map(str, k)): {"hit": v.hit_rate, "median_exposure": v.median_exposure, "n": len(v.hits)}
        for k, v in result["scores"].items()
    }
    (args.out / "evidence.json").write_text(json.dumps(numbers, indent=1, sort_keys=True) + "\n")
    return numbers


if __name__ == "__main__":
    main()
