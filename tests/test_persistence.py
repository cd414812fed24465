"""Sessions survive a restart on the SQLite store; a killed server loses nothing committed."""

from __future__ import annotations

import signal
import subprocess
from pathlib import Path

import anyio
import pytest
from docs import long_markdown
from flow import answer_record
from mcp import Client, StdioServerParameters
from test_mcp_transports import installed_command

from sparseread_mcp import Intent, ReadEngine, ReadRequest, Settings


def test_a_restarted_engine_keeps_episodes_ledgers_and_cursors(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "manual.md").write_text(long_markdown())
    settings = Settings(roots=(tmp_path / "docs",), store=tmp_path / "state" / "sessions.db")
    first = ReadEngine(settings)
    focus = first.read("s", ReadRequest(target="manual.md", intent=Intent(goal="turbine harbor")))
    paged = first.read("s", ReadRequest(target="manual.md", view="full", budget_tokens=1500))
    assert paged.cursor
    del first  # the process goes away; only the file remains

    second = ReadEngine(settings)
    card = second.card("s")
    assert card.session_intent is not None and card.session_intent.goal == "turbine harbor"
    episode = next(e for e in card.episodes if e.id == focus.episode.id)
    assert episode.episode_chars == focus.exposure.episode_chars
    refine = second.read("s", ReadRequest(target="manual.md", action="refine"))
    assert not {i.anchor for i in refine.items} & {i.anchor for i in focus.items}  # still never resent
    nxt = second.read("s", ReadRequest(target="manual.md", cursor=paged.cursor, budget_tokens=1500))
    (first, last), (start, end) = paged.items[0].lines, nxt.items[0].lines
    assert nxt.items and (end < first or start > last)  # the next page: text the first page did not send


@pytest.mark.anyio
async def test_a_killed_server_restarts_with_its_evidence_records(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "manual.md").write_text(long_markdown())
    store = tmp_path / "sessions.db"
    args = ["--root", str(tmp_path / "docs"), "--store", str(store), "--session", "manual-work"]
    with anyio.fail_after(60):
        async with Client(StdioServerParameters(command=installed_command(), args=args)) as client:
            result = await client.call_tool("sro_read", {"target": "manual.md", "intent": {"goal": "violin lantern"}})
            pointers = [i["pointer"] for i in answer_record(result)["items"]]  # type: ignore[index]
    # Kill a second server hard mid-life: what it committed must still be readable afterwards.
    with subprocess.Popen([installed_command(), *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE) as process:
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=10)
    with anyio.fail_after(60):
        async with Client(StdioServerParameters(command=installed_command(), args=args)) as client:
            card = answer_record(await client.call_tool("sro_card", {}))
    assert card is not None and card["session_intent"]["goal"] == "violin lantern"
    assert set(pointers) <= set(card["pointers"])
