"""The server side of the boundary: a pool of worker processes, each killable, shared fairly.

`WorkerPool.run(task, *args, label=...)` sends a task (a module-level function of `isolation.tasks`) and
its plain arguments to an idle worker and waits for the answer under the current call's deadline. A task
that overruns is killed with its process (SIGKILL: native code cannot ignore it), the worker is replaced
on the next demand, and the call gets a typed error that names what was being read and the limit. A
worker that dies (a segfault in a parser, the kernel's OOM killer) costs that call and that process only.

Fairness: each tenant (a reading session) may hold at most `share` workers at once, so one client's slow
files never occupy every worker; a freed worker goes to the waiting call whose session holds the fewest
workers, then to the session served longest ago (sessions take turns, whatever number of calls each keeps
waiting), then to the call that has waited longest; a call that cannot get a worker before its deadline is
told so.
Workers come from one forking process (zygote.py) whose modules are imported once, so replacing one
costs a fork, not an interpreter start.
"""

from __future__ import annotations

import atexit
import contextlib
import itertools
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any, TypeVar

from .. import progress
from ..config import Settings
from ..deadline import TimedOut, checkpoint, remaining
from ..errors import OverLimit, ReaderCrashed, SparsereadError, UnsupportedArtifact
from .worker import ANSWER, REQUEST

T = TypeVar("T")

#: How often a waiting call looks at its deadline and at the client's cancellation.
_POLL_SECONDS = 0.05

#: Replies after which a worker is not reused: memory a library allocated natively may not have been freed.
_SPENT = frozenset({"memory", "failed"})
#: Tasks before a worker is replaced anyway, so slow leaks in a parser stay bounded.
MAX_TASKS_PER_WORKER = 1000
#: Sessions whose last service the pool remembers (the oldest forgotten first: one not served for that many
#: sessions' turns goes first anyway).
SERVED_KEPT = 4096

_TENANT: ContextVar[str] = ContextVar("sparseread_tenant", default="")


@contextmanager
def tenant(key: str) -> Iterator[None]:
    """Count the workers used inside this block against `key`'s share (a reading session)."""
    token = _TENANT.set(key)
    try:
        yield
    finally:
        _TENANT.reset(token)


@dataclass(slots=True)
class _Worker:
    pid: int
    conn: Connection
    tasks: int = 0

    def alive(self) -> bool:
        """Whether the process is still there; an idle worker's pipe that reads (its end closed) is dead."""
        if self.conn.poll(0):
            return False
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True

    def stop(self) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(self.pid, signal.SIGKILL)
        self.conn.close()


@dataclass(slots=True)
class _Waiter:
    """A call waiting for a worker: its session, and its place in arrival order."""

    key: str
    ticket: int


@dataclass(slots=True)
class PoolStats:
    """What the pool did, for tests, `/healthz` and benchmarks."""

    started: int = 0
    killed: int = 0
    crashed: int = 0
    tasks: int = 0
    #: Times a call looked again for a free worker (its session's share taken, or every worker busy).
    waits: int = 0


