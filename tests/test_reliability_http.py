"""HTTP under load and at its limits, against the installed server on loopback.

The load test reuses bench/load_bench.py's client (mixed reads, a unique marker per session, leak check)
for a short fixed time; the bench itself runs longer and reports the same figures.
"""

from __future__ import annotations

import importlib
import os
import statistics
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from conftest import REPO
from flow import answer_record
from mcp import Client
from test_mcp_transports import running_http_server

SESSIONS = 50
SECONDS = 5.0
#: Each session makes at least one call of every kind (focus, SQL, refine, card), however busy the machine.
CALLS_PER_SESSION = 4
HEADERS = {
    "accept": "application/json, text/event-stream",
    "content-type": "application/json",
    "mcp-protocol-version": "2026-07-28",
}


def load_bench() -> Any:
    if str(REPO) not in sys.path:
        sys.path.insert(0, str(REPO))
    return importlib.import_module("bench.load_bench")


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    root = tmp_path / "root"
    root.mkdir()
    load_bench().corpus(root)
    with running_http_server(root, tmp_path) as url:
        yield url, tmp_path


@pytest.mark.slow
def test_fifty_concurrent_http_sessions_read_without_errors_or_leaks(served: tuple[str, Path]) -> None:
    url, logs = served
    bench = load_bench()
    pid = _listening_server_pid(url)
    by_kind: dict[str, list[float]] = {}
    errors: list[str] = []
    leaks: list[str] = []
    peak = [0.0]

    async def run() -> None:
        until = time.monotonic() + SECONDS
        with anyio.fail_after(SECONDS + 300):  # a hang guard only
            async with anyio.create_task_group() as group:
                for n in range(SESSIONS):
                    group.start_soon(
                        bench.one_client, f"{url}/mcp", n, until, by_kind, errors, leaks, CALLS_PER_SESSION
                    )
                while time.monotonic() < until:
                    peak[0] = max(peak[0], bench.rss_mb(pid))
                    await anyio.sleep(0.25)  # a sampling interval, not a timing assertion
        peak[0] = max(peak[0], bench.rss_mb(pid))

    anyio.run(run)
    latencies = sorted(t for times in by_kind.values() for t in times)
    p99 = latencies[min(len(latencies) - 1, int(0.99 * len(latencies)))]
    print(
        f"\nHTTP load: {SESSIONS} sessions x {SECONDS:.0f} s: {len(latencies)} calls, "
        f"p50 {1000 * statistics.median(latencies):.0f} ms, p99 {1000 * p99:.0f} ms, "
        f"errors {len(errors)}, leaks {len(leaks)}, server peak RSS {peak[0]:.0f} MB"
    )
    # A call that overruns its deadline on a busy machine is refused with the server's typed, actionable
    # error: how often depends on the machine's load (bench/load_bench.py reports it), not on correctness.
    # Any other error fails the test.
    refused = [e for e in errors if "ran past" in e and "was stopped" in e]
    print(f"refused past their deadline: {len(refused)}")
    assert not [e for e in errors if e not in refused], errors[:5]
    assert not leaks, leaks[:5]
    assert len(latencies) >= SESSIONS * CALLS_PER_SESSION, "every session made every kind of call"
    assert "internal error" not in (logs / "server.log").read_text()


def _listening_server_pid(url: str) -> int:
    """The server process: the newest child of this one (the fixture started it)."""
    children = Path(f"/proc/{os.getpid()}/task/{os.getpid()}/children").read_text().split()
    assert children, f"no server process behind {url}"
    return int(children[-1])


def test_an_oversized_request_body_is_refused_before_parsing(served: tuple[str, Path]) -> None:
    url, _ = served
    arguments = {"target": "doc1.md", "intent": {"goal": "x" * (5 * 1024 * 1024)}}  # past the 4 MiB limit
    huge = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "sro_read", "arguments": arguments}}
    response = httpx.post(f"{url}/mcp", json=huge, headers=HEADERS, timeout=30)
    assert response.status_code == 413

    async def a_normal_call() -> str:
        with anyio.fail_after(60):
            async with Client(f"{url}/mcp") as client:
                result = await client.call_tool("sro_read", {"target": "doc1.md#L1", "intent": {"goal": "x" * 1000}})
        return str(answer_record(result))

    assert "Document 1" in anyio.run(a_normal_call)
