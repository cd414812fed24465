"""Stateful HTTP sessions: bound to the client that opened them, bounded, evicted when idle, and gone
once ended.

The SDK keeps a stateful session (one opened with `initialize`) until its client deletes it or it has
been idle for 30 minutes, up to 10,000 of them, and it lets any request that names a session id use it.
So 10,000 `initialize` requests locked every new client out for half an hour, 520 sessions each holding
a GET event stream open took every connection (the health check's too), and a request carrying another
client's session id was served in that session. `SessionGate` sits in front of the SDK's app and:

- binds each session to its client (`Client`: the credential it sent and its address): a request that
  names a session of another credential is answered 404, as if the session did not exist;
- bounds sessions per client and in total: past a limit it ends the least recently used idle session (the
  new client's own first, then one of the client holding the most) to make room, and refuses the new one
  (429 per client, 503 in total, each naming the limit) only when every session is busy;
- ends sessions idle for `session_idle_seconds`;
- bounds open GET event streams per client and in total (429 or 503), below the connection cap;
- on every end (the client's DELETE, idle, evicted) calls `on_end`, which drops the session's reading
  state: a deleted session is gone, and a later request naming it starts nothing and reads nothing.

Requests of protocol 2026-07-28 are stateless (no session to bind) and pass through; their calls are
bounded by the scheduler (`scheduler.py`). Runs on the event loop only.
"""

from __future__ import annotations

import json
import logging
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

import anyio
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..config import Settings
from .identity import owner_of

logger = logging.getLogger(__name__)

MCP_PATH = "/mcp"
SESSION_HEADER = b"mcp-session-id"
VERSION_HEADER = b"mcp-protocol-version"
#: Headers a gate-made DELETE (ending a session) carries over from the session's last request: enough
#: for the SDK's own checks (Host, Origin, protocol version, session id).
_KEPT_HEADERS = frozenset({b"host", b"origin", b"authorization", VERSION_HEADER, SESSION_HEADER})
#: Idle sessions are looked for at most this often (a scan of every session).
SWEEP_SECONDS = 1.0
#: Refusals are logged at most this often.
WARNING_SECONDS = 60.0

#: Called with (credential fingerprint, session id) when a session ends.
OnEnd = Callable[[str, str], Awaitable[None]]


@dataclass(frozen=True, slots=True)
class Client:
    """Who a request comes from: its credential (fingerprint) and its address."""

    owner: str
    address: str

    @classmethod
    def of(cls, scope: Scope) -> Client:
        headers = dict(scope.get("headers") or [])
        peer = scope.get("client")
        return cls(owner_of(headers.get(b"authorization")), str(peer[0]) if peer else "-")


@dataclass(slots=True)
class _Session:
    client: Client
    last_used: float
    #: The session's last request, the model of the DELETE that ends it.
    scope: Scope
    in_flight: int = 0
    streams: int = 0


@dataclass(slots=True)
class _Refusal:
    status: int
    message: str


