"""Latency and peak memory of preview and read as documents and repositories grow, beside a plain read.

Not a test. Run:  python -m bench.scale_bench [--data ../shared/data] [--cold 3] [--repeat 5] [--json out.json]

Cases: text documents of 100 KB, 1 MB and 10 MB (FinanceBench filings concatenated) and repositories of
200 and 2,000 files (real files sampled from SWE-bench pytest snapshots at several commits, each snapshot
under its own folder). Every measurement runs in a fresh worker process (`--worker`), so imports, caches
and peak memory never carry over between cases. Cold = the first call of a fresh engine in a fresh process
(parse, index, tokenizer load); warm = the same call again in that process (a new session and another
goal, so nothing is answered from an earlier episode). Timings are medians: cold over --cold workers,
warm over --cold x --repeat calls. Read = `sro_read` focus with a goal, as the engine answers it.
Baseline in the same run: for a document, a plain read of the file plus its token count (what one full
read costs); for a repository, a walk and a read of every file. Setup (importing the package and
building the engine, or loading the baseline's tokenizer) is timed apart. Peak memory is the worker's
high-water RSS (VmHWM; ru_maxrss would carry the parent's peak across exec); work = peak - memory after
setup: what the calls cost beyond the imports and the tokenizer tables.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
TEXT_SIZES = (100_000, 1_000_000, 10_000_000)
REPO_FILES = (200, 2_000)
#: Several commits of one project: real files, many of them changed between versions. Used until enough.
SNAPSHOTS = tuple(f"pytest-dev__pytest-{n}" for n in (5103, 6116, 7490, 11143, 5692, 8906, 9359))
OPS = ("preview", "read", "baseline")
TEXT_GOALS = (
    "total revenue for the fiscal year",
    "capital expenditures purchases of property plant equipment",
    "net income attributable to shareholders",
    "long-term debt maturities",
    "dividends paid per share",
    "cash and cash equivalents at end of year",
    "research and development expense",
    "goodwill impairment",
)
CODE_GOALS = (
    "assertion rewriting of comparisons",
    "fixture scope and teardown order",
    "capture of stdout and stderr",
    "parametrize ids for test items",
    "junitxml report properties",
    "tmp_path factory base directory",
    "monkeypatch setattr on a module",
    "skip and xfail markers evaluation",
)

Json = dict[str, Any]


@dataclass(frozen=True, slots=True, kw_only=True)
class Case:
    name: str
    kind: str  # "text" or "repo"
    path: Path
    size_bytes: int
    files: int


# -- inputs --------------------------------------------------------------------------------------


def build_text(data: Path, dest: Path, size: int) -> Case:
    """A document of `size` bytes: FinanceBench filings, concatenated (cycled if they run out)."""
    docs = sorted((data / "financebench" / "docs").glob("*.txt"))
    parts, total = [], 0
    while total < size:
        for doc in docs:
            raw = doc.read_bytes()
            parts.append(raw)
            total += len(raw)
            if total >= size:
                break
    body = b"".join(parts)[:size].decode("utf-8", errors="ignore")
    path = dest / f"filing-{_label(size)}.txt"
    path.write_text(body, encoding="utf-8")
    return Case(name=f"text {_label(size)}", kind="text", path=path, size_bytes=path.stat().st_size, files=1)


def build_repos(data: Path, dest: Path, counts: tuple[int, ...], seed: int) -> list[Case]:
    """Repositories of `counts` files, sampled from pytest snapshots laid out one folder per commit."""
    swebench = data / "swebench"
    pool_root = dest / "snapshots"
    pool: list[Path] = []
    for instance in SNAPSHOTS:
        target = pool_root / instance.rsplit("-", 1)[-1]
        script = swebench / "materialize_swebench.py"
        subprocess.run(
            [sys.executable, str(script), instance, str(target), "--cache", str(dest / "git-cache")],
            check=True,
            capture_output=True,
            timeout=300,
        )
        pool += sorted(p.relative_to(pool_root) for p in target.rglob("*") if p.is_file())
        if len(pool) >= max(counts):
            break
    cases = []
    for count in counts:
        if count > len(pool):
            raise SystemExit(f"only {len(pool)} files in the snapshots {SNAPSHOTS}: cannot build {count}")
        root = dest / f"repo-{count}"
        for relative in random.Random(seed).sample(pool, count):
            (root / relative).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(pool_root / relative, root / relative)
        size = sum(p.stat().st_size for p in root.rglob("*") if p.is_file())
        cases.append(Case(name=f"repo {count:,} files", kind="repo", path=root, size_bytes=size, files=count))
    return cases


def _label(size: int) -> str:
    return f"{size // 1_000_000} MB" if size >= 1_000_000 else f"{size // 1_000} KB"


# -- workers (one fresh process per measurement) ----------------------------------------------------


def worker(op: str, kind: str, path: Path, repeat: int) -> Json:
    """Set up (engine or tokenizer), time one operation cold, then `repeat` times warm; report memory."""
    rss_import = _maxrss_kb()
    goals = TEXT_GOALS if kind == "text" else CODE_GOALS
    start = time.perf_counter()
    run, describe = _operation(op, kind, path, goals)
    setup = time.perf_counter() - start
    rss_setup = _maxrss_kb()
    start = time.perf_counter()
    outcome = run(0)
    cold = time.perf_counter() - start
    warm, outcomes = [], [outcome]
    for i in range(1, repeat + 1):
        start = time.perf_counter()
        outcomes.append(run(i))
        warm.append(time.perf_counter() - start)
    return {
        "setup_s": setup,
        "cold_s": cold,
        "warm_s": warm,
        "rss_import_kb": rss_import,
        "rss_setup_kb": rss_setup,
        "rss_peak_kb": _maxrss_kb(),
        "outcomes": dict(Counter(describe(o) for o in outcomes)),
    }


def _operation(
    op: str, kind: str, path: Path, goals: tuple[str, ...]
) -> tuple[Callable[[int], object], Callable[[object], str]]:
    if op == "baseline" and kind == "repo":
        return lambda _i: _walk_read(path), str
    from sparseread_mcp.tokens import TokenCounter

    if op == "baseline":
        counter = TokenCounter()  # loads the encoding, as building the engine does: setup, not the read
        return lambda _i: counter.count(path.read_text(encoding="utf-8")), str
    from sparseread_mcp import Intent, ReadEngine, ReadRequest, Settings
    from sparseread_mcp.models import EvidencePack, Preview

    engine = ReadEngine(Settings(roots=(path.parent,)))
    if op == "preview":

        def preview(i: int) -> object:
            return engine.preview(f"s{i}", path.name)

        return preview, lambda p: p.route if isinstance(p, Preview) else type(p).__name__

    def read(i: int) -> object:
        request = ReadRequest(target=path.name, intent=Intent(goal=goals[i % len(goals)]))
        return engine.read(f"s{i}", request)

    return read, lambda p: p.gate.decision if isinstance(p, EvidencePack) else type(p).__name__


def _walk_read(root: Path) -> int:
    return sum(len(p.read_bytes()) for p in root.rglob("*") if p.is_file())


def _maxrss_kb() -> int:
    """This process's peak resident memory (KiB). Linux: VmHWM, because ru_maxrss survives exec and so
    reports the parent's peak when the parent was larger (a worker spawned by a 1 GB runner would read 1 GB)."""
    status = Path("/proc/self/status")
    if status.exists():
        for line in status.read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux, bytes on macOS: a fallback


