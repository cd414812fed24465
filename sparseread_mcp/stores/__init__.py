"""Where reading sessions live: in memory, a SQLite file or Redis, all behind `SessionStore` and, for
the two that persist, one serialization of their fields with a format version (`fields`)."""

from __future__ import annotations

from pathlib import Path

from .base import SessionStore
from .memory import MemorySessionStore
from .sqlite import SqliteSessionStore

__all__ = ["MemorySessionStore", "SessionStore", "SqliteSessionStore", "open_session_store"]


def open_session_store(store: Path | str | None) -> SessionStore:
    """The store `--store` names: none (in memory), a `redis://` URL (shared by replicas) or a SQLite file."""
    if store is None:
        return MemorySessionStore()
    if isinstance(store, str) and "://" in store:
        from .redis_store import RedisSessionStore  # the `redis` extra, imported only when asked for

        return RedisSessionStore.from_url(store)
    return SqliteSessionStore(Path(store))
