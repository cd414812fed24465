"""Whose reading session a call reads: one per client, never shared by accident.

- stdio (and an in-process client) serves one client per server: its session is new for every server,
  or, with `--session NAME` (SPARSEREAD_SESSION), the session of that name, resumed from a persistent
  store. Two servers on one `--store` file therefore never share a session unless both are told to.
- Stateful HTTP (an `initialize` handshake): the transport's session id, trusted only where the SDK
  served the request in that session (a handshake-era protocol version; the SDK answers 404 for an
  unknown id), and bound to the credential it came with (`owner_of`): a request naming another
  client's session id never reads it.
- Stateless HTTP (protocol 2026-07-28): an unguessable handle the server issues and the client passes
  back (`session` argument), bound to the credential too. An `mcp-session-id` header on such a request
  is ignored: nobody validated it.
"""

from __future__ import annotations

import hashlib
import re
import secrets
from dataclasses import dataclass

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

from ..config import Settings

HANDLE = re.compile(r"^rs-[0-9a-f]{24}$")


def owner_of(authorization: str | bytes | None) -> str:
    """A short fingerprint of the credential a request came with (its `Authorization` header, or none):
    sessions are keyed by it, so a session id or handle is worthless with another credential."""
    raw = authorization.encode("latin-1") if isinstance(authorization, str) else (authorization or b"")
    return hashlib.sha256(b"sparseread-session-owner\0" + raw).hexdigest()[:16]


def http_session_key(owner: str, session_id: str) -> str:
    """The reading session of a stateful HTTP session (also what is dropped when that session ends)."""
    return f"http:{owner}:{session_id}"


def own_session_key(settings: Settings) -> str:
    """The session of this server's one client (stdio, in-process, the CLI): the one `--session` names,
    resumed from a persistent store, or else a new one for every server."""
    if settings.session:
        return f"named:{settings.session}"
    return f"stdio:{secrets.token_hex(12)}"


@dataclass(frozen=True, slots=True)
class SessionKeys:
    """Maps a call to its reading-session key; `own` is the key of this server's stdio client."""

    own: str

    def of(self, ctx: Context, handle: str | None) -> tuple[str, str | None]:
        """(reading-session key, handle to report: set only for stateless HTTP)."""
        request = ctx.request_context.request
        if request is None:
            return self.own, None
        headers = ctx.headers or {}
        owner = owner_of(headers.get("authorization"))
        session_id = headers.get("mcp-session-id")
        if session_id and ctx.request_context.protocol_version in HANDSHAKE_PROTOCOL_VERSIONS:
            return http_session_key(owner, session_id), None
        if handle is not None and not HANDLE.match(handle):
            raise ToolError(
                f"session {handle[:40]!r} is not a handle this server issued: omit it to start a new session"
            )
        handle = handle or f"rs-{secrets.token_hex(12)}"
        return f"handle:{owner}:{handle}", handle
