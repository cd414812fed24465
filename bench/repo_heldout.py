"""File ranking on projects no rule was written from: SWE-bench Lite's other nine repositories.

Run:  PYTHONPATH=. nice python -m bench.repo_heldout [--repos django sympy ...] [--limit N] [--json OUT]

The file ranking's rules and weights were written while looking at the 26 development issues (flask, pytest,
requests; bench/repo_bench.py). This bench scores the same ranking, unchanged, on the issues of SWE-bench
Lite's other projects (bench/data/swebench_lite_other.jsonl: the issue's first 1,000 characters and the files
its fix edits). No snapshot of those repositories at the issue's commit is stored here, so each tree is the
project's source distribution from PyPI for the issue's version (the first release of that series: the
closest to the development branch the issue was filed against); an issue whose fix edits only files that
release lacks is left out and counted. Every figure is per repository, macro over repositories and pooled,
beside the plainest baselines on the same trees in the same run:

* `served`: `sro_read` focus on the tree's root through `ReadEngine.read` (4,000 tokens, a new session per
  issue): the files its answer lists, in order;
* `default`: `rank_files` with the shipped weights (what a directory focus ranks by);
* `rules off`: the same without the six rules added in issue 33 (the ranking before them);
* `BM25 of the goal`: files by BM25 of the goal's words alone;
* `grep`: the goal's five strongest identifiers (the same `goal_cues(...).top(5)` repo_bench greps), files
  by how many of them match, then by matching lines (bench/repo_bench.run_grep's order).

Trees and the index of each are built once per release and kept under the cache folder (about 10 GB free is
plenty; the nine projects' sdists are 150 MB).
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import tarfile
import tempfile
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from bench.repo_bench import _text_files, listed_files  # the files repo_bench's grep reads, and lists
from bench.repo_loro import BEFORE, CANDIDATES, Case, gold_rank
from sparseread_mcp.config import Settings
from sparseread_mcp.directory.fileindex import FileIndex
from sparseread_mcp.directory.filerank import DEFAULT_WEIGHTS, RULES, SIGNALS, TUNABLE, Weights, goal_cues
from sparseread_mcp.engine import ReadEngine, ReadRequest
from sparseread_mcp.models import Intent
from sparseread_mcp.protocol.intents import query_for

REPO = Path(__file__).resolve().parent.parent
DATA = REPO / "bench" / "data" / "swebench_lite_other.jsonl"
CACHE = Path(tempfile.gettempdir()) / "sparseread-repo-heldout"
GOAL_CHARS = 1000
#: The directory focus's budget, as bench/repo_bench.py gives it.
SERVED_TOKENS = 4000
#: The package registry's simple index (PEP 503): sdists are fetched from it, not built.
INDEX = "https://pypi.org/simple"
#: GitHub repository -> its PyPI project.
PROJECTS = {
    "astropy/astropy": "astropy",
    "django/django": "Django",
    "matplotlib/matplotlib": "matplotlib",
    "mwaskom/seaborn": "seaborn",
    "pydata/xarray": "xarray",
    "pylint-dev/pylint": "pylint",
    "scikit-learn/scikit-learn": "scikit-learn",
    "sphinx-doc/sphinx": "Sphinx",
    "sympy/sympy": "sympy",
}
BM25_ONLY = Weights(bm25=1.0, title=0.0, path=0.0, module=0.0, define=0.0, refs=0.0, tested=0.0, demoted=1.0)
RANKINGS: dict[str, Weights] = {"default": DEFAULT_WEIGHTS, "rules off": BEFORE, "BM25 of the goal": BM25_ONLY}
#: The default with one of issue 33's rules taken out: does each hold where it was not written?
ABLATIONS: dict[str, Weights] = {
    **{f"without the signal {name}": replace(DEFAULT_WEIGHTS, **{name: 0.0}) for name in SIGNALS},
    **{
        f"without {rule}": replace(DEFAULT_WEIGHTS, **{rule: type(getattr(DEFAULT_WEIGHTS, rule))(0)}) for rule in RULES
    },
}
#: Each weight of the default x0.5 and x2, one at a time (bench/repo_loro.sensitivity does it on development).
SENSITIVITY: dict[str, Weights] = {
    f"{name} x{factor:g}": DEFAULT_WEIGHTS.scaled(name, factor)
    for name in TUNABLE
    if getattr(DEFAULT_WEIGHTS, name)
    for factor in (0.5, 2.0)
}


@dataclass(frozen=True, slots=True)
class Issue:
    repo: str
    qid: str
    version: str
    goal: str
    files: tuple[str, ...]


def issues_of(path: Path, repos: list[str] | None, limit: int | None) -> list[Issue]:
    out: list[Issue] = []
    for line in path.read_text().splitlines():
        raw = json.loads(line)
        name = raw["repo"].split("/")[1]
        if raw["repo"] not in PROJECTS or (repos and name not in repos):
            continue
        out.append(Issue(name, raw["instance_id"], raw["version"], raw["problem"][:GOAL_CHARS], tuple(raw["files"])))
    out.sort(key=lambda i: i.qid)
    if limit is None:
        return out
    kept: dict[str, int] = {}
    return [i for i in out if (kept.__setitem__(i.repo, kept.get(i.repo, 0) + 1) or kept[i.repo]) <= limit]


def _release_key(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in re.findall(r"\d+", version))


def sdists_of(project: str, cache: Path) -> dict[str, str]:
    """Final release -> its sdist's address, from the registry's simple index (read once, kept)."""
    listing = cache / f"{project}.sdists.json"
    if not listing.exists():
        name = re.sub(r"[-_.]+", "-", project).lower()
        with urllib.request.urlopen(f"{INDEX}/{name}/", timeout=120) as response:
            page = response.read().decode()
        found: dict[str, str] = {}
        for url in re.findall(r'href="([^"]+)"', page):
            filename = url.split("#")[0].rsplit("/", 1)[-1]
            match = re.fullmatch(r"[A-Za-z0-9_.-]+?-(\d[\d.]*)\.(?:tar\.gz|zip)", filename)
            if match and match.group(1).rstrip(".") == match.group(1):
                found.setdefault(match.group(1), url.split("#")[0])
        listing.write_text(json.dumps(found))
    return dict(json.loads(listing.read_text()))


def release_for(project: str, series: str, cache: Path) -> str | None:
    """The first final release of `series` (`3.2` -> 3.2, else 3.2.0, else the lowest 3.2.x)."""
    series_key = _release_key(series)
    same = [v for v in sdists_of(project, cache) if _release_key(v)[: len(series_key)] == series_key]
    return min(same, key=_release_key) if same else None


def tree_for(project: str, release: str, cache: Path) -> Path | None:
    """The release's sdist, fetched and unpacked once (its single top folder)."""
    root = cache / "trees" / f"{project}-{release}"
    if root.exists():
        return root
    url = sdists_of(project, cache).get(release)
    if url is None or not url.endswith(".tar.gz"):
        return None
    archive = cache / "sdists" / url.rsplit("/", 1)[-1]
    archive.parent.mkdir(parents=True, exist_ok=True)
    if not archive.exists():
        with urllib.request.urlopen(url, timeout=600) as response:
            archive.write_bytes(response.read())
    staging = cache / "trees" / f".{project}-{release}"
    with tarfile.open(archive) as tar:
        tar.extractall(staging, filter="data")
    (top,) = list(staging.iterdir())
    top.rename(root)
    staging.rmdir()
    return root


