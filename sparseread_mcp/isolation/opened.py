"""The parsed files a server holds: each version read, fingerprinted and parsed by a worker once, and
kept here (the only place parses are cached), so a warm read pays one small round trip for the
fingerprint and no parse. What a worker sends back is the parse; a table's database is adopted here.
Calls that open the same version at once take turns (keyed_locks.py), so they pay one parse between them."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import TypeVar

import numpy as np

from .. import progress
from ..config import Settings
from ..directory.collection import FileEntry, Inventory
from ..directory.fileindex import FileFeatures
from ..evidence import Hit
from ..files.artifacts import Artifact, LruCache
from ..files.indexcache import IndexCache
from ..files.large import StreamedRange
from ..files.revisions import Revisions
from ..files.roots import ResolvedPath, Roots
from ..files.textdiff import TextDiff
from ..locate.encoding import Kind, encoded_by
from ..locate.patterns import counted_by
from ..models import OpResult
from ..readers.base import ParsedArtifact, Reader, parsed_bytes
from ..readers.registry import ReaderRegistry
from ..readers.table_query import TableQueries
from . import tasks
from .keyed_locks import KeyedLocks
from .pool import WorkerPool, tenant

T = TypeVar("T")


class OpenedFiles:
    """Parses by (path, fingerprint, revision), built in workers, within `cache_bytes`."""

    def __init__(
        self,
        settings: Settings,
        *,
        roots: Roots,
        registry: ReaderRegistry,
        revisions: Revisions,
        workers: WorkerPool,
        index_cache: IndexCache | None,
        cache_bytes: int,
    ) -> None:
        self.settings = settings
        self.roots = roots
        self.registry = registry
        self.revisions = revisions
        self.workers = workers
        self.index_cache = index_cache
        #: (path, fingerprint, revision, read as lines) -> the parse, least recently used out first.
        self.cache: LruCache[tuple[str, str, str, bool], ParsedArtifact] = LruCache(
            32, max_bytes=cache_bytes, weigh=parsed_bytes
        )
        #: Calls opening the same file (or the same earlier version) at once take turns: one parse, not one each.
        self._opening = KeyedLocks()
        self._parses = 0
        self._counting = threading.Lock()

    @property
    def parse_count(self) -> int:
        """How many parses workers ran: repeated reads of an unchanged file add none, and neither do calls
        that open a file while another call parses it."""
        return self._parses

    def work(self, task: Callable[..., T], *args: object, label: str) -> T:
        """`task(*args)` in a worker, under the call's deadline (outside a call: the call time limit)."""
        return self.workers.run(task, *args, label=label, seconds=self.settings.call_timeout_seconds)

    @contextmanager
    def isolated(self, session_key: str) -> Iterator[None]:
        """A call's work on untrusted input: its workers count against the session's share, and the user's
        regex needles are matched in a worker too."""
        with tenant(session_key), counted_by(self._count_patterns), encoded_by(self._embed):
            yield

    def _count_patterns(self, needles: tuple[str, ...], texts: tuple[str, ...], allowed: float) -> list[list[int]]:
        label = f"the needles {', '.join(needles)[:80]}"
        return self.work(tasks.count_patterns, needles, texts, allowed, label=label)

    def _embed(self, model: str, kind: Kind, texts: tuple[str, ...]) -> np.ndarray:
        label = f"{len(texts)} {kind} text(s) to embed"
        vectors: np.ndarray = self.work(tasks.embed, model, kind, texts, label=label)
        return vectors

    def search_folder(self, inventory: Inventory, needles: list[str]) -> tuple[list[Hit], OpResult]:
        """Every match of the needles under the inventory's folder, searched by a worker."""
        base = self.roots.resolve(inventory.root_path or ".")
        cap = self.settings.search_max_file_bytes
        return self.work(tasks.search_folder, base, inventory, needles, cap, label=f"{inventory.root_path or '.'}/")

    def diff(self, old: str, new: str, *, old_label: str, new_label: str, context: int, label: str) -> TextDiff:
        """A bounded line diff of two texts, computed in a worker (difflib is quadratic on hostile input)."""
        return self.work(tasks.diff, old, new, old_label, new_label, context, label=label)

    def extract_features(self, base: ResolvedPath, entries: list[FileEntry], *, label: str) -> list[FileFeatures]:
        """What a folder's index needs of each file (terms, definitions, references), read by a worker."""
        return self.work(tasks.features, base, entries, label=label)

    def stream(self, location: ResolvedPath, first: int, last: int) -> StreamedRange:
        return self.work(tasks.read_lines, location, first, last, label=location.relative)

    def open(self, path: str, *, as_lines: bool = False) -> ParsedArtifact:
        """Resolve inside the roots; a worker reads, fingerprints and (once per version) parses the file;
        with `as_lines`, a file its reader refuses comes back parsed as plain lines (see answers/as_lines)."""
        location = self.roots.resolve(path)
        reader = self.registry.reader_for(location.absolute)
        with self._opening.hold((location.relative, as_lines), label=location.relative):
            request = tasks.LoadRequest(
                reader=reader,
                location=location,
                max_bytes=self.settings.max_parse_bytes,
                passage_chars=self.settings.passage_chars,
                known=self._parsed_versions(location.relative, as_lines=as_lines),
                parse=self.index_cache is None,
                lines_reader=self._lines_reader(reader),
                as_lines=as_lines,
            )
            # Only a version not parsed yet may take long enough to announce (a warm read skips this stat).
            large = not request.known and location.stat().st_size >= progress.large_bytes(binary=reader.binary)
            with progress.preparing(f"{location.relative}", large=large):
                loaded = self._counted(self.work(tasks.load, request, label=location.relative))
                artifact = self.revisions.stamp(loaded.artifact)
                parsed = self._cached(artifact, as_lines=as_lines)
                if parsed is None:
                    parsed = self._adopt(request, artifact, loaded)
        self.revisions.remember(parsed.artifact)
        return parsed

    def open_at(self, path: str, rev: str) -> ParsedArtifact | None:
        """The version of `path` that `rev` names (a commit from git, or a content hash seen before)."""
        location = self.roots.resolve(path)
        reader = self.registry.reader_for(location.absolute)
        artifact = self.revisions.artifact_at(location, rev, binary=reader.binary)
        if artifact is None:
            return None
        artifact = replace(artifact, commit=rev if not rev.startswith("sha256:") else None)
        label = f"{location.relative}@{rev}"
        with self._opening.hold((location.relative, rev), label=label):
            found = self._cached(artifact, rev=rev, as_lines=True)
            if found is not None:
                return found
            lines = self._lines_reader(reader)
            loaded = self._counted(
                self.work(tasks.parse, reader, artifact, self.settings.passage_chars, lines, label=label)
            )
            request = tasks.LoadRequest(
                reader=reader,
                location=location,
                max_bytes=self.settings.max_parse_bytes,
                passage_chars=self.settings.passage_chars,
            )
            return self._adopt(request, artifact, loaded, rev=rev)

    def _counted(self, loaded: tasks.Loaded) -> tasks.Loaded:
        if loaded.parsed is not None:
            with self._counting:
                self._parses += 1
        return loaded

    def _lines_reader(self, reader: Reader) -> Reader | None:
        """The plain text reader, which reads as lines what `reader` refuses (none when `reader` is it)."""
        lines = next((r for r in self.registry.readers if r.name == "text"), None)
        return None if lines is reader else lines

    def _cached(self, artifact: Artifact, *, rev: str | None = None, as_lines: bool = False) -> ParsedArtifact | None:
        """The parse of this version held here, under this revision (another revision's parse of the same
        bytes is reused with this artifact's commit); with `as_lines`, its parse as lines if that is all."""
        rev = rev or artifact.rev
        for lines in (False, True) if as_lines else (False,):
            found = self.cache.get((artifact.path, artifact.fingerprint, rev, lines))
            if found is not None:
                return found
            for (path, fingerprint, other, kind), parsed in self.cache.items():
                if (path, fingerprint, kind) == (artifact.path, artifact.fingerprint, lines) and other != rev:
                    again = replace(parsed, artifact=replace(parsed.artifact, commit=artifact.commit))
                    self.cache.put((artifact.path, artifact.fingerprint, rev, lines), again)
                    return again
        return None

    def _adopt(
        self, request: tasks.LoadRequest, artifact: Artifact, loaded: tasks.Loaded, *, rev: str | None = None
    ) -> ParsedArtifact:
        """Keep a worker's parse (or the shared index cache's, or a fresh one from a worker when the first
        answer brought only the fingerprint); its table, if any, opened here."""
        parsed = loaded.parsed
        cache, chars = self.index_cache, self.settings.passage_chars
        if parsed is None and cache is not None:
            parsed = cache.lookup(request.reader, artifact, passage_chars=chars)
        if parsed is None:
            loaded = self._counted(
                self.work(tasks.load, replace(request, known=frozenset(), parse=True), label=artifact.path)
            )
            artifact = self.revisions.stamp(loaded.artifact)  # the bytes the parse read (the file may have changed)
            parsed = loaded.parsed
            assert parsed is not None  # a parse was asked for
        if loaded.parsed is not None:
            parsed = replace(parsed, passages=loaded.passages())
        if loaded.table is not None:
            parsed.queries = TableQueries.adopt(loaded.table)
        parsed = replace(parsed, artifact=replace(parsed.artifact, commit=artifact.commit, location=artifact.location))
        if cache is not None and loaded.parsed is not None and not loaded.as_lines:
            cache.keep(request.reader, parsed, passage_chars=chars)
        key = (artifact.path, parsed.artifact.fingerprint, rev or parsed.artifact.rev, loaded.as_lines)
        self.cache.put(key, parsed)
        return parsed

    def _parsed_versions(self, path: str, *, as_lines: bool) -> frozenset[str]:
        """Fingerprints of `path` whose parse is held (as lines too, when those would do)."""
        return frozenset(
            fingerprint
            for (held, fingerprint, _, lines), _parsed in self.cache.items()
            if held == path and (as_lines or not lines)
        )
