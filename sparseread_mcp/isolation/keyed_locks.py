"""One holder at a time per key, waited for under the call's deadline: calls that open the same file at
once take turns, so the second finds the first's parse held instead of parsing again.

Forty sessions that read one new 1.7 MB text at the same moment paid forty parses before, each in a worker,
and a forty-first session waited for a free worker past its limit; now they pay one. A key is forgotten when
no call holds or waits for it, so a server that reads many files keeps none of them here.
"""

from __future__ import annotations

import threading
from collections.abc import Hashable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from ..deadline import TimedOut, checkpoint

#: How often a waiting call looks at its deadline and at the client's cancellation.
_POLL_SECONDS = 0.05


@dataclass(slots=True)
class _Entry:
    lock: threading.Lock = field(default_factory=threading.Lock)
    users: int = 0  # holding or waiting


class KeyedLocks:
    def __init__(self) -> None:
        self._entries: dict[Hashable, _Entry] = {}
        self._guard = threading.Lock()

    @contextmanager
    def hold(self, key: Hashable, *, label: str) -> Iterator[None]:
        """Hold `key`'s lock for the block, waiting for an earlier holder under the call's deadline; a call
        whose limit passes while it waits gets a TimedOut that names `label` (what it was reading)."""
        with self._guard:
            entry = self._entries.setdefault(key, _Entry())
            entry.users += 1
        try:
            while not entry.lock.acquire(timeout=_POLL_SECONDS):
                try:
                    checkpoint()
                except TimedOut as exc:
                    raise TimedOut(f"{exc} (it waited for another call reading {label} to finish)") from exc
            try:
                yield
            finally:
                entry.lock.release()
        finally:
            with self._guard:
                entry.users -= 1
                if not entry.users:
                    del self._entries[key]
