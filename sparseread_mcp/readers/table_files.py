"""Files the table reader writes: only in directories it made private, never through a planted link.

DuckDB is given copies of the verified bytes (never a path under a root, which could be swapped for a
symlink between our read and its own), and projections are written for agents to compute on. Both go
through a directory descriptor that was checked once (a real directory, ours, mode 0700), each file is
created with O_EXCL | O_NOFOLLOW under a unique name, and a half-written file is removed on any failure.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import tempfile
from collections.abc import Iterable
from pathlib import Path

from ..errors import ConfigError

_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
#: Private table directories are named after the server's pid, so a later server can tell which ones a
#: killed server (kill -9, out of memory) left behind.
_PREFIX = "sparseread-table-"
#: Set in worker processes to the server's pid: the directories a worker builds belong to the server,
#: which adopts them, so they are named (and swept) by the server's pid, not the worker's.
OWNER_PID_VARIABLE = "SPARSEREAD_OWNER_PID"
#: A bound on the sweep, not a policy: a temporary folder with more entries is only partly swept.
_SWEEP_ENTRIES = 10_000
_swept = False


class PrivateDir:
    """A directory only this user can enter, held open by descriptor so a rename of its path cannot
    redirect what is written into it."""

    def __init__(self, path: Path, *, owned: bool) -> None:
        self.path = path
        self._owned = owned  # made by us for this use alone: removed whole on close
        try:
            self.fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0))
        except OSError as exc:
            raise ConfigError(
                f"{_short(path)} is not a plain directory ({exc.strerror}); point SPARSEREAD_CACHE_DIR at a "
                "directory of your own"
            ) from exc
        info = os.fstat(self.fd)
        if info.st_uid != os.getuid():
            os.close(self.fd)
            raise ConfigError(
                f"{_short(path)} belongs to another user (uid {info.st_uid}): nothing is written there; point "
                "SPARSEREAD_CACHE_DIR at a directory of your own"
            )
        if stat.S_IMODE(info.st_mode) != 0o700:
            os.fchmod(self.fd, 0o700)  # ours: from now on no one else can add or swap entries in it

    @classmethod
    def fresh(cls) -> PrivateDir:
        """A new directory (mkdtemp: created 0700 with a unique name), removed by `close`; the first one
        of a process also removes those that servers no longer running left behind."""
        global _swept
        if not _swept:
            _swept = True
            sweep_left_behind(Path(tempfile.gettempdir()))
        return cls(Path(tempfile.mkdtemp(prefix=f"{_PREFIX}{owner_pid()}-")), owned=True)

    @classmethod
    def at(cls, path: Path) -> PrivateDir:
        """`path`, created 0700 when missing (its parents as usual), then checked."""
        path.parent.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(FileExistsError):
            path.mkdir(mode=0o700)
        return cls(path, owned=False)

    def write(self, name: str, chunks: Iterable[bytes]) -> Path:
        """Write `chunks` to a new file `name` in this directory; the file never existed before, and a
        failure (including a deadline or a cap raised by the iterable) leaves nothing behind."""
        fd = os.open(name, _CREATE, 0o600, dir_fd=self.fd)
        try:
            with os.fdopen(fd, "wb") as handle:
                for chunk in chunks:
                    handle.write(chunk)
        except BaseException:
            self.remove(name)
            raise
        return self.path / name

    def publish(self, temporary: str, final: str) -> Path:
        """Rename `temporary` to `final` atomically; an entry already named `final` is replaced, never
        followed (a link planted there is overwritten, not its target)."""
        os.replace(temporary, final, src_dir_fd=self.fd, dst_dir_fd=self.fd)
        return self.path / final

    def remove(self, name: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(name, dir_fd=self.fd)

    def done_writing(self) -> None:
        """Close the descriptor (a server holds many tables, and descriptors are few); `close` still
        removes a directory of our own."""
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def close(self) -> None:
        self.done_writing()
        if self._owned:
            self._owned = False
            shutil.rmtree(self.path, ignore_errors=True)


def sweep_left_behind(folder: Path) -> int:
    """Remove the private table directories in `folder` whose server is gone: ours (same user), named
    with a pid that no running process has. A pid now reused by another process keeps its directory, a
    harmless miss. Links are never followed. Returns how many were removed."""
    removed = 0
    try:
        with os.scandir(folder) as entries:
            for seen, entry in enumerate(entries):
                if seen >= _SWEEP_ENTRIES:
                    break
                pid = _owner_pid(entry.name)
                if pid is None or pid in (os.getpid(), owner_pid()) or _running(pid):
                    continue
                try:
                    info = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                if stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid():
                    shutil.rmtree(entry.path, ignore_errors=True)  # fd-based on Linux: a planted link is not followed
                    removed += 1
    except OSError:
        return removed
    return removed


def owner_pid() -> int:
    """The process that owns new private directories: the server, also when a worker builds them."""
    named = os.environ.get(OWNER_PID_VARIABLE, "")
    return int(named) if named.isdigit() else os.getpid()


def _owner_pid(name: str) -> int | None:
    if not name.startswith(_PREFIX):
        return None
    head = name[len(_PREFIX) :].split("-", 1)[0]
    return int(head) if head.isdigit() and len(head) <= 10 else None


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True  # someone else's process, or a number no process can have: leave it
    return True


def _short(path: Path) -> str:
    text = str(path)
    return text if len(text) <= 120 else "…" + text[-119:]
