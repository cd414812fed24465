"""MCP progress while a call prepares a large artifact (a big PDF, a big text file, a directory's index).

The server installs a sender for each tool call; preparation code reports `report(done, total, message)`
at its natural steps (a PDF page, an indexed file). Reports travel in a context variable, which anyio
copies into the worker thread, like the deadline. Outside a tool call (the CLI, library use) nothing is
installed and a report costs one lookup. The client sees `progress` rise from 0 to 100 (`total` 100),
strictly increasing as the protocol requires, at most every `MIN_STEP` points, with a message saying
what is being prepared; a client that sent no progress token gets nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

#: Artifacts at least this large announce their preparation (smaller ones are ready before a client could
#: draw anything); PDFs and workbooks cost far more per byte, since their text is extracted.
LARGE_BYTES = 512 * 1024
LARGE_BINARY_BYTES = 64 * 1024
#: Directories with at least this many files announce their index.
LARGE_FILE_COUNT = 200
#: Points of 100 between two notifications, so a 2,000-page PDF sends about 50, not 2,000.
MIN_STEP = 2.0

Send = Callable[[float, float, str], None]


@dataclass(slots=True)
class _Tracker:
    send: Send
    last: float = -1.0
    low: float = 0.0
    high: float = 100.0


_CURRENT: ContextVar[_Tracker | None] = ContextVar("sparseread_progress", default=None)


@contextmanager
def reporting(send: Send) -> Iterator[None]:
    """Send this call's progress reports through `send(progress, total, message)` (total is 100)."""
    token = _CURRENT.set(_Tracker(send))
    try:
        yield
    finally:
        _CURRENT.reset(token)


def report(done: float, total: float, message: str) -> None:
    """`done` of `total` steps of the current stage; cheap when nobody listens."""
    tracker = _CURRENT.get()
    if tracker is None or total <= 0:
        return
    value = round(tracker.low + (tracker.high - tracker.low) * min(max(done / total, 0.0), 1.0), 1)
    if value <= tracker.last or (value - tracker.last < MIN_STEP and value < tracker.high):
        return
    tracker.last = value
    tracker.send(value, 100.0, message)


def large_bytes(*, binary: bool) -> int:
    return LARGE_BINARY_BYTES if binary else LARGE_BYTES


@contextmanager
def preparing(what: str, *, large: bool) -> Iterator[None]:
    """Announce the preparation of a large artifact: 0 at the start, the reports of the work inside
    scaled into 0..95, and 100 when it is ready. Small artifacts and cache hits stay silent."""
    tracker = _CURRENT.get()
    if tracker is None or not large:
        yield
        return
    report_at(tracker, 0.0, f"preparing {what}")
    outer = tracker.low, tracker.high
    tracker.low, tracker.high = tracker.low, tracker.low + (tracker.high - tracker.low) * 0.95
    try:
        yield
    finally:
        tracker.low, tracker.high = outer
    report_at(tracker, 100.0, f"{what} ready")


def report_at(tracker: _Tracker, percent: float, message: str) -> None:
    value = round(tracker.low + (tracker.high - tracker.low) * percent / 100, 1)
    if value > tracker.last:
        tracker.last = value
        tracker.send(value, 100.0, message)
