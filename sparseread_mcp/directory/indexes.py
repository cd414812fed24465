"""A reading engine's directory indexes: kept in memory by the folder's fingerprint, on disk by folder
(repoindex.py), and built within the call's time.

Inside a call whose index is kept on disk, new files are read for at most INDEX_SHARE of the time left
(paths that hold the goal's terms first), or, once the work after reading has been timed on this folder,
until CALL_SHARE of it less that work's cost for the files the index will hold. A tree too large for
that gets a partial index (its `pending` files left out, never kept in memory as the folder's index):
each later call reads more into the stored index until it covers the folder.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial

from .. import deadline, progress
from ..files.artifacts import LruCache
from ..files.roots import ResolvedPath
from .collection import FileEntry, Inventory
from .fileindex import FileFeatures, FileIndex, Known, file_index_bytes
from .repoindex import RepoIndexStore

#: The share of a call's time left that reading new files may take on a folder not timed yet: the rest of
#: the call (building the index, ranking, opening the best files) needs the other part.
INDEX_SHARE = 0.5
#: Once the work after reading has been timed on a folder: the share of the time left that reading and
#: that work may take together, and how much the whole answer costs per indexed file against the timed
#: part (building and saving the index; ranking and answering cost about as much again).
CALL_SHARE = 0.8
POST_FACTOR = 2.0
#: Reads the listed files' features under a label (the engine's runs in a worker).
LabeledExtractor = Callable[..., list[FileFeatures]]


class FolderIndexes:
    """The file indexes of the folders an engine reads."""

    def __init__(self, extract: LabeledExtractor, store: RepoIndexStore | None, cache_bytes: int) -> None:
        self._extract = extract
        self.store = store  # None: not kept on disk
        self._built: LruCache[str, FileIndex] = LruCache(8, max_bytes=cache_bytes, weigh=file_index_bytes)
        # folder -> the fingerprint of its newest index in `_built`: a changed tree's rebuild reuses it
        self._latest: LruCache[str, str] = LruCache(64)
        # folder -> seconds per indexed file that building and answering took after reading
        self._costs: LruCache[str, float] = LruCache(64)

    def get(self, base: ResolvedPath, inventory: Inventory, *, first: Sequence[str] = ()) -> FileIndex:
        """The folder's index, built once per fingerprint (see the module's docstring for the time rule)."""
        found = self._built.get(inventory.fingerprint)
        large = len(inventory.files) >= progress.LARGE_FILE_COUNT and found is None
        left = deadline.remaining()
        cost = self._costs.get(inventory.root_path)
        budget = None if left is None or self.store is None else left * (INDEX_SHARE if cost is None else CALL_SHARE)
        with progress.preparing(
            f"the index of {inventory.root_path or '.'}/ ({len(inventory.files)} files)", large=large
        ):
            if budget is None:  # no time rule: one build per fingerprint, however many sessions ask at once
                built = self._built.get_or_build(inventory.fingerprint, lambda: self._build(base, inventory))
                self._latest.put(inventory.root_path, inventory.fingerprint)
                return built
            if found is not None:
                return found
            built = self._build(base, inventory, budget=budget, first=first, cost_per_file=cost or 0.0)
            if built.files:
                self._costs.put(inventory.root_path, POST_FACTOR * built.post_seconds / len(built.files))
            if not built.pending:
                self._built.put(inventory.fingerprint, built)
                self._latest.put(inventory.root_path, inventory.fingerprint)
            return built

    def _build(
        self,
        base: ResolvedPath,
        inventory: Inventory,
        *,
        budget: float | None = None,
        first: Sequence[str] = (),
        cost_per_file: float = 0.0,
    ) -> FileIndex:
        extract: Callable[[ResolvedPath, list[FileEntry]], list[FileFeatures]] = partial(
            self._extract, label=f"{inventory.root_path or '.'}/"
        )
        latest = self._latest.get(inventory.root_path)
        previous = self._built.get(latest) if latest is not None else None
        known = Known.of(previous) if previous is not None else None
        if self.store is None:
            return FileIndex.build(base, inventory.files, known, extract=extract)
        return self.store.index(
            base, inventory.files, known=known, extract=extract, budget=budget, first=first, cost_per_file=cost_per_file
        )
