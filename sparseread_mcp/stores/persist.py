"""Session stores that outlive a process: SQLite in WAL mode (a restarted server keeps its evidence
records) or Redis (replicas share them, see `redis_store`); `open_session_store` picks one from `--store`.

Each call's end writes its session in one transaction (sessions and episodes together), so a crash
loses at most the call in flight and never leaves half a record. Directory episodes' queued candidates
are not stored: a continued directory search after a restart asks to run the search again.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
import time
from pathlib import Path

from ..errors import StoreUnavailable
from ..models import Intent
from ..protocol.session import MAX_SESSIONS, SESSION_TTL_SECONDS, CallRecord, Session
from .base import SessionStore
from .memory import MemorySessionStore
from .persist_fields import episode_from_state, episode_state

logger = logging.getLogger(__name__)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions (key TEXT PRIMARY KEY, state TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS episodes (id TEXT PRIMARY KEY, session TEXT NOT NULL, state TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS episodes_by_session ON episodes(session);
"""
#: Files written before eviction have no `used` column: added on open (0 = long unused, evicted first).
_USED = "ALTER TABLE sessions ADD COLUMN used REAL NOT NULL DEFAULT 0"
_USED_INDEX = "CREATE INDEX IF NOT EXISTS sessions_by_use ON sessions(used)"
#: A locked file waits this long before the call goes on without persisting (a failure, logged once).
_BUSY_SECONDS = 2.0


class SqliteSessionStore:
    """Sessions in one SQLite file. It evicts as the memory store does (the least recently used past
    `max_sessions`, and any unused for `ttl_seconds`). When the file cannot be opened, read or written
    (disk full, read-only, locked), calls go on with the sessions in memory: the failure is logged once,
    as a `StoreUnavailable`, and `problem` says so (the card shows it) until a write succeeds again."""

    def __init__(
        self, path: Path, *, max_sessions: int = MAX_SESSIONS, ttl_seconds: float = SESSION_TTL_SECONDS
    ) -> None:
        self._memory = MemorySessionStore(max_sessions=max_sessions)  # the sessions in use, in front of the file
        self._max = max_sessions
        self._path = path
        self._ttl = ttl_seconds
        self._write = threading.Lock()
        self._problem: str | None = None
        self._db: sqlite3.Connection | None = None
        try:
            self._db = self._open(path)
        except (sqlite3.Error, OSError) as exc:
            self._failed("opened", exc)

    @staticmethod
    def _open(path: Path) -> sqlite3.Connection:
        path.parent.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(path, check_same_thread=False, isolation_level=None, timeout=_BUSY_SECONDS)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        db.executescript(_SCHEMA)
        if "used" not in {row[1] for row in db.execute("PRAGMA table_info(sessions)")}:
            db.execute(_USED)
        db.execute(_USED_INDEX)
        return db

    @property
    def problem(self) -> str | None:
        return self._problem

    def _failed(self, doing: str, exc: BaseException) -> None:
        first = self._problem is None
        self._problem = str(
            StoreUnavailable(
                f"the session store {self._path.name[-80:]} could not be {doing} ({str(exc)[:120]}): sessions are "
                "kept in memory only and do not survive a restart; free disk space or make the file writable"
            )
        )
        if first:  # once per outage, not once per call
            logger.error("%s", self._problem)

    def _recovered(self) -> None:
        if self._problem is not None:
            logger.warning("the session store %s is written again", self._path)
            self._problem = None

    def get(self, key: str) -> Session:
        session = self._memory.get(key)
        if session.episodes or session.intent is not None or session.seen or session.calls or self._db is None:
            return session
        try:
            with self._write:
                row = self._db.execute(
                    "SELECT state FROM sessions WHERE key = ? AND used >= ?", (key, time.time() - self._ttl)
                ).fetchone()
                episodes = self._db.execute("SELECT state FROM episodes WHERE session = ?", (key,)).fetchall()
        except sqlite3.Error as exc:
            self._failed("read", exc)
            return session  # a fresh session: reads go on
        if row is None:
            return session
        state = json.loads(row[0])
        session.intent = Intent.model_validate(state["intent"]) if state["intent"] else None
        session.seen = dict(state["seen"])
        session.whole = dict(state.get("whole", {}))
        session.calls = [CallRecord.from_json(c) for c in state.get("calls", [])]
        session.calls_dropped = int(state.get("calls_dropped", 0))
        for (blob,) in episodes:
            episode = episode_from_state(json.loads(blob))
            session.episodes[episode.id] = episode
        return session

    def commit(self, session: Session) -> None:
        if self._db is None:
            return
        state = {
            "intent": session.intent.model_dump(mode="json") if session.intent else None,
            "seen": session.seen,
            "whole": session.whole,
            "calls": [c.to_json() for c in session.calls],
            "calls_dropped": session.calls_dropped,
        }
        rows = [(e.id, session.key, json.dumps(episode_state(e))) for e in session.episodes.values()]
        now = time.time()
        try:
            with self._write:
                self._transaction(session.key, json.dumps(state), rows, now)
        except sqlite3.Error as exc:
            self._failed("written", exc)
            return
        self._recovered()

    def _transaction(self, key: str, state: str, rows: list[tuple[str, str, str]], now: float) -> None:
        assert self._db is not None
        db = self._db
        db.execute("BEGIN IMMEDIATE")
        try:
            db.execute("INSERT OR REPLACE INTO sessions (key, state, used) VALUES (?, ?, ?)", (key, state, now))
            db.execute("DELETE FROM episodes WHERE session = ?", (key,))
            db.executemany("INSERT INTO episodes VALUES (?, ?, ?)", rows)
            # Evict as memory does: the expired, then the least recently used past the limit.
            evicted = db.execute(
                "SELECT key FROM sessions WHERE used < ? UNION "
                "SELECT key FROM (SELECT key FROM sessions ORDER BY used DESC LIMIT -1 OFFSET ?)",
                (now - self._ttl, self._max),
            ).fetchall()
            db.executemany("DELETE FROM sessions WHERE key = ?", evicted)
            db.executemany("DELETE FROM episodes WHERE session = ?", evicted)
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise

    def keys(self) -> list[str]:
        stored: list[str] = []
        if self._db is not None:
            try:
                with self._write:
                    stored = [key for (key,) in self._db.execute("SELECT key FROM sessions ORDER BY rowid")]
            except sqlite3.Error as exc:
                self._failed("read", exc)
        return list(dict.fromkeys([*stored, *self._memory.keys()]))


def open_session_store(store: Path | str | None) -> SessionStore:
    """The store `--store` names: none (in memory), a `redis://` URL (shared by replicas) or a SQLite file."""
    if store is None:
        return MemorySessionStore()
    if isinstance(store, str) and "://" in store:
        from .redis_store import RedisSessionStore  # the `redis` extra, imported only when asked for

        return RedisSessionStore.from_url(store)
    return SqliteSessionStore(Path(store))
