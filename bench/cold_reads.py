"""What a reranking model costs a user on a document it has not seen: each read's time, from a new engine.

Not a test. Run:  python -m bench.cold_reads [--data ../shared/data] [--questions 15]

For each long article, a new process (workers and model not started) and engine with an empty vector cache
answers the first N questions asked in other words (bench/data/articles_other_words.jsonl) one after another,
through `ReadEngine.read` (a new session each, as the location bench serves them). The servers, in the same
run:
- the default install: BM25 on plain prose (the route to the hybrid off);
- E5 (the `e5` extra) encoding every candidate passage, as far as the call's encoding time goes (session 27);
- E5 reranking BM25's best `RERANK_PASSAGES` passages (shipped since session 28);
- MiniLM-L6 (the `semantic` extra, where the `e5` extra is not installed) reranking the same, on torch in the
  server process (sessions 28 and before; bench/torch_minilm.py) and in numpy in the workers (since 29).
Printed per article: the first read (the worker starts, the model loads, the passages it needs are encoded),
the second, the median of the rest, all of them together, how many reads found their gold (80% of it shown),
the server process's peak memory, and the memory of the server and its workers together after the reads
(proportional set size: a page that processes share, like a model file mapped by each worker, is split
among them).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

from bench.ablation_bench import patched
from bench.e5_reranker import NO_PROSE_ROUTE, available
from bench.location_ablation import Row, load
from bench.torch_minilm import TorchEmbedder
from sparseread_mcp import Settings
from sparseread_mcp.engine import ReadEngine, ReadRequest
from sparseread_mcp.locate import dense
from sparseread_mcp.models import Intent
from sparseread_mcp.select.calibrate import SUCCESS_SHARE, covered

REPO = Path(__file__).resolve().parent.parent
COLUMN = "articles other words"
#: Server name -> (its patches, the model setting).
SERVERS: dict[str, tuple[list[tuple[Any, str, Any]], str]] = {
    "default install (BM25 on prose)": ([NO_PROSE_ROUTE], "auto"),
    "e5, every passage encoded (session 27)": ([(dense, "RERANK_PASSAGES", 10**9)], "auto"),
    f"e5, BM25's best {dense.RERANK_PASSAGES} reranked (shipped)": ([], "auto"),
    f"MiniLM-L6 on torch in the server, BM25's best {dense.RERANK_PASSAGES} (session 28)": (
        [(dense, "Embedder", TorchEmbedder)],
        dense.DEFAULT_MODEL,
    ),
    f"MiniLM-L6 in numpy in the workers, BM25's best {dense.RERANK_PASSAGES} (semantic extra)": (
        [],
        dense.DEFAULT_MODEL,
    ),
}


@contextmanager
def server(patches: list[tuple[Any, str, Any]]) -> Iterator[None]:
    with ExitStack() as stack:
        for target, name, value in patches:
            stack.enter_context(patched(target, name, value))
        yield


def reads(data: Path, rows: list[Row], model: str) -> list[tuple[float, bool]]:
    """Each question's read time and hit, in order, from one new engine with an empty cache."""
    out: list[tuple[float, bool]] = []
    with tempfile.TemporaryDirectory(prefix="sparseread-cold-") as cache:
        settings = Settings(roots=(data / rows[0].folder,), native_fit_tokens=0, cache_dir=Path(cache))
        engine = ReadEngine(replace(settings, semantic_model=model))
        for number, row in enumerate(rows):
            key = f"cold{number}"
            started = time.perf_counter()
            engine.read(key, ReadRequest(target=row.doc, action="focus", intent=Intent(goal=row.question)))
            seconds = time.perf_counter() - started
            session = engine.sessions.get(key)
            spans = [(d.start, d.end) for episode in session.episodes.values() for d in episode.delivered]
            engine.sessions.drop(key)
            out.append((seconds, covered(spans, row.gold) >= SUCCESS_SHARE))
    return out


def child(data: Path, server_name: str, doc: str, questions: int) -> None:
    """One server on one article, in this (new) process: its reads as JSON on stdout."""
    rows = [row for row in load(data, None) if row.column == COLUMN and row.doc == doc][:questions]
    patches, model = SERVERS[server_name]
    with server(patches):
        timed = reads(data, rows, model)
        tree = tree_megabytes(os.getpid())
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"reads": timed, "peak_mb": peak, "tree_mb": tree}))


def tree_megabytes(root: int) -> float:
    """The proportional set size of `root` and every process under it (its zygote and workers), in MB."""
    parents: dict[int, int] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            parents[int(stat.parent.name)] = int(fields[1])
        except (OSError, IndexError, ValueError):
            continue
    tree, frontier = {root}, [root]
    while frontier:
        parent = frontier.pop()
        children = [pid for pid, ppid in parents.items() if ppid == parent and pid not in tree]
        tree.update(children)
        frontier.extend(children)
    total = 0
    for pid in tree:
        try:
            rollup = Path(f"/proc/{pid}/smaps_rollup").read_text()
        except OSError:
            continue
        total += sum(int(line.split()[1]) for line in rollup.splitlines() if line.startswith("Pss:"))
    return total / 1024


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--questions", type=int, default=15, help="questions per article (15)")
    parser.add_argument("--child", nargs=2, metavar=("SERVER", "DOC"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(args.data, args.child[0], args.child[1], args.questions)
        return
    if not (available() and dense.semantic_available()):
        raise SystemExit("the e5 and semantic extras are both needed: pip install 'sparseread-mcp[e5,semantic]'")
    rows = [row for row in load(args.data, None) if row.column == COLUMN and not row.doc.endswith(".oneline.txt")]
    documents = sorted({row.doc for row in rows})
    print(
        "| server | article | first read (s) | second (s) | median of the rest (s) | all reads (s) | found "
        "| server peak MB | server and workers MB |"
    )
    print("|---" * 9 + "|")
    for name in SERVERS:
        if "on torch" in name and importlib.util.find_spec("sentence_transformers") is None:
            print(f"| {name} | not measured: sentence-transformers and torch are not installed |")
            continue
        for doc in documents:
            command = [sys.executable, "-m", "bench.cold_reads", "--data", str(args.data), "--questions"]
            command += [str(args.questions), "--child", name, doc]
            done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, check=True)
            answer = json.loads(done.stdout.strip().splitlines()[-1])
            timed = [(float(s), bool(h)) for s, h in answer["reads"]]
            rest = statistics.median(seconds for seconds, _ in timed[2:]) if len(timed) > 2 else float("nan")
            found = sum(hit for _, hit in timed)
            print(
                f"| {name} | {Path(doc).stem} | {timed[0][0]:.2f} | {timed[1][0]:.2f} | {rest:.3f} | "
                f"{sum(seconds for seconds, _ in timed):.1f} | {found} of {len(timed)} | {answer['peak_mb']:.0f} "
                f"| {answer['tree_mb']:.0f} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
