"""Sessions held in this process only: the default store."""

from __future__ import annotations

import threading
from collections import OrderedDict

from ..protocol.session import MAX_SESSIONS, Session


class MemorySessionStore:
    """Sessions by key in this process (one per MCP session); thread-safe; the least recently used are
    evicted. The default store, and the cache in front of SQLite."""

    def __init__(self, *, max_sessions: int = MAX_SESSIONS) -> None:
        self._sessions: OrderedDict[str, Session] = OrderedDict()
        self._max = max_sessions
        self._lock = threading.Lock()

    def get(self, key: str) -> Session:
        with self._lock:
            session = self._sessions.get(key)
            if session is None:
                session = self._sessions[key] = Session(key=key)
                while len(self._sessions) > self._max:
                    self._sessions.popitem(last=False)
            self._sessions.move_to_end(key)
            return session

    def commit(self, session: Session) -> None:
        """Persist a session after a call; in memory there is nothing to do."""

    @property
    def problem(self) -> str | None:
        """Why sessions are not being persisted right now (a persistent store that fails), else None."""
        return None

    def drop(self, key: str) -> None:
        self.pop(key)

    def pop(self, key: str) -> Session | None:
        """Forget the session under `key`; it, or None when there was none."""
        with self._lock:
            return self._sessions.pop(key, None)

    def keys(self) -> list[str]:
        """The sessions this store holds, for `sparseread-mcp trace`."""
        with self._lock:
            return list(self._sessions)
