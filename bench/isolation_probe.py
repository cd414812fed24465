"""One measuring process for bench/isolation_bench.py: imports whichever sparseread_mcp is first on
PYTHONPATH (the code before or after the worker boundary) and prints one JSON line of timings.

Run by path (python bench/isolation_probe.py ROOT GOALS_JSON), never as part of a package, so that the
tree under test is the only sparseread_mcp it can import."""

from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path

WARM_REPEATS = 15


def main(root: Path, goals: dict[str, str]) -> dict[str, object]:
    from sparseread_mcp import Intent, ReadEngine, ReadRequest, Settings

    settings = Settings(roots=(root,), location="bm25")
    first_name = sorted(goals)[0]
    started = time.perf_counter()
    ReadEngine(settings).preview("first", first_name)
    first_call = time.perf_counter() - started
    cold: dict[str, float] = {}
    warm: dict[str, float] = {}
    for name, goal in sorted(goals.items()):
        engine = ReadEngine(settings)  # fresh caches: the file's first preview in a running server
        started = time.perf_counter()
        engine.preview("cold", name)
        cold[name] = time.perf_counter() - started
        request = ReadRequest(target=name, action="focus", intent=Intent(goal=goal))
        engine.read("warmup", request)
        times = []
        for repeat in range(WARM_REPEATS):
            started = time.perf_counter()
            engine.read(f"warm{repeat}", request)  # a new session each time: nothing "already delivered"
            times.append(time.perf_counter() - started)
        warm[name] = statistics.median(times)
    return {"first_call": first_call, "cold_preview": cold, "warm_focus": warm}


if __name__ == "__main__":
    print(json.dumps(main(Path(sys.argv[1]), json.loads(sys.argv[2]))))
