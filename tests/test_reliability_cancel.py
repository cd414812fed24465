"""A client that cancels an in-flight call stops the server's work, leaves no record, and keeps its session.

The slow work is a test-only reader (tests/slow_readers.py) whose parse never finishes and never looks at
a deadline, as a native loop would not: it runs in a worker process, and the only way to stop it is to
kill that process. A cancellation that did not reach the worker leaves the process alive, and the test
fails on that, not at a clock.
"""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from flow import answer_record
from mcp import Client
from slow_readers import EndlessReader, process_exists, started_pid

from sparseread_mcp import ReadEngine, Settings
from sparseread_mcp.readers.registry import ReaderRegistry, default_registry
from sparseread_mcp.serve.server import create_server


def endless_engine(root: Path) -> ReadEngine:
    (root / "stuck.slow").write_text("never parsed to the end\n")
    (root / "notes.md").write_text("# Notes\n\nThe ledger keeps MARKER-7 within bounds.\n")
    registry = ReaderRegistry([EndlessReader(), *default_registry().readers])
    return ReadEngine(Settings(roots=(root,)), registry=registry)


async def _started(slow_file: Path) -> int:
    while (pid := started_pid(slow_file)) is None:
        await anyio.sleep(0.02)
    return pid


async def _gone(pid: int) -> None:
    while process_exists(pid):
        await anyio.sleep(0.02)


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_cancelled_call_stops_the_work_records_nothing_and_keeps_the_session(tmp_path: Path, mode: str) -> None:
    """legacy: the SDK client sends `notifications/cancelled` over JSON-RPC streams; auto: the in-process
    client cancels structurally. Either way the worker process running the parse is killed."""
    engine = endless_engine(tmp_path)
    server = create_server(engine.settings, engine=engine)
    async with Client(server, mode=mode) as client:
        await client.call_tool("sro_read", {"target": "notes.md", "intent": {"goal": "ledger bounds"}})
        before = answer_record(await client.call_tool("sro_card", {}))
        assert before is not None

        with anyio.fail_after(60):
            async with anyio.create_task_group() as tg:

                async def doomed() -> None:
                    await client.call_tool("sro_read", {"target": "stuck.slow", "intent": {"goal": "anything"}})
                    raise AssertionError("the endless call returned")

                tg.start_soon(doomed)
                pid = await _started(tmp_path / "stuck.slow")
                tg.cancel_scope.cancel()
            # The worker that ran the parse was killed (it never finishes on its own).
            await _gone(pid)

        # Nothing of the cancelled call was recorded, and the session is usable at once.
        with anyio.fail_after(30):
            after = answer_record(await client.call_tool("sro_card", {}))
            again = await client.call_tool("sro_read", {"target": "notes.md#L3", "intent": {"goal": "marker"}})
        assert after == before
        assert "stuck.slow" not in str(after)
        assert not again.is_error and "MARKER-7" in str(answer_record(again))


@pytest.mark.anyio
async def test_a_parse_past_the_call_limit_is_killed_with_a_typed_error(tmp_path: Path) -> None:
    """A parse that never ends is stopped at the call's limit: its worker is killed, the error names the
    file and the limit, and the next call is served by a fresh worker."""
    (tmp_path / "stuck.slow").write_text("never parsed to the end\n")
    (tmp_path / "notes.md").write_text("# Notes\n\nThe ledger keeps MARKER-7 within bounds.\n")
    settings = Settings(roots=(tmp_path,), call_timeout_seconds=2)
    engine = ReadEngine(settings, registry=ReaderRegistry([EndlessReader(), *default_registry().readers]))
    async with Client(create_server(settings, engine=engine)) as client:
        with anyio.fail_after(60):
            stuck = await client.call_tool("sro_read", {"target": "stuck.slow", "intent": {"goal": "anything"}})
            pid = started_pid(tmp_path / "stuck.slow")
            assert pid is not None
            await _gone(pid)
            after = await client.call_tool("sro_read", {"target": "notes.md#L3"})
    assert stuck.is_error
    text = stuck.content[0].text  # type: ignore[union-attr]
    assert "stuck.slow" in text and "2 s limit" in text and "internal error" not in text
    assert not after.is_error and "MARKER-7" in str(answer_record(after))
