"""The worker pool on its own: a crash or a kill costs one worker, a session holds at most its share, and
a call that cannot get a worker before its deadline is told so. Tasks come from tests/slow_readers.py,
which the workers import by name (conftest puts the folder on their path)."""

from __future__ import annotations

import os
import signal
import threading
from pathlib import Path

import pytest
from slow_readers import crash, echo, process_exists, wait_forever

from sparseread_mcp.deadline import TimedOut, deadline
from sparseread_mcp.errors import ReaderCrashed
from sparseread_mcp.isolation import WorkerPool, tenant

HANG_GUARD = 120.0


def _wait_for_pid(marker: Path) -> int:
    with deadline(HANG_GUARD) as limit:
        while not (marker.exists() and marker.read_text().isdigit()):
            limit.check()
            limit.cancelled.wait(0.02)
    return int(marker.read_text())


def test_a_crashed_task_costs_its_worker_and_the_next_task_gets_another() -> None:
    pool = WorkerPool(size=1, memory_mb=256)
    try:
        with pytest.raises(ReaderCrashed, match=r"the reader crashed on crash\.bin"):
            pool.run(crash, label="crash.bin", seconds=HANG_GUARD)
        assert pool.run(echo, "still here", label="echo", seconds=HANG_GUARD) == "still here"
        assert pool.stats.crashed == 1 and pool.stats.started == 2
    finally:
        pool.close()


def test_a_worker_killed_while_idle_is_replaced() -> None:
    pool = WorkerPool(size=1, memory_mb=256)
    try:
        pool.run(echo, 1, label="echo", seconds=HANG_GUARD)
        (idle,) = pool._idle
        os.kill(idle.pid, signal.SIGKILL)  # as the kernel's OOM killer or an operator would
        with deadline(HANG_GUARD) as limit:
            while process_exists(idle.pid):
                limit.check()
                limit.cancelled.wait(0.02)
        assert pool.run(echo, 2, label="echo", seconds=HANG_GUARD) == 2
        assert pool.stats.started == 2
    finally:
        pool.close()


def test_a_session_holds_at_most_its_share_and_a_task_past_its_deadline_is_killed(tmp_path: Path) -> None:
    pool = WorkerPool(size=2, memory_mb=256, share=1)
    marker = tmp_path / "pid"
    outcome: list[BaseException] = []
    held = deadline(HANG_GUARD)

    def hold() -> None:
        with tenant("a"), held as limit:
            limits.append(limit)
            try:
                pool.run(wait_forever, str(marker), label="stuck.txt", seconds=HANG_GUARD)
            except TimedOut as exc:
                outcome.append(exc)

    limits: list[object] = []
    holder = threading.Thread(target=hold)
    holder.start()
    try:
        pid = _wait_for_pid(marker)
        # Session a holds its one share: its next call waits for it and is told so at its deadline ...
        with tenant("a"), deadline(1), pytest.raises(TimedOut, match="waited for a free worker"):
            pool.run(echo, "a", label="echo", seconds=HANG_GUARD)
        # ... while session b is served by the other worker at once.
        with tenant("b"), deadline(HANG_GUARD):
            assert pool.run(echo, "b", label="echo", seconds=HANG_GUARD) == "b"
    finally:
        limits[0].cancelled.set()  # type: ignore[attr-defined]
        holder.join(HANG_GUARD)
    assert outcome and "reading stuck.txt" in str(outcome[0])
    with deadline(HANG_GUARD) as limit:
        while process_exists(pid):  # the stuck task's process was killed, not left running
            limit.check()
            limit.cancelled.wait(0.02)
    pool.close()
