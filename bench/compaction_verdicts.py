"""The compaction bench's verdicts on its table: the bar, the curve's point chosen with a family left out, and
the default against masking (per family at equal retention, and as one setting for every run)."""

from __future__ import annotations

import statistics
from dataclasses import dataclass


@dataclass
class Row:
    reduction: float  # replay tokens vs no compaction (negative = fewer)
    mean: float
    worst: float


CURVE: dict[str, float | None] = {
    "all": None,
    "4": 4.0,
    "3": 3.0,
    "2.5": 2.5,
    "2": 2.0,
    "1.5": 1.5,
    "1": 1.0,
    "0.5": 0.5,
    "0": 0.0,
}
#: K=0 hides every result: the most that any compactor which shortens only tool results can save (the system
#: prompt, the user's words and the agent's own messages are sent whole), at what retention.
MASKS = (0, 1, 2, 3, 5, 10, 20, 30, 40)
CLOSED_MASKS = (1, 2, 3, 5, 10, 20, 30, 40)


def meets(row: Row) -> bool:
    """The bar for the default: retention >= 99% on the family and >= 97% on its worst run."""
    return row.mean >= 0.99 and row.worst >= 0.97


def choose(table: dict[str, dict[str, Row]], families: list[str], names: list[str] | None = None) -> str | None:
    """The most saving of `names` (the caution curve unless given) that meets the bar on every one of
    `families` (macro savings); the curve's most cautious point, or None for other names, if none does."""
    curve = names is None
    names = names or [f"elide caution={label}" for label in CURVE]
    fit = [n for n in names if all(meets(table[f][n]) for f in families)]
    if not fit and not curve:
        return None
    return min(fit or names[:1], key=lambda n: statistics.mean(table[f][n].reduction for f in families))


def leave_one_out(table: dict[str, dict[str, Row]], families: list[str]) -> list[str]:
    lines = [
        "| held-out family | chosen on the others | tokens | mean | worst run | meets the bar |",
        "|---|---|---|---|---|---|",
    ]
    for held in families:
        name = choose(table, [f for f in families if f != held])
        assert name is not None  # the curve always names a point
        row = table[held][name]
        verdict = "yes" if meets(row) else "NO"
        lines.append(f"| {held} | {name} | {row.reduction:+.1%} | {row.mean:.1%} | {row.worst:.1%} | {verdict} |")
    return lines


def against_masking(table: dict[str, dict[str, Row]], default: str, every: int) -> list[str]:
    """Per family: the most saving masking whose retention (mean and worst run) is at least the default's,
    applied at every turn and in the compactors' closed loop (every `every` turns)."""
    lines = [
        "| family | default: tokens / mean / worst | masking every turn at >= that retention | "
        f"masking every {every} turns at >= that retention |",
        "|---|---|---|---|",
    ]
    for family, rows in table.items():
        mine = rows[default]
        cells = []
        for names in ([f"mask K={k}" for k in MASKS], [f"mask K={k}, every {every} turns" for k in CLOSED_MASKS]):
            fair = [n for n in names if rows[n].mean >= mine.mean and rows[n].worst >= mine.worst]
            best = min(fair, key=lambda n: rows[n].reduction) if fair else None
            cells.append(f"{best}: {rows[best].reduction:+.1%}" if best else "none reaches it")
        figures = f"{mine.reduction:+.1%} / {mine.mean:.1%} / {mine.worst:.1%}"
        lines.append(f"| {family} | {figures} | {cells[0]} | {cells[1]} |")
    return lines


def one_mask_setting(table: dict[str, dict[str, Row]], default: str, every: int) -> list[str]:
    """Masking as a user sets it, one K for every run: the most saving K (every turn, and every `every`
    turns) that meets the default's bar on every family, beside the default (per family, then macro)."""
    families = [f for f in table if not f.startswith("macro")]
    lines = ["| setting | " + " | ".join(families) + " | macro |", "|---" * (len(families) + 2) + "|"]
    for names in (
        [default],
        [f"mask K={k}" for k in MASKS],
        [f"mask K={k}, every {every} turns" for k in CLOSED_MASKS],
    ):
        fit = [n for n in names if all(meets(table[f][n]) for f in families)]
        if not fit:  # say how near the most retaining setting came, on the family where it falls short
            last = names[-1]
            short = [
                f"{f} {table[f][last].mean:.2%} / {table[f][last].worst:.2%}"
                for f in families
                if not meets(table[f][last])
            ]
            lines.append(f"| {names[0]} to {last}: none meets the bar on every family ({last}: {'; '.join(short)}) |")
            continue
        best = min(fit, key=lambda n: statistics.mean(table[f][n].reduction for f in families))
        cells = [
            f"{table[f][best].reduction:+.1%} / {table[f][best].mean:.1%} / {table[f][best].worst:.1%}"
            for f in families
        ]
        macro = statistics.mean(table[f][best].reduction for f in families)
        lines.append(f"| {best} | " + " | ".join(cells) + f" | {macro:+.1%} |")
    return lines


def masking_left_out(table: dict[str, dict[str, Row]], default: str, every: int) -> list[str]:
    """Masking calibrated as the default is: for each family, K is chosen on the other families (the most
    saving K, every turn or every `every` turns, that meets the bar on all of them), then scored on the family
    left out, beside the curve's point chosen the same way and the shipped default."""
    families = [f for f in table if not f.startswith("macro")]
    masks = [f"mask K={k}" for k in MASKS] + [f"mask K={k}, every {every} turns" for k in CLOSED_MASKS]
    lines = [
        "| held-out family | masking chosen on the others: tokens / mean / worst | curve chosen on the others | "
        f"shipped default ({default}) |",
        "|---|---|---|---|",
    ]

    def cell(name: str | None, family: str) -> str:
        if name is None:
            return "no K meets the bar on the others"
        row = table[family][name]
        verdict = "" if meets(row) else ", **below the bar**"
        return f"{name}: {row.reduction:+.1%} / {row.mean:.1%} / {row.worst:.1%}{verdict}"

    for held in families:
        others = [f for f in families if f != held]
        lines.append(
            f"| {held} | {cell(choose(table, others, masks), held)} | {cell(choose(table, others), held)} "
            f"| {cell(default, held)} |"
        )
    return lines
