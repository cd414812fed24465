"""The worker side of the boundary: a process that runs one task at a time on bytes someone else wrote.

A worker is forked by the zygote (its modules already imported), limits its own data segment, and
then answers tasks from its pipe until the pipe closes. What it sends back is a plain, picklable value or
one of our typed errors; anything else a task raises is reduced to its name and first line, so no object
of a third-party library ever crosses into the server. A native hang or crash ends only this process: the
server kills it at the call's deadline, or sees its pipe close, and starts another.
"""

from __future__ import annotations

import gc
import os
import pickle
import resource
import signal
import struct
from collections.abc import Callable
from functools import partial
from multiprocessing.connection import Connection
from typing import Any

from .. import progress
from ..ceiling import data_segment_bytes
from ..errors import SparsereadError
from ..readers.table_files import OWNER_PID_VARIABLE

#: Asking the zygote for a worker: its memory limit (MiB) and the owning server's pid; the answer: its pid.
REQUEST = struct.Struct("=qq")
ANSWER = struct.Struct("=q")

#: A task's outcome: ("ok", value), ("error", SparsereadError), ("memory", None), ("failed", "Type: line").
#: It is sent with a third element, whether the worker asks to be retired; before it, any number of
#: ("progress", (value, total, message)).
Reply = tuple[str, Any]


def serve(conn: Connection, memory_mb: int, owner_pid: int) -> None:
    """The worker's whole life (forked by the zygote): limits first, then one task per message until the
    server hangs up."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C at a terminal is the server's to handle
    os.environ[OWNER_PID_VARIABLE] = str(owner_pid)  # its table folders belong to the server
    limit_memory(memory_mb)
    # Past this growth the worker asks to be retired after its answer: a parser may keep what it allocated
    # (PyMuPDF's caches after a failed extraction), and the next file should not inherit it.
    retire_at = data_segment_bytes() + (memory_mb or 1024) * 1024 * 1024 // 2
    while True:
        try:
            task, args = conn.recv()
        except (EOFError, OSError):
            return
        except Exception as exc:  # a task this interpreter cannot import (a plugin's reader): say so
            conn.send(("failed", f"the worker cannot load the reader ({type(exc).__name__}: {str(exc)[:160]})", False))
            continue
        with progress.reporting(partial(_send_progress, conn)):
            kind, value = run_task(task, args)
        retire = data_segment_bytes() > retire_at
        try:
            conn.send((kind, value, retire))
        except (pickle.PicklingError, TypeError, AttributeError) as exc:
            conn.send(("failed", f"the answer could not cross to the server ({type(exc).__name__})", True))
        except (BrokenPipeError, OSError):
            return


def _send_progress(conn: Connection, value: float, total: float, message: str) -> None:
    """A parse's progress (a PDF's pages), relayed by the server to the client that waits for it."""
    conn.send(("progress", (value, total, message[:200])))


def run_task(task: Callable[..., Any], args: tuple[Any, ...]) -> Reply:
    try:
        return ("ok", task(*args))
    except MemoryError:
        pass
    except SparsereadError as exc:
        return ("error", exc)
    except RecursionError:
        return ("failed", "RecursionError: the file nests deeper than the reader can follow")
    except Exception as exc:  # the boundary: a library's own exception never crosses as an object
        first = (str(exc).splitlines() or [""])[0][:200]
        return ("failed", f"{type(exc).__name__}: {first}")
    gc.collect()  # what the failed task held, before the next one starts
    return ("memory", None)


def limit_memory(memory_mb: int) -> None:
    """Cap this process's data segment at what it holds now plus `memory_mb` MiB (0: no cap). Counted from
    now because the imported libraries are already mapped; an allocation past it fails in the task."""
    if memory_mb <= 0:
        return
    limit = data_segment_bytes() + memory_mb * 1024 * 1024
    hard = resource.getrlimit(resource.RLIMIT_DATA)[1]
    if hard != resource.RLIM_INFINITY and hard < limit:
        limit = hard
    resource.setrlimit(resource.RLIMIT_DATA, (limit, hard))
