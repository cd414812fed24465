"""Generated documents for tests: long enough to read sparsely, with unique marker strings."""

from __future__ import annotations

import random

TOPICS = ["warehouse", "invoice", "turbine", "glacier", "orchard", "satellite", "violin", "harbor", "lantern"]


def long_markdown(sections: int = 60, seed: int = 7) -> str:
    rng = random.Random(seed)
    parts = ["# Field manual", "", "An overview paragraph that introduces the manual.", ""]
    for n in range(1, sections + 1):
        topic = TOPICS[n % len(TOPICS)]
        parts += [f"## Section {n}: {topic}", ""]
        for p in range(3):
            words = " ".join(rng.choice(TOPICS) for _ in range(40))
            parts += [f"Paragraph {p} of section {n} mentions {words}. Unique marker SEC{n}-P{p}-MARK.", ""]
        if n % 10 == 0:
            parts += ["| key | value |", "|-----|-------|", f"| rate{n} | {n * 3}.5% |", ""]
    return "\n".join(parts)


def single_line(sentences: int = 300, seed: int = 3) -> str:
    rng = random.Random(seed)
    return " ".join(
        f"Sentence {i} is about the {rng.choice(TOPICS)} and the {rng.choice(TOPICS)} (ref S{i}X)."
        for i in range(sentences)
    )


#: The question the copper merchants' tariff lines answer (in `ledger_text`, and in tests that write them).
LEDGER_GOAL = "Which harbour did the copper merchants use for the winter tariff?"


def ledger_text() -> str:
    """1,200 numbered entries, each line distinct; every 97th names the copper merchants' winter tariff at
    the north harbour, spread over the file."""
    lines = []
    for k in range(1, 1201):
        if k % 97 == 0:
            lines.append(f"Entry {k}: the copper merchants paid the winter tariff at the north harbour, berth {k}.")
        else:
            lines.append(f"Entry {k}: the orchard council logged {k * 7} bushels and mended the granary roof {k}.")
    return "\n".join(lines) + "\n"