@dataclass(slots=True)
class SessionGate:
    app: ASGIApp
    settings: Settings
    on_end: OnEnd
    _sessions: dict[str, _Session] = field(default_factory=dict)
    #: Sessions being opened (admitted, not yet answered), per client.
    _opening: Counter[Client] = field(default_factory=Counter)
    _streams: Counter[Client] = field(default_factory=Counter)
    _swept_at: float = 0.0
    _warned_at: float = -WARNING_SECONDS

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("path") != MCP_PATH or not _stateful(scope):
            await self.app(scope, receive, send)
            return
        await self._sweep()
        headers = dict(scope.get("headers") or [])
        client = Client.of(scope)
        raw_id = headers.get(SESSION_HEADER)
        if raw_id is None:
            await self._open(client, scope, receive, send)
            return
        session_id = raw_id.decode("latin-1")
        session = self._sessions.get(session_id)
        if session is None or session.client.owner != client.owner:
            await _refuse(send, _Refusal(404, "session not found: it ended or was never opened; start a new session"))
            return
        await self._serve(session_id, session, scope, receive, send)

    async def _open(self, client: Client, scope: Scope, receive: Receive, send: Send) -> None:
        """A request without a session id (an `initialize` opens a session): admitted when there is room."""
        if scope["method"] != "POST":
            await self.app(scope, receive, send)  # the SDK refuses it
            return
        self._opening[client] += 1  # counted at once, so that concurrent openings see each other
        try:
            refusal = await self._make_room(client)
        except BaseException:
            self._done_opening(client)
            raise
        if refusal is not None:
            self._done_opening(client)
            self._warn(refusal.message)
            await _refuse(send, refusal)
            return
        opened: list[str] = []
        request = dict(scope)  # as it came, before the app's routing adds to it

        async def watch(message: Message) -> None:
            if message["type"] == "http.response.start" and message["status"] < 400:
                found = dict(message.get("headers") or []).get(SESSION_HEADER)
                if found is not None and not opened:
                    opened.append(found.decode("latin-1"))
                    self._sessions[opened[0]] = _Session(client, _now(), _model_of(request, opened[0]))
                    self._done_opening(client)  # counted as open from now on, not as opening too
            await send(message)

        try:
            await self.app(scope, receive, watch)
        finally:
            if not opened:
                self._done_opening(client)

    def _done_opening(self, client: Client) -> None:
        self._opening[client] -= 1
        if not self._opening[client]:
            del self._opening[client]

    async def _serve(self, session_id: str, session: _Session, scope: Scope, receive: Receive, send: Send) -> None:
        """A request in a known session of this client: GET streams counted, the end of the session seen."""
        stream = scope["method"] == "GET"
        if stream and (refusal := self._stream_refusal(session.client)) is not None:
            self._warn(refusal.message)
            await _refuse(send, refusal)
            return

        done = False

        def finish() -> None:
            """The request is no longer in flight: its answer is complete (or the app ended without one)."""
            nonlocal done
            if done:
                return
            done = True
            session.in_flight -= 1
            session.streams -= stream
            self._streams[session.client] -= stream
            if not self._streams[session.client]:
                del self._streams[session.client]
            session.last_used = _now()

        async def watch(message: Message) -> None:
            if message["type"] == "http.response.start" and _ends(scope["method"], message["status"]):
                await self._forget(session_id)  # before the client hears it ended: then it is gone
            if message["type"] == "http.response.body" and not message.get("more_body", False):
                finish()  # before the client has the whole answer, so that it then finds the session idle
            await send(message)

        session.in_flight += 1
        session.streams += stream
        self._streams[session.client] += stream
        session.scope = _model_of(scope, session_id)
        try:
            await self.app(scope, receive, watch)
        finally:
            finish()

    def _stream_refusal(self, client: Client) -> _Refusal | None:
        limits = self.settings
        if self._streams[client] >= limits.max_streams_per_client:
            return _Refusal(
                429,
                f"this client already holds {self._streams[client]} open event streams (GET /mcp), its limit "
                f"(SPARSEREAD_MAX_STREAMS_PER_CLIENT={limits.max_streams_per_client}): end unused sessions "
                "(HTTP DELETE) or use one session",
            )
        if sum(self._streams.values()) >= limits.max_streams:
            return _Refusal(
                503,
                f"{limits.max_streams} event streams (GET /mcp) are open, the server's limit "
                "(SPARSEREAD_MAX_STREAMS): calls still work without one; retry the stream later",
            )
        return None

    async def _make_room(self, client: Client) -> _Refusal | None:
        """Room for the session `client` is opening (counted in `_opening`), made by ending an idle one when
        a limit is passed."""
        limits = self.settings
        mine = [s for s in self._sessions.values() if s.client == client]
        if len(mine) + self._opening[client] > limits.max_http_sessions_per_client and not await self._evict(mine):
            return _Refusal(
                429,
                f"this client already has {len(mine)} open sessions, its limit "
                f"(SPARSEREAD_MAX_HTTP_SESSIONS_PER_CLIENT={limits.max_http_sessions_per_client}), and none is idle: "
                "end unused sessions (HTTP DELETE) or reuse one",
            )
        if len(self._sessions) + sum(self._opening.values()) > limits.max_http_sessions:
            held = Counter(s.client for s in self._sessions.values())
            for holder, _ in held.most_common():  # the client holding the most gives one up first
                if await self._evict([s for s in self._sessions.values() if s.client == holder]):
                    return None
            return _Refusal(
                503,
                f"{limits.max_http_sessions} sessions are open, the server's limit (SPARSEREAD_MAX_HTTP_SESSIONS), "
                "and none is idle: retry shortly, or use stateless requests (protocol 2026-07-28)",
            )
        return None

    async def _evict(self, candidates: list[_Session]) -> bool:
        """End the least recently used idle session among `candidates`; False when none is idle."""
        idle = [s for s in candidates if not s.in_flight]
        if not idle:
            return False
        victim = min(idle, key=lambda s: s.last_used)
        await self._end(victim, "evicted to make room for a new session")
        return True

    async def _sweep(self) -> None:
        """End the sessions idle past their limit (at most once a second)."""
        now = _now()
        if now - self._swept_at < SWEEP_SECONDS:
            return
        self._swept_at = now
        cutoff = now - self.settings.session_idle_seconds
        for session in [s for s in self._sessions.values() if not s.in_flight and s.last_used < cutoff]:
            await self._end(session, f"idle for {self.settings.session_idle_seconds:g} s")

    async def _end(self, session: _Session, why: str) -> None:
        """End a session in the SDK (a DELETE, as its client would send) and forget it."""
        session_id = dict(session.scope["headers"])[SESSION_HEADER].decode("latin-1")
        logger.info("ending HTTP session %s: %s", session_id[:16], why)
        self._sessions.pop(session_id, None)  # first: nothing reaches it while it ends

        async def nothing() -> Message:
            return {"type": "http.request", "body": b"", "more_body": False}

        async def discard(message: Message) -> None:
            return None

        with anyio.CancelScope(shield=True):
            await self.app(session.scope, nothing, discard)
            await self.on_end(session.client.owner, session_id)

    async def _forget(self, session_id: str) -> None:
        session = self._sessions.pop(session_id, None)
        if session is not None:
            with anyio.CancelScope(shield=True):
                await self.on_end(session.client.owner, session_id)

    def _warn(self, message: str) -> None:
        now = _now()
        if now - self._warned_at >= WARNING_SECONDS:  # a flood must not flood the log too
            self._warned_at = now
            logger.warning("refused an HTTP request: %s", message)


