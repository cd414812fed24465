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

from .roots import Roots

logger = logging.getLogger(__name__)

_COMMIT = re.compile(r"^[0-9a-f]{7,40}$")
_TIMEOUT = 10
#: Git output past this (a blob) is not shown anyway: refused rather than held.
_MAX_OUTPUT = 256 * 1024 * 1024
_MAX_ALTERNATES = 64 * 1024
#: Entries memoised per process before the memo starts over.
_MEMO_LIMIT = 100_000
#: Configuration from the repository that could run commands or redirect reads is overridden.
_SAFE_CONFIG = ("-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null", "-c", "protocol.allow=never")


def blob_sha(data: bytes) -> str:
    """The object id git gives these bytes as a blob."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


class GitRevisions:
    """Git, confined to the roots: a repository is used only when its work tree, git directory, common
    directory, object store and alternates all lie inside the roots; anything else (a `.git` file whose
    `gitdir:` points outside, a root inside a larger repository, objects linked to elsewhere) is treated as
    untracked, so its files are cited by content hash and no blob from outside is ever shown."""

    def __init__(self, roots: Roots) -> None:
        self._git = shutil.which("git")
        self._roots = roots
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
            head = self._run(top, "rev-parse", "--verify", "HEAD")
            if listed and head and listed.split()[2] == blob:
                commit = head.strip()
        with self._lock:
            if len(self._commits) > _MEMO_LIMIT:
                self._commits.clear()  # a bound, not a policy: the next calls refill what they need
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
        # cat-file is plumbing: no textconv, no filters, no pager, whatever the repository configures.
        return self._run_bytes(top, "cat-file", "blob", f"{commit}:{rel}")

    def _top(self, directory: Path) -> Path | None:
        # Checked before every use, never memoised: a `.git` file planted after a first check would
        # otherwise steer every later call. What remains is the moment between this check and the next
        # git process.
        return self._confined_top(directory) if directory.is_dir() else None

    def _confined_top(self, directory: Path) -> Path | None:
        """The work tree's top when the whole repository lies inside the roots, else None (untracked)."""
        found = self._run(
            directory,
            "rev-parse",
            "--path-format=absolute",
            "--show-toplevel",
            "--git-dir",
            "--git-common-dir",
            "--git-path",
            "objects",
        )
        places = [Path(os.path.realpath(line)) for line in (found or "").splitlines() if line.strip()]
        if len(places) != 4:
            return None  # not a repository, a bare one, or git missing
        objects = places[3]
        places.extend(_alternates(objects))
        outside = [p for p in places if not self._roots.contains(p)]
        if outside:
            logger.info(
                "git repository at %s reaches outside the roots (%s): treated as untracked", directory, outside[0]
            )
            return None
        return places[0]

    def _run(self, cwd: Path, *args: str) -> str | None:
        out = self._run_bytes(cwd, *args)
        return out.decode("utf-8", "replace") if out is not None else None

    def _run_bytes(self, cwd: Path, *args: str) -> bytes | None:
        if self._git is None:
            return None
        try:
            done = subprocess.run(
                [self._git, *_SAFE_CONFIG, "-C", str(cwd), *args],
                capture_output=True,
                timeout=_TIMEOUT,
                check=False,
                env=self._env(),
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            logger.warning("git %s failed: %s", args[0], exc)
            return None
        if done.returncode != 0 or len(done.stdout) > _MAX_OUTPUT:
            return None
        return done.stdout

    def _env(self) -> dict[str, str]:
        """A clean environment: no GIT_DIR, GIT_WORK_TREE, GIT_OBJECT_DIRECTORY or alternates from ours can
        steer git, and discovery never climbs above a root. HOME stays, so the operator's own configuration
        (`safe.directory` for mounted roots) still applies."""
        ceilings = sorted({str(root.parent) for root in self._roots.paths if root.parent != root})
        return {
            "PATH": os.environ.get("PATH", os.defpath),
            "HOME": os.environ.get("HOME", os.devnull),
            "LC_ALL": "C",
            "GIT_CEILING_DIRECTORIES": os.pathsep.join(ceilings),
            "GIT_OPTIONAL_LOCKS": "0",
            "GIT_TERMINAL_PROMPT": "0",
            "GIT_NO_REPLACE_OBJECTS": "1",
        }


def _alternates(objects: Path) -> list[Path]:
    """Object directories borrowed through `objects/info/alternates` (each must be inside the roots too)."""
    listing = objects / "info" / "alternates"
    try:
        with listing.open("rb") as handle:
            raw = handle.read(_MAX_ALTERNATES + 1)
    except OSError:
        return []
    if len(raw) > _MAX_ALTERNATES:
        return [Path("/")]  # not a real alternates file: refuse the repository
    paths = []
    for line in raw.decode("utf-8", "replace").splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            paths.append(Path(os.path.realpath(objects / line)))
    return paths
