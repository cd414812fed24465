"""The installed server, driven by the official MCP client over stdio and streamable HTTP."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import anyio
import pytest
from flow import answer_record, reading_flow
from mcp import Client, StdioServerParameters

from sparseread_mcp import Settings
from sparseread_mcp.serve.server import create_server

pytestmark = pytest.mark.anyio


def installed_command() -> str:
    script = Path(sys.executable).with_name("sparseread-mcp")
    if not script.exists():
        pytest.skip("the sparseread-mcp console script is not installed in this environment")
    return str(script)


def flow_inputs(financebench: Path, question: dict[str, object]) -> tuple[str, str, str]:
    path = Path(str(question["doc_file"])).name
    source = (financebench / "docs" / path).read_text(encoding="utf-8")
    return path, source, str(question["question"])


async def test_stdio_flow_on_a_financebench_filing(
    financebench: Path, financebench_question: dict[str, object]
) -> None:
    path, source, question = flow_inputs(financebench, financebench_question)
    params = StdioServerParameters(
        command=installed_command(), args=["--root", str(financebench / "docs"), "--location", "bm25"]
    )
    with anyio.fail_after(120):
        async with Client(params) as client:
            await reading_flow(client, path, source, question)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def running_http_server(root: Path, log_dir: Path, *extra: str) -> Iterator[str]:
    """The installed server on a free loopback port; yields its base URL, stops it afterwards."""
    port = free_port()
    log_path = log_dir / "server.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [installed_command(), "--http", "--port", str(port), "--root", str(root), "--location", "bm25", *extra],
            stdout=subprocess.DEVNULL,
            stderr=log,
        )
        try:
            deadline = time.monotonic() + 60
            while True:  # bounded: the server either listens or the deadline fails the test
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=1).close()
                    break
                except OSError:
                    if process.poll() is not None or time.monotonic() > deadline:
                        raise AssertionError(f"server did not start: {log_path.read_text()}") from None
                    time.sleep(0.05)
            yield f"http://127.0.0.1:{port}"
        finally:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:  # a server stuck at shutdown must not leak past the test
                process.kill()
                process.wait(timeout=10)


@pytest.fixture
def http_server(financebench: Path, tmp_path: Path) -> Iterator[str]:
    with running_http_server(financebench / "docs", tmp_path) as url:
        yield f"{url}/mcp"


async def test_http_flow_on_a_financebench_filing(
    http_server: str, financebench: Path, financebench_question: dict[str, object]
) -> None:
    path, source, question = flow_inputs(financebench, financebench_question)
    with anyio.fail_after(120):
        async with Client(http_server) as client:
            await reading_flow(client, path, source, question)


async def test_in_memory_flow(financebench: Path, financebench_question: dict[str, object]) -> None:
    path, source, question = flow_inputs(financebench, financebench_question)
    server = create_server(Settings(roots=(financebench / "docs",), location="bm25"))
    async with Client(server) as client:
        await reading_flow(client, path, source, question)


async def test_http_sessions_do_not_share_reading_state(
    http_server: str, financebench_question: dict[str, object]
) -> None:
    path = Path(str(financebench_question["doc_file"])).name
    with anyio.fail_after(60):
        async with Client(http_server, mode="legacy") as first, Client(http_server, mode="legacy") as second:
            await first.call_tool("sro_read", {"target": path, "intent": {"goal": "total revenue"}})
            mine = answer_record(await first.call_tool("sro_card", {}))
            theirs = answer_record(await second.call_tool("sro_card", {}))
    assert mine is not None and theirs is not None
    assert mine["session_intent"]["goal"] == "total revenue" and mine["episodes"]
    assert "session_intent" not in theirs and "episodes" not in theirs  # none: left out


async def test_stateless_http_clients_never_share_a_reading_session(
    http_server: str, financebench_question: dict[str, object]
) -> None:
    path = Path(str(financebench_question["doc_file"])).name
    with anyio.fail_after(60):
        async with Client(http_server) as first, Client(http_server) as second:
            opened = await first.call_tool("sro_read", {"target": path, "intent": {"goal": "total revenue"}})
            handle = answer_record(opened)["session"]  # type: ignore[index]
            assert handle.startswith("rs-")
            mine = answer_record(await first.call_tool("sro_card", {"session": handle}))
            theirs = answer_record(await second.call_tool("sro_card", {}))
            forged = await second.call_tool("sro_card", {"session": "not-a-handle"})
    assert mine is not None and mine["session_intent"]["goal"] == "total revenue" and mine["episodes"]
    assert theirs is not None and "session_intent" not in theirs and "episodes" not in theirs
    assert theirs["session"] != handle
    assert forged.is_error and "not a handle this server issued" in forged.content[0].text  # type: ignore[union-attr]
