"""How a server started by a person behaves: one line on stderr says what it serves, where requests go and
how to stop it; Ctrl-C or SIGTERM stops it at once, its worker processes with it.

Over stdio the SDK reads stdin in a thread that no signal interrupts, so the interpreter's own Ctrl-C
(KeyboardInterrupt) left the server waiting for a line that never came: only Ctrl-D ended it. Here a
signal kills the workers and ends the process directly. Nothing is lost by not unwinding: each call
commits its session before it answers, and the stores are transactional.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import sys
from types import FrameType

from .. import __version__
from ..config import Settings
from ..isolation import kill_workers_now
from .logs import JsonFormatter

#: The signals that stop a server: Ctrl-C at a terminal, and what service managers and clients send.
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
HOW_TO_STOP = "Ctrl-C or SIGTERM stops it"


def start_line(settings: Settings, *, http_base: str | None = None, detail: str = "") -> str:
    """The line printed on stderr at start: version, roots, transport, where requests go, how to stop.
    `http_base` is the address an HTTP server answers at (None: stdio); `detail` adds to its address."""
    roots = ", ".join(str(root) for root in settings.roots)
    if http_base is None:
        where = "MCP over stdio: an MCP client starts it and sends requests on its stdin"
    else:
        where = f"MCP over HTTP at {http_base}/mcp{detail}"
    return f"sparseread-mcp {__version__}: {where}; roots {roots}; {HOW_TO_STOP}"


def announce(line: str, *, as_json: bool = False) -> None:
    """Print `line` on stderr at every log level; as one JSON log record when the logs are JSON lines."""
    if as_json:
        line = JsonFormatter().format(logging.LogRecord("sparseread_mcp", logging.INFO, "", 0, line, None, None))
    print(line, file=sys.stderr, flush=True)


def stop_on_signals() -> None:
    """From now on, Ctrl-C and SIGTERM end the process at once, with every worker it started."""
    for number in STOP_SIGNALS:
        signal.signal(number, _stop)


def _stop(number: int, frame: FrameType | None) -> None:
    kill_workers_now()
    # Unbuffered: the handler may have interrupted a write to sys.stderr. A closed terminal (OSError) is
    # no reason not to stop.
    with contextlib.suppress(OSError):
        os.write(2, f"sparseread-mcp: stopped ({signal.Signals(number).name})\n".encode())
    os._exit(128 + number)
