"""Repository reading side by side: which method finds the gold file first and shows the fix's place.

Run:  PYTHONPATH=. python -m bench.repo_bench [--data ../shared/data] [--limit N] [--files 2000]

Per SWE-bench issue (flask, requests, pytest), against its repository snapshot, with the issue text cut
to 1,000 characters as the goal and the same five identifiers (the goal's strongest, code-like first)
for every keyword method, in one run:

* `ranked`: sro_read focus on the directory (files ranked by definitions, paths, module names, BM25),
  with the ranking weights chosen on the two other repositories (leave one repository out, see
  bench/repo_loro.py, which also prints the file-level table of every candidate and the sensitivity of
  the weights, each x0.5 and x2); `ranked (default)` is the shipped default where that differs.
* `previous`: the previous directory focus (BM25 over files, then passages; still what `collect` does).
* `grep+windows`: grep the identifiers, files by how many identifiers they match, +-20-line windows.
* `name+whole`: the file whose name matches an identifier first, read whole (a filesystem server).

Scores: gold file top 1 / top 5; gold function or hunk inside what one call returned within 4,000
tokens; median tokens of that call; median tokens to the first sight of the hunk (cumulative over the
call and up to two refines; grep: its windows in order; a method that never shows it is left out of
that median and counted in `seen`). Tokens = characters / 4 of everything returned. Each figure per
repository, macro-averaged over the three and pooled over the issues. Then first-search latency on a
~2,000-file tree: a new engine with an empty cache directory (cold) against a new engine on the same
cache directory (warm).
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any
from unittest import mock

from bench import repo_loro
from bench.readers_bench import materialize
from sparseread_mcp.config import Settings
from sparseread_mcp.directory import code_answer
from sparseread_mcp.directory.filerank import DEFAULT_WEIGHTS, Weights, goal_cues
from sparseread_mcp.engine import ReadEngine, ReadRequest
from sparseread_mcp.models import EvidencePack, Intent

BUDGET = 4000
GOAL_CHARS = 1000
WINDOW = 20
CACHE = Path(tempfile.gettempdir()) / "sparseread-repo-bench"
METHODS = ("ranked", "ranked (default)", "previous", "grep+windows", "name+whole")
Span = tuple[str, int, int]  # path, first line, last line


def spans_hit(returned: list[Span], q: dict[str, Any]) -> bool:
    """True when a returned span holds a whole gold hunk or the whole gold function."""
    targets = [(h["path"], h["start_line"], h["end_line"]) for h in q["gold_hunks"]]
    targets += [(f["path"], f["start_line"], f["end_line"]) for f in q["gold_functions"] if f["name"] != "<module>"]
    return any(p == tp and a <= s and e <= b for p, a, b in returned for tp, s, e in targets)


def _tokens(text: str) -> int:
    return len(text) // 4


def run_ranked(root: Path, q: dict[str, Any], *, action: str, weights: Weights = DEFAULT_WEIGHTS) -> dict[str, Any]:
    with mock.patch.object(code_answer, "RANKING", weights):
        return _run_ranked(root, q, action=action)


def _run_ranked(root: Path, q: dict[str, Any], *, action: str) -> dict[str, Any]:
    engine = ReadEngine(Settings(roots=(root,), cache_dir=CACHE / "engine-cache", repo_index=False))
    goal = q["question"][:GOAL_CHARS]
    pack = engine.read("b", ReadRequest(target=".", action=action, intent=Intent(goal=goal), budget_tokens=BUDGET))  # type: ignore[arg-type]
    files = listed_files(pack)
    first_spans = [(i.pointer.split("@")[0], i.lines[0], i.lines[1]) for i in pack.items]
    tokens = _tokens(pack.model_dump_json(exclude_none=True))
    spent, seen_at = tokens, tokens if spans_hit(first_spans, q) else None
    current = pack
    for _ in range(2):
        if seen_at is not None or current.cursor is None:
            break
        current = engine.read("b", ReadRequest(target=".", cursor=current.cursor, budget_tokens=BUDGET))
        spent += _tokens(current.model_dump_json(exclude_none=True))
        if spans_hit([(i.pointer.split("@")[0], i.lines[0], i.lines[1]) for i in current.items], q):
            seen_at = spent
    return {"files": files, "hit": spans_hit(first_spans, q), "tokens": tokens, "to_hunk": seen_at}


def listed_files(pack: EvidencePack) -> list[str]:
    """The files a directory answer lists: its table of ranked files, then its evidence's files, in order."""
    files = [str(row[0]) for row in pack.result.rows] if pack.result is not None and pack.result.rows else []
    for item in pack.items:
        path = item.pointer.split("@")[0]
        if path not in files:
            files.append(path)
    return files


def _text_files(root: Path) -> list[Path]:
    skip = {".git", "node_modules", "__pycache__"}
    return sorted(
        p
        for p in root.rglob("*")
        if p.is_file() and not skip & set(p.relative_to(root).parts) and p.stat().st_size < 2_000_000
    )


