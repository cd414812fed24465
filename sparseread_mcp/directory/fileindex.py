"""A directory's file index: each file's terms and defined symbols, stored as arrays that persist.

Per file the index keeps the terms of its path (three times) and of its head, and the names it
defines (`def`, `class`, `function`, `fn`, `func`, `struct` ... found by a line pattern, with their
lines). Files are scored by BM25 over those terms; `defined` gives the files and lines that define a
name (words and names are found by hash, string_ids.py). Everything is plain arrays and strings, so
`save`/`load` write an `.npz` without pickles (loaded with allow_pickle=False: a planted file can make a
wrong ranking, never run code), and an update keeps every file whose (size, mtime) is unchanged and reads
only the others.
"""

from __future__ import annotations

import itertools
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TypeVar, cast

import numpy as np

from ..deadline import checkpoint
from ..errors import OutsideRoots, UnsupportedArtifact
from ..files import safeopen
from ..files.roots import ResolvedPath
from ..locate.terms import terms
from ..progress import report
from ..readers.base import PASSAGE_BYTES
from . import filerows
from .collection import MAX_CONTENT_BYTES, FileEntry
from .filerows import FileRows
from .string_ids import StringIds

INDEX_HEAD_BYTES = 65_536
#: Definitions are looked for in this much of each file (a 34 KB median source file fits whole).
SYMBOL_BYTES = 262_144
#: At most this many names per file (a generated file with thousands adds nothing to a ranking).
MAX_SYMBOLS = 2_000
_SKIPPED_TYPES = frozenset({"binary", "unreadable"})
_NO_CONTENT = frozenset({"pdf", "table", "xlsx", "parquet"})
# One definition per line, keyword then name; linear patterns (no nesting), run on at most SYMBOL_BYTES.
_DEFINITION = re.compile(
    rb"^[ \t]*(?:(?:export|public|private|protected|static|async|pub(?:\([a-z]+\))?|abstract|final|default)[ \t]+)*"
    rb"(?:def|class|function|fn|func|struct|enum|trait|interface|type|module|impl)[ \t]+"
    rb"(?:\([^)\n]{0,80}\)[ \t]*)?([A-Za-z_][A-Za-z0-9_]{0,80})",
    re.MULTILINE,
)
# Names written like code (snake_case, camelCase, --options) are kept whole as references, prefixed
# with REF so they never meet a BM25 query term.
_CODE_TOKEN = re.compile(rb"--[a-z][a-z0-9-]{1,60}|[A-Za-z_][A-Za-z0-9_]{2,80}")
REF = "="
MAX_REFS = 4_000
#: Counted once in a package's `__init__` that declares its own release (`__version__ = ...`): a
#: package nested in another that does so is a vendored copy (see vendored_roots).
RELEASE = REF + "!release"
_RELEASE_LINE = re.compile(rb"^__version__[ \t]*(?::[^=\n]{0,80})?=", re.MULTILINE)
#: Licence files name a separately released tree as well.
_LICENSE_STEMS = ("license", "licence", "copying")
_K1, _B = 1.2, 0.75
#: Memory of what FileIndex.derived keeps, per file (its file-name structures: 41 MB at 28,000 files).
DERIVED_BYTES = 1_600
T = TypeVar("T")
#: Files read per worker call when indexing runs under a time budget (the budget is checked between calls).
CHUNK_FILES = 400


@dataclass(frozen=True, slots=True, kw_only=True)
class FileFeatures:
    """What the index knows of one file version."""

    path: str
    size: int
    mtime_ns: int
    type: str
    counts: dict[str, int]
    symbols: tuple[tuple[str, int], ...]


#: Reads the listed files and extracts their features, in order (a worker does it for the server).
Extractor = Callable[[ResolvedPath, list[FileEntry]], list[FileFeatures]]


