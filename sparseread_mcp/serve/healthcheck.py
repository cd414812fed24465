"""The container's health check: probe /healthz when the server in the container serves HTTP.

`python -m sparseread_mcp.serve.healthcheck` reads the command line of the container's main process
(/proc/1/cmdline). A server run over stdio (`docker run -i ... image` with other arguments) has no port
to probe and is healthy while it runs; an HTTP server is probed on its port, on loopback unless it was
bound to one particular address.
"""

from __future__ import annotations

import os
import sys
import urllib.request
from collections.abc import Mapping, Sequence
from pathlib import Path

#: http_app.HEALTH_PATH, not imported: the check runs every 30 s and should not load the MCP stack.
HEALTH_PATH = "/healthz"
DEFAULT_PORT = 8765
WILDCARDS = ("0.0.0.0", "::", "[::]", "")


def probe_url(argv: Sequence[str], environ: Mapping[str, str]) -> str | None:
    """The health URL of the server started with `argv`, or None when it does not serve HTTP."""
    if "--http" not in argv:
        return None
    host = _option(argv, "--host") or environ.get("SPARSEREAD_HOST", "")
    port = _option(argv, "--port") or environ.get("SPARSEREAD_PORT") or str(DEFAULT_PORT)
    host = "127.0.0.1" if host in WILDCARDS else host
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"
    return f"http://{host}:{int(port)}{HEALTH_PATH}"


def _option(argv: Sequence[str], name: str) -> str | None:
    value = None
    for index, arg in enumerate(argv):
        if arg == name and index + 1 < len(argv):
            value = argv[index + 1]
        elif arg.startswith(name + "="):
            value = arg.split("=", 1)[1]
    return value


def main(cmdline: Path = Path("/proc/1/cmdline")) -> int:
    argv = [a.decode(errors="replace") for a in cmdline.read_bytes().split(b"\0") if a]
    url = probe_url(argv, os.environ)
    if url is None:
        return 0
    with urllib.request.urlopen(url, timeout=4) as answer:
        return 0 if answer.status == 200 else 1


if __name__ == "__main__":
    sys.exit(main())