def run_grep(root: Path, q: dict[str, Any], names: list[str]) -> dict[str, Any]:
    patterns = [re.compile(rf"\b{re.escape(n)}\b") for n in names]
    per_file: list[tuple[int, int, str, list[str], list[int]]] = []
    for path in _text_files(root):
        try:
            lines = path.read_text(encoding="utf-8").split("\n")
        except (UnicodeDecodeError, OSError):
            continue
        matched = [n for n, line in enumerate(lines, 1) if any(p.search(line) for p in patterns)]
        if matched:
            distinct = sum(any(p.search(line) for line in lines) for p in patterns)
            per_file.append((distinct, len(matched), path.relative_to(root).as_posix(), lines, matched))
    per_file.sort(key=lambda row: (-row[0], -row[1], row[2]))
    spent, tokens, seen_at = 0, 0, None
    first_call: list[Span] = []
    for _, _, rel, lines, matched in per_file:
        windows: list[list[int]] = []
        for n in matched:
            first, last = max(1, n - WINDOW), min(len(lines), n + WINDOW)
            if windows and first <= windows[-1][1] + 1:
                windows[-1][1] = last
            else:
                windows.append([first, last])
        for first, last in windows:
            cost = _tokens(f"{rel}:{first}-{last}\n" + "\n".join(lines[first - 1 : last]))
            spent += cost
            if spent <= BUDGET:
                first_call.append((rel, first, last))
                tokens = spent
            if seen_at is None and spans_hit([(rel, first, last)], q):
                seen_at = spent
        if seen_at is not None and spent > BUDGET:
            break
    return {
        "files": [row[2] for row in per_file],
        "hit": spans_hit(first_call, q),
        "tokens": tokens,
        "to_hunk": seen_at,
    }


def run_whole(root: Path, q: dict[str, Any], names: list[str]) -> dict[str, Any]:
    files = [p.relative_to(root).as_posix() for p in _text_files(root)]
    chosen = None
    for name in names:
        folded = name.casefold().split(".")[-1]
        found = [f for f in files if Path(f).stem.casefold() == folded] or [f for f in files if folded in f.casefold()]
        if found:
            chosen = sorted(found, key=lambda f: ("test" in f, len(f)))[0]
            break
    if chosen is None:
        return {"files": [], "hit": False, "tokens": 0, "to_hunk": None}
    text = (root / chosen).read_text(encoding="utf-8", errors="replace")
    tokens = _tokens(text)
    whole = [(chosen, 1, text.count("\n") + 1)]
    hit = spans_hit(whole, q)
    return {"files": [chosen], "hit": hit and tokens <= BUDGET, "tokens": tokens, "to_hunk": tokens if hit else None}


def questions_of(data: Path, limit: int | None) -> list[dict[str, Any]]:
    swebench = data / "swebench"
    questions = [json.loads(line) for line in (swebench / "questions.jsonl").read_text().splitlines()]
    for q in questions[:limit]:
        root = CACHE / "repos" / q["instance_id"]
        if not root.exists():
            materialize(swebench, q["instance_id"], root)
    return questions[:limit]


def evaluate(
    questions: list[dict[str, Any]], chosen: dict[str, Weights] | None = None
) -> dict[str, dict[str, list[dict[str, Any]]]]:
    """Every method on every issue; `ranked` with the weights chosen for the issue's repository."""
    results: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for q in questions:
        root = CACHE / "repos" / q["instance_id"]
        names = goal_cues(q["question"][:GOAL_CHARS]).top(5)
        repo = q["repo"].split("/")[1]
        weights = (chosen or {}).get(repo, DEFAULT_WEIGHTS)
        runs: dict[str, Callable[[], dict[str, Any]]] = {
            "ranked": partial(run_ranked, root, q, action="focus", weights=weights),
            "previous": partial(run_ranked, root, q, action="collect"),
            "grep+windows": partial(run_grep, root, q, names),
            "name+whole": partial(run_whole, root, q, names),
        }
        if weights != DEFAULT_WEIGHTS:
            runs["ranked (default)"] = partial(run_ranked, root, q, action="focus")
        for method, call in runs.items():
            outcome = call()
            outcome["qid"] = q["instance_id"]
            outcome["rank"] = next((n for n, f in enumerate(outcome["files"], 1) if f in q["gold_files"]), None)
            outcome["top1"] = bool(outcome["files"]) and outcome["files"][0] in q["gold_files"]
            outcome["top5"] = any(f in q["gold_files"] for f in outcome["files"][:5])
            results.setdefault(repo, {}).setdefault(method, []).append(outcome)
        if weights == DEFAULT_WEIGHTS:
            results[repo].setdefault("ranked (default)", []).append(results[repo]["ranked"][-1])
    return results


def _figures(rows: list[dict[str, Any]]) -> tuple[float, float, float, float, float, float]:
    n = len(rows)
    seen = [r["to_hunk"] for r in rows if r["to_hunk"] is not None]
    return (
        100 * sum(r["top1"] for r in rows) / n,
        100 * sum(r["top5"] for r in rows) / n,
        100 * sum(r["hit"] for r in rows) / n,
        statistics.median(r["tokens"] for r in rows),
        statistics.median(seen) if seen else float("nan"),
        100 * len(seen) / n,
    )


