"""A client that cancels an in-flight call stops the server's work, leaves no record, and keeps its session.

The slow work is a test-only reader whose parse runs until it is stopped: it calls the server's own
`checkpoint()` in a loop and never finishes on its own, so a cancellation that does not reach the worker
thread makes the test fail at its time bound instead of passing by luck.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path

import anyio
import anyio.to_thread
import pytest
from mcp import Client

from sparseread_mcp import ReadEngine, Settings
from sparseread_mcp.deadline import TimedOut, checkpoint
from sparseread_mcp.files.artifacts import Artifact
from sparseread_mcp.readers.base import ParsedArtifact
from sparseread_mcp.readers.registry import ReaderRegistry, default_registry
from sparseread_mcp.readers.text import TextReader
from sparseread_mcp.select.configuration import Configuration
from sparseread_mcp.serve.server import create_server
from sparseread_mcp.vocabulary import Action


@dataclass
class EndlessReader:
    """Parses `.slow` files forever, checking the call's deadline as real long loops do."""

    name: str = "endless"
    types: frozenset[str] = frozenset({"text"})
    actions: frozenset[Action] = frozenset({"scout", "focus", "collect", "refine", "verify"})
    binary: bool = False
    configurations: tuple[Configuration, ...] = (Configuration("bm25", "snippets"),)
    started: threading.Event = field(default_factory=threading.Event)
    stopped: threading.Event = field(default_factory=threading.Event)
    release: threading.Event = field(default_factory=threading.Event)
    loops: int = 0
    outcome: list[BaseException] = field(default_factory=list)

    def accepts(self, path: Path) -> bool:
        return path.suffix == ".slow"

    def parse(self, artifact: Artifact, *, passage_chars: int) -> ParsedArtifact:
        self.started.set()
        try:
            while not self.release.wait(0.005):  # a bounded wait per step, like a read of one file
                self.loops += 1
                checkpoint()
        except TimedOut as exc:
            self.outcome.append(exc)
            raise
        finally:
            self.stopped.set()
        return TextReader().parse(artifact, passage_chars=passage_chars)


def endless_engine(root: Path) -> tuple[EndlessReader, ReadEngine]:
    (root / "stuck.slow").write_text("never parsed to the end\n")
    (root / "notes.md").write_text("# Notes\n\nThe ledger keeps MARKER-7 within bounds.\n")
    reader = EndlessReader()
    engine = ReadEngine(Settings(roots=(root,)), registry=ReaderRegistry([reader, *default_registry().readers]))
    return reader, engine


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_cancelled_call_stops_the_work_records_nothing_and_keeps_the_session(tmp_path: Path, mode: str) -> None:
    """legacy: the SDK client sends `notifications/cancelled` over JSON-RPC streams; auto: the in-process
    client cancels structurally. Either way the worker thread stops at its next checkpoint."""
    reader, engine = endless_engine(tmp_path)
    server = create_server(engine.settings, engine=engine)
    async with Client(server, mode=mode) as client:
        await client.call_tool("sro_read", {"target": "notes.md", "intent": {"goal": "ledger bounds"}})
        before = (await client.call_tool("sro_card", {})).structured_content
        assert before is not None

        with anyio.fail_after(20):
            async with anyio.create_task_group() as tg:

                async def doomed() -> None:
                    await client.call_tool("sro_read", {"target": "stuck.slow", "intent": {"goal": "anything"}})
                    raise AssertionError("the endless call returned")

                tg.start_soon(doomed)
                await anyio.to_thread.run_sync(reader.started.wait, 10)
                tg.cancel_scope.cancel()
            # The server-side worker saw the cancellation and stopped (it never finishes on its own).
            await anyio.to_thread.run_sync(reader.stopped.wait, 10)
        assert reader.stopped.is_set() and not reader.release.is_set()
        assert reader.outcome and "cancelled" in str(reader.outcome[0])
        loops = reader.loops

        # Nothing of the cancelled call was recorded, and the session is usable at once.
        with anyio.fail_after(10):
            after = (await client.call_tool("sro_card", {})).structured_content
            again = await client.call_tool("sro_read", {"target": "notes.md#L3", "intent": {"goal": "marker"}})
        assert after == before
        assert "stuck.slow" not in str(after)
        assert not again.is_error and "MARKER-7" in str(again.structured_content)
        assert reader.loops == loops, "the cancelled worker kept running"
