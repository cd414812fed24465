"""The server-wide memory ceiling (`--max-memory-mb`): a limit on the server process's data segment.

RLIMIT_DATA counts the heap and private writable mappings (thread stacks included) but not PROT_NONE
reservations or read-only file mappings, so importing numpy or torch does not trip it the way RLIMIT_AS
would (measured: importing torch adds about 130 MiB to it and 500 MiB to the address space). An
allocation past it raises MemoryError in the call that made it, which the server answers with
`OutOfMemory`, and the server goes on serving. It is set when the server starts, never on import, so a
library user's process keeps its own limits.
"""

from __future__ import annotations

import gc
import resource
import threading
from collections.abc import Callable
from typing import TypeVar

from .errors import ConfigError

#: Worker threads' stacks count against the limit; 8 MiB each (the usual default) would reserve a large
#: share of a small ceiling for stacks that never grow that deep.
THREAD_STACK_BYTES = 2 * 1024 * 1024

T = TypeVar("T")


def apply_memory_ceiling(max_memory_mb: int) -> None:
    """Limit this process's data segment to `max_memory_mb` MiB (0: leave the limits alone)."""
    if not max_memory_mb:
        return
    limit = max_memory_mb * 1024 * 1024
    in_use = data_segment_bytes()
    if in_use >= limit:
        raise ConfigError(
            f"--max-memory-mb {max_memory_mb}: the server already uses {in_use >> 20} MiB before serving: "
            "use a larger ceiling"
        )
    hard = resource.getrlimit(resource.RLIMIT_DATA)[1]
    if hard != resource.RLIM_INFINITY and hard < limit:
        limit = hard  # an unprivileged process cannot raise its hard limit; the lower one holds anyway
    threading.stack_size(THREAD_STACK_BYTES)
    resource.setrlimit(resource.RLIMIT_DATA, (limit, hard))


def data_segment_bytes() -> int:
    """VmData of this process (what RLIMIT_DATA counts), or 0 where /proc is not available."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmData:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def over_ceiling_message(max_memory_mb: int) -> str:
    """What a call that ran out of memory is answered with."""
    where = f"over the server's memory ceiling of {max_memory_mb} MiB" if max_memory_mb else "out of memory"
    return (
        f"this call ran {where}: narrow the read (an anchor, a line or row range, a query with LIMIT, or a "
        "smaller file); the server goes on serving"
    )


def released_on_memory_error(build: Callable[[], T]) -> T:
    """`build()`; when it runs out of memory, a fresh MemoryError raised only after everything the failed
    build held is freed. Why: while an exception unwinds through a `with` or `finally`, CPython 3.11
    boxes the instruction offset as an int, and when that allocation fails it retries the same handler
    forever. The traceback keeps the failed build's frames, and so its partial objects, alive: at the
    ceiling nothing is left for that int, and the server spun at 100% CPU instead of answering. Leaving
    this handler drops the traceback; the collector frees what was held in cycles."""
    try:
        return build()
    except MemoryError:
        pass
    gc.collect()
    raise MemoryError("the call ran out of memory")
