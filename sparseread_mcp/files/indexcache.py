"""Parsed artifacts on disk, so replicas (and restarts) sharing a cache directory parse each version once.

An entry is keyed by the content fingerprint, the file's suffix, the reader (name and class), the
package version, this format's version and the passage size: a new release or another setting never
reads an old entry. Entries are written to a temporary file in the same folder and renamed into place,
so concurrent writers (threads or replicas) each publish a whole entry and a reader never sees half of
one; the last rename wins, and every writer wrote the same parse. A parse that cannot be pickled (a
table's live DuckDB connection) is simply not cached. A hit refreshes the entry's modification time;
past `max_bytes` the least recently used entries are removed (checked every PRUNE_EVERY writes). Entries
are pickles: the cache directory must be writable only by the servers that use it, like their own code.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import logging
import os
import pickle
from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as installed_version
from pathlib import Path

from ..errors import ConfigError
from ..readers.base import ParsedArtifact, Reader
from .artifacts import Artifact
from .atomicfile import write_atomically
from .roots import Roots

logger = logging.getLogger(__name__)

#: Bump when the pickled shape changes in a way the package version does not capture.
FORMAT = 3  # 2: modules moved into packages (pickles name their classes by module); 3: long prose in 400s
#: Writes between two checks of the folder's size.
PRUNE_EVERY = 64
#: Fields rebuilt on every load: the artifact (this replica's path and git state) and per-process indexes.
_NOT_STORED = frozenset({"artifact", "locator_state"})
_LOAD_ERRORS = (pickle.UnpicklingError, EOFError, AttributeError, ImportError, IndexError, TypeError, ValueError)


class IndexCache:
    """A folder of parsed artifacts shared by every process that names it."""

    def __init__(
        self, folder: Path, *, version: str | None = None, max_bytes: int = 2 << 30, roots: Roots | None = None
    ) -> None:
        if roots is not None and roots.contains(folder):
            # Entries are pickles: anyone who can write under a root could plant one that runs code on load.
            raise ConfigError(
                f"the cache directory {folder} is inside a readable root; set SPARSEREAD_CACHE_DIR outside the roots"
            )
        self.folder = folder / "parsed"
        self._version = version or _package_version()
        self._max_bytes = max_bytes
        self.hits = 0
        self.writes = 0

    def lookup(self, reader: Reader, artifact: Artifact, *, passage_chars: int) -> ParsedArtifact | None:
        """The stored parse of `artifact` by `reader`, or None (the caller parses, in a worker, and keeps it)."""
        cached = self._load(self.entry_path(reader, artifact, passage_chars=passage_chars), artifact)
        if cached is not None:
            self.hits += 1
        return cached

    def keep(self, reader: Reader, parsed: ParsedArtifact, *, passage_chars: int) -> None:
        """Store a parse for every process that shares the folder."""
        self._store(self.entry_path(reader, parsed.artifact, passage_chars=passage_chars), parsed)

    def parse(self, reader: Reader, artifact: Artifact, *, passage_chars: int) -> ParsedArtifact:
        """The parse of `artifact` by `reader`: from the folder when an entry exists, else parsed here and
        stored (for callers without workers: calibration and tests of the cache itself)."""
        cached = self.lookup(reader, artifact, passage_chars=passage_chars)
        if cached is not None:
            return cached
        from ..locate.passage_size import parse_in_passages  # locate sits above files

        parsed = parse_in_passages(reader, artifact, passage_chars)
        self.keep(reader, parsed, passage_chars=passage_chars)
        return parsed

    def entry_path(self, reader: Reader, artifact: Artifact, *, passage_chars: int) -> Path:
        kind = type(reader)
        key = "|".join(
            (
                str(FORMAT),
                self._version,
                reader.name,
                f"{kind.__module__}.{kind.__qualname__}",
                Path(artifact.path).suffix.lower(),
                str(passage_chars),
                artifact.fingerprint,
            )
        )
        digest = hashlib.sha256(key.encode()).hexdigest()
        return self.folder / digest[:2] / f"{digest}.pickle"

    def _load(self, path: Path, artifact: Artifact) -> ParsedArtifact | None:
        try:
            with path.open("rb") as handle:
                stored = pickle.load(handle)
        except FileNotFoundError:
            return None
        except (OSError, *_LOAD_ERRORS) as exc:
            logger.warning("ignoring unreadable index cache entry %s: %s", path, exc)
            return None
        if not isinstance(stored, dict) or stored.get("fingerprint") != artifact.fingerprint:
            return None
        with contextlib.suppress(OSError):
            os.utime(path)  # recently used: pruned last
        # The text the reader worked from (a PDF's extraction) with this process's path, location and commit.
        source = dataclasses.replace(artifact, text=stored["text"], data=stored["data"])
        return ParsedArtifact(artifact=source, **stored["fields"])

    def _store(self, path: Path, parsed: ParsedArtifact) -> None:
        fields = {f.name: getattr(parsed, f.name) for f in dataclasses.fields(parsed) if f.name not in _NOT_STORED}
        entry = {
            "fingerprint": parsed.artifact.fingerprint,
            "text": parsed.artifact.text,
            "data": parsed.artifact.data,
            "fields": fields,
        }
        try:
            payload = pickle.dumps(entry, protocol=pickle.HIGHEST_PROTOCOL)
        except (pickle.PicklingError, TypeError, AttributeError) as exc:
            logger.debug("not caching %s: %s", parsed.artifact.path, exc)
            return
        try:
            write_atomically(path, payload)  # readers see the old entry, none, or this whole one
        except OSError as exc:
            logger.warning("cannot write index cache entry %s: %s", path, exc)
            return
        self.writes += 1
        if self.writes % PRUNE_EVERY == 0:
            self.prune()

    def prune(self) -> None:
        """Remove the least recently used entries until the folder holds at most 80% of `max_bytes`."""
        entries = []
        for path in self.folder.glob("*/*.pickle"):
            with contextlib.suppress(OSError):  # another replica may prune the same folder
                stat = path.stat()
                entries.append((stat.st_mtime, stat.st_size, path))
        total = sum(size for _, size, _ in entries)
        if total <= self._max_bytes:
            return
        for _, size, path in sorted(entries):
            if total <= self._max_bytes * 0.8:
                break
            path.unlink(missing_ok=True)
            total -= size


def _package_version() -> str:
    try:
        return installed_version("sparseread-mcp")
    except PackageNotFoundError:  # a source tree: FORMAT alone tells entries apart
        return "0.0.0"
