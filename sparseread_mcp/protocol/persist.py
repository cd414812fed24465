"""An on-disk session store: SQLite in WAL mode, so a restarted server keeps its evidence records.

Each call's end writes its session in one transaction (sessions and episodes together), so a crash
loses at most the call in flight and never leaves half a record. Directory episodes' queued candidates
are not stored: a continued directory search after a restart asks to run the search again.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from pathlib import Path
from typing import Any

from ..gate.ledger import Ledger
from ..models import Intent, Slot, SlotCoverage
from .session import CallRecord, DeliveredItem, Episode, Session, SessionStore

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
            session.calls = [CallRecord.from_json(c) for c in state.get("calls", [])]
            session.calls_dropped = int(state.get("calls_dropped", 0))
        for (blob,) in episodes:
            episode = _episode(json.loads(blob))
            session.episodes[episode.id] = episode
        return session

    def commit(self, session: Session) -> None:
        state = {
            "intent": session.intent.model_dump(mode="json") if session.intent else None,
            "seen": session.seen,
            "calls": [c.to_json() for c in session.calls],
            "calls_dropped": session.calls_dropped,
        }
        rows = [(e.id, session.key, json.dumps(_state(e))) for e in session.episodes.values()]
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


def _state(e: Episode) -> dict[str, object]:
    return {
        "id": e.id,
        "path": e.path,
        "type": e.type,
        "fingerprint": e.fingerprint,
        "rev": e.rev,
        "objective": e.objective,
        "full_view_tokens": e.full_view_tokens,
        "ledger": [e.ledger.full_view_chars, e.ledger.sparse_chars, e.ledger.full_chars],
        "slots": [s.model_dump(mode="json") for s in e.slots],
        "delivered": [[d.pointer, d.start, d.end, list(d.slots), d.text, d.full_view] for d in e.delivered],
        "ranking": [[i, s] for i, s in e.ranking],
        "full_view_next": e.full_view_next,
        "full_view_done": e.full_view_done,
        "closed": e.closed,
        "stale": e.stale,
        "coverage": {k: v.model_dump(mode="json") for k, v in e.coverage.items()},
    }


def _episode(s: dict[str, Any]) -> Episode:  # s: the JSON written by _state
    full, sparse, shown = s["ledger"]
    return Episode(
        id=s["id"],
        path=s["path"],
        type=s["type"],
        fingerprint=s["fingerprint"],
        rev=s["rev"],
        objective=s["objective"],
        full_view_tokens=s["full_view_tokens"],
        ledger=Ledger(full_view_chars=full, sparse_chars=sparse, full_chars=shown),
        slots=tuple(Slot.model_validate(x) for x in s["slots"]),
        delivered=[
            DeliveredItem(pointer=p, start=a, end=b, slots=tuple(sl), support={}, text=t, full_view=f)
            for p, a, b, sl, t, f in s["delivered"]
        ],
        ranking=[(int(i), float(v)) for i, v in s["ranking"]],
        full_view_next=s["full_view_next"],
        full_view_done=s["full_view_done"],
        closed=s["closed"],
        stale=s["stale"],
        coverage={k: SlotCoverage.model_validate(v) for k, v in s["coverage"].items()},
    )
