"""Leave one set out: does the default generalize to a development set it was not calibrated on?

Not a test. Run:  python -m bench.loso_bench [--data ../shared/data] [--lexical-only]

Every request of every development set with gold spans (FinanceBench, TAT-QA, FeTaQA, contracts, and
any other set under --data) is answered once by every configuration this installation can run, at the
live focus exposure. Then, for each set in turn, the selector is calibrated on all the *other* sets
(`calibrate_from`, as `sparseread-mcp calibrate` builds it; a semantic configuration enters only if it beats
BM25 on the evaluation half of every one of those other sets) and scores the left-out set: the
default is what it chooses per request (a sparse configuration, the robust default, or the full view).
Beside it, in the same run and on the same requests: BM25 snippets, the best fixed sparse configuration
on that set (chosen in hindsight, so an upper bound for any one fixed choice) among those exposing no
more than the default, and at any sparse exposure, grep + windows, and one full read. Per set and
macro-averaged over sets; a request is a hit when the text shown covers at least 80% of its gold
characters; exposure is the characters shown (median).
"""

from __future__ import annotations

import argparse
import statistics
from collections import defaultdict
from pathlib import Path
from typing import Any

from bench.evidence_bench import grep_windows
from sparseread_mcp.locate import LocatorSet
from sparseread_mcp.protocol.actions import exposure_chars
from sparseread_mcp.select.calibrate import (
    SUCCESS_SHARE,
    Answered,
    answer_all,
    calibrate_from,
    covered,
    half_of,
    requests,
)
from sparseread_mcp.select.configuration import FULL_VIEW, Configuration
from sparseread_mcp.select.policy import NOT_CHOSEN

REPO = Path(__file__).resolve().parent.parent
BM25 = Configuration("bm25", "snippets")
#: Done when: on no set is the default more than this many points below the best fixed configuration.
MARGIN_POINTS = 2.0


class Only:
    """A LocatorSet limited to some methods (dense alone is never chosen by `auto`, so a run may skip it)."""

    def __init__(self, locators: LocatorSet, methods: list[str]) -> None:
        self._locators = locators
        self.available = [m for m in locators.available if m in methods]

    def get(self, method: str) -> Any:
        return self._locators.get(method)


def collect(data: Path, locators: LocatorSet, passage_chars: int) -> list[tuple[Answered, str, tuple[bool, int]]]:
    """Every request answered by every configuration, with its artifact type and the grep baseline."""
    live = exposure_chars(None, passage_chars)
    rows = []
    for request in requests(data, half="all", passage_chars=passage_chars):
        spans = grep_windows(request, live)
        grep = (covered(spans, request.gold) >= SUCCESS_SHARE, sum(e - s for s, e in spans))
        rows.append((answer_all(request, locators, live), request.parsed.type, grep))
    return rows


def score(results: list[tuple[bool, int]]) -> tuple[float, float, int]:
    """Hit rate (%), median exposure, requests."""
    if not results:
        return 0.0, 0.0, 0
    return 100 * sum(h for h, _ in results) / len(results), statistics.median(e for _, e in results), len(results)


def run(data: Path, locators: LocatorSet, passage_chars: int = 500, table: Path | None = None) -> dict[str, Any]:
    rows = collect(data, locators, passage_chars)
    if table is not None:
        # What `sparseread-mcp calibrate` writes, from the same answers: the calibration half, gated on the other.
        answers = [a for a, _, _ in rows]
        calibration = [a for a in answers if half_of(a.qid) == "calibration"]
        held_out = [a for a in answers if half_of(a.qid) == "evaluation"]
        calibrate_from(calibration, held_out=held_out).save(table)
    return tabulate(rows, [m for m in locators.available if m not in NOT_CHOSEN])


