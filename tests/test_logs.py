"""In stdio mode stdout is the wire: only JSON-RPC there; logs go to stderr, as JSON lines when asked."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path

from docs import long_markdown

from sparseread_mcp.wire import record_of


def rpc(id_: int | None, method: str, params: dict[str, object]) -> str:
    message: dict[str, object] = {"jsonrpc": "2.0", "method": method, "params": params}
    if id_ is not None:
        message["id"] = id_
    return json.dumps(message)


def test_stdout_carries_only_json_rpc_and_logs_are_json_lines_on_stderr(tmp_path: Path) -> None:
    (tmp_path / "big.md").write_text(long_markdown(sections=200))
    requests = [
        rpc(
            1,
            "initialize",
            {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}},
        ),
        rpc(None, "notifications/initialized", {}),
        rpc(2, "tools/list", {}),
        rpc(3, "tools/call", {"name": "sro_read", "arguments": {"target": "big.md", "intent": {"goal": "glacier"}}}),
        rpc(4, "tools/call", {"name": "sro_read", "arguments": {"target": "../outside.md"}}),  # an error, logged
    ]
    command = [sys.executable, "-m", "sparseread_mcp", "--root", str(tmp_path), "--log-level", "DEBUG"]
    with subprocess.Popen(
        [*command, "--log-format", "json"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as server:
        watchdog = threading.Timer(60, server.kill)  # a hung server fails the test instead of hanging it
        watchdog.start()
        assert server.stdin is not None and server.stdout is not None and server.stderr is not None
        server.stdin.write("\n".join(requests) + "\n")
        server.stdin.flush()
        lines: list[str] = []
        answered: set[object] = set()
        # Calls run concurrently: the error (4) may be answered before the read (3). Close the input only
        # once both are, or the read in flight is cut off ("Connection closed").
        while not {3, 4} <= answered and (line := server.stdout.readline()):
            lines.append(line)
            answered.add(json.loads(line).get("id"))
        server.stdin.close()  # end of input: the server exits
        lines += server.stdout.readlines()
        stderr = server.stderr.read()
        watchdog.cancel()
    replies = [json.loads(line) for line in lines]
    assert all(r["jsonrpc"] == "2.0" for r in replies)
    by_id = {r["id"]: r for r in replies if "id" in r}
    assert {1, 2, 3, 4} <= set(by_id)
    assert "result" in by_id[3], (by_id[3], stderr[-3000:])
    assert record_of([block["text"] for block in by_id[3]["result"]["content"]])["items"]
    assert by_id[4]["result"]["isError"]
    logs = [json.loads(line) for line in stderr.splitlines() if line.strip()]
    assert logs, "DEBUG logging produced no records"
    assert all({"time", "level", "logger", "message"} <= set(entry) for entry in logs)
    assert any(entry["level"] == "DEBUG" for entry in logs)
