"""Can a model stop on coverage? Precision and recall of each coverage state, per set (issue #30, item 4).

Not a test. Run:  python -m bench.coverage_bench [--data ../shared/data] [--half evaluation]

Every request of a half of every development set is answered as a default `focus` answers it (the shipped
selector's configuration at the live focus exposure; the full view when it chooses that), its question as
the one slot, twice:
- on its own document (a positive: the file holds the answer; a hit when the shown passages cover >= 80%
  of the gold characters);
- on another document of the same set (a negative: the next document in sorted order; its answer is the
  first document's, so this file does not hold it, though it may hold the same kind of passage).

For each coverage state (`found`, `partial`, `missing`) and each way of weighing a slot's words (every word
alike, the old way; by its rarity in the file, `slot_weights`), per set and macro:
- `found`: precision = of the answers said `found` (positives and negatives), the share that are hits;
  recall = of the positive hits, the share said `found`;
- `missing`: precision = of the answers said `missing`, the share that are negatives (the file does not
  say it); recall = of the negatives, the share said `missing`;
- `partial`: how often it is said, and the share of those that are hits.
A model that stops on `found` is wrong 1 - precision(found) of the time it stops.
"""

from __future__ import annotations

import argparse
import statistics
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from sparseread_mcp.locate import LocatorSet
from sparseread_mcp.models import Slot
from sparseread_mcp.protocol.actions import exposure_chars
from sparseread_mcp.protocol.coverage import GOAL_SLOT, slot_weights, status_of, support
from sparseread_mcp.select.calibrate import SUCCESS_SHARE, Request, answer, covered, on_figures, requests
from sparseread_mcp.select.configuration import FULL_VIEW
from sparseread_mcp.select.policy import NOT_CHOSEN
from sparseread_mcp.select.selector import Selector

REPO = Path(__file__).resolve().parent.parent
WEIGHINGS = ("every word alike", "by rarity (default)")
#: (weighing, set) -> (state, kind) counts; kind is "hit", "miss" (positives) or "neg" (negatives).
Counts = dict[tuple[str, str], Counter[tuple[str, str]]]


def _statuses(request: Request, locators: LocatorSet, selector: Selector, live: list[str]) -> tuple[list[str], bool]:
    """The coverage status of a default focus on this request's document, per weighing, and whether it hit."""
    choice = selector.choose(request.group, request.parsed.type, live, on_figures=on_figures(request, locators))
    text = request.parsed.artifact.text
    if choice.configuration == FULL_VIEW:
        spans = [(0, len(text))]
    else:
        spans, _ = answer(request, locators, choice.configuration, exposure_chars(None, 500))
    slot = Slot(id=GOAL_SLOT, question=request.question, aliases=[])
    hit = bool(request.gold) and covered(spans, request.gold) >= SUCCESS_SHARE
    out = []
    for weights in (None, slot_weights(request.parsed, slot)):
        best = max((support(slot, text[s:e], weights) for s, e in spans), default=0.0)
        out.append(status_of(best, bool(spans)))
    return out, hit


def run(data: Path, locators: LocatorSet, half: str) -> Counts:
    selector = Selector.load()
    live = [m for m in locators.available if m not in NOT_CHOSEN]
    by_set: dict[str, list[Request]] = defaultdict(list)
    for request in requests(data, half=half):  # type: ignore[arg-type]
        by_set[request.set_name].append(request)
    counts: Counts = defaultdict(Counter)
    for set_name, rows in by_set.items():
        docs = sorted({r.parsed.artifact.path: r.parsed for r in rows}.items())
        for request in rows:
            statuses, hit = _statuses(request, locators, selector, live)
            for weighing, status in zip(WEIGHINGS, statuses, strict=True):
                counts[(weighing, set_name)][(status, "hit" if hit else "miss")] += 1
            if len(docs) < 2:
                continue
            names = [path for path, _ in docs]
            other = docs[(names.index(request.parsed.artifact.path) + 1) % len(docs)][1]
            negative = Request(set_name, request.qid + "/neg", request.question, other, [])
            statuses, _ = _statuses(negative, locators, selector, live)
            for weighing, status in zip(WEIGHINGS, statuses, strict=True):
                counts[(weighing, set_name)][(status, "neg")] += 1
    return counts


def _share(a: int, b: int) -> tuple[str, float | None]:
    return (f"{100 * a / b:.0f}% ({a}/{b})", 100 * a / b) if b else ("-", None)


def report(counts: Counts) -> list[str]:
    keys = ("found said", "found precision", "found recall", "partial said", "partial hits", "missing precision",
            "missing recall", "found on negatives")  # fmt: skip
    lines = []
    for weighing in WEIGHINGS:
        lines += [f"### coverage weighing: {weighing}", "",
                  "| set (positives, negatives) | hit | " + " | ".join(keys) + " |",
                  "|---|" + "---|" * (len(keys) + 1)]  # fmt: skip
        columns: dict[str, list[float]] = {key: [] for key in ("hit", *keys)}
        for (w, set_name), c in sorted(counts.items()):
            if w != weighing:
                continue
            pos = sum(v for (_, k), v in c.items() if k != "neg")
            neg = sum(v for (_, k), v in c.items() if k == "neg")
            hits = sum(v for (_, k), v in c.items() if k == "hit")
            said = {s: sum(v for (st, _), v in c.items() if st == s) for s in ("found", "partial", "missing")}
            cells = {
                "hit": _share(hits, pos),
                "found said": _share(said["found"] - c[("found", "neg")], pos),
                "found precision": _share(c[("found", "hit")], said["found"]),
                "found recall": _share(c[("found", "hit")], hits),
                "partial said": _share(said["partial"], pos + neg),
                "partial hits": _share(c[("partial", "hit")], said["partial"]),
                "missing precision": _share(c[("missing", "neg")], said["missing"]),
                "missing recall": _share(c[("missing", "neg")], neg),
                "found on negatives": _share(c[("found", "neg")], neg),
            }
            for key, (_, value) in cells.items():
                if value is not None:
                    columns[key].append(value)
            lines.append(f"| {set_name} ({pos}, {neg}) | " + " | ".join(text for text, _ in cells.values()) + " |")
        macro = [f"{statistics.mean(v):.0f}%" if (v := columns[key]) else "-" for key in ("hit", *keys)]
        lines += ["| macro (mean of sets) | " + " | ".join(macro) + " |", ""]
    return lines


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--half", default="evaluation", choices=["evaluation", "calibration", "all"])
    args = parser.parse_args(argv)
    locators = LocatorSet()
    locators.semantic = False  # `auto` offers no semantic configuration in the shipped table
    counts = run(args.data, locators, args.half)
    print("\n".join(report(counts)))
    return {f"{w} / {s}": {f"{st} {k}": n for (st, k), n in c.items()} for (w, s), c in counts.items()}


if __name__ == "__main__":
    main()
