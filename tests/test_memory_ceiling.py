"""The server-wide memory ceiling (issue #12): a call that allocates past `--max-memory-mb` is answered
with a typed error, the server goes on serving, and its peak memory stays near the ceiling. The real
server over stdio with the official client; the only timing is a hang guard."""

from __future__ import annotations

import os
import sys
import weakref
from pathlib import Path

import anyio
import pytest
from docs import long_markdown
from mcp import Client, StdioServerParameters

from sparseread_mcp.ceiling import released_on_memory_error

pytestmark = [pytest.mark.anyio, pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs /proc")]

CEILING_MB = 512
#: Peak resident memory may pass the data-segment limit by the shared libraries' code (file mappings,
#: which the limit does not count) and the interpreter's own text: a small margin.
MARGIN_MB = 96


def _server_pid(marker: str) -> int:
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmdline = (entry / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if marker.encode() in cmdline and b"--max-memory-mb" in cmdline:
                return int(entry.name)
    raise AssertionError("the server process was not found")


def _peak_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmHWM in /proc status")


async def test_a_call_past_the_memory_ceiling_gets_a_typed_error_and_the_server_goes_on(tmp_path: Path) -> None:
    root = tmp_path / "data"
    root.mkdir()
    # 30 MB of JSON (under max_parse_bytes) whose parse tree is ten million lists: well over 512 MiB.
    (root / "tree.json").write_text("[" + "[]," * 10_000_000 + "[]]")
    (root / "manual.md").write_text(long_markdown())
    args = ["-m", "sparseread_mcp", "--root", str(root), "--location", "bm25", "--max-memory-mb", str(CEILING_MB)]
    params = StdioServerParameters(command=sys.executable, args=args, env=dict(os.environ))
    with anyio.fail_after(180):  # a hang guard only: on a machine whose cores are busy this takes minutes
        async with Client(params) as client:
            pid = _server_pid(str(root))
            heavy = await client.call_tool("sro_read", {"target": "tree.json", "intent": {"goal": "the last list"}})
            light = await client.call_tool("sro_preview", {"path": "manual.md"})
            again = await client.call_tool("sro_read", {"target": "manual.md", "intent": {"goal": "turbine"}})
            peak = _peak_mb(pid)
    print(f"\nmemory ceiling {CEILING_MB} MiB: server peak resident {peak:.0f} MiB")
    message = "".join(getattr(block, "text", "") for block in heavy.content)
    # The parse runs in a worker, whose limit is fitted under the ceiling (half of it): the worker's
    # allocation fails, the call says so, and the server never came near its own ceiling.
    assert heavy.is_error and f"the {CEILING_MB // 2} MiB a worker may use" in message and "line ranges" in message
    assert not light.is_error and not again.is_error
    assert peak < CEILING_MB + MARGIN_MB, f"peak resident memory {peak:.0f} MiB"


class _Partial:
    """Stands for the objects a parse had built when it ran out of memory."""


def test_what_a_failed_parse_held_is_freed_before_its_memory_error_travels_on() -> None:
    # The server spun at the ceiling because the traceback kept the failed parse's objects alive while
    # CPython unwound through `with` blocks that need a little memory each: they must be gone first.
    held: list[weakref.ref[_Partial]] = []

    def parse() -> None:
        partial = _Partial()
        held.append(weakref.ref(partial))
        raise MemoryError

    with pytest.raises(MemoryError) as caught:
        released_on_memory_error(parse)
    assert held and held[0]() is None, "the failed parse's objects are still alive as the error travels"
    assert caught.value.__context__ is None and caught.value.__cause__ is None


def test_a_parse_that_succeeds_is_returned_as_is() -> None:
    assert released_on_memory_error(lambda: [1, 2, 3]) == [1, 2, 3]