def extract_features(directory: ResolvedPath, entries: list[FileEntry]) -> list[FileFeatures]:
    """Each entry's features, read beneath the root, with progress by file."""
    features = []
    for number, entry in enumerate(entries):
        checkpoint()
        report(number, len(entries), f"indexing {entry.path}")
        features.append(features_of(directory, entry))
    return features


def features_of(directory: ResolvedPath, entry: FileEntry) -> FileFeatures:
    """Read one listed file beneath the root (once, bounded) and extract its terms and definitions."""
    data = b""
    if entry.type not in _NO_CONTENT and entry.size <= MAX_CONTENT_BYTES:
        try:
            child = directory.child(entry.path)
            data = safeopen.head_beneath(child.root, child.relative, SYMBOL_BYTES, label=child.relative)
        except (OSError, OutsideRoots, UnsupportedArtifact):
            data = b""
    words = 3 * terms(entry.path.replace("/", " ")) + terms(data[:INDEX_HEAD_BYTES].decode("utf-8", "replace"))
    counts: dict[str, int] = {}
    for word in words:
        counts[word] = counts.get(word, 0) + 1
    for token in references(data):
        counts[token] = counts.get(token, 0) + 1
    if entry.path.rsplit("/", 1)[-1] == "__init__.py" and _RELEASE_LINE.search(data):
        counts[RELEASE] = 1
    return FileFeatures(
        path=entry.path,
        size=entry.size,
        mtime_ns=entry.mtime_ns,
        type=entry.type,
        counts=counts,
        symbols=definitions(data),
    )


def references(data: bytes) -> list[str]:
    """The code-like names and options in `data`, case-folded and prefixed with REF (at most MAX_REFS kinds)."""
    seen: set[str] = set()
    out: list[str] = []
    token_of: dict[bytes, str] = {}  # each name as written, judged once ("" when not code-like)
    for raw in _CODE_TOKEN.findall(data):
        token = token_of.get(raw)
        if token is None:
            text = raw.decode("ascii")
            token = token_of[raw] = REF + text.casefold() if code_like(text) else ""
        if not token:
            continue
        if token not in seen:
            if len(seen) >= MAX_REFS:
                continue
            seen.add(token)
        out.append(token)
    return out


def code_like(word: str) -> bool:
    """Written like code: an option, snake_case, a dotted name or camelCase."""
    if word.startswith("--"):
        return True
    camel = any(a.islower() and b.isupper() for a, b in itertools.pairwise(word))
    return camel or "_" in word.strip("_") or "." in word


def definitions(data: bytes) -> tuple[tuple[str, int], ...]:
    """(name, 1-based line) of each definition line in `data`."""
    found: list[tuple[str, int]] = []
    line, position = 1, 0
    for match in _DEFINITION.finditer(data):
        line += data.count(b"\n", position, match.start())
        position = match.start()
        found.append((match.group(1).decode("ascii"), line))
        if len(found) >= MAX_SYMBOLS:
            break
    return tuple(found)


def vendored_roots(paths: list[str], releases: set[str]) -> tuple[str, ...]:
    """Folders that hold a vendored copy of another project, found by structure, not by name: a package
    nested inside another package (its parent folder has an `__init__.py` too) that declares a release
    of its own (`__version__` in its `__init__.py`, or a licence file of its own). Outermost first."""
    present = set(paths)
    found: set[str] = set()
    for path in paths:
        folder, _, name = path.rpartition("/")
        if not folder or "/" not in folder:
            continue
        parent = folder.rpartition("/")[0]
        own_release = path in releases or name.casefold().split(".")[0] in _LICENSE_STEMS
        if own_release and f"{folder}/__init__.py" in present and f"{parent}/__init__.py" in present:
            found.add(folder)
    outer = sorted(found, key=len)
    return tuple(f for n, f in enumerate(outer) if not any(f.startswith(o + "/") for o in outer[:n]))


