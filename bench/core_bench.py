"""Core benchmark: evidence hit at exposure (lexical vs BM25) on FinanceBench, and warm read latency.

Not a test. Run:  python -m bench.core_bench [--data ../shared/data] [--budgets 600 1500 3000]

Hit at exposure: a question is a hit when the passages returned within the character budget cover at
least 80% of its gold evidence characters; a page hit when any returned passage lies on a gold page.
Exposure is the evidence text returned (characters). The baseline is one full read of the filing.
Latency: median of warm `sro_read` calls on a ~1 MB document, in-process and through the MCP client,
beside a plain full read of the same file.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import anyio
from mcp import Client

from sparseread_mcp import Intent, ReadEngine, ReadRequest, Settings
from sparseread_mcp.artifacts import load_artifact
from sparseread_mcp.calibrate import covered, select_within
from sparseread_mcp.locate import LOCATORS, Locator
from sparseread_mcp.locate.base import build_query
from sparseread_mcp.readers.base import ParsedArtifact
from sparseread_mcp.readers.text import TextReader
from sparseread_mcp.roots import Roots
from sparseread_mcp.server import create_server
from sparseread_mcp.tokens import TokenCounter

REPO = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Outcome:
    hit: bool
    page_hit: bool
    exposure: int
    coverage: float


def evaluate(parsed: ParsedArtifact, locator: Locator, question: dict[str, object], budget: int) -> Outcome:
    query = build_query([str(question["question"])], [])
    spans = select_within(parsed, locator.rank(parsed, query), budget)
    gold = [(int(g["start"]), int(g["end"])) for g in question["gold_spans"]]  # type: ignore[attr-defined]
    gold_pages = {int(p) + 1 for p in question["gold_pages"]}  # type: ignore[attr-defined]
    pages = {parsed.lines.page_of(s) for s, _ in spans}
    share = covered(spans, gold)
    return Outcome(share >= 0.8, bool(pages & gold_pages), sum(e - s for s, e in spans), share)


def evidence_table(data: Path, budgets: list[int], passage_chars: int) -> list[str]:
    bench = data / "financebench"
    questions = [json.loads(line) for line in (bench / "questions.jsonl").read_text().splitlines()]
    roots = Roots((bench / "docs",))
    reader = TextReader()
    parsed_by_doc: dict[str, ParsedArtifact] = {}
    for q in questions:
        name = Path(q["doc_file"]).name
        if name not in parsed_by_doc:
            parsed_by_doc[name] = reader.parse(load_artifact(roots.resolve(name)), passage_chars=passage_chars)
    full = statistics.median(len(parsed_by_doc[Path(q["doc_file"]).name].artifact.text) for q in questions)
    rows = [
        f"FinanceBench: {len(questions)} questions over {len(parsed_by_doc)} filings; "
        f"passage size {passage_chars} chars; median full read {full:,.0f} chars",
        f"{'method':<10}{'budget':>8}{'hit>=80%':>10}{'page hit':>10}{'median exp':>12}{'exp/full':>10}",
        f"{'full read':<10}{'-':>8}{100.0:>9.1f}%{100.0:>9.1f}%{full:>12,.0f}{1.0:>10.4f}",
    ]
    for name in ("lexical", "bm25"):
        locator = LOCATORS[name]()
        for budget in budgets:
            outcomes = [evaluate(parsed_by_doc[Path(q["doc_file"]).name], locator, q, budget) for q in questions]
            hit = 100 * sum(o.hit for o in outcomes) / len(outcomes)
            page = 100 * sum(o.page_hit for o in outcomes) / len(outcomes)
            exposure = statistics.median(o.exposure for o in outcomes)
            ratio = exposure / full
            rows.append(f"{name:<10}{budget:>8}{hit:>9.1f}%{page:>9.1f}%{exposure:>12,.0f}{ratio:>10.4f}")
    return rows


def latency_table(data: Path, repeat: int) -> list[str]:
    docs = sorted((data / "financebench" / "docs").glob("*.txt"), key=lambda p: -p.stat().st_size)
    with tempfile.TemporaryDirectory() as tmp:
        big = Path(tmp) / "filing-1mb.txt"
        text = ""
        for doc in docs:
            text += doc.read_text(encoding="utf-8")
            if len(text.encode()) >= 1_000_000:
                break
        big.write_text(text[:1_050_000], encoding="utf-8")
        size = big.stat().st_size
        goals = [
            "total revenue for the fiscal year",
            "capital expenditures purchases of property plant equipment",
            "net income attributable to shareholders",
            "long-term debt maturities",
            "dividends paid per share",
            "cash and cash equivalents at end of year",
            "research and development expense",
            "goodwill impairment",
        ]
        counter = TokenCounter()
        baseline = []
        for _ in range(repeat):
            start = time.perf_counter()
            counter.count(big.read_text(encoding="utf-8"))
            baseline.append(time.perf_counter() - start)

        engine = ReadEngine(Settings(roots=(Path(tmp),)))
        start = time.perf_counter()
        engine.read("cold", ReadRequest(target=big.name, intent=Intent(goal=goals[0])))
        cold = time.perf_counter() - start
        warm = []
        for i in range(repeat):
            start = time.perf_counter()
            engine.read(f"s{i}", ReadRequest(target=big.name, intent=Intent(goal=goals[i % len(goals)])))
            warm.append(time.perf_counter() - start)

        async def over_mcp() -> list[float]:
            timings = []
            async with Client(create_server(Settings(roots=(Path(tmp),)))) as client:
                await client.call_tool("sro_read", {"target": big.name, "intent": {"goal": goals[0]}})
                for i in range(repeat):
                    args = {"target": big.name, "intent": {"goal": goals[i % len(goals)] + f" {i}"}}
                    start = time.perf_counter()
                    result = await client.call_tool("sro_read", args)
                    timings.append(time.perf_counter() - start)
                    assert not result.is_error
            return timings

        mcp_warm = anyio.run(over_mcp)
    med = statistics.median
    base = med(baseline)
    return [
        f"Latency on a {size / 1e6:.2f} MB text ({repeat} runs, medians):",
        f"  baseline full read + token count  {1000 * base:8.1f} ms",
        f"  cold sro_read (parse + index)     {1000 * cold:8.1f} ms",
        f"  warm sro_read, in-process         {1000 * med(warm):8.1f} ms  ({med(warm) / base:.2f}x baseline)",
        f"  warm sro_read, MCP client         {1000 * med(mcp_warm):8.1f} ms  ({med(mcp_warm) / base:.2f}x)",
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--budgets", type=int, nargs="+", default=[600, 1500, 3000])
    parser.add_argument("--passage-chars", type=int, default=Settings().passage_chars)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--only", choices=["evidence", "latency"], help="run one part only")
    args = parser.parse_args()
    if args.only != "latency":
        for row in evidence_table(args.data, args.budgets, args.passage_chars):
            print(row)
        print()
    if args.only != "evidence":
        for row in latency_table(args.data, args.repeat):
            print(row)


if __name__ == "__main__":
    main()
