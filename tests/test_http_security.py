"""Streamable HTTP: bearer token, Host and Origin allow-lists, health check — against the real server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx
import pytest
from flow import answer_record
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from test_mcp_transports import running_http_server

TOKEN = "s3cret-token-for-tests"
INIT = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
HEADERS = {
    "accept": "application/json, text/event-stream",
    "content-type": "application/json",
    "mcp-protocol-version": "2026-07-28",
}


@pytest.fixture
def guarded(tmp_path: Path) -> Iterator[str]:
    (tmp_path / "notes.md").write_text("# Notes\n\nSECURE-MARK\n")
    with running_http_server(tmp_path, tmp_path, "--token", TOKEN) as url:
        yield url


def test_requests_without_the_token_are_refused(guarded: str) -> None:
    missing = httpx.post(f"{guarded}/mcp", json=INIT, headers=HEADERS, timeout=10)
    wrong = httpx.post(f"{guarded}/mcp", json=INIT, headers={**HEADERS, "authorization": "Bearer nope"}, timeout=10)
    assert missing.status_code == wrong.status_code == 401
    assert "bearer token" in missing.json()["error"]
    assert httpx.get(f"{guarded}/healthz", timeout=10).json()["status"] == "ok"


def test_foreign_host_and_origin_are_refused(guarded: str) -> None:
    auth = {**HEADERS, "authorization": f"Bearer {TOKEN}"}
    rebinding = httpx.post(f"{guarded}/mcp", json=INIT, headers={**auth, "host": "evil.example:80"}, timeout=10)
    assert rebinding.status_code == 421
    cross_site = httpx.post(f"{guarded}/mcp", json=INIT, headers={**auth, "origin": "http://evil.example"}, timeout=10)
    assert cross_site.status_code == 403


@pytest.mark.anyio
async def test_the_official_client_works_with_the_token(guarded: str) -> None:
    import httpx2  # the SDK's HTTP client

    with anyio.fail_after(60):
        async with (
            httpx2.AsyncClient(headers={"authorization": f"Bearer {TOKEN}"}) as http,
            Client(streamable_http_client(f"{guarded}/mcp", http_client=http)) as client,
        ):
            result = await client.call_tool("sro_read", {"target": "notes.md", "view": "full"})
    assert not result.is_error and "SECURE-MARK" in str(answer_record(result))
