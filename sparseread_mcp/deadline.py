"""Cooperative time limits and cancellation for work that runs in worker threads.

The server opens a `Deadline` around each call; long loops (directory walks, searches, page extraction)
call `checkpoint()`, which raises `TimedOut` once the deadline passed or the client cancelled. The value
travels in a context variable, which anyio copies into the worker thread.

A client cancellation (MCP `notifications/cancelled`, or the in-process client's cancel scope) cancels the
task that awaits the worker thread. That task waits for the thread (anyio shields the wait), so the thread
asks anyio whether its host was cancelled: the work stops at its next checkpoint, and the server never has
a thread still running for a call it has already given up on.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field

import anyio.from_thread

from .errors import SparsereadError


class TimedOut(SparsereadError):
    """The call ran past its time limit or was cancelled by the client."""


@dataclass(slots=True)
class Deadline:
    seconds: float
    started: float = field(default_factory=time.monotonic)
    cancelled: threading.Event = field(default_factory=threading.Event)
    #: Seconds spent so far by kinds of work that run under their own timeout (regex matching), so that a
    #: kind can be capped per call and not only per step.
    spent: dict[str, float] = field(default_factory=dict)

    def check(self) -> None:
        if not self.cancelled.is_set() and _host_cancelled():
            self.cancelled.set()
        if self.cancelled.is_set():
            raise TimedOut("the client cancelled this call; nothing was delivered")
        if time.monotonic() - self.started > self.seconds:
            raise TimedOut(
                f"the call ran past its {self.seconds:.0f} s limit and was stopped; narrow it (a subfolder, an "
                "anchor, needles) or raise SPARSEREAD_CALL_TIMEOUT"
            )

    def remaining(self) -> float:
        """Seconds left before the limit (0 once it passed), for work that takes its own timeout."""
        return max(0.0, self.seconds - (time.monotonic() - self.started))


def _host_cancelled() -> bool:
    """Whether the task awaiting this worker thread was cancelled; False outside anyio worker threads."""
    try:
        anyio.from_thread.check_cancelled()
    except asyncio.CancelledError:
        return True
    except RuntimeError:  # not an anyio worker thread (a library caller, a test's own thread)
        return False
    return False


_CURRENT: ContextVar[Deadline | None] = ContextVar("sparseread_deadline", default=None)


@contextmanager
def deadline(seconds: float) -> Iterator[Deadline]:
    limit = Deadline(seconds)
    token = _CURRENT.set(limit)
    try:
        yield limit
    finally:
        _CURRENT.reset(token)


def remaining() -> float | None:
    """Seconds left in the current call, or None outside a call (a library caller without a deadline)."""
    limit = _CURRENT.get()
    return None if limit is None else limit.remaining()


def allowance(kind: str, cap: float) -> float:
    """Seconds the next step of `kind` may take: what is left of the call, and of `cap` seconds for every
    step of that kind in this call together (the whole cap for each step outside a call)."""
    limit = _CURRENT.get()
    if limit is None:
        return cap
    return max(0.0, min(limit.remaining(), cap - limit.spent.get(kind, 0.0)))


def spend(kind: str, seconds: float) -> None:
    """Count `seconds` of `kind` against the current call's cap (see `allowance`)."""
    limit = _CURRENT.get()
    if limit is not None:
        limit.spent[kind] = limit.spent.get(kind, 0.0) + seconds


def checkpoint() -> None:
    """Raise TimedOut when the current call's deadline passed or it was cancelled; cheap otherwise."""
    limit = _CURRENT.get()
    if limit is not None:
        limit.check()