class FileIndex:
    """BM25 over files (path terms three times, then the head) and the names each file defines."""

    def __init__(self, files: list[FileEntry], rows: FileRows, *, pending: int = 0) -> None:
        self.files = files
        self.words = rows.words
        #: Files of the folder not indexed yet: indexing ran out of its time budget (see build).
        self.pending = pending
        #: Seconds the build took past reading files (building these arrays; a store adds its save).
        self.post_seconds = 0.0
        self._derived: dict[tuple[object, ...], Any] = {}  # see derived()
        self.vocab = StringIds(rows.words)
        self._docs, self._tfs, self._starts = filerows.by_term(rows)
        # A file's length counts its words, not the code names it uses (those never meet a query term).
        plain = np.fromiter((not word.startswith(REF) for word in rows.words), dtype=bool, count=len(rows.words))
        entry_files = np.repeat(np.arange(rows.count, dtype=np.int64), np.diff(rows.ptr))
        lengths = np.bincount(entry_files, weights=rows.tfs * plain[rows.term_ids], minlength=rows.count)
        mean = float(lengths.mean()) if rows.count and lengths.mean() > 0 else 1.0
        self._norm = _K1 * (1 - _B + _B * lengths / mean)
        self._names, self._lines, self._sym_ptr = rows.names, rows.lines, rows.sym_ptr
        self._name_files = np.repeat(np.arange(rows.count, dtype=np.int32), np.diff(rows.sym_ptr))
        self._named = StringIds(rows.names)
        self._named_folded = StringIds(rows.names, key=str.casefold)
        released, _ = self.postings(RELEASE)
        self.vendored_roots = vendored_roots([f.path for f in files], {files[n].path for n in released.tolist()})

    @classmethod
    def build(
        cls,
        directory: ResolvedPath,
        files: list[FileEntry],
        known: Known | None = None,
        *,
        extract: Extractor | None = None,
        budget: float | None = None,
        first: Sequence[str] = (),
        cost_per_file: float = 0.0,
    ) -> FileIndex:
        """Index `files`, reusing from `known` (an earlier index, in memory or stored) every file whose
        size, mtime and type are unchanged; the others are read by `extract` (the server's runs in a
        worker), else here.

        With `budget` (seconds), new files are read CHUNK_FILES at a time, those whose paths hold the
        most of the terms `first` first, until the budget is spent, keeping `cost_per_file` seconds for
        each file the index will hold (the work after reading grows with it): the rest are left out of
        this index and counted in `pending` (a later build, given this index as `known`, goes on)."""
        kept = [f for f in files if f.type not in _SKIPPED_TYPES]
        rows_of = known.rows_by_path() if known is not None else {}
        reused: dict[str, int] = {}
        for entry in kept:
            prior = rows_of.get(entry.path)
            if prior is not None and prior[1] == entry:  # the same path, size, mtime and type
                reused[entry.path] = prior[0]
        missing = [entry for entry in kept if entry.path not in reused]
        read = extract or extract_features
        if budget is None or len(missing) <= CHUNK_FILES:
            fresh = dict(zip((e.path for e in missing), read(directory, missing) if missing else [], strict=True))
        else:
            fresh = _read_within(
                directory,
                _path_order(missing, first),
                read,
                lambda count: budget - cost_per_file * (len(reused) + count + CHUNK_FILES),
            )
        started = time.monotonic()
        indexed = [entry for entry in kept if entry.path in reused or entry.path in fresh]
        old = [e.path for e in indexed if e.path in reused]
        if known is not None and known.index is not None and not fresh and known.index.files == indexed:
            return known.index  # nothing changed since that index was built (nothing was pending either)
        rows = _joined_rows(known, [reused[path] for path in old], list(fresh.values()))
        # `rows` holds the reused rows first, then the fresh ones (in reading order): back to the walk's order.
        place = {path: n for n, path in enumerate(old + list(fresh))}
        rows = filerows.take(rows, np.fromiter((place[e.path] for e in indexed), dtype=np.int64, count=len(indexed)))
        built = cls(indexed, filerows.without_unused_words(rows), pending=len(kept) - len(indexed))
        built.post_seconds = time.monotonic() - started
        built.changed = bool(fresh) or known is None or len(indexed) != known.count
        return built

    #: Set by build: whether this index differs from the `known` it was built from (a store saves it then).
    changed = True

    def derived(self, key: tuple[object, ...], make: Callable[[], T]) -> T:
        """What `make` works out from this index's files alone (its file names), once per index: a later
        search of the same tree reuses it. Counted in approx_bytes (DERIVED_BYTES a file)."""
        if key not in self._derived:
            self._derived[key] = make()
        return cast(T, self._derived[key])

    def defined(self, name: str) -> list[tuple[int, int]]:
        """(file, line) of each definition of `name`, in file order."""
        return self._definitions(self._named.positions(name))

    def defined_any_case(self, name: str) -> list[tuple[int, int]]:
        """(file, line) of each definition of `name`, then of each other name of the same case-folded form
        (in the order the files first define them)."""
        by_name: dict[str, list[int]] = {name: []}
        for n in self._named_folded.positions(name.casefold()):
            by_name.setdefault(self._names[n], []).append(n)
        return self._definitions([n for positions in by_name.values() for n in positions])

    def _definitions(self, positions: list[int]) -> list[tuple[int, int]]:
        return [(int(self._name_files[n]), int(self._lines[n])) for n in positions]

    def rows(self) -> FileRows:
        """This index's rows (what the store saves and a rebuild reuses)."""
        ptr, term_ids, tfs = filerows.by_file(self._docs, self._tfs, self._starts, len(self.files))
        return FileRows(self.words, ptr, term_ids, tfs, self._names, self._lines, self._sym_ptr)

    def bm25(self, query_terms: list[str] | tuple[str, ...]) -> np.ndarray:
        """One BM25 score per file (zeros when no term is known)."""
        scores = np.zeros(len(self.files), dtype=np.float64)
        count = len(self.files)
        for word in dict.fromkeys(query_terms):
            term = self.vocab.get(word)
            if term is None or word.startswith(REF):
                continue
            first, last = int(self._starts[term]), int(self._starts[term + 1])
            docs, tfs = self._docs[first:last], self._tfs[first:last].astype(np.float64)
            idf = np.log(1 + (count - len(docs) + 0.5) / (len(docs) + 0.5))
            scores[docs] += idf * tfs * (_K1 + 1) / (tfs + self._norm[docs])
        return scores

    @property
    def approx_bytes(self) -> int:
        """Memory held, roughly: the arrays (the lookups of words and names among them), 75 bytes per word
        (its string and list slot), 80 per definition (its name and list slot) and 200 per file's record
        (measured with tracemalloc on 28,000 files of installed packages: 174 MB held, this says 176; with
        dictionaries for the words and names it was 266 MB)."""
        arrays = self._docs.nbytes + self._tfs.nbytes + self._starts.nbytes + self._norm.nbytes + self._lines.nbytes
        arrays += self._name_files.nbytes + self.vocab.nbytes + self._named.nbytes + self._named_folded.nbytes
        return arrays + 75 * len(self.words) + 80 * len(self._names) + (200 + DERIVED_BYTES) * len(self.files)

    def document_frequency(self, word: str) -> int:
        term = self.vocab.get(word)
        return 0 if term is None else int(self._starts[term + 1] - self._starts[term])

    def references(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """(files, counts) of the files that use `name` (a code-like name or option), any case."""
        return self.postings(REF + name.casefold())

    def postings(self, word: str) -> tuple[np.ndarray, np.ndarray]:
        """(files, counts) of the files whose terms hold `word` (a term as locate.terms makes it)."""
        term = self.vocab.get(word)
        if term is None:
            return np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.float32)
        first, last = int(self._starts[term]), int(self._starts[term + 1])
        return self._docs[first:last], self._tfs[first:last]

    def vendored_root(self, number: int) -> str | None:
        """The vendored tree file `number` lies in (a folder path), or None."""
        path = self.files[number].path
        return next((root for root in self.vendored_roots if path.startswith(root + "/")), None)

    def rank(self, query_terms: list[str]) -> list[tuple[FileEntry, float]]:
        """Files by BM25, scores scaled so the best is 1; files without a query term are left out."""
        scores = self.bm25(query_terms)
        if not scores.size or scores.max() <= 0:
            return []
        order = np.argsort(-scores, kind="stable")
        top = float(scores[order[0]])
        return [(self.files[i], float(scores[i]) / top) for i in order if scores[i] > 0]

    def save(self, path: Path) -> None:
        """Write this index's files and rows (see filerows.save)."""
        filerows.save(path, self.files, self.rows())