def measure(case: Case, op: str, cold: int, repeat: int) -> Json:
    """`cold` fresh workers for one (case, operation); medians and the largest peak."""
    runs = []
    for _ in range(cold):
        command = [sys.executable, "-m", "bench.scale_bench", "--worker", op, case.kind, str(case.path)]
        done = subprocess.run(
            [*command, "--repeat", str(repeat)], cwd=REPO, capture_output=True, text=True, timeout=600, check=False
        )
        if done.returncode != 0:
            raise RuntimeError(f"{op} worker on {case.name} failed: {done.stderr.strip()[-2000:]}")
        runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
    outcomes: Counter[str] = Counter()
    for run in runs:
        outcomes.update(run["outcomes"])
    return {
        "cold_ms": 1000 * statistics.median(r["cold_s"] for r in runs),
        "warm_ms": 1000 * statistics.median(t for r in runs for t in r["warm_s"]),
        "setup_ms": 1000 * statistics.median(r["setup_s"] for r in runs),
        "peak_mb": max(r["rss_peak_kb"] for r in runs) / 1024,
        "work_mb": max(r["rss_peak_kb"] - r["rss_setup_kb"] for r in runs) / 1024,
        "setup_mb": statistics.median(r["rss_setup_kb"] for r in runs) / 1024,
        "import_mb": statistics.median(r["rss_import_kb"] for r in runs) / 1024,
        "outcomes": dict(outcomes),
    }


# -- report --------------------------------------------------------------------------------------


