"""Load and soak: concurrent HTTP sessions on loopback, and a long stdio soak. Not a test.

Run:  python -m bench.load_bench [--sessions 50] [--seconds 20] [--soak 10000]

HTTP: N concurrent clients (stateless streamable HTTP, each with its own server-issued session handle)
do mixed reads for a fixed time against one server; every client plants a unique marker in its session
intent and checks that no other client's marker ever shows up in its card (zero cross-session leaks).
Reports p50/p99 latency, errors, and the server's peak memory. Stdio: one client makes `--soak` calls
and the server's memory is sampled along the way; it should stay flat.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio
from mcp import Client, StdioServerParameters

REPO = Path(__file__).resolve().parent.parent


def script() -> str:
    return str(Path(sys.executable).with_name("sparseread-mcp"))


def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as handle:
        for line in handle:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def corpus(root: Path) -> None:
    for i in range(10):
        (root / f"doc{i}.md").write_text(
            f"# Document {i}\n\n"
            + "".join(f"## Part {k}\n\nPart {k} of document {i} about topic {k % 7}.\n\n" for k in range(300))
        )
    (root / "table.csv").write_text("id,group,value\n" + "".join(f"{i},g{i % 5},{i * 3}\n" for i in range(5000)))


#: What each step of a client's cycle asks.
KINDS = ("focus", "table query", "refine", "card")


async def one_client(
    url: str,
    number: int,
    until: float,
    latencies: dict[str, list[float]],
    errors: list[str],
    leaks: list[str],
    min_calls: int = 0,
) -> None:
    """Mixed reads until `until`, and at least `min_calls` of them whatever the time (a test on a busy
    machine counts calls, never how many fit in a window)."""
    marker = f"client-marker-{number:04d}"
    async with Client(url) as client:
        first = await client.call_tool("sro_read", {"target": f"doc{number % 10}.md", "intent": {"goal": marker}})
        handle = (first.structured_content or {}).get("session")
        step = 0
        while time.monotonic() < until or step < min_calls:
            step += 1
            kind = step % 4
            args: dict[str, object] = {"session": handle}
            if kind == 0:
                args |= {"target": f"doc{(number + step) % 10}.md", "intent": {"goal": f"topic {step % 7}"}}
            elif kind == 1:
                args |= {"target": "table.csv", "intent": {"query": 'SELECT "group", sum(value) FROM data GROUP BY 1'}}
            elif kind == 2:
                args |= {"target": f"doc{number % 10}.md", "action": "refine"}
            tool = "sro_card" if kind == 3 else "sro_read"
            if tool == "sro_card":
                args = {"session": handle}
            start = time.perf_counter()
            result = await client.call_tool(tool, args)
            latencies.setdefault(KINDS[kind], []).append(time.perf_counter() - start)
            text = result.content[0].text if result.content else ""  # type: ignore[union-attr]
            if result.is_error:
                errors.append(text[:120])
            elif tool == "sro_card":
                foreign = [w for w in text.split('"') if w.startswith("client-marker-") and w != marker]
                leaks.extend(foreign)


def http_load(sessions: int, seconds: float) -> list[str]:
    with tempfile.TemporaryDirectory() as tmp:
        corpus(Path(tmp))
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        server = subprocess.Popen(
            [script(), "--http", "--port", str(port), "--root", tmp],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            deadline = time.monotonic() + 30
            while True:
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=1).close()
                    break
                except OSError:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.05)
            latencies: dict[str, list[float]] = {}
            errors: list[str] = []
            leaks: list[str] = []
            peak = [0.0]

            async def run() -> None:
                until = time.monotonic() + seconds
                async with anyio.create_task_group() as group:
                    for n in range(sessions):
                        group.start_soon(one_client, f"http://127.0.0.1:{port}/mcp", n, until, latencies, errors, leaks)
                    while time.monotonic() < until:
                        peak[0] = max(peak[0], rss_mb(server.pid))
                        await anyio.sleep(0.5)

            anyio.run(run)
        finally:
            server.terminate()
            server.wait(timeout=10)
    every = sorted(t for times in latencies.values() for t in times)
    return [
        f"HTTP load: {sessions} concurrent sessions for {seconds:.0f} s, {len(every)} calls "
        f"({len(every) / seconds:.0f}/s)",
        f"  p50 {_ms(every, 0.5)}, p99 {_ms(every, 0.99)}; errors {len(errors)}; "
        f"cross-session leaks {len(leaks)}; server peak RSS {peak[0]:.0f} MB",
        *(
            f"  {kind}: {len(latencies[kind])} calls, p50 {_ms(sorted(latencies[kind]), 0.5)}, "
            f"p99 {_ms(sorted(latencies[kind]), 0.99)}"
            for kind in KINDS
            if kind in latencies
        ),
        *(f"  error: {e}" for e in errors[:5]),
    ]


def _ms(ordered: list[float], share: float) -> str:
    """The `share` quantile of sorted seconds, in milliseconds."""
    return f"{1000 * ordered[min(len(ordered) - 1, int(share * len(ordered)))]:.1f} ms"


def stdio_soak(calls: int) -> list[str]:
    with tempfile.TemporaryDirectory() as tmp:
        corpus(Path(tmp))
        samples: list[tuple[int, float]] = []

        async def run() -> None:
            params = StdioServerParameters(command=script(), args=["--root", tmp])
            async with Client(params) as client:
                pid = _server_pid()
                for i in range(calls):
                    goal = f"topic {i % 7} part {i % 300}"
                    await client.call_tool("sro_read", {"target": f"doc{i % 10}.md", "intent": {"goal": goal}})
                    if i % max(1, calls // 10) == 0 and pid:
                        samples.append((i, rss_mb(pid)))
                if pid:
                    samples.append((calls, rss_mb(pid)))

        start = time.perf_counter()
        anyio.run(run)
        elapsed = time.perf_counter() - start
    growth = samples[-1][1] - samples[1][1] if len(samples) > 2 else 0.0
    return [
        f"stdio soak: {calls} calls in {elapsed:.0f} s ({calls / elapsed:.0f}/s); server RSS by call: "
        + ", ".join(f"{i}: {mb:.0f} MB" for i, mb in samples),
        f"  growth after warm-up: {growth:+.1f} MB",
    ]


def _server_pid() -> int:
    """The newest sparseread-mcp child of this process (the stdio server)."""
    children = Path(f"/proc/{os.getpid()}/task/{os.getpid()}/children").read_text().split()
    return int(children[-1]) if children else 0


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--sessions", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--soak", type=int, default=10_000)
    args = parser.parse_args()
    for row in http_load(args.sessions, args.seconds):
        print(row, flush=True)
    for row in stdio_soak(args.soak):
        print(row, flush=True)


if __name__ == "__main__":
    asyncio.set_event_loop_policy(None)
    main()
