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
from dataclasses import dataclass
from pathlib import Path

from ..errors import OutsideRoots
from .roots import Roots

logger = logging.getLogger(__name__)

_COMMIT = re.compile(r"^[0-9a-f]{7,40}$")
_TIMEOUT = 10
#: Git output past this (a blob) is not shown anyway: refused rather than held.
_MAX_OUTPUT = 256 * 1024 * 1024
#: Names under `objects/info` that make git read objects from another store (http-alternates too: refused
#: whether or not this git would use it).
_ALTERNATES = ("alternates", "http-alternates")
#: Entries of an object store checked for symlinks at most; a store with more is read without git.
_MAX_OBJECT_ENTRIES = 200_000
#: Entries memoised per process before the memo starts over.
_MEMO_LIMIT = 100_000
#: Configuration from the repository that could run commands or redirect reads is overridden.
_SAFE_CONFIG = ("-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null", "-c", "protocol.allow=never")


def blob_sha(data: bytes) -> str:
    """The object id git gives these bytes as a blob."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


class GitRevisions:
    """Git, confined to the roots: a repository is used only when its work tree, git directory, common
    directory and object store lie inside the roots, it has no alternates file at all (quoted, relative or
    chained ones included: none is parsed, any one refuses the repository), and nothing in its object store
    is a symlink. Anything else (a `.git` file whose `gitdir:` points outside, a `commondir` elsewhere, a root
    inside a larger repository, objects linked to elsewhere) is read without git: its files are cited by
    content hash, a pointer to one of its commits is refused with OutsideRoots saying why, and no blob from
    outside is ever shown."""

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
        repo = self._top(path.parent)
        commit: str | None = None
        if repo.confined is not None:
            top = repo.confined.top
            rel = os.path.relpath(path, top)
            listed = self._run(top, "ls-tree", "HEAD", "--", rel, pinned=repo.confined)
            head = self._run(top, "rev-parse", "--verify", "HEAD", pinned=repo.confined)
            if listed and head and listed.split()[2] == blob:
                commit = head.strip()
        with self._lock:
            if len(self._commits) > _MEMO_LIMIT:
                self._commits.clear()  # a bound, not a policy: the next calls refill what they need
            self._commits[key] = commit
        return commit

    def text_at(self, path: Path, commit: str) -> bytes | None:
        """The file's bytes as committed in `commit`, or None when git does not have them; OutsideRoots
        when the file's repository is read without git (its objects could come from outside the roots)."""
        if not _COMMIT.match(commit):
            return None
        repo = self._top(path.parent)
        if repo.refused is not None:
            raise OutsideRoots(
                f"{path.name}@{commit}: this file's git repository is read without git because {repo.refused}, "
                "so no commit of it is shown; cite the file by its sha256: pointer (read it without @rev)"
            )
        if repo.confined is None:
            return None
        top = repo.confined.top
        rel = Path(os.path.relpath(path, top)).as_posix()
        # cat-file is plumbing: no textconv, no filters, no pager, whatever the repository configures.
        return self._run_bytes(top, "cat-file", "blob", f"{commit}:{rel}", pinned=repo.confined)

    def _top(self, directory: Path) -> _Found:
        # Checked before every use, never memoised: a `.git` file planted after a first check would
        # otherwise steer every later call. What remains is the moment between this check and the next
        # git process, which is pinned to the directories checked (GIT_DIR, GIT_OBJECT_DIRECTORY).
        return self._confined_top(directory) if directory.is_dir() else _Found()

    def _confined_top(self, directory: Path) -> _Found:
        """The repository when the whole of it lies inside the roots; why not when one is found but does
        not; neither when there is none (untracked)."""
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
            return _Found()  # not a repository, a bare one, or git missing
        top, git_dir, common_dir, objects = places
        outside = [p for p in places if not self._roots.contains(p)]
        reason = (
            f"its {_PLACES[places.index(outside[0])]} lies outside the roots"
            if outside
            else object_sources(objects, git_dir / "objects", common_dir / "objects")
        )
        if reason is not None:
            logger.info("git repository at %s is read without git: %s", directory, reason)
            return _Found(refused=reason)
        return _Found(confined=_Repo(top=top, git_dir=git_dir, objects=objects))

    def _run(self, cwd: Path, *args: str, pinned: _Repo | None = None) -> str | None:
        out = self._run_bytes(cwd, *args, pinned=pinned)
        return out.decode("utf-8", "replace") if out is not None else None

    def _run_bytes(self, cwd: Path, *args: str, pinned: _Repo | None = None) -> bytes | None:
        if self._git is None:
            return None
        env = self._env()
        if pinned is not None:  # the directories just checked, not whatever `.git` says a moment later
            env.update({"GIT_DIR": str(pinned.git_dir), "GIT_OBJECT_DIRECTORY": str(pinned.objects)})
        try:
            done = subprocess.run(
                [self._git, *_SAFE_CONFIG, "-C", str(cwd), *args],
                capture_output=True,
                timeout=_TIMEOUT,
                check=False,
                env=env,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            logger.warning("git %s failed: %s", args[0], exc)
            return None
        if done.returncode != 0 or len(done.stdout) > _MAX_OUTPUT:
            return None
        return done.stdout

    def _env(self) -> dict[str, str]:
        """A clean environment: no GIT_DIR, GIT_WORK_TREE, GIT_OBJECT_DIRECTORY,
        GIT_ALTERNATE_OBJECT_DIRECTORIES or GIT_CONFIG_* of ours can steer git, and discovery never climbs
        above a root. HOME stays, so the operator's own configuration (`safe.directory` for mounted roots)
        still applies."""
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


@dataclass(frozen=True, slots=True, kw_only=True)
class _Repo:
    """A repository checked to lie inside the roots: the directories every later git command is pinned to."""

    top: Path
    git_dir: Path
    objects: Path


@dataclass(frozen=True, slots=True, kw_only=True)
class _Found:
    """What the check found: a confined repository, a refused one (and why), or none."""

    confined: _Repo | None = None
    refused: str | None = None


_PLACES = ("work tree", "git directory", "common directory (commondir)", "object store")


def object_sources(*stores: Path) -> str | None:
    """Why these object stores might hold objects from elsewhere, or None when they cannot: an alternates
    file (however written: git accepts quoted, relative and chained lines, so none is parsed and any one
    refuses the repository), or a symlink anywhere in the store (a linked pack, fan-out folder or object)."""
    for store in stores:
        for name in _ALTERNATES:
            if os.path.lexists(store / "info" / name):
                return f"its object store has info/{name} (objects borrowed from another store)"
    return _linked_object(stores[0])


def _linked_object(objects: Path) -> str | None:
    """Why the store cannot be proved to hold only its own files: a symlink in it, too many entries to
    check, or an unreadable folder."""
    seen = 0
    pending = [objects]
    while pending:
        folder = pending.pop()
        try:
            with os.scandir(folder) as entries:
                for entry in entries:
                    seen += 1
                    if seen > _MAX_OBJECT_ENTRIES:
                        return f"its object store has over {_MAX_OBJECT_ENTRIES} entries to check"
                    if entry.is_symlink():
                        return f"its object store links {entry.name!r} to elsewhere"
                    if entry.is_dir(follow_symlinks=False):
                        pending.append(Path(entry.path))
        except OSError as exc:
            return f"its object store could not be checked ({exc.strerror})"
    return None
