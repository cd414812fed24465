"""Who gets a freed worker: a light session's wait among busy ones, with the pool of this checkout and, where
`--before` names another checkout, with that one's pool in the same run. Not a test.

Run:  python bench/pool_fairness_bench.py [--seconds 20] [--before /tmp/old-checkout]

(a script, not `-m bench...`: it runs again under `--before`'s package, whose `bench` folder lacks this file).
One `WorkerPool` (2 workers, a session's share 1, as on a two-core server). Busy sessions each keep several
calls in flight, every call holding a worker for `--task` seconds (a sleep: the worker is what is measured,
not the processor). One light session asks a call at a time (a sleep of 0), then pauses 0.1 s, as an agent
reading small files would. Reported: the light calls' waits (median, 90th and 99th percentile, worst) and
how evenly the busy sessions were served (calls done per session, least and most).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

from sparseread_mcp.deadline import deadline
from sparseread_mcp.isolation import WorkerPool, tenant

LIGHT_PAUSE = 0.1


def measure(seconds: float, busy: int, calls: int, task: float) -> dict[str, float]:
    pool = WorkerPool(size=2, memory_mb=256, share=1)
    pool.prestart()
    stop = time.monotonic() + seconds
    done: dict[str, int] = {f"busy{k}": 0 for k in range(busy)}
    waits: list[float] = []
    lock = threading.Lock()

    def busy_loop(key: str) -> None:
        with tenant(key), deadline(seconds + 60):
            while time.monotonic() < stop:
                pool.run(time.sleep, task, label=f"{key}.txt", seconds=60)
                with lock:
                    done[key] += 1

    def light_loop() -> None:
        time.sleep(1.0)  # the busy sessions first fill the workers and the queue
        with tenant("light"), deadline(seconds + 60):
            while time.monotonic() < stop:
                started = time.monotonic()
                pool.run(time.sleep, 0, label="light.txt", seconds=60)
                waits.append(time.monotonic() - started)
                time.sleep(LIGHT_PAUSE)

    threads = [threading.Thread(target=busy_loop, args=(key,)) for key in done for _ in range(calls)]
    threads.append(threading.Thread(target=light_loop))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    pool.close()
    ordered = sorted(waits)
    return {
        "light calls": len(waits),
        "wait median (s)": statistics.median(ordered),
        "wait p90 (s)": ordered[int(0.9 * (len(ordered) - 1))],
        "wait p99 (s)": ordered[int(0.99 * (len(ordered) - 1))],
        "wait worst (s)": ordered[-1],
        "busy calls, least": min(done.values()),
        "busy calls, most": max(done.values()),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--busy", type=int, default=4, help="busy sessions")
    parser.add_argument("--calls", type=int, default=3, help="calls each busy session keeps in flight")
    parser.add_argument("--task", type=float, default=0.2, help="seconds a busy call holds its worker")
    parser.add_argument("--before", type=Path, help="another checkout: its pool measured in the same run")
    parser.add_argument("--json", action="store_true", help="print this checkout's figures as JSON only")
    args = parser.parse_args()
    figures = {"this checkout": measure(args.seconds, args.busy, args.calls, args.task)}
    if args.json:
        print(json.dumps(figures["this checkout"]))
        return
    if args.before:
        command = [sys.executable, __file__, "--json", *sys.argv[1:]]
        env = {**os.environ, "PYTHONPATH": str(args.before)}
        out = subprocess.run(command, env=env, cwd=args.before, capture_output=True, text=True, check=True)
        figures[f"before ({args.before})"] = json.loads(out.stdout.strip().splitlines()[-1])
    names = list(figures)
    print(
        f"{args.busy} busy sessions x {args.calls} calls of {args.task:g} s, one light session, "
        f"2 workers, share 1, {args.seconds:g} s"
    )
    print("| figure | " + " | ".join(names) + " |")
    print("|---" * (len(names) + 1) + "|")
    for key in figures[names[0]]:
        print(f"| {key} | " + " | ".join(f"{figures[n][key]:.3g}" for n in names) + " |")


if __name__ == "__main__":
    main()