@dataclass(frozen=True, slots=True)
class Known:
    """What a build may reuse: an earlier index in memory, or the rows and files a store saved."""

    files: list[FileEntry]
    index: FileIndex | None = None
    saved: FileRows | None = None

    @property
    def count(self) -> int:
        return len(self.files)

    def rows_by_path(self) -> dict[str, tuple[int, FileEntry]]:
        return {entry.path: (n, entry) for n, entry in enumerate(self.files)}

    def rows(self) -> FileRows:
        if self.saved is not None:
            return self.saved
        assert self.index is not None
        return self.index.rows()

    @classmethod
    def of(cls, index: FileIndex) -> Known:
        return cls(index.files, index=index)


def _joined_rows(known: Known | None, reused: list[int], fresh: list[FileFeatures]) -> FileRows:
    """The reused rows of `known` (in that order), then rows for `fresh`, over one new word list (the
    known index's own list and vocabulary are copied, never extended: it may still be in use)."""
    if known is not None and reused:
        base = known.rows()
        words = list(base.words)
        ids = known.index.vocab if known.index is not None else StringIds(base.words)
        old = replace(filerows.take(base, np.asarray(reused, dtype=np.int64)), words=words)
    else:
        words, ids = [], None
        old = filerows.empty(words)
    new = filerows.from_counts([f.counts for f in fresh], [f.symbols for f in fresh], words, ids)
    return filerows.join(old, new)


