"""Paged documents beyond FinanceBench: leave one set out with the other sets' text printed in pages.

Not a test. Run:  python -m bench.paged_bench [--data ../shared/data] [--page-chars 2000 3000 4000]

FinanceBench is the only development set whose documents come in pages, so a rule for paged documents
(`Selector.choose(..., on_figures=True)`: where the best hit is on a page of figures, a robust choice
reads in windows; `select/figures.py`) rests on it alone. Here every other set's text documents (`.txt`,
`.md` without a form feed) are printed in pages: a form feed opens a new page at the first line start
once a page holds `--page-chars` characters (about a printed page), and the gold spans move with the
text. Then `loso_bench` as it is (the same answers, each set left out of calibration in turn) scores the
default with the rule and without it, beside BM25 snippets, the best fixed sparse configuration,
grep + windows and one full read. Per set and macro-averaged over sets; a hit covers at least 80% of the
gold characters.
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
from bisect import bisect_right
from pathlib import Path
from typing import Any

from bench.loso_bench import collect, report, tabulate
from sparseread_mcp.locate import LocatorSet
from sparseread_mcp.select.policy import NOT_CHOSEN

REPO = Path(__file__).resolve().parent.parent
PROSE_SUFFIXES = (".txt", ".md")


def paginate(text: str, page_chars: int) -> tuple[str, list[int]]:
    """The text with a form feed at the first line start past every `page_chars` characters of a page,
    and the original offsets the feeds were inserted at."""
    lines = text.split("\n")
    feeds: list[int] = []
    out: list[str] = []
    offset = page_start = 0
    for number, line in enumerate(lines):
        if number and offset - page_start >= page_chars:
            feeds.append(offset)
            page_start = offset
            line = "\f" + line
        out.append(line)
        offset += len(lines[number]) + 1
    return "\n".join(out), feeds


def moved(offset: int, feeds: list[int], *, end: bool = False) -> int:
    """Where an original offset lies after the feeds (a feed at a span's end stays outside it)."""
    return offset + (bisect_right(feeds, offset - 1) if end else bisect_right(feeds, offset))


def move_gold(row: dict[str, Any], feeds: list[int]) -> dict[str, Any]:
    """The question with its gold spans moved with the inserted feeds (every gold field the sets use)."""
    row = dict(row)
    spans = row.get("gold_spans")
    if isinstance(spans, list) and spans and isinstance(spans[0], dict):
        row["gold_spans"] = [
            {**g, "start": moved(int(g["start"]), feeds), "end": moved(int(g["end"]), feeds, end=True)} for g in spans
        ]
    for key in ("gold_spans_merged", "gold_row_spans"):
        pairs = row.get(key)
        if isinstance(pairs, list) and pairs:
            row[key] = [[moved(int(s), feeds), moved(int(e), feeds, end=True)] for s, e in pairs]
    return row


def printed(data: Path, out: Path, page_chars: int) -> dict[str, int]:
    """A copy of `data` in `out` with every set's prose documents printed in pages; the documents paged
    per set."""
    paged: dict[str, int] = {}
    for questions in sorted(data.glob("*/questions.jsonl")):
        folder, target = questions.parent, out / questions.parent.name
        docs = folder / "docs"
        prose = [p for p in docs.iterdir() if p.suffix in PROSE_SUFFIXES] if docs.is_dir() else []
        texts = {p.name: p.read_text(encoding="utf-8") for p in prose}
        if not texts or any("\f" in t for t in texts.values()):
            target.symlink_to(folder.resolve(), target_is_directory=True)  # paged already, or not prose
            continue
        shutil.copytree(folder, target, ignore=shutil.ignore_patterns("questions.jsonl", *texts))
        feeds_of: dict[str, list[int]] = {}
        for name, text in texts.items():
            paged_text, feeds_of[name] = paginate(text, page_chars)
            (target / "docs" / name).write_text(paged_text, encoding="utf-8")
        paged[folder.name] = sum(1 for f in feeds_of.values() if f)
        rows = []
        for line in questions.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            name = Path(str(row.get("doc_file", ""))).name or next(
                (n for n in texts if Path(n).stem == str(row.get("doc_id"))), ""
            )
            rows.append(json.dumps(move_gold(row, feeds_of.get(name, []))))
        (target / "questions.jsonl").write_text("\n".join(rows) + "\n", encoding="utf-8")
    return paged


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--page-chars", type=int, nargs="+", default=[2_000, 3_000, 4_000])
    parser.add_argument("--passage-chars", type=int, default=500)
    args = parser.parse_args(argv)
    locators = LocatorSet()
    locators.semantic = False  # lexical methods only, as `loso_bench --lexical-only`
    live = [m for m in locators.available if m not in NOT_CHOSEN]
    print(f"methods: {', '.join(locators.available)}; exposure at the live focus budget")
    for page_chars in args.page_chars:
        with tempfile.TemporaryDirectory(prefix="paged-bench-") as folder:
            paged = printed(args.data, Path(folder), page_chars)
            rows = collect(Path(folder), locators, args.passage_chars)
            print(f"\n## Prose printed in pages of about {page_chars:,} characters; documents paged per set: {paged}")
            for rule in (True, False):
                print(f"\n### {'with' if rule else 'without'} the rule for pages of figures\n")
                print("\n".join(report(tabulate(rows, live, figures_rule=rule))))


if __name__ == "__main__":
    main()
