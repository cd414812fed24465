"""No client can take the server: calls are scheduled fairly between sessions, a call waits for a place
no longer than its own limit, and floods of event streams or `initialize` requests leave the health
check and new clients answered. Driven through the official MCP client; over HTTP with a real uvicorn
server on loopback. Floods are scaled down by small limits, so they run in seconds on two cores.

No clock decides these tests: a slow call here blocks until its client cancels it (or the test ends),
and every wait is bounded by a generous hang guard only.
"""

from __future__ import annotations

import hashlib
import os
import socket
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import anyio.from_thread
import httpx
import httpx2
import pytest
import uvicorn
from flow import answer_record, answer_text
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from test_mcp_transports import running_http_server

from sparseread_mcp import ReadEngine, ReadRequest, Settings
from sparseread_mcp.deadline import checkpoint
from sparseread_mcp.serve.http_app import build_http_app
from sparseread_mcp.serve.server import create_server

pytestmark = pytest.mark.anyio

HANG_GUARD = 90
#: anyio's default pool of worker threads, from which every call used to take one: this many slow calls
#: of one session left nothing for anyone else.
ANYIO_POOL = 40
SLOW = "slow.md"
NOTE = "# Notes\n\nThe harbor turbine spins at 42 rpm.\n"


class SlowEngine(ReadEngine):
    """A preview of `slow.md` that runs until its call is cancelled, or, with `obey_deadline` off, until
    the test releases it; with `hold_session`, holding its session as every real call does (so only one
    runs per session). Every other call is the real engine's."""

    def __init__(self, settings: Settings, *, running: int, obey_deadline: bool = True, hold_session: bool) -> None:
        super().__init__(settings)
        self.obey_deadline = obey_deadline
        self.hold_session = hold_session
        self.release = threading.Event()
        self.started = 0
        #: Set (from the worker thread) once `running` slow calls have started.
        self.running = running
        self.all_running = anyio.Event()
        self._lock = threading.Lock()

    def preview(self, session_key: str, path: str, *args: Any, **kwargs: Any) -> Any:
        if path != SLOW:
            return super().preview(session_key, path, *args, **kwargs)
        self._block(session_key)

    def read(self, session_key: str, request: ReadRequest, *args: Any, **kwargs: Any) -> Any:
        """A verification of a pointer into `slow.md` is slow too (as a diff of a huge file was)."""
        if request.action == "verify" and request.target.startswith(SLOW):
            self._block(session_key)
        return super().read(session_key, request, *args, **kwargs)

    def _block(self, session_key: str) -> None:
        with self.sessions.get(session_key).lock if self.hold_session else threading.Lock():
            with self._lock:
                self.started += 1
                now_running = self.started
            if now_running == self.running:
                anyio.from_thread.run_sync(self.all_running.set)
            while not self.release.wait(0.05):  # a poll for cancellation, not a clock the test depends on
                if self.obey_deadline:
                    checkpoint()  # raises once the client cancelled the call
        raise AssertionError("released by the test")


