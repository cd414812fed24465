"""Directory indexes kept on disk, one per directory, so a new session on a known tree starts warm.

A stored index holds each file's rows with the (size, mtime) they were read at (see fileindex.py and
filerows.py): a new session lists the tree as usual, keeps every unchanged file's rows and file type,
reads only the files that changed or appeared, and writes the index back when anything changed. Nothing
of it is kept in memory here but the stored files' types: the index itself is kept, within the cache
budget, by the engine's FolderIndexes, which hands it back as `known` for the next build. Stored
indexes live under `cache_dir/repoindex`, never inside a root (anyone who can write under a root could
otherwise plant one), and are arrays and JSON, never pickles.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import threading
import time
from collections.abc import Sequence
from pathlib import Path

from ..config import Settings
from ..files.artifacts import LruCache
from ..files.roots import ResolvedPath, Roots
from . import filerows
from .collection import FileEntry
from .fileindex import Extractor, FileIndex, Known, load_saved

logger = logging.getLogger(__name__)

#: Stored directory indexes kept at most; past it the least recently used are removed.
MAX_STORED = 64


class RepoIndexStore:
    """The folder of stored directory indexes, with the last few loaded kept in memory."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        # directory -> path -> (size, mtime, type) of its stored files: a new session's walk opens no
        # unchanged file to learn its type (a few hundred bytes a file; the rows stay on disk)
        self._types: LruCache[str, dict[str, tuple[int, int, str]]] = LruCache(8)
        self._lock = threading.Lock()
        self.loads = 0
        self.saves = 0

    @classmethod
    def for_settings(cls, settings: Settings, roots: Roots) -> RepoIndexStore | None:
        """The store under the cache directory, or None when switched off or when that folder is inside a root."""
        if not settings.repo_index:
            return None
        if roots.contains(settings.cache_dir):
            logger.warning("not keeping directory indexes: the cache directory %s is inside a root", settings.cache_dir)
            return None
        return cls(settings.cache_dir / "repoindex")

    def path_for(self, directory: ResolvedPath) -> Path:
        digest = hashlib.sha256(str(directory.absolute).encode("utf-8", "surrogateescape")).hexdigest()
        return self.folder / f"{digest[:32]}.npz"

    def stored(self, directory: ResolvedPath) -> Known | None:
        """The stored files and rows of `directory` (None when none)."""
        path = self.path_for(directory)
        with self._lock:
            self.loads += 1
        found = load_saved(path)
        if found is not None:
            with contextlib.suppress(OSError):
                os.utime(path)  # recently used: pruned last
            self._remember_types(directory, found.files)
        return found

    def fill_types(self, directory: ResolvedPath, types: dict[tuple[str, int, int], str]) -> None:
        """Add the stored file types (keyed as build_inventory keys them) so an unchanged file is not opened."""
        known = self._types.get(str(directory.absolute))
        if known is None:
            stored = filerows.load_files(self.path_for(directory))
            if stored is not None:
                self._remember_types(directory, stored)
            known = self._types.get(str(directory.absolute)) or {}
        prefix = "" if directory.relative == "." else directory.relative
        for rel, (size, mtime_ns, kind) in known.items():
            types.setdefault((f"{prefix}/{rel}", size, mtime_ns), kind)

    def index(
        self,
        directory: ResolvedPath,
        files: list[FileEntry],
        *,
        known: Known | None = None,
        extract: Extractor | None = None,
        budget: float | None = None,
        first: Sequence[str] = (),
        cost_per_file: float = 0.0,
    ) -> FileIndex:
        """The index of `files`: rows of `known` (an index still in memory), else of the stored index,
        where unchanged, the rest read now (by `extract`, within `budget` seconds: see FileIndex.build);
        saved when anything changed, so a partial index grows with each call until it covers the folder."""
        if known is None:
            known = self.stored(directory)
        built = FileIndex.build(
            directory, files, known, extract=extract, budget=budget, first=first, cost_per_file=cost_per_file
        )
        started = time.monotonic()
        if built.changed and (known is None or built is not known.index):
            try:
                built.save(self.path_for(directory))
                self.saves += 1
                self.prune()
            except OSError as exc:  # a read-only cache folder costs the warm start, nothing else
                logger.warning("cannot keep the index of %s: %s", directory.relative, exc)
            self._remember_types(directory, built.files)
        built.post_seconds += time.monotonic() - started
        return built

    def _remember_types(self, directory: ResolvedPath, files: list[FileEntry]) -> None:
        self._types.put(str(directory.absolute), {f.path: (f.size, f.mtime_ns, f.type) for f in files})

    def prune(self) -> None:
        """Keep the MAX_STORED most recently used stored indexes, remove the rest."""
        stored = []
        for path in self.folder.glob("*.npz"):
            with contextlib.suppress(OSError):  # another process may prune the same folder
                stored.append((path.stat().st_mtime, path))
        for _, path in sorted(stored, reverse=True)[MAX_STORED:]:
            path.unlink(missing_ok=True)
