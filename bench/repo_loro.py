"""File ranking held out by repository: weights chosen on two repositories, scored on the third.

Used by `python -m bench.repo_bench` (see there). Each issue's file index is built once; then every
candidate ranking (a `Weights` of sparseread_mcp.directory.filerank) ranks the files of every issue, which is
cheap. For each repository left out, the candidate with the best macro top 5 (then top 1, then the
order below) over the other two repositories is chosen and scored on the left-out one. The
sensitivity check multiplies each weight of a ranking by 0.5 and by 2, one at a time, and reports
what moves: a ranking whose figures swing with one weight was fitted, not found.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from sparseread_mcp.config import Settings
from sparseread_mcp.directory.fileindex import FileIndex
from sparseread_mcp.directory.filerank import (
    DEFAULT_WEIGHTS,
    RULES,
    TUNABLE,
    WEIGHTED,
    Cues,
    Weights,
    goal_cues,
    rank_files,
)
from sparseread_mcp.engine import ReadEngine
from sparseread_mcp.models import Intent
from sparseread_mcp.protocol.intents import query_for


def _grid() -> dict[str, Weights]:
    """A small grid, fixed before looking at any fold: how signals add up x how much the text (BM25 of the
    goal and of its title) weighs against each name signal x whether plain words count as names; then the
    first ranking. Its order breaks ties, and it does not depend on which entry is the default."""
    base = Weights()
    out = {}
    for fusion in ("normalized", "rrf"):
        for text in (1.0, 2.0, 3.0):
            for plain in (0.4, 0.0):
                weights = replace(base, fusion=fusion, bm25=text, title=text, plain_name=plain)
                default = " (default)" if weights == DEFAULT_WEIGHTS else ""
                out[f"{fusion}, text x{text:g}, plain words {plain:g}{default}"] = weights
    out["weighted (first ranking, hand-set)"] = WEIGHTED
    return out


#: The rankings a fold may choose from, in the order that breaks ties (the default first).
CANDIDATES: dict[str, Weights] = _grid()


@dataclass(frozen=True, slots=True, kw_only=True)
class Case:
    repo: str
    qid: str
    index: FileIndex
    cues: Cues
    terms: tuple[str, ...]
    gold: frozenset[str]


def build_case(root: Path, q: dict[str, Any], goal: str, cache: Path) -> Case:
    """The issue's file index (as a directory focus builds it) and its goal's cues and terms."""
    engine = ReadEngine(Settings(roots=(root,), cache_dir=cache, repo_index=False))
    index = engine.file_index(engine.inventory("."))
    return Case(
        repo=q["repo"].split("/")[1],
        qid=q["instance_id"],
        index=index,
        cues=goal_cues(goal),
        terms=tuple(query_for(Intent(goal=goal)).terms),
        gold=frozenset(q["gold_files"]),
    )


def gold_rank(case: Case, weights: Weights) -> int | None:
    """1-based position of the first gold file in the ranking, None when it is not ranked."""
    ranked = rank_files(case.index, case.cues, case.terms, weights)
    return next((n for n, r in enumerate(ranked, 1) if r.path in case.gold), None)


def shares(ranks: Iterable[int | None]) -> tuple[float, float]:
    """(top 1, top 5) as percentages."""
    listed = list(ranks)
    n = max(1, len(listed))
    return 100 * sum(r == 1 for r in listed) / n, 100 * sum(r is not None and r <= 5 for r in listed) / n


def per_repo(cases: list[Case], weights: Weights) -> dict[str, list[int | None]]:
    out: dict[str, list[int | None]] = {}
    for case in cases:
        out.setdefault(case.repo, []).append(gold_rank(case, weights))
    return out


def macro(ranks: dict[str, list[int | None]]) -> tuple[float, float]:
    figures = [shares(r) for r in ranks.values()]
    return statistics.mean(f[0] for f in figures), statistics.mean(f[1] for f in figures)


def pooled(ranks: dict[str, list[int | None]]) -> tuple[float, float]:
    return shares(r for repo in ranks.values() for r in repo)


def reciprocal(ranks: dict[str, list[int | None]]) -> float:
    """Mean reciprocal rank of the gold file, macro over repositories (finer than top 5: fewer ties)."""
    return statistics.mean(statistics.mean(1 / r if r else 0.0 for r in repo) for repo in ranks.values())


def choose(cases: list[Case], candidates: dict[str, Weights]) -> str:
    """The candidate with the best macro top 5, then mean reciprocal rank, over `cases`; ties go to the
    earlier one."""
    scored = []
    for n, (name, weights) in enumerate(candidates.items()):
        ranks = per_repo(cases, weights)
        scored.append((macro(ranks)[1], reciprocal(ranks), -n, name))
    return max(scored)[3]


def leave_one_repo_out(cases: list[Case], candidates: dict[str, Weights] = CANDIDATES) -> dict[str, str]:
    """Repository -> the candidate chosen on the other repositories."""
    repos = sorted({c.repo for c in cases})
    return {repo: choose([c for c in cases if c.repo != repo], candidates) for repo in repos}


def file_table(cases: list[Case], chosen: dict[str, str], candidates: dict[str, Weights] = CANDIDATES) -> list[str]:
    """Top 1 / top 5 per repository, macro and pooled: the held-out choice, then every candidate."""
    repos = sorted(chosen)
    rows: dict[str, dict[str, list[int | None]]] = {name: per_repo(cases, w) for name, w in candidates.items()}
    held = {repo: rows[chosen[repo]][repo] for repo in repos}
    head = "| ranking | " + " | ".join(f"{r} top 1 / top 5" for r in repos) + " | macro | pooled |"
    out = [head, "|---" * (len(repos) + 3) + "|"]
    for name, ranks in [("held out (chosen on the other two)", held), *rows.items()]:
        cells = [_pair(shares(ranks[r])) for r in repos]
        out.append(f"| {name} | " + " | ".join(cells) + f" | {_pair(macro(ranks))} | {_pair(pooled(ranks))} |")
    out.append("")
    out.append("chosen per held-out repository: " + ", ".join(f"{r}: {chosen[r]}" for r in repos))
    return out


def ablations(cases: list[Case]) -> list[str]:
    """The default with one of its signals or rules taken out (not candidates: what each one adds)."""
    variants = {
        "default": DEFAULT_WEIGHTS,
        "without the title signal": replace(DEFAULT_WEIGHTS, title=0.0),
        "without the tested-by signal": replace(DEFAULT_WEIGHTS, tested=0.0),
        "without definitions": replace(DEFAULT_WEIGHTS, define=0.0),
        "without uses of code names": replace(DEFAULT_WEIGHTS, refs=0.0),
        "tests, non-source and vendored not demoted": replace(DEFAULT_WEIGHTS, demoted=1.0),
        **{
            f"without the rule {rule}": replace(DEFAULT_WEIGHTS, **{rule: type(getattr(DEFAULT_WEIGHTS, rule))(0)})
            for rule in RULES
        },
        "without the five rules (the ranking before issue 33)": BEFORE,
        "BM25 of the goal only": Weights(
            bm25=1.0, title=0.0, path=0.0, module=0.0, define=0.0, refs=0.0, tested=0.0, demoted=1.0
        ),
    }
    out = ["ablations of the default: top 1 / top 5", "| ranking | macro | pooled |", "|---|---|---|"]
    for name, weights in variants.items():
        ranks = per_repo(cases, weights)
        out.append(f"| {name} | {_pair(macro(ranks))} | {_pair(pooled(ranks))} |")
    return out


def sensitivity(cases: list[Case], base: Weights, label: str) -> list[str]:
    """Each weight of `base` x0.5 and x2, one at a time: macro and pooled top 1 / top 5."""
    out = [
        f"sensitivity of {label}: macro top 1 / top 5 (pooled top 5)",
        "| weight | x0.5 | x1 | x2 |",
        "|---|---|---|---|",
    ]
    middle = per_repo(cases, base)
    fives: list[float] = []

    def cell(ranks: dict[str, list[int | None]]) -> str:
        fives.append(macro(ranks)[1])
        return f"{_pair(macro(ranks))} ({pooled(ranks)[1]:.0f}%)"

    for name in TUNABLE:
        if not getattr(base, name):
            continue
        low, high = per_repo(cases, base.scaled(name, 0.5)), per_repo(cases, base.scaled(name, 2.0))
        out.append(f"| {name} | {cell(low)} | {cell(middle)} | {cell(high)} |")
    out.append(f"macro top 5 over every row: {min(fives):.0f}% to {max(fives):.0f}%")
    return out


def _pair(figures: tuple[float, float]) -> str:
    return f"{figures[0]:.0f}% / {figures[1]:.0f}%"


#: The ranking before issue 33: the default with its five rules switched off.
BEFORE = replace(DEFAULT_WEIGHTS, **{rule: type(getattr(DEFAULT_WEIGHTS, rule))(0) for rule in RULES})


def issue_ranks(cases: list[Case], chosen: dict[str, Weights]) -> dict[str, dict[str, int | None]]:
    """Issue -> the gold file's rank held out, with the default, and with the ranking before issue 33."""
    return {
        case.qid: {
            "held out": gold_rank(case, chosen[case.repo]),
            "default": gold_rank(case, DEFAULT_WEIGHTS),
            "before": gold_rank(case, BEFORE),
        }
        for case in cases
    }


def report(cases: list[Case], log: Callable[[str], None] = print) -> dict[str, Weights]:
    """Print the held-out table and the sensitivity rows; return the weights chosen per repository."""
    chosen = leave_one_repo_out(cases)
    lines = ["gold file in the top 1 / top 5, each repository scored with weights chosen on the other two:"]
    lines += file_table(cases, chosen)
    lines += ["", *ablations(cases), ""]
    lines += [*sensitivity(cases, DEFAULT_WEIGHTS, "the default"), ""]
    lines += sensitivity(cases, WEIGHTED, "the first, hand-set weights")
    log("\n".join(lines))
    return {repo: CANDIDATES[name] for repo, name in chosen.items()}
