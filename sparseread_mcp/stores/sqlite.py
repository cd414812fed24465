"""Sessions in a SQLite file in WAL mode, so a restarted server keeps its evidence records.

A session is stored as the fields of `fields.session_fields` (the serialization Redis writes too): its
episodes one row each in `episodes`, the rest as one JSON object in `sessions`. Each call's end writes its
session in one transaction (sessions and episodes together), so a crash loses at most the call in flight
and never leaves half a record. A session written in another format version (by an older release, say)
is not read: it starts afresh, the log says why, and its next commit replaces the old rows. Directory
episodes' queued candidates are not stored: a continued directory search after a restart asks to run
the search again.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
import time
from contextlib import nullcontext
from pathlib import Path

from ..errors import StoreUnavailable
from ..protocol.session import MAX_SESSIONS, SESSION_TTL_SECONDS, Session
from .fields import EPISODE, FORMAT, apply_fields, session_fields, unreadable
from .memory import MemorySessionStore

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
                fields = self._fields(key)
        except sqlite3.Error as exc:
            self._failed("read", exc)
            return session  # a fresh session: reads go on
        if (problem := unreadable(fields)) is not None:  # started afresh: the next commit replaces it
            logger.warning("a stored session in %s was dropped and starts afresh: %s", self._path.name, problem)
            return session
        apply_fields(session, fields)
        return session

    def _fields(self, key: str) -> dict[str, str]:
        """The stored fields of an unexpired session (none when there is none)."""
        assert self._db is not None
        row = self._db.execute(
            "SELECT state FROM sessions WHERE key = ? AND used >= ?", (key, time.time() - self._ttl)
        ).fetchone()
        if row is None:
            return {}
        try:
            state = json.loads(row[0])
        except ValueError:
            state = None
        if not isinstance(state, dict):
            return {FORMAT: "unreadable"}  # not a format this or any release wrote: dropped, never misread
        episodes = self._db.execute("SELECT id, state FROM episodes WHERE session = ? ORDER BY rowid", (key,))
        return {**state, **{EPISODE + episode: value for episode, value in episodes}}

    def commit(self, session: Session) -> None:
        if self._db is None:
            return
        fields = session_fields(session)
        state = {name: value for name, value in fields.items() if not name.startswith(EPISODE)}
        rows = [(name.removeprefix(EPISODE), session.key, value) for name, value in fields.items() if name not in state]
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

    def drop(self, key: str) -> None:
        session = self._memory.pop(key)
        if self._db is None:
            return
        try:
            # After a call still running in it has committed (under the session's lock), never before: its
            # commit would write the session back.
            with session.lock if session is not None else nullcontext(), self._write:
                db = self._db
                db.execute("BEGIN IMMEDIATE")
                try:
                    db.execute("DELETE FROM sessions WHERE key = ?", (key,))
                    db.execute("DELETE FROM episodes WHERE session = ?", (key,))
                    db.execute("COMMIT")
                except BaseException:
                    if db.in_transaction:
                        db.execute("ROLLBACK")
                    raise
        except sqlite3.Error as exc:
            self._failed("written", exc)

    def keys(self) -> list[str]:
        stored: list[str] = []
        if self._db is not None:
            try:
                with self._write:
                    stored = [key for (key,) in self._db.execute("SELECT key FROM sessions ORDER BY rowid")]
            except sqlite3.Error as exc:
                self._failed("read", exc)
        return list(dict.fromkeys([*stored, *self._memory.keys()]))
