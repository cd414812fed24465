"""Per-call time limits and client cancellation stop the work at its next checkpoint."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from mcp import Client

from sparseread_mcp import Intent, ReadEngine, ReadRequest, Settings
from sparseread_mcp.deadline import TimedOut, deadline
from sparseread_mcp.serve.server import create_server


def tree(root: Path) -> None:
    for i in range(60):
        folder = root / f"pkg{i}"
        folder.mkdir()
        for k in range(10):
            (folder / f"m{k}.py").write_text(f"def f{k}():\n    return 'NEEDLE-{i}-{k}'\n")


@pytest.mark.anyio
async def test_a_call_past_its_limit_is_stopped_with_a_clear_error(tmp_path: Path) -> None:
    tree(tmp_path)
    server = create_server(Settings(roots=(tmp_path,), call_timeout_seconds=0.0))
    async with Client(server) as client:
        result = await client.call_tool("sro_read", {"target": ".", "intent": {"needles": ["NEEDLE"]}})
    assert result.is_error
    assert "ran past its 0 s limit" in result.content[0].text  # type: ignore[union-attr]


def test_cancellation_stops_the_worker_at_its_next_checkpoint(tmp_path: Path) -> None:
    tree(tmp_path)
    engine = ReadEngine(Settings(roots=(tmp_path,)))
    outcome: list[BaseException | None] = []

    def work() -> None:
        with deadline(3600) as limit:
            limit.cancelled.set()  # the client went away before the walk began
            try:
                engine.read("s", ReadRequest(target=".", intent=Intent(needles=["NEEDLE"])))
                outcome.append(None)
            except TimedOut as exc:
                outcome.append(exc)

    thread = threading.Thread(target=work)
    thread.start()
    thread.join(timeout=30)
    assert outcome and isinstance(outcome[0], TimedOut) and "cancelled" in str(outcome[0])
