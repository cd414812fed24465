"""The persistent session stores (a SQLite file, a real redis-server on loopback) write one serialization,
`stores.fields`, with a format version: a session written in another format is dropped, never misread."""

from __future__ import annotations

import ast
import json
import logging
import sqlite3
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from test_redis_store import add_episode, running_redis

import sparseread_mcp
from sparseread_mcp.models import Intent, Slot
from sparseread_mcp.protocol.session import CallRecord, DeliveredItem, Session
from sparseread_mcp.stores import SessionStore, open_session_store
from sparseread_mcp.stores.fields import FORMAT, FORMAT_VERSION, apply_fields, foreign_format, session_fields
from sparseread_mcp.stores.redis_store import RedisSessionStore
from sparseread_mcp.stores.sqlite import SqliteSessionStore

#: A file name with a byte that is not UTF-8, as a Linux path holds it (a lone surrogate).
UNDECODABLE = "caf\udce9.md"


@dataclass
class Backend:
    """A persistent store as a restarted server (SQLite) or another replica (Redis) opens it, and the
    raw fields it holds, written and read around the store as another release would."""

    name: str
    open: Callable[[], SessionStore]
    plant: Callable[[str, dict[str, str]], None]
    stored: Callable[[str], dict[str, str]]


def _sqlite(path: Path) -> Backend:
    def plant(key: str, fields: dict[str, str]) -> None:
        state = {k: v for k, v in fields.items() if not k.startswith("ep:")}
        rows = [(k.removeprefix("ep:"), key, v) for k, v in fields.items() if k.startswith("ep:")]
        SqliteSessionStore(path)  # the schema
        with sqlite3.connect(path) as db:
            db.execute("INSERT INTO sessions VALUES (?, ?, ?)", (key, json.dumps(state), time.time()))
            db.executemany("INSERT INTO episodes VALUES (?, ?, ?)", rows)

    def stored(key: str) -> dict[str, str]:
        with sqlite3.connect(path) as db:
            row = db.execute("SELECT state FROM sessions WHERE key = ?", (key,)).fetchone()
            episodes = db.execute("SELECT id, state FROM episodes WHERE session = ?", (key,)).fetchall()
        return {**(json.loads(row[0]) if row else {}), **{f"ep:{i}": s for i, s in episodes}}

    return Backend("sqlite", lambda: open_session_store(path), plant, stored)


def _redis(url: str) -> Backend:
    import redis

    client = redis.Redis.from_url(url, decode_responses=True)

    def plant(key: str, fields: dict[str, str]) -> None:
        client.hset(f"sparseread:session:{key}", mapping={**fields, "v": "1"})

    def stored(key: str) -> dict[str, str]:
        fields: dict[str, str] = client.hgetall(f"sparseread:session:{key}")  # type: ignore[assignment]
        fields.pop("v", None)
        return fields

    return Backend("redis", lambda: open_session_store(url), plant, stored)


_databases = iter(range(16))


@pytest.fixture(scope="module")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with running_redis(tmp_path_factory.mktemp("redis")) as url:
        yield url.removesuffix("/0")


