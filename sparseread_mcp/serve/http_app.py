"""Streamable HTTP: loopback by default, DNS-rebinding protection, an optional bearer token, a health check.

The Host and Origin allow-lists default to the loopback names; a token, when configured, is required on
every request but the health check, compared in constant time. A non-loopback bind without a token is
refused unless explicitly allowed (`check_exposure`); connections get a request-head timeout and a cap
(see `connection_guard`).
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import logging
import re

import anyio.to_thread
from mcp.server import MCPServer
from mcp.server.transport_security import TransportSecuritySettings
from starlette.types import ASGIApp, Receive, Scope, Send

from .. import __version__
from ..config import Settings
from ..errors import ConfigError
from .http_sessions import OnEnd, SessionGate
from .identity import http_session_key
from .server import SparsereadServer

logger = logging.getLogger(__name__)

HEALTH_PATH = "/healthz"
LOOPBACK = ("127.0.0.1", "localhost", "[::1]")
#: How long a stopping HTTP server waits for open requests and event streams before it closes them.
GRACEFUL_SECONDS = 3


def is_loopback(host: str) -> bool:
    """Whether binding `host` only accepts connections from this machine (a name other than localhost,
    or an address such as 0.0.0.0 or ::, may reach the network)."""
    name = host.strip().strip("[]").lower()
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def check_exposure(settings: Settings) -> None:
    """Refuse to serve the roots to the network without a token, unless told so explicitly; refuse a
    session name, which only a stdio server's one client has."""
    if settings.session:
        raise ConfigError(
            "--session (SPARSEREAD_SESSION) names the one stdio client's session; over HTTP every client gets its "
            "own: leave it out with --http"
        )
    if settings.token or is_loopback(settings.host) or settings.allow_unauthenticated:
        return
    raise ConfigError(
        f"refusing to serve HTTP on {settings.host[:80]!r} without a token: anyone who reaches the port could "
        "read every file under the roots. Set a token (--token or SPARSEREAD_TOKEN; clients then send "
        "Authorization: Bearer <token>), or bind 127.0.0.1, or, only behind your own authentication, pass "
        "--allow-unauthenticated (SPARSEREAD_ALLOW_UNAUTHENTICATED=1)"
    )


def build_http_app(server: MCPServer, settings: Settings) -> ASGIApp:
    names = [*LOOPBACK, settings.host] if settings.host not in ("0.0.0.0", "::") else list(LOOPBACK)
    hosts = sorted({f"{n}:*" for n in names} | set(names) | _any_port(settings.allowed_hosts))
    origins = sorted({f"http://{n}:*" for n in names} | _any_port(settings.allowed_origins))

    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins
    )
    # The SDK's own session limits are a backstop behind SessionGate's (which end sessions first).
    app = server.streamable_http_app(
        streamable_http_path="/mcp",
        transport_security=security,
        host=settings.host,
        max_sessions=2 * settings.max_http_sessions,
        session_idle_timeout=2 * settings.session_idle_seconds,
    )
    gated = SessionGate(app, settings, on_end=_drop_reading_session(server))
    return Gatekeeper(gated, settings.token)


def _any_port(allowed: tuple[str, ...]) -> set[str]:
    """Each allowed Host (or Origin) as given, and, when it names no port, the same on any port: a browser
    or client sends `192.0.2.2:8769`, and `--allow-host 192.0.2.2` meant that host."""
    patterns = set()
    for value in allowed:
        patterns.add(value)
        if not re.search(r":(\d+|\*)$", value.split("]")[-1].split("//")[-1]):
            patterns.add(f"{value}:*")
    return patterns


def _drop_reading_session(server: MCPServer) -> OnEnd:
    """What ends with an HTTP session: its reading session, dropped from the store."""
    sessions = server.engine.sessions if isinstance(server, SparsereadServer) and server.engine else None

    async def drop(owner: str, session_id: str) -> None:
        if sessions is not None:
            await anyio.to_thread.run_sync(sessions.drop, http_session_key(owner, session_id))

    return drop


class Gatekeeper:
    """Answers the health check itself; with a token, refuses any other request that lacks it."""

    def __init__(self, app: ASGIApp, token: str | None) -> None:
        self.app = app
        self._expected = f"Bearer {token}".encode() if token else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope.get("path") == HEALTH_PATH:
            await _json(send, 200, {"status": "ok", "version": __version__})
            return
        if scope["type"] == "http" and self._expected is not None:
            supplied = dict(scope.get("headers") or []).get(b"authorization", b"")
            if not hmac.compare_digest(supplied, self._expected):
                refusal = {"error": "missing or wrong bearer token: send Authorization: Bearer <token>"}
                await _json(send, 401, refusal, extra=[(b"www-authenticate", b'Bearer realm="sparseread-mcp"')])
                return
        await self.app(scope, receive, send)


async def _json(send: Send, status: int, body: dict[str, str], extra: list[tuple[bytes, bytes]] | None = None) -> None:
    headers = [(b"content-type", b"application/json"), *(extra or [])]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": json.dumps(body).encode()})


def serve_http(server: MCPServer, settings: Settings) -> None:
    """Serve `server` over streamable HTTP until interrupted: refused on a non-loopback host without a
    token (unless allowed), with connection limits."""
    check_exposure(settings)
    if not settings.token and not is_loopback(settings.host):
        logger.warning(
            "DANGER: serving HTTP on %s WITHOUT A TOKEN (--allow-unauthenticated): anyone who reaches port %d "
            "can read every file under the roots, .env files included",
            settings.host,
            settings.port,
        )
    import uvicorn

    from .http_guard import ACCEPT_BACKLOG, connection_guard, reserve_descriptors

    reserve_descriptors(settings.max_connections)
    protocol = connection_guard(
        header_timeout=settings.header_timeout_seconds, max_connections=settings.max_connections
    )
    logger.info("serving streamable HTTP on http://%s:%d/mcp", settings.host, settings.port)
    uvicorn.run(
        build_http_app(server, settings),
        host=settings.host,
        port=settings.port,
        log_level="warning",
        http=protocol,
        backlog=ACCEPT_BACKLOG,
        # Ctrl-C or SIGTERM: open event streams get this long to close, then the process ends
        # (terminal.py's handler, which uvicorn calls once it has stopped, also kills the workers).
        timeout_graceful_shutdown=GRACEFUL_SECONDS,
    )
