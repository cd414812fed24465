"""A full view that follows sparse reads in its episode comes in smaller pages: the agent is looking for
what the ranked passages missed and stops on the page that holds it, so each page costs at most
AFTER_SPARSE_PAGE_TOKENS. A full view asked for first keeps the budget's pages, and the pages of either are
the whole file, each character once."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from docs import LEDGER_GOAL as GOAL
from docs import ledger_text
from flow import pages_of, read, whole_once
from mcp import Client

from sparseread_mcp import Settings
from sparseread_mcp.gate import page_place
from sparseread_mcp.gate.page_place import AFTER_SPARSE_PAGE_TOKENS
from sparseread_mcp.serve.server import create_server

BUDGET = 8_000  # the server's default budget, passed only where a test needs to say it


@pytest.mark.anyio
async def test_a_full_view_after_sparse_reads_comes_in_smaller_pages(tmp_path: Path) -> None:
    text = ledger_text()
    (tmp_path / "ledger.txt").write_text(text)
    with anyio.fail_after(120):  # a hang guard only
        async with Client(create_server(Settings(roots=(tmp_path,)))) as client:
            await read(client, target="ledger.txt", intent={"goal": GOAL})
            await read(client, target="ledger.txt", action="refine")
            given_up = await pages_of(
                client, "ledger.txt", await read(client, target="ledger.txt", intent={"goal": GOAL}, view="full")
            )
        async with Client(create_server(Settings(roots=(tmp_path,)))) as client:
            asked_first = await pages_of(
                client, "ledger.txt", await read(client, target="ledger.txt", intent={"goal": GOAL}, view="full")
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