def tabulate(
    rows: list[tuple[Answered, str, tuple[bool, int]]], live_methods: list[str], *, figures_rule: bool = True
) -> dict[str, Any]:
    """Each set left out in turn: the default calibrated on the others, beside the fixed configurations and
    the baselines. `figures_rule=False` scores the default as if no best hit were on a page of figures."""
    sets = sorted({a.set_name for a, _, _ in rows})
    table: dict[str, dict[str, tuple[float, float, int]]] = {}
    chosen: dict[str, dict[str, int]] = {}
    for left_out in sets:
        others = [a for a, _, _ in rows if a.set_name != left_out]
        selector = calibrate_from(others, held_out=[a for a in others if half_of(a.qid) == "evaluation"])
        mine = [(a, t, g) for a, t, g in rows if a.set_name == left_out]
        default: list[tuple[bool, int]] = []
        picks: dict[str, int] = defaultdict(int)
        for answered, artifact_type, _ in mine:
            figures = figures_rule and answered.on_figures
            choice = selector.choose(answered.group, artifact_type, live_methods, on_figures=figures)
            tag = "robust " + choice.configuration if choice.robust else choice.configuration
            picks[tag] += 1
            if choice.configuration == FULL_VIEW:
                default.append((True, answered.full_chars))
            else:
                default.append(answered.results[choice.configuration])
        fixed = {
            name: score([a.results[name] for a, _, _ in mine])
            for name in mine[0][0].results
            if name.method not in NOT_CHOSEN
        }
        best = max(fixed, key=lambda n: (fixed[n][0], -fixed[n][1]))
        mine_score = score(default)
        cheaper = {n: f for n, f in fixed.items() if f[1] <= mine_score[1]} or {BM25: fixed[BM25]}
        best_cheaper = max(cheaper, key=lambda n: (cheaper[n][0], -cheaper[n][1]))
        table[left_out] = {
            "default (left out)": mine_score,
            BM25: fixed[BM25],
            f"best fixed <= default's exposure: {best_cheaper}": fixed[best_cheaper],
            f"best fixed: {best}": fixed[best],
            "grep + windows": score([g for _, _, g in mine]),
            "one full read": score([(True, a.full_chars) for a, _, _ in mine]),
        }
        chosen[left_out] = dict(picks)
    return {"table": table, "chosen": chosen, "sets": sets}


def report(result: dict[str, Any]) -> list[str]:
    table: dict[str, dict[str, tuple[float, float, int]]] = result["table"]
    kinds = ["default (left out)", BM25, "best fixed <=", "best fixed:", "grep + windows", "one full read"]
    head = "| set (n) | " + " | ".join(kinds) + " |"
    lines = [head, "|" + "---|" * (len(kinds) + 1)]
    macro: dict[str, list[tuple[float, float]]] = defaultdict(list)
    verdicts: list[str] = []
    for set_name, row in table.items():
        cells = []
        n = 0
        for kind in kinds:
            label = next(k for k in row if k.startswith(kind))
            hit, exposure, n = row[label]
            macro[kind].append((hit, exposure))
            extra = f" ({label.split(': ', 1)[1]})" if kind.startswith("best fixed") else ""
            cells.append(f"{hit:.1f}% @ {exposure:,.0f}{extra}")
        lines.append(f"| {set_name} ({n}) | " + " | ".join(cells) + " |")
        mine = row["default (left out)"]
        best = row[next(k for k in row if k.startswith("best fixed <="))]
        overall = row[next(k for k in row if k.startswith("best fixed:"))]
        below = best[0] - mine[0]
        verdicts.append(
            f"{set_name}: default {mine[0]:.1f}% @ {mine[1]:,.0f} vs best fixed at no more exposure {best[0]:.1f}% "
            f"({below:+.1f} points below): {'MET' if below <= MARGIN_POINTS else 'NOT MET'}; best fixed at any "
            f"sparse exposure {overall[0]:.1f}% @ {overall[1]:,.0f} ({overall[0] - mine[0]:+.1f} points)"
        )
    cells = [
        f"{statistics.mean(h for h, _ in macro[k]):.1f}% @ {statistics.mean(e for _, e in macro[k]):,.0f}"
        for k in kinds
    ]
    lines.append("| macro (mean of sets) | " + " | ".join(cells) + " |")
    lines += ["", "What the default chose, per left-out set:"]
    lines += [f"  {s}: {dict(sorted(c.items(), key=lambda kv: -kv[1]))}" for s, c in result["chosen"].items()]
    lines += ["", f"Default within {MARGIN_POINTS} points of the best fixed configuration (same or lower exposure):"]
    lines += [f"  {v}" for v in verdicts]
    return lines


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--lexical-only", action="store_true", help="BM25 and lexical only (no dense, no hybrid)")
    parser.add_argument("--methods", nargs="+", help="only these location methods (default: all available)")
    parser.add_argument("--passage-chars", type=int, default=500)
    parser.add_argument("--cache-dir", type=Path, default=None, help="embedding cache (default: none)")
    parser.add_argument("--write-table", type=Path, help="also write the calibration table these answers give")
    args = parser.parse_args(argv)
    locators = LocatorSet(cache_dir=args.cache_dir)
    if args.lexical_only:
        locators.semantic = False
    if args.methods:
        locators = Only(locators, args.methods)  # type: ignore[assignment]
    result = run(args.data, locators, args.passage_chars, args.write_table)
    print(f"methods: {', '.join(locators.available)}; exposure at the live focus budget")
    print("\n".join(report(result)))
    return result


if __name__ == "__main__":
    main()
