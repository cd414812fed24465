"""The probe every attack test runs: while one client's hostile call is pending on a real HTTP server,
`/healthz` and a second session must keep answering; afterwards the server is alive and the hostile call
ended with an answer or a typed error, never an internal one. No clock decides: the probes run for as
long as the attack is pending, and the hang guard only catches a server that froze."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx
from flow import answer_record
from mcp import Client
from test_mcp_transports import running_http_server

HANG_GUARD = 240
PROBE_FILE = "probe.md"
PROBE_MARK = "PROBE-MARK-7"


@dataclass
class Outcome:
    result: Any
    probes_meanwhile: int

    @property
    def text(self) -> str:
        return "".join(getattr(block, "text", "") for block in self.result.content)


def with_probe_file(root: Path) -> Path:
    (root / PROBE_FILE).write_text(f"# Probe\n\nThe probe says {PROBE_MARK}.\n")
    return root


@contextmanager
def hostile_server(root: Path, log_dir: Path, *extra: str) -> Iterator[str]:
    with_probe_file(root)
    with running_http_server(root, log_dir, *extra) as url:
        yield url


async def probe(url: str, other: Client, http: httpx.AsyncClient) -> None:
    result = await other.call_tool("sro_read", {"target": f"{PROBE_FILE}#L3"})
    health = await http.get(f"{url}/healthz")
    assert not result.is_error and PROBE_MARK in str(answer_record(result)), result
    assert health.status_code == 200, health.text


async def under_attack(url: str, attack: Callable[[Client], Awaitable[Any]]) -> Outcome:
    """Run `attack` with its own client while another session probes; then probe once more."""
    done = anyio.Event()
    box: list[Any] = []
    meanwhile = 0
    with anyio.fail_after(HANG_GUARD):
        async with Client(f"{url}/mcp") as attacker, Client(f"{url}/mcp") as other, httpx.AsyncClient() as http:

            async def run() -> None:
                box.append(await attack(attacker))
                done.set()

            async with anyio.create_task_group() as tasks:
                tasks.start_soon(run)
                while not done.is_set():
                    await probe(url, other, http)
                    meanwhile += not done.is_set()
            async with Client(f"{url}/mcp") as fresh:  # alive after, and a new session starts
                await probe(url, fresh, http)
    return Outcome(result=box[0], probes_meanwhile=meanwhile)


def typed(outcome: Outcome) -> bool:
    """An answer, or an error written for the model: never an internal error."""
    return not outcome.result.is_error or ("internal error" not in outcome.text and len(outcome.text) <= 600)
