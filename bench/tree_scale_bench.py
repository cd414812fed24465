"""A first search over a tree of 50,000 files built from installed packages, beside grep (issue #33, item 4).

Not a test. Run:  nice python -m bench.tree_scale_bench [--files 50000] [--source DIR ...] [--json out.json]

The tree: files (at most 256 KB each) of the installed packages (the interpreter's site-packages and
standard library, or each --source), linked or copied under one folder per source until --files. Each
measurement runs in a fresh process (imports and caches never carry over):
- cold: a new engine with an empty cache directory answers `sro_read` focus on the tree's root (walk,
  file index, ranking, the best files' passages): the first search ever, under the shipped per-call time
  limit as the server runs it (a tree too large indexes what fits and says what it left out);
- then calls with other goals until the index covers the tree (each extends the stored index), and one
  more: the warm search on the whole index;
- restart: a new process on the same cache directory (the stored index is loaded and checked);
- grep: `grep -rIl -i -E 'a|b|c'` for the goal's identifiers (the files that match, no ranking), and
  `grep -rIn` with +-20 lines of context (what an agent reads next), each run twice (the second warm).
Peak memory is the measuring process's high-water RSS plus its worker processes' (VmHWM). The engine
runs twice: with the shipped walk cap (`inventory_max_files`, the answer says what it cut) and with the
cap raised to the whole tree. Ratios: engine time / grep time in the same run.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
MAX_FILE_BYTES = 256 * 1024
#: Calls one process makes at most while its index grows to cover the tree.
MAX_CALLS = 16
GOALS = (
    ("how are HTTP redirects followed and the maximum number of redirects enforced", ["max_redirects", "redirect"]),
    ("where is the JSON schema of a tool call validated", ["validate", "schema"]),
    ("parse a TOML configuration file into a dictionary", ["tomllib", "loads"]),
)
Json = dict[str, Any]


def sources() -> list[Path]:
    """The interpreter's site-packages, then its standard library."""
    paths = [sysconfig.get_paths()["purelib"], sysconfig.get_paths()["stdlib"]]
    return [Path(p) for p in dict.fromkeys(paths) if Path(p).is_dir()]


def build_tree(dest: Path, roots: list[Path], count: int) -> int:
    """Link (else copy) up to `count` files of at most MAX_FILE_BYTES from `roots` under `dest`."""
    made = 0
    for n, root in enumerate(roots):
        for folder, dirs, files in os.walk(root):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for name in sorted(files):
                source = Path(folder) / name
                try:
                    if not source.is_file() or source.is_symlink() or source.stat().st_size > MAX_FILE_BYTES:
                        continue
                except OSError:
                    continue
                target = dest / f"src{n}" / source.relative_to(root)
                target.parent.mkdir(parents=True, exist_ok=True)
                try:
                    os.link(source, target)
                except OSError:
                    shutil.copyfile(source, target)
                made += 1
                if made >= count:
                    return made
    return made


def peak_kb() -> int:
    """High-water RSS of this process and of its live children (the engine's workers)."""
    total = 0
    pids = [str(os.getpid())]
    children = Path(f"/proc/{os.getpid()}/task/{os.getpid()}/children")
    if children.exists():
        pids += children.read_text().split()
    for pid in pids:
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    total += int(line.split()[1])
        except OSError:
            continue
    return total


def worker(tree: Path, cache: Path, max_files: int, goals: int) -> Json:
    """One fresh process, each call under the shipped per-call time limit as the server runs it: the first
    search, then searches with other goals until the index covers the tree (at most `goals` calls), then
    one more (the warm search)."""
    from sparseread_mcp import Intent, ReadEngine, ReadRequest, Settings
    from sparseread_mcp.deadline import TimedOut, deadline

    started = time.perf_counter()
    settings = Settings(roots=(tree,), cache_dir=cache, inventory_max_files=max_files)
    engine = ReadEngine(settings)
    setup = time.perf_counter() - started
    calls: list[Json] = []
    for n in range(goals):
        goal = GOALS[n % len(GOALS)][0]
        started = time.perf_counter()
        try:
            with deadline(settings.call_timeout_seconds):
                pack = engine.read(f"s{n}", ReadRequest(target=".", action="focus", intent=Intent(goal=goal)))
        except TimedOut as exc:
            calls.append({"s": time.perf_counter() - started, "timed_out": str(exc)[:120]})
            continue
        result = pack.result
        left_out = result.left_out if result is not None else None
        indexed = result.rows_scanned if result is not None else None
        calls.append(
            {"s": time.perf_counter() - started, "items": len(pack.items), "indexed": indexed, "left_out": left_out}
        )
        if left_out is None and n and "indexed" in calls[n - 1] and calls[n - 1]["left_out"] is None:
            break  # covered, and one warm search done on the whole index
    return {"setup_s": setup, "calls": calls, "peak_kb": peak_kb(), "limit_s": settings.call_timeout_seconds}


