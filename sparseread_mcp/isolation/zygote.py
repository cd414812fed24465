"""The worker factory: a single-threaded process that imports the readers once and forks a worker per
request, so replacing a killed worker costs a fork (milliseconds), not an interpreter start.

The server starts it (`python -m sparseread_mcp.isolation.zygote FD`) with one end of a socket pair. Each
request (a worker's memory limit and the server's pid) is answered with the new worker's pid and, passed
as a descriptor, the server's end of the worker's own socket. Forking here and not in the server matters:
the server has threads (a fork there can copy a lock held by another thread), this process has none.
A server that exits closes the pair and this process ends; its workers die with it (PR_SET_PDEATHSIG), so
a worker stuck in native code never outlives the server. (This process does not use PDEATHSIG itself:
it fires when the *thread* that started a process ends, and the server starts it from a worker thread.)
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import socket
import sys
from multiprocessing.connection import Connection

from .worker import ANSWER, REQUEST, serve

_PR_SET_PDEATHSIG = 1


def die_with_parent() -> None:
    """Be killed when the parent process ends (Linux; elsewhere a closed socket still ends us)."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


def main(control_fd: int) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C at a terminal is the server's to handle
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # workers are reaped by the kernel
    from . import tasks  # noqa: F401  (the readers, imported once for every worker forked from here)

    control = socket.socket(fileno=control_fd)
    while True:
        try:
            request = control.recv(REQUEST.size)
        except OSError:
            return
        if len(request) != REQUEST.size:
            return  # the server closed the pair: it is gone
        memory_mb, owner = REQUEST.unpack(request)
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        pid = os.fork()
        if pid == 0:  # the worker
            try:
                control.close()
                theirs.close()
                signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                die_with_parent()
                serve(Connection(ours.detach()), int(memory_mb), int(owner))
            finally:
                os._exit(0)
        ours.close()
        try:
            socket.send_fds(control, [ANSWER.pack(pid)], [theirs.fileno()])
        except OSError:
            return
        finally:
            theirs.close()


if __name__ == "__main__":
    main(int(sys.argv[1]))
