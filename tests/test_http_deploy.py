"""Safe HTTP deployment (issue #12): a non-loopback bind needs a token or an explicit, loud opt-out, and
half-sent requests neither hold sockets for ever nor lock other clients out. The real server, started
as `python -m sparseread_mcp` on loopback ports; the only timing is a hang guard."""

from __future__ import annotations

import os
import resource
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import anyio
import httpx
import pytest
from conftest import REPO
from docs import long_markdown
from mcp import Client
from test_mcp_transports import free_port

from sparseread_mcp import Settings
from sparseread_mcp.cli import build_parser, http_banner
from sparseread_mcp.errors import ConfigError
from sparseread_mcp.serve import http_app
from sparseread_mcp.serve.healthcheck import HEALTH_PATH, probe_url

HANG_GUARD = 60.0


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SPARSEREAD_")}
    return {**env, **extra}


def _docs(tmp_path: Path) -> Path:
    root = tmp_path / "docs"
    root.mkdir(exist_ok=True)
    (root / "manual.md").write_text(long_markdown())
    (root / ".env").write_text("SECRET=never-over-the-network\n")
    return root


@contextmanager
def serving(
    tmp_path: Path, *args: str, env: dict[str, str] | None = None, max_files: int | None = None
) -> Iterator[tuple[str, Path]]:
    """The server on a free port, its log; stopped afterwards. `max_files` lowers its open-files limit."""
    port = free_port()
    log_path = tmp_path / f"server-{port}.log"

    def limit_files() -> None:
        if max_files is not None:
            resource.setrlimit(resource.RLIMIT_NOFILE, (max_files, max_files))

    command = [sys.executable, "-m", "sparseread_mcp", "--http", "--port", str(port), "--root", str(_docs(tmp_path))]
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [*command, "--location", "bm25", *args],
            stdout=subprocess.DEVNULL,
            stderr=log,
            env=env or _env(),
            preexec_fn=limit_files,
        )
        try:
            deadline = time.monotonic() + HANG_GUARD
            while True:  # bounded: the server either answers its health check or the guard fails the test
                try:
                    if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=2).status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                if process.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError(f"server did not start: {log_path.read_text()}")
                time.sleep(0.05)
            yield f"http://127.0.0.1:{port}", log_path
        finally:
            process.terminate()
            process.wait(timeout=10)


def test_a_non_loopback_bind_without_a_token_refuses_to_start(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "sparseread_mcp", "--http", "--host", "0.0.0.0", "--root", str(_docs(tmp_path))],
        capture_output=True,
        text=True,
        timeout=HANG_GUARD,
        env=_env(),
    )
    assert done.returncode != 0
    assert "without a token" in done.stderr
    for remedy in ("--token", "SPARSEREAD_TOKEN", "127.0.0.1", "--allow-unauthenticated"):
        assert remedy in done.stderr
    help_text = " ".join(build_parser().format_help().split())
    assert "--allow-unauthenticated DANGEROUS:" in help_text


def test_allow_unauthenticated_starts_with_a_loud_warning(tmp_path: Path) -> None:
    with serving(tmp_path, "--host", "0.0.0.0", "--allow-unauthenticated") as (url, log):
        assert httpx.get(f"{url}/healthz", timeout=10).status_code == 200
    assert "WITHOUT A TOKEN" in log.read_text()


def test_http_says_where_it_listens_and_where_its_health_check_answers(tmp_path: Path) -> None:
    """At the default log level it printed nothing: the user polled /healthz to learn it had started."""
    with serving(tmp_path) as (url, log):
        printed = log.read_text()
        assert f"MCP over HTTP at {url}/mcp, health at {url}{HEALTH_PATH}" in printed, printed
        assert httpx.get(f"{url}{HEALTH_PATH}", timeout=10).status_code == 200
    assert "Bearer" not in printed
    with_token = http_banner(Settings(token="s3cret-token", host="::1", port=9000))
    assert "MCP over HTTP at http://[::1]:9000/mcp" in with_token and "Authorization: Bearer <token>" in with_token
    assert "s3cret-token" not in with_token
    everywhere = http_banner(Settings(host="0.0.0.0", port=8765))
    assert "MCP over HTTP at http://127.0.0.1:8765/mcp" in everywhere and "bound to 0.0.0.0" in everywhere


def test_a_token_from_the_environment_lets_a_non_loopback_bind_start_and_guards_it(tmp_path: Path) -> None:
    with serving(tmp_path, "--host", "0.0.0.0", env=_env(SPARSEREAD_TOKEN="s3cret-token")) as (url, _):
        anonymous = httpx.post(f"{url}/mcp", json={}, headers={"host": "localhost"}, timeout=10)
        assert anonymous.status_code == 401


#: Half a request line; or a whole head whose body stops short.
HALF_LINE = b"GET /healthz HT"
HALF_BODY = b'POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1000\r\n\r\n{"jsonrpc":'


def _half_sent(port: int, count: int, sent: bytes = HALF_LINE) -> list[socket.socket]:
    """`count` connections that each send `sent` and then nothing."""
    sockets = []
    for _ in range(count):
        sock = socket.create_connection(("127.0.0.1", port), timeout=HANG_GUARD)
        sock.sendall(sent)
        sockets.append(sock)
    return sockets


