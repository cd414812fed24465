"""A full view that follows sparse reads in its episode comes in smaller pages: the agent is looking for
what the ranked passages missed and stops on the page that holds it, so each page costs at most
AFTER_SPARSE_PAGE_TOKENS. A full view asked for first keeps the budget's pages, and the pages of either are
the whole file, each character once."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from conftest import source_at
from flow import anchor_of, read
from mcp import Client

from sparseread_mcp import Settings
from sparseread_mcp.gate import page_place
from sparseread_mcp.gate.page_place import AFTER_SPARSE_PAGE_TOKENS
from sparseread_mcp.serve.server import create_server

GOAL = "Which harbour did the copper merchants use for the winter tariff?"
BUDGET = 8_000  # the server's default budget, passed only where a test needs to say it


def ledger_text() -> str:
    """Numbered entries, each line distinct; a few name the goal's words, spread over the file."""
    lines = []
    for k in range(1, 1201):
        if k % 97 == 0:
            lines.append(f"Entry {k}: the copper merchants paid the winter tariff at the north harbour, berth {k}.")
        else:
            lines.append(f"Entry {k}: the orchard council logged {k * 7} bushels and mended the granary roof {k}.")
    return "\n".join(lines) + "\n"


async def pages_of(client: Client, first: dict[str, Any]) -> list[dict[str, Any]]:
    pages = [first]
    while pages[-1].get("cursor") and len(pages) < 80:
        pages.append(await read(client, target="ledger.txt", cursor=pages[-1]["cursor"]))
    assert not pages[-1].get("cursor"), "the full view ends"
    return pages


def whole_once(text: str, pages: list[dict[str, Any]]) -> bool:
    """Whether the pages' items cover every character of `text` but blanks, none twice."""
    count = [0] * len(text)
    for item in (item for page in pages for item in page.get("items", [])):
        shown = source_at(text, anchor_of(item))
        start = text.find(shown)
        for i in range(start, start + len(shown)):
            count[i] += 1
    return all(n == 1 for n, ch in zip(count, text, strict=True) if not ch.isspace())


@pytest.mark.anyio
async def test_a_full_view_after_sparse_reads_comes_in_smaller_pages(tmp_path: Path) -> None:
    text = ledger_text()
    (tmp_path / "ledger.txt").write_text(text)
    with anyio.fail_after(120):  # a hang guard only
        async with Client(create_server(Settings(roots=(tmp_path,)))) as client:
            await read(client, target="ledger.txt", intent={"goal": GOAL})
            await read(client, target="ledger.txt", action="refine")
            given_up = await pages_of(
                client, await read(client, target="ledger.txt", intent={"goal": GOAL}, view="full")
            )
        async with Client(create_server(Settings(roots=(tmp_path,)))) as client:
            asked_first = await pages_of(
                client, await read(client, target="ledger.txt", intent={"goal": GOAL}, view="full")
            )
    assert all(page["tokens"] <= AFTER_SPARSE_PAGE_TOKENS for page in given_up)
    assert max(page["tokens"] for page in asked_first) > AFTER_SPARSE_PAGE_TOKENS  # the budget's pages
    assert all(page["tokens"] <= BUDGET for page in asked_first)
    # Either way the pages are the whole file, every character once.
    assert whole_once(text, given_up) and whole_once(text, asked_first)
    assert len(given_up) > len(asked_first)


@pytest.mark.anyio
async def test_a_page_whose_frame_fills_the_smaller_budget_takes_the_calls(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The smaller pages never make a full view impossible: where the frame leaves no room for text within
    them, the page answers within the call's budget, as before."""
    monkeypatch.setattr(page_place, "AFTER_SPARSE_PAGE_TOKENS", 1)  # no frame fits it
    (tmp_path / "ledger.txt").write_text(ledger_text())
    with anyio.fail_after(120):  # a hang guard only
        async with Client(create_server(Settings(roots=(tmp_path,)))) as client:
            await read(client, target="ledger.txt", intent={"goal": GOAL})
            page = await read(client, target="ledger.txt", intent={"goal": GOAL}, view="full", budget_tokens=3000)
    assert page["items"] and page.get("cursor")
    assert 1 < page["tokens"] <= 3000