@pytest.fixture(params=["sqlite", "redis"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Backend:
    if request.param == "sqlite":
        return _sqlite(tmp_path / "state" / "sessions.db")
    server = request.getfixturevalue("redis_server")
    return _redis(f"{server}/{next(_databases)}")  # a database of this test's own


def _full_session(store: SessionStore, key: str = "k") -> Session:
    session = store.get(key)
    session.intent = Intent(goal="turbine harbor", slots=[Slot(id="rate", question="which rate?")])
    session.seen[UNDECODABLE] = "f" * 64
    session.whole["a.md"] = "e" * 64
    call = {"tool": "read", "path": UNDECODABLE, "fingerprint": "f" * 64, "type": "markdown", "action": "focus"}
    session.record_call(CallRecord(**call, decision="sparse", tokens=120, full_view_tokens=900, seconds=0.01, at=1e9))
    episode = add_episode(session, UNDECODABLE)
    episode.delivered.append(
        DeliveredItem(pointer=f"{UNDECODABLE}@r#L2", start=10, end=90, slots=("rate",), support={}, text="t\udce9")
    )
    episode.ledger.record(80)
    episode.ranking = [(3, 0.5), (7, 0.25)]
    return session


def test_each_persistent_store_round_trips_a_session_in_the_current_format(backend: Backend) -> None:
    writer = backend.open()
    session = _full_session(writer)
    writer.commit(session)
    copy = backend.open().get("k")  # a restarted server, or another replica
    assert session_fields(copy) == session_fields(session)
    assert copy.episodes and next(iter(copy.episodes.values())).ledger.sparse_chars == 80
    assert backend.stored("k")[FORMAT] == FORMAT_VERSION


@pytest.mark.parametrize("written", ["2", None])
def test_a_session_written_in_another_format_is_dropped_not_misread(
    backend: Backend, written: str | None, caplog: pytest.LogCaptureFixture
) -> None:
    other = session_fields(_full_session(open_session_store(None)))
    if written is None:
        del other[FORMAT]
    else:
        other[FORMAT] = written
    backend.plant("k", other)
    caplog.set_level(logging.WARNING)
    store = backend.open()
    session = store.get("k")
    assert session.intent is None and not session.episodes and not session.seen and not session.calls
    reasons = [r.getMessage() for r in caplog.records if "dropped and starts afresh" in r.getMessage()]
    assert len(reasons) == 1
    assert f"format {written or 'none'}" in reasons[0] and f"reads format {FORMAT_VERSION}" in reasons[0]

    session.intent = Intent(goal="violin lantern")
    store.commit(session)  # the new session replaces the old one whole: no field of the old format is left
    stored = backend.stored("k")
    assert stored[FORMAT] == FORMAT_VERSION and not any(name.startswith("ep:") for name in stored)
    again = backend.open().get("k")
    assert again.intent is not None and again.intent.goal == "violin lantern" and not again.episodes


def test_a_session_from_before_format_versions_is_dropped_from_the_sqlite_file(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "sessions.db"
    SqliteSessionStore(path)  # the schema, as the previous release created it
    old = {"intent": {"goal": "turbine harbor"}, "seen": {"a.md": "f" * 64}, "calls": [], "calls_dropped": 0}
    with sqlite3.connect(path) as db:  # the previous release's layout: no fields, no format
        db.execute("INSERT INTO sessions (key, state, used) VALUES ('s', ?, ?)", (json.dumps(old), time.time()))
        db.execute("INSERT INTO episodes VALUES ('e1', 's', ?)", (json.dumps({"id": "e1", "path": "a.md"}),))
        db.execute("INSERT INTO sessions (key, state, used) VALUES ('t', 'not json', ?)", (time.time(),))
    caplog.set_level(logging.WARNING)
    store = SqliteSessionStore(path)
    for key in ("s", "t"):
        session = store.get(key)
        assert session.intent is None and not session.seen and not session.episodes
        store.commit(session)  # the fresh session replaces the old rows
    messages = [r.getMessage() for r in caplog.records]
    assert any("format none (before formats were versioned)" in m for m in messages)
    assert any("format unreadable" in m for m in messages)
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT count(*) FROM episodes").fetchone()[0] == 0
        states = [json.loads(state) for (state,) in db.execute("SELECT state FROM sessions")]
    assert len(states) == 2 and all(state[FORMAT] == FORMAT_VERSION for state in states)
    assert store.problem is None  # a dropped session is not a failing store


def test_a_replica_of_another_release_writing_meanwhile_is_replaced_not_merged(
    redis_server: str, caplog: pytest.LogCaptureFixture
) -> None:
    url = f"{redis_server}/{next(_databases)}"
    mine = RedisSessionStore.from_url(url)
    session = mine.get("k")
    session.intent = Intent(goal="turbine harbor")
    mine.commit(session)
    theirs = session_fields(_full_session(open_session_store(None)))
    theirs[FORMAT] = "2"
    raw = mine._redis
    raw.hset(mine._key("k"), mapping=theirs)
    raw.hincrby(mine._key("k"), "v", 1)  # another release wrote after this replica read
    caplog.set_level(logging.WARNING)
    session.seen["b.md"] = "b" * 64
    mine.commit(session)
    assert mine.merges == 0  # not merged across formats
    assert any("format 2" in r.getMessage() for r in caplog.records)
    stored: dict[str, Any] = raw.hgetall(mine._key("k"))  # type: ignore[assignment]
    assert stored[FORMAT] == FORMAT_VERSION and not any(name.startswith("ep:") for name in stored)
    copy = RedisSessionStore.from_url(url).get("k")
    assert session_fields(copy) == session_fields(session)


def test_apply_fields_refuses_another_format_and_an_empty_record_is_any_format() -> None:
    fields = session_fields(_full_session(open_session_store(None)))
    assert foreign_format(fields) is None and foreign_format({}) is None
    with pytest.raises(ValueError, match="written in session format 0"):
        apply_fields(Session(key="k"), {**fields, FORMAT: "0"})
    copy = Session(key="k")
    apply_fields(copy, fields)
    assert session_fields(copy) == fields


def test_no_class_subclasses_a_session_store() -> None:
    """Stores meet the `SessionStore` Protocol side by side; none is built by inheriting from another."""
    stores = {"SessionStore", "MemorySessionStore", "SqliteSessionStore", "RedisSessionStore"}
    subclasses = []
    for path in Path(sparseread_mcp.__file__).parent.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                names = {b.id if isinstance(b, ast.Name) else getattr(b, "attr", "") for b in node.bases}
                subclasses += [f"{path.name}: {node.name}"] if names & stores else []
    assert subclasses == []
