"""What every session store offers: memory, SQLite and Redis alike."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from ..protocol.session import Session


class SessionStore(Protocol):
    """Sessions by key (one per MCP session), thread-safe."""

    def get(self, key: str) -> Session:
        """The session under `key`, a new one when there is none."""
        ...

    def commit(self, session: Session) -> None:
        """Persist a session after a call (nothing to do in memory)."""
        ...

    @property
    def problem(self) -> str | None:
        """Why sessions are not being persisted right now (a persistent store that fails), else None."""
        ...

    def drop(self, key: str) -> None:
        """Forget the session under `key` everywhere it is kept (its client ended it): a later `get` of the
        key starts a new, empty session."""
        ...

    def keys(self) -> list[str]:
        """The sessions this store holds, for `sparseread-mcp trace`."""
        ...
