"""The server as a person meets it at a terminal (issue #32): it says at start what it serves and how to stop
it, Ctrl-C and SIGTERM stop it (and its worker processes) in both transports, `--version` and `/healthz`
give the version, and `--allow-host` takes a host with or without a port. The real server, under a
pseudo-terminal where the item is about one; the only timing is a hang guard."""

from __future__ import annotations

import contextlib
import fcntl
import os
import select
import signal
import subprocess
import sys
import termios
import time
from pathlib import Path

import httpx
import pytest
from test_http_security import HEADERS, INIT
from test_mcp_transports import free_port, running_http_server

from sparseread_mcp import __version__

HANG_GUARD = 60.0
CTRL_C = b"\x03"


class Terminal:
    """The server started as `python -m sparseread_mcp ARGS` on a new pseudo-terminal (its controlling
    terminal, so ^C typed there is SIGINT to its foreground process group, as at a shell)."""

    def __init__(self, *args: str) -> None:
        self.fd, tty = os.openpty()
        self.process = subprocess.Popen(
            [sys.executable, "-m", "sparseread_mcp", *args],
            stdin=tty,
            stdout=tty,
            stderr=tty,
            start_new_session=True,
            preexec_fn=_take_terminal,
        )
        os.close(tty)
        self.pid = self.process.pid
        self.output = b""

    def read_until(self, text: bytes) -> str:
        deadline = time.monotonic() + HANG_GUARD
        while text not in self.output:
            assert time.monotonic() < deadline, f"no {text!r} from the server: {self.output!r}"
            if select.select([self.fd], [], [], 0.1)[0]:
                try:
                    self.output += os.read(self.fd, 4096)
                except OSError:  # the terminal closed: the server is gone
                    break
        return self.output.decode(errors="replace")

    def wait(self) -> int:
        """The server's exit status once it ends, reading its output meanwhile (a full terminal blocks it)."""
        deadline = time.monotonic() + HANG_GUARD
        while time.monotonic() < deadline:
            if (code := self.process.poll()) is not None:
                return code  # a process killed by a signal has -N here, not the 128 + N of a clean stop
            if select.select([self.fd], [], [], 0.05)[0]:
                with contextlib.suppress(OSError):
                    self.output += os.read(self.fd, 4096)
        self.process.kill()
        self.process.wait()
        raise AssertionError(f"the server did not stop: {self.output!r}")

    def close(self) -> None:
        if self.process.poll() is None:  # a failed test must not leave a server running
            self.process.kill()
            self.process.wait()
        os.close(self.fd)


def _take_terminal() -> None:
    """In the new session: make the pseudo-terminal (stdin) its controlling terminal."""
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


def children(pid: int) -> list[int]:
    """The processes whose parent is `pid` (from /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
    return found


def worker_processes(server: int) -> list[int]:
    """The server's worker factory and the workers it forked, once the prestarted worker is there."""
    deadline = time.monotonic() + HANG_GUARD
    while time.monotonic() < deadline:
        for factory in children(server):
            if workers := children(factory):
                return [factory, *workers]
        time.sleep(0.05)
    raise AssertionError("the server started no worker process")


def gone(pid: int) -> bool:
    """Whether `pid` has ended (a zombie left for a parent to reap counts as ended)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return True
    return state == "Z"


def all_gone(pids: list[int]) -> bool:
    deadline = time.monotonic() + HANG_GUARD
    while not all(gone(pid) for pid in pids):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


needs_proc = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc for the workers")


@needs_proc
@pytest.mark.parametrize("transport", ["stdio", "http"])
@pytest.mark.parametrize("stop", ["ctrl-c", "sigterm"])
def test_the_server_says_what_it_serves_and_stops_at_ctrl_c_or_sigterm(
    tmp_path: Path, transport: str, stop: str
) -> None:
    """Started at a terminal, the stdio server printed nothing (it looked hung) and ^C did not stop it:
    only ^D did. Now one line says version, roots, transport and how to stop, and ^C or SIGTERM ends the
    server and every worker process within the hang guard."""
    http = ["--http", "--port", str(free_port())] if transport == "http" else []
    terminal = Terminal("--root", str(tmp_path), *http)
    try:
        line = terminal.read_until(b"stops it").splitlines()[0]
        assert f"sparseread-mcp {__version__}" in line and str(tmp_path) in line, line
        assert ("stdio" in line) if transport == "stdio" else ("/mcp" in line and "/healthz" in line), line
        assert "Ctrl-C" in line, line
        workers = worker_processes(terminal.pid)
        if stop == "ctrl-c":
            os.write(terminal.fd, CTRL_C)
        else:
            os.kill(terminal.pid, signal.SIGTERM)
        code = terminal.wait()
        assert code == 128 + (signal.SIGINT if stop == "ctrl-c" else signal.SIGTERM), terminal.output
        assert all_gone(workers), "a worker process outlived the server"
    finally:
        terminal.close()


def test_version_flag_prints_the_version() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "sparseread_mcp", "--version"], capture_output=True, text=True, timeout=HANG_GUARD
    )
    assert done.returncode == 0 and done.stdout.strip() == f"sparseread-mcp {__version__}"


def test_healthz_gives_the_version_and_allow_host_takes_a_host_with_or_without_a_port(tmp_path: Path) -> None:
    """`--allow-host 192.0.2.2` refused a LAN client's `Host: 192.0.2.2:8769`: only the form with the port
    worked. A host without a port now allows it on any port; one with a port, only there."""
    allow = ("--allow-host", "192.0.2.2", "--allow-host", "198.51.100.7:8769")
    with running_http_server(tmp_path, tmp_path, *allow) as url:
        assert httpx.get(f"{url}/healthz", timeout=10).json() == {"status": "ok", "version": __version__}

        def status(host: str) -> int:
            return httpx.post(f"{url}/mcp", json=INIT, headers={**HEADERS, "host": host}, timeout=10).status_code

        assert status("192.0.2.2:8769") != 421
        assert status("192.0.2.2") != 421
        assert status("198.51.100.7:8769") != 421
        assert status("198.51.100.7:9999") == 421  # a port given is the only one allowed
        assert status("203.0.113.9:8769") == 421  # and a host not named stays refused
