"""Cold preview and warm focus, per reader, before and after the worker boundary, from one run.

Not a test. Run:  python -m bench.isolation_bench --before DIR [--data ../shared/data] [--rounds 3]

`--before` is a checkout of the code before the boundary (e.g. `git worktree add /tmp/before 315f778`).
Each round starts one measuring process per tree (bench/isolation_probe.py), alternating, over the same
files: the first call of a process (after: it starts the worker factory), the first preview of each file
in a fresh engine, and the median of repeated focus calls once the file is parsed. Reported: medians over
the rounds, and after/before ratios.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

#: reader -> (file under the data folder or generated, a goal for focus)
GOALS = {
    "contract.txt": "termination notice period",
    "article.oneline.txt": "who won the game and by what score",
    "filing.pdf": "capital expenditure purchases of property plant and equipment",
    "table.csv": "total",
    "module.py": "where a file is parsed",
    "config.json": "timeout of the service",
    "page.html": "termination of the agreement",
    "server.log": "timeout error on the database",
    "notes.md": "how to run the tests",
}


def corpus(data: Path, folder: Path) -> None:
    shutil.copy(data / "contracts/docs/contract_00.txt", folder / "contract.txt")
    shutil.copy(data / "articles/docs/Super_Bowl_50.oneline.txt", folder / "article.oneline.txt")
    shutil.copy(data / "financebench/pdfs/3M_2018_10K.pdf", folder / "filing.pdf")
    shutil.copy(data / "fetaqa/docs/feta_10005.csv", folder / "table.csv")
    shutil.copy(REPO / "bench/agent_bench.py", folder / "module.py")
    shutil.copy(REPO / "CHANGELOG.md", folder / "notes.md")
    services = {f"service{i}": {"host": f"h{i}", "timeout": i, "retries": [1, 2, 3]} for i in range(3000)}
    (folder / "config.json").write_text(json.dumps({"services": services}, indent=2))
    contract = (data / "contracts/docs/contract_01.txt").read_text()
    paragraphs = "".join(f"<p>{p}</p>\n" for p in contract.split("\n\n"))
    (folder / "page.html").write_text(f"<html><body><h1>Agreement</h1>{paragraphs}</body></html>")
    (folder / "server.log").write_text(
        "".join(
            f"2026-01-01T00:{n // 60 % 60:02d}:{n % 60:02d} {'ERROR' if n % 97 == 0 else 'INFO'} "
            f"{'database timeout after 30s' if n % 97 == 0 else f'request {n} served'}\n"
            for n in range(40_000)
        )
    )


def probe(tree: Path, folder: Path) -> dict[str, object]:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    done = subprocess.run(
        [sys.executable, str(REPO / "bench/isolation_probe.py"), str(folder), json.dumps(GOALS)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=1800,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def report(runs: dict[str, list[dict[str, object]]]) -> str:
    def median(side: str, kind: str, name: str | None = None) -> float:
        values = [r[kind] if name is None else r[kind][name] for r in runs[side]]  # type: ignore[index]
        return statistics.median(values)  # type: ignore[arg-type]

    lines = [
        f"rounds: {len(runs['after'])}; times are medians over rounds, in milliseconds",
        "",
        "| file (reader) | cold preview before | after | ratio | warm focus before | after | ratio |",
        "|---|---|---|---|---|---|---|",
    ]
    cold_ratios, warm_ratios = [], []
    for name in sorted(GOALS):
        cb, ca = median("before", "cold_preview", name), median("after", "cold_preview", name)
        wb, wa = median("before", "warm_focus", name), median("after", "warm_focus", name)
        cold_ratios.append(ca / cb)
        warm_ratios.append(wa / wb)
        lines.append(
            f"| {name} | {cb * 1000:.1f} | {ca * 1000:.1f} | {ca / cb:.2f}x | {wb * 1000:.2f} | {wa * 1000:.2f} "
            f"| {wa / wb:.2f}x |"
        )
    lines.append(
        f"| median over files | | | {statistics.median(cold_ratios):.2f}x | | | {statistics.median(warm_ratios):.2f}x |"
    )
    fb, fa = median("before", "first_call"), median("after", "first_call")
    lines += ["", f"first call of a process (after: starts the worker factory): {fb * 1000:.0f} -> {fa * 1000:.0f} ms"]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=True, help="a checkout of the code before the worker boundary")
    parser.add_argument("--data", default=str(REPO.parent / "shared" / "data"))
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    runs: dict[str, list[dict[str, object]]] = {"before": [], "after": []}
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        corpus(Path(args.data), folder)
        for _ in range(args.rounds):
            runs["before"].append(probe(Path(args.before), folder))
            runs["after"].append(probe(REPO, folder))
    print(report(runs))


if __name__ == "__main__":
    main()
