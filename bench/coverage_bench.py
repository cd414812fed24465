"""Is coverage's `found` right? A stop signal measured on the held-out half of every set (issue #13, item 2).

Not a test. Run:  python -m bench.coverage_bench [--data ../shared/data]

An agent that stops when a slot's coverage says `found` trusts it to mean "the evidence is held". Every
request of the evaluation half of every set is answered as a default `focus` answers it (the shipped
selector's configuration, at the live focus exposure; the full view when it chooses that), its question
as the one slot; the status is what `protocol.coverage` gives the items shown. Per set and macro: how often
`found` is said, its precision (the items cover >= 80% of the gold characters when it is said), its
recall (said when they do), and the hit rate when it is not said. Beside it, the same for `partial or
found`, the looser signal an agent could use.
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
from sparseread_mcp.protocol.coverage import GOAL_SLOT, status_of, support
from sparseread_mcp.select.calibrate import SUCCESS_SHARE, answer, covered, on_figures, requests
from sparseread_mcp.select.configuration import FULL_VIEW
from sparseread_mcp.select.policy import NOT_CHOSEN
from sparseread_mcp.select.selector import Selector

REPO = Path(__file__).resolve().parent.parent


def run(data: Path, locators: LocatorSet) -> dict[str, Counter[tuple[str, bool]]]:
    selector = Selector.load()
    live = [m for m in locators.available if m not in NOT_CHOSEN]
    budget = exposure_chars(None, 500)
    counts: dict[str, Counter[tuple[str, bool]]] = defaultdict(Counter)
    for request in requests(data, half="evaluation"):
        choice = selector.choose(request.group, request.parsed.type, live, on_figures=on_figures(request, locators))
        text = request.parsed.artifact.text
        if choice.configuration == FULL_VIEW:
            spans = [(0, len(text))]
        else:
            spans, _ = answer(request, locators, choice.configuration, budget)
        hit = covered(spans, request.gold) >= SUCCESS_SHARE
        slot = Slot(id=GOAL_SLOT, question=request.question, aliases=[])
        best = max((support(slot, text[s:e]) for s, e in spans), default=0.0)
        counts[request.set_name][(status_of(best, bool(spans)), hit)] += 1
    return counts


def report(counts: dict[str, Counter[tuple[str, bool]]]) -> list[str]:
    lines = [
        "| set (n) | hit | `found` said | precision of `found` | recall of `found` | hit when not `found` "
        "| `partial`/`found` said | its precision |",
        "|---|---|---|---|---|---|---|---|",
    ]
    keys = ("hit", "said", "precision", "recall", "not found", "loose said", "loose precision")
    columns: dict[str, list[float]] = {key: [] for key in keys}

    def share(a: int, b: int) -> tuple[str, float | None]:
        return (f"{100 * a / b:.0f}% ({a}/{b})", 100 * a / b) if b else ("-", None)

    for set_name, c in sorted(counts.items()):
        n = sum(c.values())
        hits = sum(v for (_, h), v in c.items() if h)
        found_hit, found = c[("found", True)], c[("found", True)] + c[("found", False)]
        loose_hit = found_hit + c[("partial", True)]
        loose = found + c[("partial", True)] + c[("partial", False)]
        cells = {
            "hit": share(hits, n),
            "said": share(found, n),
            "precision": share(found_hit, found),
            "recall": share(found_hit, hits),
            "not found": share(hits - found_hit, n - found),
            "loose said": share(loose, n),
            "loose precision": share(loose_hit, loose),
        }
        for key, (_, value) in cells.items():
            if value is not None:
                columns[key].append(value)
        lines.append(f"| {set_name} ({n}) | " + " | ".join(text for text, _ in cells.values()) + " |")
    macro = [f"{statistics.mean(columns[key]):.0f}%" if columns[key] else "-" for key in keys]
    lines.append("| macro (mean of sets) | " + " | ".join(macro) + " |")
    return lines


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    args = parser.parse_args(argv)
    locators = LocatorSet()
    locators.semantic = False  # `auto` offers no semantic configuration in the shipped table
    counts = run(args.data, locators)
    print("\n".join(report(counts)))
    return {s: {f"{status} {'hit' if hit else 'miss'}": n for (status, hit), n in c.items()} for s, c in counts.items()}


if __name__ == "__main__":
    main()
