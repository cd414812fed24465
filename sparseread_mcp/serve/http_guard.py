"""Connection limits for the HTTP server: uvicorn's h11 protocol with a request timeout and a cap.

uvicorn closes idle keep-alive connections but waits for ever on a request that never completes, so a
client that opens many sockets and sends half a request line (or a head and half its body) holds them,
and the process's file descriptors, for as long as it likes. Here every connection must finish sending
its request, head and body, within `header_timeout` seconds of its first byte (or of connecting), and
past `max_connections` open connections the oldest one still waiting for its request is closed to make
room; when none is waiting, the new connection is refused instead. Responses are not timed here: a
call's own limit bounds the work.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import resource

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

logger = logging.getLogger(__name__)

#: The listen backlog, which is also how many connections asyncio accepts in one go before any of them
#: reaches `connection_made` (where the cap applies): uvicorn's 2,048 would open that many descriptors
#: in a burst, past a 1,024 open-files limit, and then nobody is accepted. Kept small, so the cap holds.
ACCEPT_BACKLOG = 128
#: Descriptors kept free beyond the connection cap and two accept bursts, for files, the session store
#: and worker threads.
SPARE_DESCRIPTORS = 128
#: Connections closed over the cap are logged at most this often.
CAP_WARNING_SECONDS = 60.0


class GuardedH11Protocol(H11Protocol):
    """One HTTP connection; `connection_guard` makes a subclass carrying the settings."""

    header_timeout: float = 10.0
    max_connections: int = 512
    _opened = itertools.count()
    _order = 0
    _head_timer: asyncio.TimerHandle | None = None
    _capped = 0
    _warned_at = -CAP_WARNING_SECONDS

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._order = next(self._opened)
        self._arm_head_timer()
        self._enforce_cap()

    def data_received(self, data: bytes) -> None:
        if self._head_timer is None and self.awaiting_request:
            self._arm_head_timer()  # a keep-alive connection starting its next request
        super().data_received(data)
        if not self.awaiting_request:
            self._cancel_head_timer()

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_head_timer()
        super().connection_lost(exc)

    @property
    def awaiting_request(self) -> bool:
        """The request is not all in yet: no complete head (a new connection, or an idle keep-alive one),
        or a head whose body is still arriving."""
        return self.conn.their_state in (h11.IDLE, h11.SEND_BODY)

    def close(self, why: str) -> None:
        logger.debug("closing HTTP connection from %s: %s", self.client, why)
        self._cancel_head_timer()
        if not self.transport.is_closing():
            self.transport.close()

    def _arm_head_timer(self) -> None:
        self._cancel_head_timer()
        self._head_timer = self.loop.call_later(self.header_timeout, self._head_timed_out)

    def _cancel_head_timer(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_timed_out(self) -> None:
        self._head_timer = None
        if self.awaiting_request:
            self.close(f"no complete request within {self.header_timeout:g} s")

    def _enforce_cap(self) -> None:
        if len(self.connections) <= self.max_connections:
            return
        waiting = [
            c
            for c in self.connections
            if isinstance(c, GuardedH11Protocol)
            and c is not self
            and c.awaiting_request
            and not c.transport.is_closing()
        ]
        victim = min(waiting, key=lambda c: c._order, default=self)
        victim.close("over the connection cap")
        GuardedH11Protocol._capped += 1
        now = self.loop.time()
        if now - GuardedH11Protocol._warned_at >= CAP_WARNING_SECONDS:  # a flood must not flood the log too
            GuardedH11Protocol._warned_at = now
            logger.warning(
                "%d HTTP connections open, the cap is %d: closed %d connections over the cap so far (the oldest "
                "ones still waiting for their request, or new ones when all are busy)",
                len(self.connections),
                self.max_connections,
                GuardedH11Protocol._capped,
            )


def connection_guard(*, header_timeout: float, max_connections: int) -> type[GuardedH11Protocol]:
    """The protocol class to pass to uvicorn as `http=`, with these limits."""
    return type(
        "SettingsGuardedH11Protocol",
        (GuardedH11Protocol,),
        {"header_timeout": header_timeout, "max_connections": max_connections},
    )


def reserve_descriptors(max_connections: int) -> None:
    """Raise the soft open-files limit (up to the hard one) so the cap, not the OS, is what runs out."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = descriptors_needed(max_connections)
    if soft != resource.RLIM_INFINITY and soft < wanted:
        target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    if soft != resource.RLIM_INFINITY and soft < wanted:
        logger.warning(
            "open-files limit %d is below the %d that %d connections need: lower --max-connections",
            soft,
            wanted,
            max_connections,
        )


def descriptors_needed(max_connections: int) -> int:
    """Open files the HTTP server may need: the cap, two accept bursts not yet capped, and spare."""
    return max_connections + 2 * ACCEPT_BACKLOG + SPARE_DESCRIPTORS