def spawn(tree: Path, cache: Path, max_files: int, goals: int) -> Json:
    command = [sys.executable, "-m", "bench.tree_scale_bench", "--worker", str(tree), str(cache), str(max_files)]
    done = subprocess.run(
        [*command, "--goals", str(goals)], cwd=REPO, capture_output=True, text=True, timeout=3600, check=False
    )
    if done.returncode != 0:
        raise RuntimeError(f"worker failed: {done.stderr.strip()[-3000:]}")
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def grep(tree: Path, words: list[str], context: bool) -> tuple[float, int]:
    pattern = "|".join(words)
    args = ["grep", "-rIn", "-i", "-E", "-C", "20", pattern] if context else ["grep", "-rIl", "-i", "-E", pattern]
    started = time.perf_counter()
    done = subprocess.run([*args, str(tree)], capture_output=True, check=False)
    return time.perf_counter() - started, len(done.stdout)


def engine_rows(tree: Path, files: int, work: Path, caps: list[str]) -> list[Json]:
    rows = []
    for label, cap in (("shipped walk cap", 0), ("cap raised to the tree", files + 1)):
        if ("shipped" if cap == 0 else "raised") not in caps:
            continue
        cache = work / f"cache-{cap}"
        shutil.rmtree(cache, ignore_errors=True)
        cap_value = cap or _default_cap()
        first = spawn(tree, cache, cap_value, MAX_CALLS)
        again = spawn(tree, cache, cap_value, 1)
        calls = first["calls"]
        covered = next((n for n, c in enumerate(calls, 1) if c.get("left_out") is None and "s" in c), None)
        rows.append(
            {
                "engine": label,
                "cap": cap_value,
                "cold_s": calls[0]["s"],
                "cold_indexed": calls[0].get("indexed"),
                "cold_left_out": calls[0].get("left_out"),
                "timed_out": sum("timed_out" in c for c in calls),
                "calls_to_cover": covered,
                "max_call_s": max(c["s"] for c in calls),
                "warm_s": calls[-1]["s"] if covered and covered < len(calls) else None,
                "restart_s": again["calls"][0]["s"],
                "setup_s": first["setup_s"],
                "peak_mb": first["peak_kb"] / 1024,
                "calls": calls,
            }
        )
        print(f"  {label}: {json.dumps(rows[-1])[:1500]}", file=sys.stderr, flush=True)
    return rows


def _default_cap() -> int:
    from sparseread_mcp import Settings

    return Settings().inventory_max_files


def main(argv: list[str] | None = None) -> Json:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--files", type=int, default=50_000)
    parser.add_argument("--source", type=Path, action="append", help="a folder of installed files (repeatable)")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--caps", nargs="+", default=["shipped", "raised"], choices=["shipped", "raised"])
    parser.add_argument("--goals", type=int, default=len(GOALS), help=argparse.SUPPRESS)
    parser.add_argument("--worker", nargs=3, metavar=("TREE", "CACHE", "CAP"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        outcome = worker(Path(args.worker[0]), Path(args.worker[1]), int(args.worker[2]), args.goals)
        print(json.dumps(outcome), flush=True)
        return outcome
    with tempfile.TemporaryDirectory(prefix="tree-scale-", dir=os.environ.get("TREE_SCALE_DIR")) as tmp:
        work = Path(tmp)
        tree = work / "tree"
        started = time.perf_counter()
        made = build_tree(tree, args.source or sources(), args.files)
        size = sum(p.stat().st_size for p in tree.rglob("*") if p.is_file())
        print(
            f"  tree: {made:,} files, {size / 1e6:.0f} MB, built in {time.perf_counter() - started:.0f} s",
            file=sys.stderr,
        )
        greps = {}
        for context in (False, True):
            runs = [grep(tree, GOALS[0][1], context) for _ in range(2)]
            greps["grep -C 20" if context else "grep -l"] = {
                "first_s": runs[0][0],
                "again_s": runs[1][0],
                "bytes": runs[1][1],
            }
        rows = engine_rows(tree, made, work, args.caps)
    result = {"files": made, "bytes": size, "grep": greps, "engine": rows}
    for line in report(result):
        print(line)
    if args.json:
        args.json.write_text(json.dumps(result, indent=1))
    return result


def report(result: Json) -> list[str]:
    g = result["grep"]["grep -l"]
    lines = [
        f"Tree: {result['files']:,} files, {result['bytes'] / 1e6:.0f} MB of installed packages.",
        "| engine | walk cap | first search (s) | files indexed by it | calls until covered | slowest call (s) "
        "| calls timed out | warm search, covered (s) | new process, stored index (s) | peak MB "
        "| first / grep -l | warm / grep -l |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in result["engine"]:
        warm = row["warm_s"]
        warm_cell = "-" if warm is None else f"{warm:.1f}"
        warm_ratio = "-" if warm is None else f"{warm / g['again_s']:.1f}x"
        lines.append(
            f"| {row['engine']} | {row['cap']:,} | {row['cold_s']:.1f} | {row['cold_indexed'] or '-'} "
            f"| {row['calls_to_cover'] or '-'} | {row['max_call_s']:.1f} | {row['timed_out']} "
            f"| {warm_cell} | {row['restart_s']:.1f} | {row['peak_mb']:.0f} "
            f"| {row['cold_s'] / g['first_s']:.1f}x | {warm_ratio} |"
        )
    for name, run in result["grep"].items():
        lines.append(
            f"| baseline: {name} | - | {run['first_s']:.1f} | - | - | - | - | {run['again_s']:.2f} | - | - | - | - | "
            f"({run['bytes'] / 1e6:.1f} MB of output)"
        )
    return lines


if __name__ == "__main__":
    main()