def table(results: dict[str, dict[str, list[dict[str, Any]]]]) -> list[str]:
    head = "| set | method | n | top 1 | top 5 | hunk/function @4k | median tokens | tokens to hunk | seen |"
    out = [head, "|---|---|---|---|---|---|---|---|---|"]
    macro: dict[str, list[tuple[float, ...]]] = {}
    for repo, methods in sorted(results.items()):
        for method in METHODS:
            figures = _figures(methods[method])
            macro.setdefault(method, []).append(figures)
            out.append(_row(repo, method, len(methods[method]), figures))
    for method in METHODS:
        columns = list(zip(*macro[method], strict=True))
        out.append(_row("macro", method, len(macro[method]), tuple(statistics.mean(c) for c in columns)))
    for method in METHODS:
        every = [row for methods in results.values() for row in methods[method]]
        out.append(_row("pooled", method, len(every), _figures(every)))
    return out


def per_issue(
    results: dict[str, dict[str, list[dict[str, Any]]]], ranks: dict[str, dict[str, int | None]]
) -> list[str]:
    """The gold file's rank per issue: held out, the default, the ranking before issue 33, and grep."""
    out = [
        "gold file's rank per issue (- : not listed):",
        "| issue | held out | default | before issue 33 | grep+windows |",
        "|---|---|---|---|---|",
    ]
    grep = {row["qid"]: row["rank"] for methods in results.values() for row in methods["grep+windows"]}
    for qid, found in ranks.items():
        cells = [found["held out"], found["default"], found["before"], grep.get(qid)]
        out.append(f"| {qid} | " + " | ".join("-" if c is None else str(c) for c in cells) + " |")
    return out


def _row(label: str, method: str, n: int, f: tuple[float, ...]) -> str:
    shares = " | ".join(f"{v:.0f}%" for v in f[:3])
    return f"| {label} | {method} | {n} | {shares} | {f[3]:,.0f} | {f[4]:,.0f} | {f[5]:.0f}% |"


def latency(data: Path, files: int, repeat: int) -> list[str]:
    """First directory search of a new engine: empty cache directory (cold) vs the same one (warm)."""
    swebench = data / "swebench"
    questions = [json.loads(line) for line in (swebench / "questions.jsonl").read_text().splitlines()]
    tree = CACHE / f"tree-{files}"
    if not tree.exists():
        count = 0
        for q in (q for q in questions if q["repo"] == "pytest-dev/pytest"):
            if count >= files:
                break
            root = CACHE / "repos" / q["instance_id"]
            if not root.exists():
                materialize(swebench, q["instance_id"], root)
            shutil.copytree(root, tree / q["instance_id"])
            count = sum(1 for p in tree.rglob("*") if p.is_file())
    count = sum(1 for p in tree.rglob("*") if p.is_file())
    goal = Intent(goal=questions[-1]["question"][:GOAL_CHARS])

    def first_search(cache: Path) -> float:
        engine = ReadEngine(Settings(roots=(tree,), cache_dir=cache))
        started = time.perf_counter()
        engine.read("b", ReadRequest(target=".", intent=goal, budget_tokens=BUDGET))
        return time.perf_counter() - started

    cold, warm = [], []
    for attempt in range(repeat):
        cache = CACHE / f"latency-cache-{attempt}"
        shutil.rmtree(cache, ignore_errors=True)
        cold.append(first_search(cache))
        warm.append(first_search(cache))
        shutil.rmtree(cache, ignore_errors=True)
    names = goal_cues(goal.goal or "").top(5)
    started = time.perf_counter()
    run_grep(tree, questions[-1], names)
    grep = time.perf_counter() - started
    c, w = statistics.median(cold), statistics.median(warm)
    return [
        f"first directory search on {count:,} files (median of {repeat}): cold index build {c:.2f} s, "
        f"new session on the stored index {w:.2f} s ({c / w:.1f}x faster); grep + windows {grep:.2f} s"
    ]


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "data")
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    questions = questions_of(args.data, args.limit)
    cases = [
        repo_loro.build_case(CACHE / "repos" / q["instance_id"], q, q["question"][:GOAL_CHARS], CACHE / "engine-cache")
        for q in questions
    ]
    held_out: list[str] = []
    chosen = repo_loro.report(cases, held_out.append)
    print(held_out[0] + "\n", flush=True)
    ranks = repo_loro.issue_ranks(cases, chosen)
    del cases
    results = evaluate(questions, chosen)
    lines = [*held_out, "", *table(results), "", *per_issue(results, ranks)]
    print("\n".join(lines[len(held_out) + 1 :]), flush=True)
    if args.files:
        lines += ["", *latency(args.data, args.files, args.repeat)]
        print(lines[-1])
    return {"table": lines}


if __name__ == "__main__":
    main()
