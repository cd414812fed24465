"""The worker pool on its own: a crash or a kill costs one worker, a session holds at most its share, a freed
worker goes to the session holding fewest, and a call that cannot get a worker before its deadline is told
so. Tasks come from tests/slow_readers.py, which the workers import by name (conftest puts the folder on
their path)."""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from slow_readers import crash, echo, note, process_exists, wait_forever

from sparseread_mcp.deadline import TimedOut, deadline
from sparseread_mcp.errors import ReaderCrashed
from sparseread_mcp.isolation import WorkerPool, tenant

HANG_GUARD = 120.0


def _until(condition: Callable[[], bool]) -> None:
    """Wait for `condition` (a hang guard bounds it, not a timing assertion)."""
    with deadline(HANG_GUARD) as limit:
        while not condition():
            limit.check()
            limit.cancelled.wait(0.02)


def _wait_for_pid(marker: Path) -> int:
    _until(lambda: marker.exists() and marker.read_text().isdigit())
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
        _until(lambda: not process_exists(idle.pid))
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
    _until(lambda: not process_exists(pid))  # the stuck task's process was killed, not left running
    pool.close()


def test_a_freed_worker_goes_to_the_session_holding_fewest_before_an_earlier_call_of_a_busier_one(
    tmp_path: Path,
) -> None:
    """Session a holds both workers and queues a third call; session b queues one after it. When one of a's
    workers is freed, b (holding none) is served first, though a's call waited longer; a's call runs next."""
    pool = WorkerPool(size=2, memory_mb=256, share=2)
    ran = tmp_path / "ran"
    holders: list[object] = []
    threads: list[threading.Thread] = []

    def hold(marker: Path) -> None:
        with tenant("a"), deadline(HANG_GUARD) as limit:
            holders.append(limit)
            with contextlib.suppress(TimedOut):
                pool.run(wait_forever, str(marker), label="held.txt", seconds=HANG_GUARD)

    def queue(key: str) -> None:
        with tenant(key), deadline(HANG_GUARD):
            pool.run(note, str(ran), key, label=f"{key}.txt", seconds=HANG_GUARD)

    def start(target: Callable[..., None], *args: object) -> None:
        thread = threading.Thread(target=target, args=args)
        threads.append(thread)
        thread.start()

    try:
        start(hold, tmp_path / "pid1")
        _wait_for_pid(tmp_path / "pid1")
        start(hold, tmp_path / "pid2")
        _wait_for_pid(tmp_path / "pid2")
        start(queue, "a")  # a holds two workers, its share: this call waits
        _until(lambda: pool.waiting == 1)
        start(queue, "b")  # no worker is free: this call waits too, behind a's
        _until(lambda: pool.waiting == 2)
        holders[0].cancelled.set()  # type: ignore[attr-defined]  # one of a's workers is killed and freed
        _until(lambda: ran.exists() and len(ran.read_text().split()) == 2)
        assert ran.read_text().split() == ["b", "a"]
    finally:
        for limit in holders:
            limit.cancelled.set()  # type: ignore[attr-defined]
        for thread in threads:
            thread.join(HANG_GUARD)
        pool.close()