class Tree:
    """One release: its file index (as a directory focus builds it) and its text files for grep."""

    def __init__(self, root: Path, cache: Path, *, texts: bool = True) -> None:
        self.root = root
        # The index is kept on disk (a later run reads it back); the ranking is computed afresh each run.
        self.engine = ReadEngine(Settings(roots=(root,), cache_dir=cache / "index"))
        self.index: FileIndex = self.engine.file_index(self.engine.inventory("."))
        self.sessions = 0
        self.texts: dict[str, list[str]] = {}
        for path in _text_files(root) if texts else ():
            try:
                self.texts[path.relative_to(root).as_posix()] = path.read_text(encoding="utf-8").split("\n")
            except (UnicodeDecodeError, OSError):
                continue

    def served(self, goal: str) -> list[str]:
        """The files a directory focus lists (its table of ranked files, then its evidence's files), a new
        session each time, through `ReadEngine.read` as the MCP tool calls it."""
        self.sessions += 1
        request = ReadRequest(target=".", action="focus", intent=Intent(goal=goal), budget_tokens=SERVED_TOKENS)
        return listed_files(self.engine.read(f"s{self.sessions}", request))

    def grep(self, names: list[str]) -> list[str]:
        """bench/repo_bench.run_grep's file order: distinct identifiers matched, then matching lines."""
        patterns = [re.compile(rf"\b{re.escape(n)}\b") for n in names]
        rows = []
        for rel, lines in self.texts.items():
            matched = [line for line in lines if any(p.search(line) for p in patterns)]
            if matched:
                distinct = sum(any(p.search(line) for line in matched) for p in patterns)
                rows.append((-distinct, -len(matched), rel))
        return [rel for _, _, rel in sorted(rows)]


