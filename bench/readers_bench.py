"""Reader benchmarks: table QA (FeTaQA), code localisation (SWE-bench snapshots), PDF page hit
(FinanceBench PDFs), and preview latency on a 500-page PDF and a 2,000-file repository.

Not a test. Run:  python -m bench.readers_bench [--data ../shared/data] [--only tables|code|pdf|latency]

Every figure sits beside its baseline from the same run: a full read of the table, the gold file or the
filing, and for latency a plain extraction or walk of the same input. Timings are medians.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from sparseread_mcp import Intent, ReadEngine, ReadRequest, Settings
from sparseread_mcp.locate import LocatorSet
from sparseread_mcp.locate.base import build_query
from sparseread_mcp.select.calibrate import covered, select_within

REPO = Path(__file__).resolve().parent.parent


def tables(data: Path, budgets: list[int]) -> list[str]:
    """FeTaQA: share of questions whose highlighted cells are >= 80% inside the returned rows."""
    folder = data / "fetaqa"
    questions = [json.loads(line) for line in (folder / "questions.jsonl").read_text().splitlines()]
    engine = ReadEngine(Settings(roots=(folder / "docs",), native_fit_tokens=0))
    locator = LocatorSet().get("bm25")
    full = statistics.median(len((folder / q["doc_file"]).read_text()) for q in questions)
    rows = [
        f"FeTaQA: {len(questions)} questions; median table {full:,.0f} chars (the full-read baseline)",
        f"{'budget':>8}{'cell hit':>10}{'row hit':>10}{'median exp':>12}{'exp/full':>10}",
    ]
    for budget in budgets:
        hits = row_hits = 0
        exposures = []
        for q in questions:
            parsed = engine.open(Path(q["doc_file"]).name)
            spans = select_within(parsed, locator.rank(parsed, build_query([q["question"]], [])), budget)
            cells = [(c["start"], c["end"]) for c in q["gold_cells"]]
            hits += covered(spans, cells) >= 0.8
            row_hits += covered(spans, [tuple(s) for s in q["gold_row_spans"]]) >= 0.8
            exposures.append(sum(e - s for s, e in spans))
        n = len(questions)
        exposure = statistics.median(exposures)
        rows.append(
            f"{budget:>8}{100 * hits / n:>9.1f}%{100 * row_hits / n:>9.1f}%{exposure:>12,.0f}{exposure / full:>10.3f}"
        )
    return rows


def materialize(swebench: Path, instance: str, dest: Path) -> None:
    subprocess.run(
        [sys.executable, str(swebench / "materialize_swebench.py"), instance, str(dest)],
        check=True,
        capture_output=True,
        timeout=300,
    )


def code(data: Path) -> list[str]:
    """SWE-bench: gold file in the top 5 files for the issue text; gold function among the items."""
    swebench = data / "swebench"
    questions = [json.loads(line) for line in (swebench / "questions.jsonl").read_text().splitlines()]
    top5 = located = 0
    exposures, gold_sizes = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for q in questions:
            dest = Path(tmp) / q["instance_id"]
            materialize(swebench, q["instance_id"], dest)
            engine = ReadEngine(Settings(roots=(dest,)))
            inventory = engine.inventory(".")
            index = engine.file_index(inventory)
            ranked = [entry.path for entry, _ in index.rank(list(build_query([q["question"]], []).terms))[:5]]
            top5 += any(g in ranked for g in q["gold_files"])
            pack = engine.read(
                "bench", ReadRequest(target=".", intent=Intent(goal=q["question"][:8000]), budget_tokens=4000)
            )
            functions = [f for f in q["gold_functions"] if f["start_line"]]
            hunks = q["gold_hunks"]
            spans = functions or hunks
            located += any(
                item.pointer.split("@")[0] == span["path"]
                and item.lines[0] <= span["end_line"]
                and span["start_line"] <= item.lines[1]
                for item in pack.items
                for span in spans
            )
            exposures.append(pack.exposure.payload_chars)
            gold_sizes.append(sum((dest / g).stat().st_size for g in q["gold_files"]))
    n = len(questions)
    spent, gold = statistics.median(exposures), statistics.median(gold_sizes)
    return [
        f"SWE-bench (flask, requests, pytest): {n} issues, each against its repository snapshot",
        f"  gold file in top 5 files: {100 * top5 / n:.1f}%",
        f"  gold function (or hunk) inside a returned item (budget 4,000 tokens): {100 * located / n:.1f}%",
        f"  median exposure {spent:,.0f} chars vs reading the gold file alone {gold:,.0f} chars ({spent / gold:.2f}x)",
    ]


def pdf(data: Path, budgets: list[int]) -> list[str]:
    """FinanceBench PDFs: a page hit when a returned passage lies on a gold page."""
    folder = data / "financebench"
    questions = [json.loads(line) for line in (folder / "questions.jsonl").read_text().splitlines()]
    engine = ReadEngine(Settings(roots=(folder / "pdfs",)))
    locator = LocatorSet().get("bm25")
    full = statistics.median(len(engine.open(Path(q["pdf_file"]).name).artifact.text) for q in questions)
    rows = [
        f"FinanceBench PDFs: {len(questions)} questions; median extracted filing {full:,.0f} chars",
        f"{'budget':>8}{'page hit':>10}{'median exp':>12}{'exp/full':>10}",
    ]
    for budget in budgets:
        hits, exposures = 0, []
        for q in questions:
            parsed = engine.open(Path(q["pdf_file"]).name)
            spans = select_within(parsed, locator.rank(parsed, build_query([q["question"]], [])), budget)
            pages = {parsed.lines.page_of(s) for s, _ in spans}
            hits += bool(pages & {p + 1 for p in q["gold_pages"]})
            exposures.append(sum(e - s for s, e in spans))
        exposure = statistics.median(exposures)
        rows.append(f"{budget:>8}{100 * hits / len(questions):>9.1f}%{exposure:>12,.0f}{exposure / full:>10.4f}")
    return rows


def latency(data: Path, repeat: int) -> list[str]:
    import pymupdf

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        big = pymupdf.open()
        for source in sorted((data / "financebench" / "pdfs").glob("*.pdf")):
            with pymupdf.open(source) as part:
                big.insert_pdf(part)
            if big.page_count >= 500:
                break
        big.delete_pages(range(500, big.page_count))
        pdf_path = Path(tmp) / "big.pdf"
        big.save(pdf_path)
        big.close()
        repo = Path(tmp) / "repo"
        swebench = data / "swebench"
        instances = [
            json.loads(line)["instance_id"]
            for line in (swebench / "questions.jsonl").read_text().splitlines()
            if "pytest" in line
        ]
        files = 0
        for instance in instances:
            materialize(swebench, instance, repo / instance)
            files = sum(1 for p in repo.rglob("*") if p.is_file())
            if files >= 2000:
                break
        rows.append(_latency_row("500-page PDF", Path(tmp), "big.pdf", repeat, baseline=lambda: _extract(pdf_path)))
        rows.append(
            _latency_row(f"{files}-file repository", Path(tmp), "repo", repeat, baseline=lambda: _walk_read(repo))
        )
    return ["Preview latency (medians; cold = fresh server, warm = same server again):", *rows]


def _latency_row(label: str, root: Path, path: str, repeat: int, *, baseline: object) -> str:
    colds, warms, bases = [], [], []
    for _ in range(max(1, repeat // 4)):
        engine = ReadEngine(Settings(roots=(root,)))
        start = time.perf_counter()
        engine.preview("bench", path)
        colds.append(time.perf_counter() - start)
        for _ in range(repeat):
            start = time.perf_counter()
            engine.preview("bench", path)
            warms.append(time.perf_counter() - start)
        start = time.perf_counter()
        baseline()  # type: ignore[operator]
        bases.append(time.perf_counter() - start)
    med = statistics.median
    return (
        f"  {label:<24} cold {1000 * med(colds):8.0f} ms   warm {1000 * med(warms):7.1f} ms   "
        f"baseline (plain full read) {1000 * med(bases):8.0f} ms   warm/baseline {med(warms) / med(bases):.3f}"
    )


def _extract(path: Path) -> int:
    import pymupdf

    with pymupdf.open(path) as document:
        return sum(len(page.get_text()) for page in document)


def _walk_read(root: Path) -> int:
    return sum(len(p.read_bytes()) for p in root.rglob("*") if p.is_file())


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--only", choices=["tables", "code", "pdf", "latency"])
    parser.add_argument("--repeat", type=int, default=8)
    args = parser.parse_args()
    parts = {
        "tables": lambda: tables(args.data, [300, 600, 1200]),
        "code": lambda: code(args.data),
        "pdf": lambda: pdf(args.data, [600, 1500, 3000]),
        "latency": lambda: latency(args.data, args.repeat),
    }
    for name, run in parts.items():
        if args.only in (None, name):
            for row in run():
                print(row, flush=True)
            print(flush=True)


if __name__ == "__main__":
    main()
