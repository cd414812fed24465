"""Fair shares of the worker threads: no session can take them all, and no call waits for ever.

Every tool call's engine work runs in a worker thread. Without a scheduler they come from anyio's one
pool of 40: forty slow calls of one client (or forty calls of one session, all but one waiting on that
session's lock) leave nothing for anyone else. Here at most `total` calls run at once, at most
`per_session` of them from one session; the others wait in a queue, and a freed place goes to the waiting
call whose session has the fewest calls running (the longest waiting first among equals), so a session
that has nothing running is served before another session's next call. A call waits at most until its
own time limit: then it gets `ServerBusy`, which says which limit it met. Runs on the event loop only (no
locks): `slot` is entered and left by async tasks.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

import anyio

from ..errors import ServerBusy


@dataclass(slots=True)
class _Waiter:
    session: str
    order: int
    granted: anyio.Event = field(default_factory=anyio.Event)


class FairScheduler:
    """Places for calls to run: `total` at once, `per_session` per session, granted fairly."""

    def __init__(self, *, total: int, per_session: int) -> None:
        self.total = total
        self.per_session = per_session
        #: The thread limiter the calls run under: as many threads as places, apart from anyio's default
        #: pool (which the SDK and Starlette use for their own work).
        self.limiter = anyio.CapacityLimiter(total)
        self._running: Counter[str] = Counter()
        self._waiting: list[_Waiter] = []
        self._order = itertools.count()

    @property
    def running(self) -> int:
        return sum(self._running.values())

    @asynccontextmanager
    async def slot(self, session: str, seconds: float) -> AsyncIterator[None]:
        """Hold a place for `session`'s call while the block runs; wait for one at most `seconds`."""
        waiter = _Waiter(session, next(self._order))
        self._waiting.append(waiter)
        self._grant()
        try:
            with anyio.move_on_after(seconds):
                await waiter.granted.wait()
        except BaseException:  # cancelled by its client while waiting (or granted just then)
            self._leave(waiter)
            raise
        if not waiter.granted.is_set():
            self._waiting.remove(waiter)
            raise ServerBusy(self._busy_message(session, seconds))
        try:
            yield
        finally:
            self._leave(waiter)

    def _leave(self, waiter: _Waiter) -> None:
        """The call is done, or gave up: its place (or its place in the queue) goes to the next."""
        if not waiter.granted.is_set():
            self._waiting.remove(waiter)
            return
        self._running[waiter.session] -= 1
        if not self._running[waiter.session]:
            del self._running[waiter.session]
        self._grant()

    def _grant(self) -> None:
        """Give free places to the waiting calls of the sessions with the fewest calls running."""
        while self.running < self.total:
            eligible = [w for w in self._waiting if self._running[w.session] < self.per_session]
            if not eligible:
                return
            chosen = min(eligible, key=lambda w: (self._running[w.session], w.order))
            self._waiting.remove(chosen)
            self._running[chosen.session] += 1
            chosen.granted.set()

    def _busy_message(self, session: str, seconds: float) -> str:
        mine = self._running[session]
        if mine >= self.per_session:
            why = (
                f"this session already runs {mine} calls, its share (SPARSEREAD_MAX_CALLS_PER_SESSION="
                f"{self.per_session}); wait for their answers or cancel them before sending more"
            )
        else:
            why = (
                f"all {self.total} places for calls are taken by other sessions (SPARSEREAD_MAX_CALLS={self.total}); "
                "retry shortly"
            )
        return f"the call waited its whole {seconds:.0f} s limit for a place to run and did not start: {why}"
