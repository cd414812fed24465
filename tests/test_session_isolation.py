"""Sessions never cross: each stdio server has its own session, a persistent store resumes one only
when told its name, HTTP session ids are bound to the client that opened them, a deleted session is
gone, and a compaction's pointer checks run in a session of their own. Driven through the official MCP
client over the transport each case is about.
"""

from __future__ import annotations

import os
import sqlite3
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import httpx
import httpx2
import pytest
from flow import answer_record, answer_text
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from test_mcp_transports import running_http_server

pytestmark = pytest.mark.anyio

REPO = Path(__file__).resolve().parents[1]
HANG_GUARD = 90
NOTE = "# Notes\n\nThe harbor turbine spins at 42 rpm.\n"


def _stdio(root: Path, store: Path, *extra: str) -> StdioServerParameters:
    """This tree's server over stdio (`python -m sparseread_mcp`), on `store`."""
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "sparseread_mcp", "--root", str(root), "--store", str(store), "--location", "bm25", *extra],
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )


@pytest.fixture
def notes(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    root.mkdir()
    (root / "notes.md").write_text(NOTE)
    return root


async def test_two_stdio_servers_on_one_store_never_share_a_session(notes: Path, tmp_path: Path) -> None:
    """Before: both were the session `connection`, so the second saw the first's goal and was told the
    file's full view "was already delivered"."""
    store = tmp_path / "sessions.db"
    with anyio.fail_after(HANG_GUARD):
        async with Client(_stdio(notes, store)) as first, Client(_stdio(notes, store)) as second:
            mine = await first.call_tool("sro_read", {"target": "notes.md", "intent": {"goal": "harbor turbine"}})
            assert "42 rpm" in answer_text(mine)
            theirs = await second.call_tool("sro_read", {"target": "notes.md", "view": "full"})
            card = answer_record(await second.call_tool("sro_card", {}))
    assert "already delivered" not in answer_text(theirs) and "42 rpm" in answer_text(theirs)
    assert card is not None and "session_intent" not in card, card


async def test_a_stored_session_is_resumed_only_by_its_name(notes: Path, tmp_path: Path) -> None:
    store = tmp_path / "sessions.db"
    with anyio.fail_after(HANG_GUARD):
        async with Client(_stdio(notes, store, "--session", "turbines")) as client:
            await client.call_tool("sro_read", {"target": "notes.md", "intent": {"goal": "harbor turbine"}})
        async with Client(_stdio(notes, store)) as unnamed:
            fresh = answer_record(await unnamed.call_tool("sro_card", {}))
        async with Client(_stdio(notes, store, "--session", "turbines")) as named:
            resumed = answer_record(await named.call_tool("sro_card", {}))
    assert fresh is not None and "session_intent" not in fresh
    assert resumed is not None and resumed["session_intent"]["goal"] == "harbor turbine"


@asynccontextmanager
async def legacy_client(url: str, authorization: str | None = None) -> AsyncIterator[tuple[Client, list[str]]]:
    """A stateful (initialize-handshake) client, and the session ids its server answered with."""
    ids: list[str] = []

    async def note(response: httpx2.Response) -> None:
        if (found := response.headers.get("mcp-session-id")) and found not in ids:
            ids.append(found)

    headers = {"authorization": authorization} if authorization else {}
    timeout = httpx2.Timeout(30, read=300)
    async with (
        httpx2.AsyncClient(headers=headers, timeout=timeout, event_hooks={"response": [note]}) as http,
        Client(streamable_http_client(url, http_client=http), mode="legacy") as client,
    ):
        yield client, ids


async def stateless_card(url: str, headers: dict[str, str]) -> dict[str, object]:
    """sro_card from a stateless (2026-07-28) client whose every request carries `headers`."""
    async with (
        httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=300)) as http,
        Client(streamable_http_client(url, http_client=http)) as client,
    ):
        card = answer_record(await client.call_tool("sro_card", {}))
    assert card is not None
    return card


def legacy_card_request(url: str, session_id: str, authorization: str | None = None) -> httpx.Response:
    """A raw sro_card call in the stateful session `session_id` (as a client that copied the id would send)."""
    headers = {
        "accept": "application/json, text/event-stream",
        "content-type": "application/json",
        "mcp-protocol-version": "2025-11-25",
        "mcp-session-id": session_id,
        **({"authorization": authorization} if authorization else {}),
    }
    call = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "sro_card", "arguments": {}}}
    return httpx.post(url, json=call, headers=headers, timeout=30)


@pytest.fixture
def served(notes: Path, tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """The server over HTTP with a SQLite store, so what it keeps of a session can be looked at."""
    store = tmp_path / "http-sessions.db"
    with running_http_server(notes, tmp_path, "--store", str(store)) as url:
        yield f"{url}/mcp", store


def stored_keys(store: Path) -> list[str]:
    with sqlite3.connect(store) as db:
        return [key for (key,) in db.execute("SELECT key FROM sessions")]


async def test_a_stateless_request_naming_another_clients_session_reads_nothing_of_it(
    served: tuple[str, Path],
) -> None:
    """Before: a 2026-07-28 (stateless) request carrying a stateful client's `mcp-session-id` header read
    that client's reading session, while it was open and after its client deleted it."""
    url, _ = served
    with anyio.fail_after(HANG_GUARD):
        async with legacy_client(url) as (victim, ids):
            await victim.call_tool("sro_read", {"target": "notes.md", "intent": {"goal": "harbor turbine"}})
            own = answer_record(await victim.call_tool("sro_card", {}))
            during = await stateless_card(url, {"mcp-session-id": ids[0]})
        after = await stateless_card(url, {"mcp-session-id": ids[0]})
    assert own is not None and own["session_intent"]["goal"] == "harbor turbine"  # type: ignore[index]
    for seen in (during, after):
        assert "session_intent" not in seen and "episodes" not in seen, seen


async def test_a_deleted_session_is_gone(served: tuple[str, Path]) -> None:
    """Before: the client's DELETE ended the transport, but its reading session stayed in the store."""
    url, store = served
    with anyio.fail_after(HANG_GUARD):
        async with legacy_client(url) as (client, ids):
            await client.call_tool("sro_read", {"target": "notes.md", "intent": {"goal": "harbor turbine"}})
            assert any(ids[0] in key for key in stored_keys(store))
        # The client deleted its session on the way out: nothing of it is kept, and naming it opens nothing.
        assert not any(ids[0] in key for key in stored_keys(store)), stored_keys(store)
        assert legacy_card_request(url, ids[0]).status_code == 404
        assert not any(ids[0] in key for key in stored_keys(store))


async def test_a_session_id_is_worthless_with_another_credential(notes: Path, tmp_path: Path) -> None:
    """Behind an authenticating proxy (no token of our own) each user sends their own credential: a
    request with another credential that names a user's session id is answered as if it did not exist.
    Before: it was served in that session, and read its state."""
    with running_http_server(notes, tmp_path) as base, anyio.fail_after(HANG_GUARD):
        url = f"{base}/mcp"
        async with legacy_client(url, "Bearer alice") as (alice, ids):
            await alice.call_tool("sro_read", {"target": "notes.md", "intent": {"goal": "harbor turbine"}})
            stolen = legacy_card_request(url, ids[0], "Bearer mallory")
            hers = legacy_card_request(url, ids[0], "Bearer alice")
    assert stolen.status_code == 404 and "harbor turbine" not in stolen.text
    assert hers.status_code == 200 and "harbor turbine" in hers.text