def _root(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    root.mkdir()
    (root / "notes.md").write_text(NOTE)
    (root / SLOW).write_text("# Slow\n")
    return root


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@asynccontextmanager
async def serving(settings: Settings, engine: ReadEngine) -> AsyncIterator[str]:
    """A real uvicorn server on loopback, in this event loop, serving `engine`; yields the MCP URL."""
    port = _free_port()
    app = build_http_app(create_server(settings, engine=engine), settings)
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on"))
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(server.serve)
        while not server.started:  # bounded by the caller's hang guard
            await anyio.sleep(0.02)
        try:
            yield f"http://127.0.0.1:{port}/mcp"
        finally:
            server.should_exit = True


@asynccontextmanager
async def legacy_client(url: str) -> AsyncIterator[Client]:
    """A stateful client: its calls are all one session."""
    async with (
        httpx2.AsyncClient(timeout=httpx2.Timeout(30, read=300), limits=httpx2.Limits(max_connections=200)) as http,
        Client(streamable_http_client(url, http_client=http), mode="legacy") as client,
    ):
        yield client


async def test_one_session_with_many_slow_calls_does_not_keep_another_session_waiting(tmp_path: Path) -> None:
    """Before: 40 slow calls of one session took all 40 of anyio's worker threads, and another session's
    call got no answer until they ended. Now the session runs its share and the others wait."""
    settings = Settings(
        roots=(_root(tmp_path),), call_timeout_seconds=10 * HANG_GUARD, max_calls=4, max_calls_per_session=2
    )
    engine = SlowEngine(settings, running=settings.max_calls_per_session, hold_session=False)
    with anyio.fail_after(HANG_GUARD):
        async with (
            serving(settings, engine) as url,
            legacy_client(url) as attacker,
            legacy_client(url) as other,
            anyio.create_task_group() as attacks,
        ):
            try:
                for _ in range(ANYIO_POOL):
                    attacks.start_soon(attacker.call_tool, "sro_preview", {"path": SLOW})
                await engine.all_running.wait()
                answer = await other.call_tool("sro_preview", {"path": "notes.md"})
                pending = engine.started
                attacks.cancel_scope.cancel()  # the client cancels its slow calls: they end
            finally:
                engine.release.set()  # only what the cancellation did not end (a hang guard that fired)
    assert not answer.is_error and "42 rpm" in answer_text(answer), answer_text(answer)
    assert pending <= settings.max_calls_per_session  # the attacker ran its share, no more


async def test_sessions_asking_what_changed_in_one_file_at_once_pay_one_parse_of_each_version(tmp_path: Path) -> None:
    """Before: twelve sessions asking what changed in the same 1.6 MB text since one revision parsed that
    revision twelve times, each in a worker of its own, while a session reading anything else waited for a
    free one (CI's forty-diff attack starved its probe once a parse cost more). Now calls that open the same
    version take turns, and the first one's parse serves the rest."""
    root = _root(tmp_path)
    before = [f"Line {n} of the harbor log: the turbine ran at {n % 97} rpm that hour.\n" for n in range(24_000)]
    after = [line.replace("turbine", "rotor") if n % 1000 == 7 else line for n, line in enumerate(before)]
    (root / "harbor.txt").write_text("".join(before))
    settings = Settings(roots=(root,), location="bm25")
    engine = ReadEngine(settings)
    answers: list[Any] = []

    ready, go = [], anyio.Event()

    async def since(rev: str) -> None:
        async with Client(url) as client:  # every session is open before any asks
            ready.append(client)
            await go.wait()
            answers.append(await client.call_tool("sro_read", {"target": "harbor.txt", "since": rev}))

    async with serving(settings, engine) as url:
        with anyio.fail_after(HANG_GUARD):
            async with Client(url) as client:
                assert not (await client.call_tool("sro_read", {"target": "harbor.txt#L1-L3"})).is_error
            rev = "sha256:" + hashlib.sha256("".join(before).encode()).hexdigest()[:12]
            (root / "harbor.txt").write_text("".join(after))
            parsed_before = engine.parse_count
            async with anyio.create_task_group() as tasks:
                for _ in range(12):
                    tasks.start_soon(since, rev)
                while len(ready) < 12:
                    await anyio.sleep(0.02)
                go.set()
    assert len(answers) == 12 and not any(a.is_error for a in answers), [answer_text(a) for a in answers]
    assert all("L8" in answer_text(a) for a in answers)  # line 8 (n = 7) is the first that changed
    assert engine.parse_count - parsed_before <= 2  # the revision asked about and the file as it is now


async def test_a_call_that_finds_no_place_before_its_limit_gets_a_typed_error(tmp_path: Path) -> None:
    """A session's share is one call; while it runs (ignoring its limit), the session's next call waits
    no longer than its own limit and then says which limit it met. Before: it waited for the session
    until the first call ended, here never."""
    settings = Settings(roots=(_root(tmp_path),), call_timeout_seconds=1, max_calls=2, max_calls_per_session=1)
    engine = SlowEngine(settings, running=1, obey_deadline=False, hold_session=True)
    server = create_server(settings, engine=engine)
    answers: list[Any] = []
    answered = anyio.Event()
    async with Client(server) as client, anyio.create_task_group() as tasks:

        async def card() -> None:
            answers.append(await client.call_tool("sro_card", {}))
            answered.set()

        try:
            tasks.start_soon(client.call_tool, "sro_preview", {"path": SLOW})
            with anyio.fail_after(HANG_GUARD):
                await engine.all_running.wait()
            tasks.start_soon(card)
            # A hang guard that leaves the thread alone: a call waiting in a worker thread cannot be
            # cancelled, so the guard only stops waiting, and the release below ends both calls.
            with anyio.move_on_after(HANG_GUARD):
                await answered.wait()
        finally:
            engine.release.set()
    assert answers, "the call never answered"
    waited = answers[0]
    assert waited.is_error
    assert "did not start" in answer_text(waited) and "SPARSEREAD_MAX_CALLS_PER_SESSION=1" in answer_text(waited), (
        answer_text(waited)
    )


_HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
_INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "flood", "version": "0"}},
}


def _initialize(http: httpx.Client, url: str) -> str | None:
    """Open a stateful session as a flood would (a raw `initialize`); its id, or None when refused."""
    body = _INITIALIZE
    try:
        answer = http.post(url, json=body, headers=_HEADERS)
    except httpx.HTTPError:
        return None
    return answer.headers.get("mcp-session-id") if answer.status_code == 200 else None