def _path_order(entries: list[FileEntry], first: Sequence[str]) -> list[FileEntry]:
    """`entries` with those whose path holds the most distinct terms of `first` first (stable otherwise)."""
    wanted = set(first)
    if not wanted:
        return entries
    held = [len(wanted.intersection(terms(entry.path.replace("/", " ")))) for entry in entries]
    return [entries[n] for n in sorted(range(len(entries)), key=lambda n: -held[n])]


def _read_within(
    directory: ResolvedPath, entries: list[FileEntry], read: Extractor, budget: Callable[[int], float]
) -> dict[str, FileFeatures]:
    """Features of `entries` in order, CHUNK_FILES per call to `read`, until the seconds spent reach
    `budget(files read so far)` (the first chunk is always read)."""
    started = time.monotonic()
    out: dict[str, FileFeatures] = {}
    for first in range(0, len(entries), CHUNK_FILES):
        chunk = entries[first : first + CHUNK_FILES]
        out.update(zip((e.path for e in chunk), read(directory, chunk), strict=True))
        if time.monotonic() - started >= budget(len(out)):
            break
    return out


def load_saved(path: Path) -> Known | None:
    """The files and rows saved at `path`; None when missing, of another format, or malformed."""
    found = filerows.load(path)
    return None if found is None else Known(found[0], saved=found[1])


def file_index_bytes(index: FileIndex) -> int:
    """Approximate memory of a directory's file index (its term entries, names and per-file records)."""
    return index.approx_bytes + PASSAGE_BYTES * len(index.files)