def table(results: list[Json]) -> list[str]:
    lines = [
        "Latency (ms, medians) and memory (MB, peak RSS of a fresh process per measurement):",
        f"{'case':<17}{'size':>9} |{'preview':>14} |{'read':>14} |{'baseline':>14} |"
        f"{'peak MB':>16} |{'work MB':>16} | read answered",
        f"{'':<17}{'':>9} |{'cold':>6}{'warm':>8} |{'cold':>6}{'warm':>8} |{'cold':>6}{'warm':>8} |"
        f"{'prev  read  base':>16} |{'prev  read  base':>16} |",
    ]
    for r in results:
        p, rd, b = r["preview"], r["read"], r["baseline"]
        answered = " ".join(f"{k}:{v}" for k, v in sorted(rd["outcomes"].items()))
        lines.append(
            f"{r['case']:<17}{r['size_bytes'] / 1e6:>7.2f}MB |{p['cold_ms']:>6.0f}{p['warm_ms']:>8.1f} |"
            f"{rd['cold_ms']:>6.0f}{rd['warm_ms']:>8.1f} |{b['cold_ms']:>6.0f}{b['warm_ms']:>8.1f} |"
            f"{p['peak_mb']:>6.0f}{rd['peak_mb']:>5.0f}{b['peak_mb']:>5.0f} |"
            f"{p['work_mb']:>6.0f}{rd['work_mb']:>5.0f}{b['work_mb']:>5.0f} | {answered}"
        )
    engine = [r[op] for r in results for op in ("preview", "read")]
    counter = [r["baseline"] for r in results if r["kind"] == "text"]
    lines += [
        "cold = first call of a fresh engine in a fresh process; warm = later calls. Setup, outside the timings: "
        f"importing sparseread_mcp and building the engine {statistics.median(x['setup_ms'] for x in engine):.0f} ms, "
        f"+{statistics.median(x['setup_mb'] - x['import_mb'] for x in engine):.0f} MB (tokenizer tables included); "
        f"loading the baseline's tokenizer {statistics.median(x['setup_ms'] for x in counter):.0f} ms. "
        f"A bare worker: {statistics.median(x['import_mb'] for x in engine):.0f} MB. work MB = peak - after setup.",
        "",
        "Growth against the smallest case of its kind (x), and warm cost against the baseline's warm read:",
        f"{'case':<17}{'size':>7}{'prev cold':>11}{'prev warm':>11}{'read cold':>11}{'read warm':>11}"
        f"{'base warm':>11}{'read work MB':>14}{'prev/base':>11}{'read/base':>11}",
    ]
    for r in results:
        g = growth(_first(results, r), r)
        base = r["baseline"]["warm_ms"]
        lines.append(
            f"{r['case']:<17}{g['size']:>7.1f}{g['preview_cold']:>11.1f}{g['preview_warm']:>11.1f}"
            f"{g['read_cold']:>11.1f}{g['read_warm']:>11.1f}{g['baseline_warm']:>11.1f}{g['read_work_mb']:>14.1f}"
            f"{r['preview']['warm_ms'] / base:>11.2f}{r['read']['warm_ms'] / base:>11.2f}"
        )
    return lines


def growth(first: Json, r: Json) -> dict[str, float]:
    def ratio(op: str, key: str) -> float:
        return float(r[op][key]) / max(1e-9, float(first[op][key]))

    return {
        "size": r["size_bytes"] / first["size_bytes"],
        "preview_cold": ratio("preview", "cold_ms"),
        "preview_warm": ratio("preview", "warm_ms"),
        "read_cold": ratio("read", "cold_ms"),
        "read_warm": ratio("read", "warm_ms"),
        "baseline_warm": ratio("baseline", "warm_ms"),
        "read_work_mb": max(1.0, r["read"]["work_mb"]) / max(1.0, first["read"]["work_mb"]),
    }


def _first(results: list[Json], r: Json) -> Json:
    return next(x for x in results if x["kind"] == r["kind"])


def main(argv: list[str] | None = None) -> Json:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--cold", type=int, default=3, help="fresh processes per measurement (3)")
    parser.add_argument("--repeat", type=int, default=5, help="warm calls per process (5)")
    parser.add_argument("--only", choices=["text", "repo"], help="run one kind of case only")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, help="write the numbers here")
    parser.add_argument("--worker", nargs=3, metavar=("OP", "KIND", "PATH"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        op, kind, path = args.worker
        outcome = worker(op, kind, Path(path), args.repeat)
        print(json.dumps(outcome), flush=True)
        return outcome
    results = []
    with tempfile.TemporaryDirectory(prefix="scale-bench-") as tmp:
        dest = Path(tmp)
        cases = [] if args.only == "repo" else [build_text(args.data, dest, size) for size in TEXT_SIZES]
        if args.only != "text":
            cases += build_repos(args.data, dest, REPO_FILES, args.seed)
        for case in cases:
            row: Json = {**asdict(case), "case": case.name, "path": case.path.name}
            for op in OPS:
                row[op] = measure(case, op, args.cold, args.repeat)
            print(f"  measured {case.name}", file=sys.stderr, flush=True)
            results.append(row)
    for line in table(results):
        print(line, flush=True)
    result: Json = {
        "cold": args.cold,
        "repeat": args.repeat,
        "growth": [growth(_first(results, r), r) for r in results],
        "cases": results,
    }
    if args.json:
        args.json.write_text(json.dumps(result, indent=1))
    return result


if __name__ == "__main__":
    main()
