"""What leaves the server stays bounded, and a failing session store does not stop reads (issue #12):
tool errors are clamped, `sro_card` fits its budget, SQLite store failures are typed and logged once,
and the SQLite store evicts like the memory store."""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path
from typing import Any

import anyio
import pytest
from docs import long_markdown
from flow import answer_record
from mcp import Client

from sparseread_mcp import ReadEngine, Settings
from sparseread_mcp.gate.ledger import Ledger
from sparseread_mcp.protocol.session import DeliveredItem, Episode, Session
from sparseread_mcp.serve.server import MAX_ERROR_CHARS, create_server
from sparseread_mcp.stores import sqlite as sqlite_store
from sparseread_mcp.stores.sqlite import SqliteSessionStore
from sparseread_mcp.tokens import TokenCounter

pytestmark = pytest.mark.anyio

#: The in-memory client is the server's own client: with `session="limits"` its reading session has this
#: key (see serve/identity.py).
SESSION = "named:limits"


def docs_root(tmp_path: Path) -> Path:
    root = tmp_path / "docs"
    root.mkdir()
    (root / "manual.md").write_text(long_markdown())
    return root


def text_of(result: Any) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


@pytest.mark.parametrize(
    ("tool", "arguments", "cut"),
    [
        ("sro_read", {"target": "manual.md#" + "Q" * 200_000}, True),  # a giant bad anchor (our own error)
        ("sro_preview", {"path": "missing-" + "m" * 200_000 + ".md"}, True),  # a giant missing path
        ("sro_" + "x" * 200_000, {}, True),  # a giant unknown tool name (the SDK's own error)
        ("sro_read", {"target": "manual.md", "action": "z" * 200_000}, False),  # pydantic shortens it already
    ],
)
async def test_huge_errors_come_back_short_with_the_cut_marked(
    tmp_path: Path, tool: str, arguments: dict[str, Any], cut: bool
) -> None:
    server = create_server(Settings(roots=(docs_root(tmp_path),), location="bm25"))
    with anyio.fail_after(60):
        async with Client(server) as client:
            result = await client.call_tool(tool, arguments)
    text = text_of(result)
    assert result.is_error
    assert 0 < len(text) <= MAX_ERROR_CHARS, len(text)
    assert ("characters cut]" in text) is cut


def _episode(session: Session, n: int) -> Episode:
    path = f"notes/file-{n:04d}.md"
    episode = Episode(
        id=session.new_episode_id(),
        path=path,
        type="markdown",
        fingerprint=f"sha256:{n:064x}",
        rev=f"sha256:{n:012x}",
        objective=f"find the turbine settings of unit {n}",
        full_view_tokens=5_000,
        ledger=Ledger(full_view_chars=20_000, sparse_chars=1_200),
    )
    episode.delivered.append(
        DeliveredItem(pointer=f"{path}@sha256:{n:012x}#L10-L24", start=0, end=1_200, slots=(), support={})
    )
    return episode


async def test_sro_card_after_600_episodes_fits_its_budget_and_counts_what_it_left_out(tmp_path: Path) -> None:
    settings = Settings(roots=(docs_root(tmp_path),), location="bm25", session="limits")
    engine = ReadEngine(settings)
    server = create_server(settings, engine=engine)
    counter = TokenCounter()
    with anyio.fail_after(120):
        async with Client(server) as client:
            await client.call_tool("sro_read", {"target": "manual.md", "intent": {"goal": "turbine harbor"}})
            # A long session: 600 more episodes (one real read each would take minutes), as reads add them.
            session = engine.sessions.get(SESSION)
            for n in range(600):
                session.add_episode(_episode(session, n))
            newest = next(reversed(session.episodes))
            default = await client.call_tool("sro_card", {})
            small = await client.call_tool("sro_card", {"budget_tokens": 1_000})
            largest = await client.call_tool("sro_card", {"budget_tokens": 22_500, "trace": True})
    for result, budget in ((default, 8_000), (small, 1_000), (largest, 22_500)):
        card = answer_record(result)
        assert not result.is_error and card is not None
        assert counter.count(text_of(result)) <= budget
        assert card["tokens"] <= budget
        assert card["left_out"]["episodes"] > 0  # 512 episodes are kept, and they do not all fit
        assert card["episodes"][-1]["id"] == newest  # the most recent first to stay
        assert len(card["episodes"]) + card["left_out"]["episodes"] == len(session.episodes)


