"""A focus on a paged document whose best hits are spread over many pages (the ranking cannot tell which
page holds the evidence) shows the best sentence of each page, so one budget reaches more pages than
whole passages would; a ranking that clearly prefers one page keeps whole passages there."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import anyio
import pytest
from flow import call
from mcp import Client

from sparseread_mcp import Settings
from sparseread_mcp.serve.server import create_server

pytestmark = pytest.mark.anyio

FILLER = "harbour ledger copper orchard festival quarry railway lantern meadow council bridge winter".split()  # noqa: SIM905
GOAL = "What was the dividend payout ratio approved by the board?"


def _page(rng: random.Random, planted: str | None) -> str:
    lines = [" ".join(rng.choice(FILLER) for _ in range(12)) + "." for _ in range(40)]
    if planted:
        lines[20] = planted
    return "\n".join(lines)


def _filing(planted: dict[int, str], pages: int = 14) -> str:
    rng = random.Random(5)
    return "\n\f".join(_page(rng, planted.get(n)) for n in range(pages)) + "\n"


def _mention(n: int) -> str:
    return f"In segment {n} the board approved a dividend payout ratio of {20 + n} percent for the year."


async def _focus(root: Path, name: str) -> dict[str, Any]:
    with anyio.fail_after(120):  # a hang guard only
        async with Client(create_server(Settings(roots=(root,)))) as client:
            return await call(client, "sro_read", {"target": name, "intent": {"goal": GOAL}})


def _texts(record: dict[str, Any]) -> str:
    return "\n".join(str(item.get("text", "")) for item in record.get("items", []))


async def test_hits_spread_over_pages_reach_each_pages_best_sentence(tmp_path: Path) -> None:
    pages = (1, 3, 5, 7, 9, 11)
    (tmp_path / "filing.txt").write_text(_filing({n: _mention(n) for n in pages}))
    record = await _focus(tmp_path, "filing.txt")
    shown = _texts(record)
    reached = [n for n in pages if _mention(n) in shown]
    # Whole 500-character passages fit three in the focus budget; sentences reach (nearly) every page.
    assert len(reached) >= 5, (reached, record)


async def test_one_clearly_best_page_keeps_whole_passages(tmp_path: Path) -> None:
    strong = " ".join(_mention(4) for _ in range(3))
    (tmp_path / "filing.txt").write_text(_filing({4: strong, 9: "A dividend was paid."}))
    record = await _focus(tmp_path, "filing.txt")
    best = str(record["items"][0].get("text", ""))
    assert _mention(4) in best
    assert strong in best and best.strip() != strong  # the whole passage around it, not its sentences alone
