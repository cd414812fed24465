"""Streamable HTTP: loopback by default, DNS-rebinding protection, an optional bearer token, a health check.

The Host and Origin allow-lists default to the loopback names; a token, when configured, is required on
every request but the health check, compared in constant time.
"""

from __future__ import annotations

import hmac
import json

from mcp.server import MCPServer
from mcp.server.transport_security import TransportSecuritySettings
from starlette.types import ASGIApp, Receive, Scope, Send

from .config import Settings

HEALTH_PATH = "/healthz"
LOOPBACK = ("127.0.0.1", "localhost", "[::1]")


def build_http_app(server: MCPServer, settings: Settings) -> ASGIApp:
    names = [*LOOPBACK, settings.host] if settings.host not in ("0.0.0.0", "::") else list(LOOPBACK)
    hosts = sorted({f"{n}:*" for n in names} | {n for n in names} | set(settings.allowed_hosts))
    origins = sorted({f"http://{n}:*" for n in names} | set(settings.allowed_origins))

    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins
    )
    app = server.streamable_http_app(streamable_http_path="/mcp", transport_security=security, host=settings.host)
    return Gatekeeper(app, settings.token)


class Gatekeeper:
    """Answers the health check itself; with a token, refuses any other request that lacks it."""

    def __init__(self, app: ASGIApp, token: str | None) -> None:
        self.app = app
        self._expected = f"Bearer {token}".encode() if token else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope.get("path") == HEALTH_PATH:
            await _json(send, 200, {"status": "ok"})
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