def _in_session(session_id: str | None) -> dict[str, str]:
    return {"mcp-session-id": session_id or "", "mcp-protocol-version": "2025-11-25"}


async def _fresh_clients_are_answered(base: str) -> None:
    """The health check, a new stateful client and a new stateless one all answer."""
    async with httpx2.AsyncClient(timeout=30) as http:
        health = await http.get(f"{base}/healthz")
    assert health.status_code == 200
    async with legacy_client(f"{base}/mcp") as fresh:
        result = await fresh.call_tool("sro_read", {"target": "notes.md", "intent": {"needles": ["42 rpm"]}})
        assert not result.is_error and "42 rpm" in answer_text(result)
    async with Client(f"{base}/mcp") as stateless:
        result = await stateless.call_tool("sro_card", {})
        assert not result.is_error


async def test_sessions_holding_event_streams_leave_the_health_check_and_new_clients_answered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before: sessions each holding a GET event stream open took every connection (520 against the cap
    of 512; 24 against 16 here), and the health check and new clients were refused."""
    monkeypatch.setenv("SPARSEREAD_MAX_CONNECTIONS", "16")
    monkeypatch.setenv("SPARSEREAD_MAX_STREAMS", "4")
    monkeypatch.setenv("SPARSEREAD_MAX_STREAMS_PER_CLIENT", "2")
    flood = 24
    held: list[httpx.Response] = []
    refused: list[int] = []
    with running_http_server(_root(tmp_path), tmp_path) as base, anyio.fail_after(HANG_GUARD):
        url = f"{base}/mcp"
        with httpx.Client(timeout=30, limits=httpx.Limits(max_connections=flood * 2)) as http:
            try:
                for _ in range(flood):
                    session_id = _initialize(http, url)
                    if session_id is None:
                        refused.append(0)
                        continue
                    headers = {**_HEADERS, "mcp-session-id": session_id, "mcp-protocol-version": "2025-11-25"}
                    try:
                        stream = http.send(http.build_request("GET", url, headers=headers), stream=True)
                    except httpx.HTTPError:
                        refused.append(0)
                        continue
                    if stream.status_code == 200:
                        held.append(stream)
                    else:
                        refused.append(stream.status_code)
                        stream.read()
                        stream.close()
                await _fresh_clients_are_answered(base)
            finally:
                for stream in held:
                    stream.close()
    assert len(held) <= 2 and 429 in refused  # the client's own limit, said with its status


async def test_a_flood_of_initialize_requests_locks_nobody_out(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Before: each `initialize` kept a session for 30 minutes, up to 10,000, and then every new client got
    503 for as long. Now past the limit the least recently used idle session is ended to make room."""
    monkeypatch.setenv("SPARSEREAD_MAX_HTTP_SESSIONS", "6")
    monkeypatch.setenv("SPARSEREAD_MAX_HTTP_SESSIONS_PER_CLIENT", "3")
    with running_http_server(_root(tmp_path), tmp_path) as base, anyio.fail_after(HANG_GUARD):
        with httpx.Client(timeout=30) as http:
            opened = [_initialize(http, f"{base}/mcp") for _ in range(40)]
            ping = {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}
            live = [
                http.post(f"{base}/mcp", json=ping, headers={**_HEADERS, **_in_session(session_id)}).status_code
                for session_id in opened
            ]
        await _fresh_clients_are_answered(base)
    assert all(opened), "an initialize was refused although idle sessions could be ended"
    # The client's limit is 3: its newest 3 sessions live, every older one was ended to make room.
    assert live == [404] * 37 + [200] * 3, live


def _transcript_citing(pointer: str, steps: int = 6) -> list[dict[str, object]]:
    """An agent's history whose sro_read results cite `pointer`: compacting it verifies the pointer."""
    messages: list[dict[str, object]] = [{"role": "user", "content": "Find the turbine speed."}]
    for i in range(steps):
        call = {"id": f"c{i}", "type": "function", "function": {"name": "sro_read", "arguments": '{"target": "x"}'}}
        messages.append({"role": "assistant", "content": f"Reading part {i}.", "tool_calls": [call]})
        body = "\n".join(f"item {k} of part {i}: the turbine spins, see {pointer}" for k in range(30))
        messages.append({"role": "tool", "tool_call_id": f"c{i}", "content": body})
    return messages