def _now() -> float:
    """The gate's clock (a function of its own, so a test can move it on without touching the event loop's)."""
    return time.monotonic()


def _ends(method: str, status: int) -> bool:
    """Whether an answer in a session says it ended: its DELETE succeeded, or the SDK no longer knows it."""
    return status == 404 or (method == "DELETE" and status < 300)


def _stateful(scope: Scope) -> bool:
    """Whether the SDK serves this request in a stateful session (not protocol 2026-07-28's stateless one)."""
    version = dict(scope.get("headers") or []).get(VERSION_HEADER)
    return version is None or version.decode("latin-1") in HANDSHAKE_PROTOCOL_VERSIONS


def _model_of(scope: Scope, session_id: str) -> Scope:
    """A DELETE ending `session_id`, made from one of its requests."""
    headers = [(k, v) for k, v in scope.get("headers") or [] if k in _KEPT_HEADERS and k != SESSION_HEADER]
    return {**scope, "method": "DELETE", "headers": [*headers, (SESSION_HEADER, session_id.encode("latin-1"))]}


async def _refuse(send: Send, refusal: _Refusal) -> None:
    """A JSON-RPC error body, as the SDK answers, with the status; 503 and 429 say when to retry."""
    body = {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": refusal.message}}
    headers = [(b"content-type", b"application/json")]
    if refusal.status in (429, 503):
        headers.append((b"retry-after", b"5"))
    await send({"type": "http.response.start", "status": refusal.status, "headers": headers})
    await send({"type": "http.response.body", "body": json.dumps(body).encode()})
