"""The parsed files a server holds: each version read, fingerprinted and parsed by a worker once, and
kept here (the only place parses are cached), so a warm read pays one small round trip for the
fingerprint and no parse. What a worker sends back is the parse; a table's database is adopted here."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TypeVar

from .. import progress
from ..config import Settings
from ..files.artifacts import Artifact, LruCache
from ..files.indexcache import IndexCache
from ..files.large import StreamedRange
from ..files.revisions import Revisions
from ..files.roots import ResolvedPath, Roots
from ..readers.base import ParsedArtifact, Reader, parsed_bytes
from ..readers.registry import ReaderRegistry
from ..readers.table_query import TableQueries
from . import tasks
from .pool import WorkerPool

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
        #: (path, fingerprint, revision) -> the parse, least recently used out first.
        self.cache: LruCache[tuple[str, str, str], ParsedArtifact] = LruCache(
            32, max_bytes=cache_bytes, weigh=parsed_bytes
        )

    @property
    def parse_count(self) -> int:
        """How many parses were kept (cache misses): repeated reads of an unchanged file add none."""
        return self.cache.builds

    def work(self, task: Callable[..., T], *args: object, label: str) -> T:
        """`task(*args)` in a worker, under the call's deadline (outside a call: the call time limit)."""
        return self.workers.run(task, *args, label=label, seconds=self.settings.call_timeout_seconds)

    def stream(self, location: ResolvedPath, first: int, last: int) -> StreamedRange:
        return self.work(tasks.read_lines, location, first, last, label=location.relative)

    def open(self, path: str) -> ParsedArtifact:
        """Resolve inside the roots; a worker reads, fingerprints and (once per version) parses the file."""
        location = self.roots.resolve(path)
        reader = self.registry.reader_for(location.absolute)
        request = tasks.LoadRequest(
            reader=reader,
            location=location,
            max_bytes=self.settings.max_parse_bytes,
            passage_chars=self.settings.passage_chars,
            known=self._parsed_versions(location.relative),
            parse=self.index_cache is None,
        )
        large = location.stat().st_size >= progress.large_bytes(binary=reader.binary)
        with progress.preparing(f"{location.relative}", large=large and not request.known):
            loaded = self.work(tasks.load, request, label=location.relative)
            artifact = self.revisions.stamp(loaded.artifact)
            parsed = self._cached(artifact)
            if parsed is None:
                parsed = self._adopt(reader, artifact, loaded)
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
        found = self._cached(artifact, rev=rev)
        if found is not None:
            return found
        loaded = self.work(
            tasks.parse, reader, artifact, self.settings.passage_chars, label=f"{location.relative}@{rev}"
        )
        return self._adopt(reader, artifact, loaded, rev=rev)

    def _cached(self, artifact: Artifact, *, rev: str | None = None) -> ParsedArtifact | None:
        """The parse of this version held here, under this revision (another revision's parse of the same
        bytes is reused with this artifact's commit)."""
        rev = rev or artifact.rev
        found = self.cache.get((artifact.path, artifact.fingerprint, rev))
        if found is not None:
            return found
        for (path, fingerprint, other), parsed in self.cache.items():
            if path == artifact.path and fingerprint == artifact.fingerprint and other != rev:
                again = replace(parsed, artifact=replace(parsed.artifact, commit=artifact.commit))
                self.cache.put((artifact.path, artifact.fingerprint, rev), again)
                return again
        return None

    def _adopt(
        self, reader: Reader, artifact: Artifact, loaded: tasks.Loaded, *, rev: str | None = None
    ) -> ParsedArtifact:
        """Keep a worker's parse (or the shared index cache's, or a fresh one from a worker when the first
        answer brought only the fingerprint); its table, if any, opened here."""
        parsed = loaded.parsed
        cache, chars = self.index_cache, self.settings.passage_chars
        if parsed is None and cache is not None:
            parsed = cache.lookup(reader, artifact, passage_chars=chars)
        if parsed is None:
            again = tasks.LoadRequest(
                reader=reader, location=artifact.location, max_bytes=self.settings.max_parse_bytes, passage_chars=chars
            )
            loaded = self.work(tasks.load, again, label=artifact.path)
            artifact = self.revisions.stamp(loaded.artifact)  # the bytes the parse read (the file may have changed)
            parsed = loaded.parsed
            assert parsed is not None  # a parse was asked for
        if loaded.table is not None:
            parsed.queries = TableQueries.adopt(loaded.table)
        parsed = replace(parsed, artifact=replace(parsed.artifact, commit=artifact.commit, location=artifact.location))
        if cache is not None and loaded.parsed is not None:
            cache.keep(reader, parsed, passage_chars=chars)
        self.cache.put((artifact.path, parsed.artifact.fingerprint, rev or parsed.artifact.rev), parsed)
        self.cache.builds += 1
        return parsed

    def _parsed_versions(self, path: str) -> frozenset[str]:
        return frozenset(fingerprint for (held, fingerprint, _), _parsed in self.cache.items() if held == path)