async def test_one_clients_compaction_never_waits_behind_anothers(tmp_path: Path) -> None:
    """Before: every compaction verified its pointers in one reading session shared by every client, so
    a client whose transcript cited a file that is slow to verify held up every other client's
    compaction. Now each compaction verifies in a session of its own."""
    settings = Settings(roots=(_root(tmp_path),), call_timeout_seconds=10 * HANG_GUARD)
    engine = SlowEngine(settings, running=1, hold_session=True)
    options = {"mode": "spans", "keep_last": 0, "min_interactions": 0, "min_tokens": 0, "tau": 0.0}
    slow = {"messages": _transcript_citing(f"{SLOW}@sha256:0123456789ab#L1"), **options}
    quick = {"messages": _transcript_citing("notes.md@sha256:0123456789ab#L1"), **options}
    with anyio.fail_after(HANG_GUARD):
        async with (
            serving(settings, engine) as url,
            legacy_client(url) as first,
            legacy_client(url) as second,
            anyio.create_task_group() as tasks,
        ):
            try:
                tasks.start_soon(first.call_tool, "sro_compact", slow)
                await engine.all_running.wait()
                answer = await second.call_tool("sro_compact", quick)
                still_running = not engine.release.is_set()
                tasks.cancel_scope.cancel()
            finally:
                engine.release.set()
    assert not answer.is_error and answer_record(answer) is not None, answer_text(answer)
    assert still_running


def test_the_serving_limits_come_from_defaults_the_environment_and_flags(monkeypatch: pytest.MonkeyPatch) -> None:
    from sparseread_mcp.cli import build_parser, settings_from
    from sparseread_mcp.errors import ConfigError

    for name in [k for k in os.environ if k.startswith("SPARSEREAD_")]:
        monkeypatch.delenv(name)
    defaults = Settings()
    assert (defaults.max_calls, defaults.max_calls_per_session) == (32, 4)
    assert defaults.max_streams < defaults.max_connections and defaults.session is None
    monkeypatch.setenv("SPARSEREAD_MAX_CALLS", "12")
    monkeypatch.setenv("SPARSEREAD_MAX_CALLS_PER_SESSION", "3")
    monkeypatch.setenv("SPARSEREAD_SESSION_IDLE_TIMEOUT", "60")
    monkeypatch.setenv("SPARSEREAD_SESSION", "from-env")
    flags = ["--max-calls-per-session", "2", "--max-streams", "8", "--max-streams-per-client", "4", "--session", "work"]
    settings = settings_from(build_parser().parse_args(flags))
    assert (settings.max_calls, settings.max_calls_per_session, settings.session_idle_seconds) == (12, 2, 60.0)
    assert (settings.max_streams, settings.max_streams_per_client, settings.session) == (8, 4, "work")
    for bad, named in (
        ({"max_calls": 2, "max_calls_per_session": 3}, "SPARSEREAD_MAX_CALLS_PER_SESSION=3 is more than"),
        ({"max_http_sessions_per_client": 0}, "must be at least 1"),
        ({"session": "../other"}, "is not a session name"),
    ):
        with pytest.raises(ConfigError, match=named):
            Settings(**bad)  # type: ignore[arg-type]
    fitted = Settings(max_connections=64)  # streams are fitted under the connections, never all of them
    assert (fitted.max_streams, fitted.max_streams_per_client) == (32, 32)


def test_an_http_server_refuses_a_session_name(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from sparseread_mcp.cli import main

    assert main(["--http", "--session", "work", "--root", str(tmp_path)]) == 2
    assert "over HTTP every client gets its own" in capsys.readouterr().err


async def test_an_idle_session_is_ended_and_its_reading_state_dropped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A session without a request for `session_idle_seconds` is ended (in the SDK too) and its reading
    session dropped. The gate's clock is moved on by the test, not waited for. Before: the SDK kept it
    for 30 minutes (and the reading session for good)."""
    from sparseread_mcp.serve import http_sessions

    now = [1_000.0]
    monkeypatch.setattr(http_sessions, "_now", lambda: now[0])
    settings = Settings(roots=(_root(tmp_path),), session_idle_seconds=60)
    engine = ReadEngine(settings)
    with anyio.fail_after(HANG_GUARD):
        async with serving(settings, engine) as url, httpx2.AsyncClient(timeout=30) as http:
            opened = await http.post(url, json=_INITIALIZE, headers=_HEADERS)
            session = _in_session(opened.headers["mcp-session-id"])
            call = {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "sro_card", "arguments": {}}}
            assert (await http.post(url, json=call, headers={**_HEADERS, **session})).status_code == 200
            assert any(session["mcp-session-id"] in key for key in stored(engine))
            now[0] += 61  # a minute without a request
            await _fresh_clients_are_answered(url.removesuffix("/mcp"))  # any request looks for idle sessions
            again = await http.post(url, json=call, headers={**_HEADERS, **session})
    assert again.status_code == 404
    assert not any(session["mcp-session-id"] in key for key in stored(engine))


def stored(engine: ReadEngine) -> list[str]:
    """The keys of the reading sessions the engine keeps."""
    return engine.sessions.keys()
