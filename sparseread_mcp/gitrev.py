"""Git revisions for evidence pointers: plain git commands, no library.

A file that is tracked and unmodified (its blob equals the blob at HEAD) is cited by the commit, so
its pointers keep dereferencing from git after the working copy changes. Anything else is cited by
its content hash.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import shutil
import subprocess
import threading
from pathlib import Path

logger = logging.getLogger(__name__)

_COMMIT = re.compile(r"^[0-9a-f]{7,40}$")
_TIMEOUT = 10


def blob_sha(data: bytes) -> str:
    """The object id git gives these bytes as a blob."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


class GitRevisions:
    def __init__(self) -> None:
        self._git = shutil.which("git")
        self._tops: dict[str, Path | None] = {}
        self._commits: dict[tuple[str, str], str | None] = {}
        self._lock = threading.Lock()

    def commit_for(self, path: Path, blob: str) -> str | None:
        """HEAD's commit when `path` is tracked and its content is HEAD's; otherwise None."""
        key = (str(path), blob)
        with self._lock:
            if key in self._commits:
                return self._commits[key]
        top = self._top(path.parent)
        commit: str | None = None
        if top is not None:
            rel = os.path.relpath(path, top)
            listed = self._run(top, "ls-tree", "HEAD", "--", rel)
            head = self._run(top, "rev-parse", "HEAD")
            if listed and head and listed.split()[2] == blob:
                commit = head.strip()
        with self._lock:
            self._commits[key] = commit
        return commit

    def text_at(self, path: Path, commit: str) -> bytes | None:
        """The file's bytes as committed in `commit`, or None when git does not have them."""
        if not _COMMIT.match(commit):
            return None
        top = self._top(path.parent)
        if top is None:
            return None
        rel = Path(os.path.relpath(path, top)).as_posix()
        return self._run_bytes(top, "show", f"{commit}:{rel}")

    def _top(self, directory: Path) -> Path | None:
        key = str(directory)
        with self._lock:
            if key in self._tops:
                return self._tops[key]
        found = self._run(directory, "rev-parse", "--show-toplevel") if directory.is_dir() else None
        top = Path(os.path.realpath(found.strip())) if found else None
        with self._lock:
            self._tops[key] = top
        return top

    def _run(self, cwd: Path, *args: str) -> str | None:
        out = self._run_bytes(cwd, *args)
        return out.decode("utf-8", "replace") if out is not None else None

    def _run_bytes(self, cwd: Path, *args: str) -> bytes | None:
        if self._git is None:
            return None
        try:
            done = subprocess.run(
                [self._git, "-C", str(cwd), *args],
                capture_output=True,
                timeout=_TIMEOUT,
                check=False,
                env={**os.environ, "GIT_OPTIONAL_LOCKS": "0", "GIT_TERMINAL_PROMPT": "0"},
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            logger.warning("git %s failed: %s", args[0], exc)
            return None
        return done.stdout if done.returncode == 0 else None