async def test_reads_and_the_card_go_on_when_the_sqlite_store_is_locked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(sqlite_store, "_BUSY_SECONDS", 0.05)  # a locked file fails fast here, not after 2 s
    db = tmp_path / "state" / "sessions.db"
    server = create_server(Settings(roots=(docs_root(tmp_path),), location="bm25", store=db))
    caplog.set_level(logging.ERROR, logger="sparseread_mcp.stores.sqlite")
    with anyio.fail_after(60):
        async with Client(server) as client:
            first = await client.call_tool("sro_read", {"target": "manual.md", "intent": {"goal": "turbine harbor"}})
            assert not first.is_error
            other = sqlite3.connect(db, isolation_level=None)
            other.execute("BEGIN EXCLUSIVE")  # another process holds the file: every write fails
            try:
                refine = await client.call_tool("sro_read", {"target": "manual.md", "action": "refine"})
                preview = await client.call_tool("sro_preview", {"path": "manual.md"})
                card = await client.call_tool("sro_card", {})
            finally:
                other.execute("ROLLBACK")
                other.close()
            await client.call_tool("sro_read", {"target": "manual.md", "action": "refine"})  # written again
            recovered = await client.call_tool("sro_card", {})
    for result in (refine, preview, card):
        assert not result.is_error, text_of(result)
    failing = answer_record(card)
    assert failing is not None and "memory only" in failing["store"]
    assert len(failing["episodes"]) == 1  # the in-memory session still holds the first read
    failures = [r for r in caplog.records if "StoreUnavailable" in r.getMessage() or "memory only" in r.getMessage()]
    assert len(failures) == 1  # logged once for the outage, not once per call
    assert answer_record(recovered) is not None and answer_record(recovered).get("store") is None


def test_a_store_that_cannot_be_opened_leaves_sessions_in_memory(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where the store's folder should be")
    store = SqliteSessionStore(blocker / "sessions.db")
    session = store.get("s")
    store.commit(session)
    assert store.problem is not None and "memory only" in store.problem
    assert store.get("s") is session and store.keys() == ["s"]


class _Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def time(self) -> float:
        return self.now


def test_the_sqlite_store_evicts_the_least_recently_used_and_the_expired(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = _Clock()
    monkeypatch.setattr(sqlite_store, "time", clock)
    path = tmp_path / "sessions.db"
    store = SqliteSessionStore(path, max_sessions=3, ttl_seconds=3_600)
    for n in range(6):
        clock.now += 1
        session = store.get(f"s{n}")
        session.add_episode(_episode(session, n))
        store.commit(session)
    clock.now += 1
    store.commit(store.get("s3"))  # used again: now the most recent
    clock.now += 1
    store.commit(store.get("s6"))
    reopened = SqliteSessionStore(path, max_sessions=3, ttl_seconds=3_600)
    assert sorted(reopened.keys()) == ["s3", "s5", "s6"]
    assert len(reopened.get("s5").episodes) == 1 and not reopened.get("s0").episodes
    with sqlite3.connect(path) as db:  # evicted sessions' episodes are gone from the file too
        assert db.execute("SELECT count(*) FROM episodes").fetchone()[0] == 2

    clock.now += 3_601  # an hour later every session has expired but the one used now
    reopened.commit(reopened.get("s9"))
    with sqlite3.connect(path) as db:
        assert [k for (k,) in db.execute("SELECT key FROM sessions")] == ["s9"]