def _closed_by_server(sockets: list[socket.socket]) -> int:
    """How many of `sockets` the server closed (waits for each until the shared hang guard fires)."""
    deadline = time.monotonic() + HANG_GUARD
    closed = 0
    for sock in sockets:
        sock.settimeout(max(0.01, deadline - time.monotonic()))
        try:
            closed += sock.recv(1024) == b""
        except ConnectionResetError:
            closed += 1
        except TimeoutError:
            pass
    return closed


def test_half_sent_requests_are_closed_after_the_header_timeout(tmp_path: Path) -> None:
    with serving(tmp_path, "--header-timeout", "1") as (url, _):
        port = int(url.rsplit(":", 1)[1])
        sockets = _half_sent(port, 10) + _half_sent(port, 10, HALF_BODY)
        try:
            assert _closed_by_server(sockets) == len(sockets)
        finally:
            for sock in sockets:
                sock.close()


@pytest.mark.anyio
async def test_many_half_sent_requests_do_not_lock_other_clients_out(tmp_path: Path) -> None:
    # 600 half-open connections against a server that may open 512 files: without a cap it runs out of
    # descriptors and accepts nobody; with a cap (200) the oldest waiting connections make room for new
    # ones. The header timeout is long here, so only the cap is at work.
    args = ("--header-timeout", "120", "--max-connections", "200")
    with serving(tmp_path, *args, max_files=512) as (url, _):
        sockets = _half_sent(int(url.rsplit(":", 1)[1]), 600)
        try:
            with anyio.fail_after(HANG_GUARD):
                async with httpx.AsyncClient() as http:
                    assert (await http.get(f"{url}/healthz")).status_code == 200
                async with Client(f"{url}/mcp") as client:
                    preview = await client.call_tool("sro_preview", {"path": "manual.md"})
            assert not preview.is_error
            assert _closed_by_server(sockets[:300]) == 300  # the oldest made room
        finally:
            for sock in sockets:
                sock.close()


@pytest.mark.parametrize(
    ("argv", "environ", "url"),
    [
        (["sparseread-mcp", "--root", "/workspace"], {}, None),  # stdio: nothing to probe
        (["sparseread-mcp", "--root", "/w", "--http", "--host", "0.0.0.0", "--port", "8765"], {}, "127.0.0.1:8765"),
        (["sparseread-mcp", "--http", "--port=9000"], {}, "127.0.0.1:9000"),
        (["sparseread-mcp", "--http"], {"SPARSEREAD_PORT": "9100", "SPARSEREAD_HOST": "::"}, "127.0.0.1:9100"),
        (["sparseread-mcp", "--http", "--host", "10.1.2.3"], {}, "10.1.2.3:8765"),
    ],
)
def test_the_container_health_check_probes_only_an_http_server(
    argv: list[str], environ: dict[str, str], url: str | None
) -> None:
    probed = probe_url(argv, environ)
    assert probed == (None if url is None else f"http://{url}{HEALTH_PATH}")


def test_the_dockerfile_starts_safely() -> None:
    dockerfile = (REPO / "Dockerfile").read_text()
    assert "--allow-unauthenticated" not in dockerfile.split("ENTRYPOINT", 1)[1]
    assert "SPARSEREAD_TOKEN" in dockerfile  # how to pass the token, next to the command
    assert "SPARSEREAD_MAX_MEMORY_MB=" in dockerfile
    assert 'CMD ["python", "-m", "sparseread_mcp.serve.healthcheck"]' in dockerfile
    assert HEALTH_PATH == http_app.HEALTH_PATH
    ignored = (REPO / ".dockerignore").read_text().splitlines()
    assert ignored[ignored.index("*") :].count("*") == 1 and "!sparseread_mcp/" in ignored  # an allow-list


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.0.0.2", True),
        ("localhost", True),
        ("::1", True),
        ("[::1]", True),
        ("0.0.0.0", False),
        ("::", False),
        ("192.168.1.20", False),
        ("example.org", False),
    ],
)
def test_only_loopback_binds_go_without_a_token(host: str, loopback: bool) -> None:
    assert http_app.is_loopback(host) is loopback
    if loopback:
        http_app.check_exposure(Settings(host=host))
    else:
        with pytest.raises(ConfigError, match="without a token"):
            http_app.check_exposure(Settings(host=host))
        http_app.check_exposure(Settings(host=host, token="t0ken"))
        http_app.check_exposure(Settings(host=host, allow_unauthenticated=True))


def test_the_new_settings_come_from_the_environment_and_are_checked() -> None:
    settings = Settings.from_env(
        {
            "SPARSEREAD_ALLOW_UNAUTHENTICATED": "1",
            "SPARSEREAD_HEADER_TIMEOUT": "2.5",
            "SPARSEREAD_MAX_CONNECTIONS": "64",
            "SPARSEREAD_MAX_MEMORY_MB": "512",
        }
    )
    assert settings.allow_unauthenticated and settings.header_timeout_seconds == 2.5
    assert settings.max_connections == 64
    assert settings.cache_mb == 128  # the parse cache is fitted under the ceiling: a quarter of it
    assert not Settings.from_env({"SPARSEREAD_ALLOW_UNAUTHENTICATED": "0"}).allow_unauthenticated
    for bad in (
        {"SPARSEREAD_ALLOW_UNAUTHENTICATED": "perhaps"},
        {"SPARSEREAD_HEADER_TIMEOUT": "0"},
        {"SPARSEREAD_MAX_CONNECTIONS": "0"},
    ):
        with pytest.raises(ConfigError, match=next(iter(bad))):
            Settings.from_env(bad)
