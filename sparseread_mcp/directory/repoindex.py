"""Directory indexes kept on disk, one per directory, so a new session on a known tree starts warm.

A stored index holds each file's features with the (size, mtime) they were read at (see fileindex.py):
a new session lists the tree as usual, keeps every unchanged file's features and file type, reads
only the files that changed or appeared, and writes the index back when anything changed. Stored
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
from .collection import FileEntry
from .fileindex import Extractor, FileFeatures, FileIndex, load_features

logger = logging.getLogger(__name__)

#: Stored directory indexes kept at most; past it the least recently used are removed.
MAX_STORED = 64


class RepoIndexStore:
    """The folder of stored directory indexes, with the last few loaded kept in memory."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._loaded: LruCache[str, dict[str, FileFeatures]] = LruCache(4)
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

    def stored(self, directory: ResolvedPath) -> dict[str, FileFeatures]:
        """The stored features of `directory` by relative path (empty when none)."""
        key = str(directory.absolute)
        with self._lock:
            found = self._loaded.get(key)
            if found is None:
                path = self.path_for(directory)
                found = load_features(path)
                self.loads += 1
                if found:
                    with contextlib.suppress(OSError):
                        os.utime(path)  # recently used: pruned last
                self._loaded.put(key, found)
            return found

    def fill_types(self, directory: ResolvedPath, types: dict[tuple[str, int, int], str]) -> None:
        """Add the stored file types (keyed as build_inventory keys them) so an unchanged file is not opened."""
        prefix = "" if directory.relative == "." else directory.relative
        for rel, feature in self.stored(directory).items():
            types.setdefault((f"{prefix}/{rel}", feature.size, feature.mtime_ns), feature.type)

    def index(
        self,
        directory: ResolvedPath,
        files: list[FileEntry],
        *,
        extract: Extractor | None = None,
        budget: float | None = None,
        first: Sequence[str] = (),
        cost_per_file: float = 0.0,
    ) -> FileIndex:
        """The index of `files`: stored features where unchanged, the rest read now (by `extract`, within
        `budget` seconds: see FileIndex.build); saved when anything changed, so a partial index grows with
        each call until it covers the folder."""
        known = self.stored(directory)
        built = FileIndex.build(
            directory, files, known, extract=extract, budget=budget, first=first, cost_per_file=cost_per_file
        )
        started = time.monotonic()
        fresh = {f.path: f for f in built.features}
        changed = len(fresh) != len(known) or any(known.get(p) is not f for p, f in fresh.items())
        if changed:
            try:
                built.save(self.path_for(directory))
                self.saves += 1
                self.prune()
            except OSError as exc:  # a read-only cache folder costs the warm start, nothing else
                logger.warning("cannot keep the index of %s: %s", directory.relative, exc)
            with self._lock:
                self._loaded.put(str(directory.absolute), fresh)
        built.post_seconds += time.monotonic() - started
        return built

    def prune(self) -> None:
        """Keep the MAX_STORED most recently used stored indexes, remove the rest."""
        stored = []
        for path in self.folder.glob("*.npz"):
            with contextlib.suppress(OSError):  # another process may prune the same folder
                stored.append((path.stat().st_mtime, path))
        for _, path in sorted(stored, reverse=True)[MAX_STORED:]:
            path.unlink(missing_ok=True)
