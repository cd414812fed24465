"""Session stores that outlive a process: SQLite in WAL mode (a restarted server keeps its evidence
records) or Redis (replicas share them, see `redis_store`); `open_session_store` picks one from `--store`.

Each call's end writes its session in one transaction (sessions and episodes together), so a crash
loses at most the call in flight and never leaves half a record. Directory episodes' queued candidates
are not stored: a continued directory search after a restart asks to run the search again.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from pathlib import Path

from ..models import Intent
from .persist_fields import episode_from_state, episode_state
from .session import CallRecord, Session, SessionStore

_SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions (key TEXT PRIMARY KEY, state TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS episodes (id TEXT PRIMARY KEY, session TEXT NOT NULL, state TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS episodes_by_session ON episodes(session);
"""


class SqliteSessionStore(SessionStore):
    def __init__(self, path: Path) -> None:
        super().__init__()
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(_SCHEMA)
        self._write = threading.Lock()

    def get(self, key: str) -> Session:
        session = super().get(key)
        if session.episodes or session.intent is not None or session.seen or session.calls:
            return session
        with self._write:
            row = self._db.execute("SELECT state FROM sessions WHERE key = ?", (key,)).fetchone()
            episodes = self._db.execute("SELECT state FROM episodes WHERE session = ?", (key,)).fetchall()
        if row is not None:
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
        state = {
            "intent": session.intent.model_dump(mode="json") if session.intent else None,
            "seen": session.seen,
            "whole": session.whole,
            "calls": [c.to_json() for c in session.calls],
            "calls_dropped": session.calls_dropped,
        }
        rows = [(e.id, session.key, json.dumps(episode_state(e))) for e in session.episodes.values()]
        with self._write:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                self._db.execute("INSERT OR REPLACE INTO sessions VALUES (?, ?)", (session.key, json.dumps(state)))
                self._db.execute("DELETE FROM episodes WHERE session = ?", (session.key,))
                self._db.executemany("INSERT INTO episodes VALUES (?, ?, ?)", rows)
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise

    def keys(self) -> list[str]:
        with self._write:
            stored = [key for (key,) in self._db.execute("SELECT key FROM sessions ORDER BY rowid")]
        return list(dict.fromkeys([*stored, *super().keys()]))


def open_session_store(store: Path | str | None) -> SessionStore:
    """The store `--store` names: none (in memory), a `redis://` URL (shared by replicas) or a SQLite file."""
    if store is None:
        return SessionStore()
    if isinstance(store, str) and "://" in store:
        from .redis_store import RedisSessionStore  # the `redis` extra, imported only when asked for

        return RedisSessionStore.from_url(store)
    return SqliteSessionStore(Path(store))