class _Zygote:
    """The process that forks workers (see zygote.py), started on first demand and again if it died."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._process: subprocess.Popen[bytes] | None = None
        self._control: socket.socket | None = None

    def fork(self, memory_mb: int) -> _Worker:
        with self._lock:
            for attempt in range(2):
                control = self._running()
                try:
                    control.sendall(REQUEST.pack(memory_mb, os.getpid()))
                    message, fds, _, _ = socket.recv_fds(control, ANSWER.size, 1)
                except OSError:
                    message, fds = b"", []
                if len(message) == ANSWER.size and len(fds) == 1:
                    return _Worker(pid=ANSWER.unpack(message)[0], conn=Connection(fds[0]))
                for fd in fds:
                    os.close(fd)
                self._close()  # it died: the next attempt starts another
                if attempt:
                    break
        raise ReaderCrashed("the server could not start a worker process to read with: try again")

    def _running(self) -> socket.socket:
        if self._process is not None and self._process.poll() is None and self._control is not None:
            return self._control
        self._close()
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self._process = subprocess.Popen(
            [sys.executable, "-m", "sparseread_mcp.isolation.zygote", str(theirs.fileno())],
            pass_fds=(theirs.fileno(),),
            stdin=subprocess.DEVNULL,
            stdout=sys.stderr.fileno() if _has_fileno(sys.stderr) else subprocess.DEVNULL,  # stdout is the wire
            start_new_session=True,  # a terminal's Ctrl-C goes to the server, which stops the workers
            env={**os.environ, **_ONE_THREAD},
        )
        theirs.close()
        self._control = ours
        return ours

    def _close(self) -> None:
        if self._control is not None:
            self._control.close()
            self._control = None
        if self._process is not None:
            if self._process.poll() is None:
                self._process.kill()
            self._process.wait(5)
            self._process = None

    def close(self) -> None:
        with self._lock:
            self._close()


def _has_fileno(stream: object) -> bool:
    try:
        return isinstance(stream.fileno(), int)  # type: ignore[attr-defined]
    except (AttributeError, OSError, ValueError):  # pytest's capture, a StringIO
        return False


#: Numeric libraries start thread pools on import; a process that forks must have none (a forked child
#: inherits a pool's locks but not its threads), and a worker parses one file at a time anyway.
_ONE_THREAD = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}

_ZYGOTE = _Zygote()


class WorkerPool:
    """Worker processes under a memory cap each, killed at the call's deadline and replaced on demand."""

    def __init__(self, *, size: int, memory_mb: int, share: int | None = None) -> None:
        self.size = max(1, size)
        self.share = max(1, min(self.size, share if share is not None else max(1, self.size // 2)))
        self.memory_mb = memory_mb
        self.stats = PoolStats()
        self._idle: list[_Worker] = []
        self._live = 0
        self._active: Counter[str] = Counter()
        self._waiting: list[_Waiter] = []
        self._tickets = itertools.count()
        #: Session -> when its last call was served (on the tickets' clock), most recent last.
        self._served: OrderedDict[str, int] = OrderedDict()
        self._condition = threading.Condition()
        self._closed = False

    def run(self, task: Callable[..., T], *args: object, label: str, seconds: float = 60.0) -> T:
        """`task(*args)` in a worker (a module-level function of `isolation.tasks`, plain arguments).
        `label` (what is being read: a path) names the file in every error. Inside a call the call's
        deadline bounds the task; outside one (a library caller), `seconds` does."""
        key = _TENANT.get()
        worker = self._acquire(key, label)
        try:
            reply = self._exchange(worker, task, args, label, seconds)
        except BaseException:
            self._discard(worker, key)
            raise
        kind, value, retire = reply
        if retire or kind in _SPENT or worker.tasks >= MAX_TASKS_PER_WORKER:
            self._discard(worker, key)  # what a failed parse left (native memory) dies with its process
        else:
            self._release(worker, key)
        result: T = self._unwrap(kind, value, label)
        return result

    # -- workers ---------------------------------------------------------------------------
    @property
    def waiting(self) -> int:
        """Calls waiting for a worker now."""
        with self._condition:
            return len(self._waiting)

    def _acquire(self, key: str, label: str) -> _Worker:
        """An idle worker, or a new one, once this call is the next to be served (`_next_served`) and one is
        free (waiting under the call's deadline); a new one is forked outside the lock."""
        with self._condition:
            me = _Waiter(key, next(self._tickets))
            self._waiting.append(me)
            try:
                while True:
                    if self._closed:
                        raise UnsupportedArtifact("the server is shutting down: no worker is left to read with")
                    if self._next_served() is me:
                        worker = self._take_idle()
                        if worker is not None or self._live < self.size:
                            self._live += worker is None
                            break
                    self._condition.wait(_POLL_SECONDS)
                    self.stats.waits += 1
                    try:
                        checkpoint()
                    except TimedOut as exc:
                        raise TimedOut(f"{exc} (reading {label} waited for a free worker and never started)") from exc
            finally:
                self._waiting.remove(me)
                self._condition.notify_all()  # whoever is next in line now may be served
            self._active[key] += 1
            self._served[key] = next(self._tickets)  # when it was served, on the tickets' clock
            self._served.move_to_end(key)
            if len(self._served) > SERVED_KEPT:
                self._served.popitem(last=False)
        if worker is not None:
            return worker
        try:
            started = _ZYGOTE.fork(self.memory_mb)
        except BaseException:
            with self._condition:
                self._live -= 1
                self._leave(key)
                self._condition.notify_all()
            raise
        self.stats.started += 1
        return started

    def _next_served(self) -> _Waiter | None:
        """The waiting call a free worker goes to: among those whose session is under its share, the one whose
        session holds the fewest workers, then whose session was served longest ago, then the earliest. Call
        with the lock."""
        eligible = [w for w in self._waiting if self._active[w.key] < self.share]
        return min(eligible, key=lambda w: (self._active[w.key], self._served.get(w.key, -1), w.ticket), default=None)

    def _leave(self, key: str) -> None:
        """One fewer worker held by `key`; a session holding none is forgotten (there is one key per
        session a server ever served: kept at zero, they would pile up). Call with the lock."""
        self._active[key] -= 1
        if self._active[key] <= 0:
            del self._active[key]

    def _take_idle(self) -> _Worker | None:
        """An idle worker still alive (one killed from outside while idle is dropped); call with the lock."""
        while self._idle:
            worker = self._idle.pop()
            if worker.alive():
                return worker
            worker.stop()
            self._live -= 1
        return None

    def _release(self, worker: _Worker, key: str) -> None:
        with self._condition:
            self._leave(key)
            if self._closed:
                self._live -= 1
                worker.stop()
            else:
                self._idle.append(worker)
            self._condition.notify_all()

    def _discard(self, worker: _Worker, key: str) -> None:
        """Kill a worker whose task overran, crashed or was cancelled; the next demand starts another."""
        worker.stop()
        with self._condition:
            self._leave(key)
            self._live -= 1
            self._condition.notify_all()

    # -- one task --------------------------------------------------------------------------
    def _exchange(
        self, worker: _Worker, task: Callable[..., Any], args: tuple[Any, ...], label: str, seconds: float
    ) -> tuple[str, Any, bool]:
        started = time.monotonic()
        worker.tasks += 1
        self.stats.tasks += 1
        try:
            worker.conn.send((task, args))
            while True:
                while not worker.conn.poll(_POLL_SECONDS):
                    try:
                        checkpoint()
                        if remaining() is None and time.monotonic() - started > seconds:
                            raise TimedOut(f"the work ran past its {seconds:.0f} s limit and was stopped")
                    except TimedOut as exc:
                        self.stats.killed += 1
                        raise TimedOut(f"reading {label}: {exc}") from exc
                reply = worker.conn.recv()
                if reply[0] != "progress":
                    break
                progress.report(*reply[1])
        except (EOFError, OSError) as exc:
            self.stats.crashed += 1
            raise ReaderCrashed(
                f"the reader crashed on {label} (its worker process died; a worker may use {self.memory_mb} MiB): "
                f"the server goes on; read the file by lines ({label}#L1-L200)"
            ) from exc
        kind, value, retire = reply
        return str(kind), value, bool(retire)

    def _unwrap(self, kind: str, value: Any, label: str) -> Any:
        if kind == "ok":
            return value
        if kind == "error":
            raise value
        if kind == "memory":
            raise OverLimit(
                f"reading {label} needs more than the {self.memory_mb} MiB a worker may use: refused; read line "
                f"ranges ({label}#L1-L200) or raise SPARSEREAD_WORKER_MEMORY_MB"
            )
        raise ReaderCrashed(f"the reader failed on {label} ({value}): read it by lines ({label}#L1-L200)")

    def prestart(self) -> None:
        """Start one worker now (and the zygote with it), so the first call does not wait for them."""
        worker = self._acquire("", "the first file")
        self._release(worker, "")

    def close(self) -> None:
        """Stop every worker; calls still running end with an error."""
        with self._condition:
            self._closed = True
            idle, self._idle = self._idle, []
            self._live -= len(idle)
            self._condition.notify_all()
        for worker in idle:
            worker.stop()


_POOLS: dict[tuple[int, int, int], WorkerPool] = {}
_POOLS_LOCK = threading.Lock()


def shared_pool(*, size: int, memory_mb: int, share: int | None = None) -> WorkerPool:
    """One pool per configuration for the whole process: engines (a server holds one; tests build many)
    share its workers instead of each starting their own."""
    key = (size, memory_mb, share or 0)
    with _POOLS_LOCK:
        pool = _POOLS.get(key)
        if pool is None:
            pool = WorkerPool(size=size, memory_mb=memory_mb, share=share)
            _POOLS[key] = pool
        return pool


def prestart_workers(settings: Settings) -> None:
    """Start the server's pool in the background (a failure here is met again, and reported, on first use)."""
    pool = shared_pool(size=settings.worker_count, memory_mb=settings.worker_memory_mb)

    def start() -> None:
        with contextlib.suppress(SparsereadError):
            pool.prestart()

    threading.Thread(target=start, name="sparseread-prestart", daemon=True).start()


def kill_workers_now() -> None:
    """Kill the worker factory and every worker it forked at once (they share its process group), taking
    no lock: safe in a signal handler, where the thread that holds one may be the one interrupted."""
    process = _ZYGOTE._process
    if process is not None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)


@atexit.register
def _close_pools() -> None:
    for pool in list(_POOLS.values()):
        pool.close()
    _ZYGOTE.close()