def evaluate(
    issues: list[Issue], cache: Path, log: Callable[[str], None] = print, *, baselines: bool = True
) -> dict[str, Any]:
    """Per issue: the gold file's rank under each ranking and grep; issues left out and why."""
    trees: dict[str, Tree | None] = {}
    ranks: list[dict[str, Any]] = []
    left_out: list[dict[str, str]] = []
    for issue in issues:
        project = PROJECTS[next(r for r in PROJECTS if r.endswith("/" + issue.repo))]
        release = release_for(project, issue.version, cache)
        if release is None:
            left_out.append({"qid": issue.qid, "why": f"no {project} release of series {issue.version}"})
            continue
        key = f"{project}-{release}"
        if key not in trees:
            started = time.perf_counter()
            root = tree_for(project, release, cache)
            trees[key] = Tree(root, cache, texts=baselines) if root else None
            if trees[key] is not None:
                log(
                    f"{key}: {len(trees[key].index.files):,} files, indexed in {time.perf_counter() - started:.0f} s;"
                    f" vendored: {', '.join(trees[key].index.vendored_roots) or 'none'}"
                )
        tree = trees[key]
        if tree is None:
            left_out.append({"qid": issue.qid, "why": f"no sdist of {key}"})
            continue
        gold = frozenset(f for f in issue.files if f in tree.texts or (tree.root / f).is_file())
        if not gold:
            left_out.append({"qid": issue.qid, "why": f"{key} lacks {', '.join(issue.files)}"})
            continue
        cues = goal_cues(issue.goal)
        case = Case(
            repo=issue.repo,
            qid=issue.qid,
            index=tree.index,
            cues=cues,
            terms=tuple(query_for(Intent(goal=issue.goal)).terms),
            gold=gold,
        )
        row: dict[str, Any] = {"repo": issue.repo, "qid": issue.qid, "release": release}
        for name, weights in {**RANKINGS, **ABLATIONS, **CANDIDATES, **SENSITIVITY}.items():
            row[name] = gold_rank(case, weights)
        if baselines:
            listed = tree.served(issue.goal)
            row["served"] = next((n for n, f in enumerate(listed, 1) if f in gold), None)
            grepped = tree.grep(cues.top(5))
            row["grep"] = next((n for n, f in enumerate(grepped, 1) if f in gold), None)
        ranks.append(row)
    return {"ranks": ranks, "left_out": left_out}


def _shares(values: list[int | None]) -> tuple[float, float, int]:
    n = max(1, len(values))
    top1 = 100 * sum(v == 1 for v in values) / n
    top5 = 100 * sum(v is not None and v <= 5 for v in values) / n
    return top1, top5, len(values)


def table(result: dict[str, Any], methods: tuple[str, ...] = ("served", *RANKINGS, "grep")) -> list[str]:
    ranks = result["ranks"]
    repos = sorted({r["repo"] for r in ranks})
    sizes = {repo: sum(r["repo"] == repo for r in ranks) for repo in repos}
    out = [
        "| method | " + " | ".join(f"{repo} ({sizes[repo]})" for repo in repos) + " | macro | pooled |",
        "|---" * (len(repos) + 3) + "|",
    ]
    for method in methods:
        per = {repo: _shares([r[method] for r in ranks if r["repo"] == repo]) for repo in repos}
        macro = (statistics.mean(p[0] for p in per.values()), statistics.mean(p[1] for p in per.values()))
        pooled = _shares([r[method] for r in ranks])
        cells = [f"{per[repo][0]:.0f} / {per[repo][1]:.0f}" for repo in repos]
        out.append(
            f"| {method} | "
            + " | ".join(cells)
            + f" | **{macro[0]:.1f} / {macro[1]:.1f}** | {pooled[0]:.1f} / {pooled[1]:.1f} |"
        )
    out.append("")
    out.append("Cells: gold file first / in the top 5, % of the repository's issues.")
    if result["left_out"]:
        out.append(f"Left out: {len(result['left_out'])} issues (their fix edits only files the release lacks).")
    return out


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--repos", nargs="+", help="only these repositories (the part after the slash)")
    parser.add_argument("--limit", type=int, default=None, help="first N issues per repository")
    parser.add_argument("--cache", type=Path, default=CACHE)
    parser.add_argument("--json", type=Path, help="write the ranks per issue here")
    parser.add_argument("--rankings-only", action="store_true", help="no served read and no grep (faster)")
    args = parser.parse_args(argv)
    args.cache.mkdir(parents=True, exist_ok=True)
    result = evaluate(issues_of(args.data, args.repos, args.limit), args.cache, baselines=not args.rankings_only)
    methods = tuple(RANKINGS) if args.rankings_only else ("served", *RANKINGS, "grep")
    print("\n".join(table(result, methods)))
    print()
    print("\n".join(table(result, ("default", *ABLATIONS))))
    print()
    print("The grid bench/repo_loro.py chooses weights from on the development repositories:")
    print("\n".join(table(result, tuple(CANDIDATES))))
    print()
    print("Each weight of the default x0.5 and x2, one at a time:")
    print("\n".join(table(result, ("default", *SENSITIVITY))))
    if args.json:
        args.json.write_text(json.dumps(result, indent=1))
    return result


if __name__ == "__main__":
    main()
