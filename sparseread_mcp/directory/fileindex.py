"""A directory's file index: each file's terms and defined symbols, stored as arrays that persist.

Per file the index keeps the terms of its path (three times) and of its head, and the names it
defines (`def`, `class`, `function`, `fn`, `func`, `struct` ... found by a line pattern, with their
lines). Files are scored by BM25 over those terms; `defines` maps a name to the files and lines that
define it. Everything is plain arrays and strings, so `save`/`load` write an `.npz` without pickles
(loaded with allow_pickle=False: a planted file can make a wrong ranking, never run code), and an
update keeps every file whose (size, mtime) is unchanged and reads only the others.
"""

from __future__ import annotations

import itertools
import json
import re
import time
import zipfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..deadline import checkpoint
from ..errors import OutsideRoots, UnsupportedArtifact
from ..files import safeopen
from ..files.roots import ResolvedPath
from ..locate.terms import terms
from ..progress import report
from ..readers.base import PASSAGE_BYTES
from .collection import MAX_CONTENT_BYTES, FileEntry

INDEX_HEAD_BYTES = 65_536
#: Definitions are looked for in this much of each file (a 34 KB median source file fits whole).
SYMBOL_BYTES = 262_144
#: At most this many names per file (a generated file with thousands adds nothing to a ranking).
MAX_SYMBOLS = 2_000
#: Bump when the saved arrays change meaning.
FORMAT = 4
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
    for match in _CODE_TOKEN.finditer(data):
        raw = match.group(0).decode("ascii")
        if not code_like(raw):
            continue
        token = REF + raw.casefold()
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

    def __init__(self, files: list[FileEntry], features: list[FileFeatures], *, pending: int = 0) -> None:
        self.files = files
        self.features = features
        #: Files of the folder not indexed yet: indexing ran out of its time budget (see build).
        self.pending = pending
        #: Seconds the build took past reading files (building these arrays; a store adds its save).
        self.post_seconds = 0.0
        # Built by C-level passes over all (file, term) pairs, never a Python loop per pair: at 50,000
        # files that loop was most of a warm search.
        words = list(itertools.chain.from_iterable(f.counts for f in features))
        self.vocab = vocab = {word: n for n, word in enumerate(dict.fromkeys(words))}
        cols = np.fromiter(map(vocab.__getitem__, words), dtype=np.int64, count=len(words))
        tfs = np.fromiter(
            itertools.chain.from_iterable(f.counts.values() for f in features), dtype=np.float64, count=len(words)
        )
        rows = np.repeat(np.arange(len(features), dtype=np.int64), [len(f.counts) for f in features])
        order = np.argsort(cols, kind="stable")
        self._docs = rows[order]
        self._tfs = tfs[order]
        self._starts = np.searchsorted(cols[order], np.arange(len(vocab) + 1))
        plain = np.fromiter((not word.startswith(REF) for word in vocab), dtype=np.float64, count=len(vocab))
        lengths = np.bincount(rows, weights=tfs * plain[cols], minlength=len(features)).astype(np.float64)
        mean = float(lengths.mean()) if len(features) and lengths.mean() > 0 else 1.0
        self._norm = _K1 * (1 - _B + _B * lengths / mean)
        self.defines: dict[str, list[tuple[int, int]]] = {}
        for number, feature in enumerate(features):
            for name, line in feature.symbols:
                self.defines.setdefault(name, []).append((number, line))
        self.defines_folded: dict[str, set[str]] = {}
        for name in self.defines:
            self.defines_folded.setdefault(name.casefold(), set()).add(name)
        self.vendored_roots = vendored_roots([f.path for f in files], {f.path for f in features if RELEASE in f.counts})

    @classmethod
    def build(
        cls,
        directory: ResolvedPath,
        files: list[FileEntry],
        known: dict[str, FileFeatures] | None = None,
        *,
        extract: Extractor | None = None,
        budget: float | None = None,
        first: Sequence[str] = (),
        cost_per_file: float = 0.0,
    ) -> FileIndex:
        """Index `files`, reusing from `known` (path -> features) every file whose size and mtime are
        unchanged; the others are read by `extract` (the server's runs in a worker), else here.

        With `budget` (seconds), new files are read CHUNK_FILES at a time, those whose paths hold the
        most of the terms `first` first, until the budget is spent, keeping `cost_per_file` seconds for
        each file the index will hold (the work after reading grows with it): the rest are left out of
        this index and counted in `pending` (a later build, given these features as `known`, goes on)."""
        kept = [f for f in files if f.type not in _SKIPPED_TYPES]
        reused: dict[str, FileFeatures] = {}
        for entry in kept:
            old = (known or {}).get(entry.path)
            if old is not None and (old.size, old.mtime_ns, old.type) == (entry.size, entry.mtime_ns, entry.type):
                reused[entry.path] = old
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
        features = [reused.get(entry.path) or fresh[entry.path] for entry in indexed]
        built = cls(indexed, features, pending=len(kept) - len(indexed))
        built.post_seconds = time.monotonic() - started
        return built

    def bm25(self, query_terms: list[str] | tuple[str, ...]) -> np.ndarray:
        """One BM25 score per file (zeros when no term is known)."""
        scores = np.zeros(len(self.files), dtype=np.float64)
        count = len(self.files)
        for word in dict.fromkeys(query_terms):
            term = self.vocab.get(word)
            if term is None or word.startswith(REF):
                continue
            first, last = int(self._starts[term]), int(self._starts[term + 1])
            docs, tfs = self._docs[first:last], self._tfs[first:last]
            idf = np.log(1 + (count - len(docs) + 0.5) / (len(docs) + 0.5))
            scores[docs] += idf * tfs * (_K1 + 1) / (tfs + self._norm[docs])
        return scores

    @property
    def approx_bytes(self) -> int:
        """Memory held, roughly: about 130 bytes per (file, term) entry in dicts and arrays, plus names."""
        entries = int(self._docs.size)
        return 130 * entries + 100 * len(self.vocab) + 120 * sum(len(f.symbols) for f in self.features)

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
            return np.zeros(0, dtype=np.int64), np.zeros(0)
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

    # -- persistence ---------------------------------------------------------------------------------
    def save(self, path: Path) -> None:
        """Write the per-file features as arrays (no pickles), whole or not at all."""
        from ..files.atomicfile import write_atomically

        vocab: dict[str, int] = {}
        indptr, term_ids, tfs, names, lines, sym_ptr = [0], [], [], [], [], [0]
        for feature in self.features:
            for word, count in feature.counts.items():
                term_ids.append(vocab.setdefault(word, len(vocab)))
                tfs.append(count)
            indptr.append(len(term_ids))
            for name, line in feature.symbols:
                names.append(name)
                lines.append(line)
            sym_ptr.append(len(names))
        header = {
            "format": FORMAT,
            "files": [[f.path, f.size, f.mtime_ns, f.type] for f in self.features],
            "vocab": list(vocab),
            "names": names,
        }
        import io

        buffer = io.BytesIO()
        np.savez_compressed(
            buffer,
            header=np.frombuffer(json.dumps(header).encode(), dtype=np.uint8),
            indptr=np.asarray(indptr, dtype=np.int64),
            term_ids=np.asarray(term_ids, dtype=np.int32),
            tfs=np.asarray(tfs, dtype=np.int32),
            lines=np.asarray(lines, dtype=np.int32),
            sym_ptr=np.asarray(sym_ptr, dtype=np.int64),
        )
        write_atomically(path, buffer.getvalue())


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


def load_features(path: Path) -> dict[str, FileFeatures]:
    """The features saved at `path` by path; empty when missing, of another format, or malformed."""
    try:
        with path.open("rb") as handle, np.load(handle, allow_pickle=False) as stored:
            header = json.loads(bytes(stored["header"]).decode())
            if header.get("format") != FORMAT:
                return {}
            indptr, term_ids, tfs = stored["indptr"], stored["term_ids"], stored["tfs"]
            lines, sym_ptr = stored["lines"], stored["sym_ptr"]
    except (OSError, ValueError, KeyError, TypeError, zipfile.BadZipFile, json.JSONDecodeError, EOFError):
        return {}
    vocab: list[str] = header["vocab"]
    names: list[str] = header["names"]
    out: dict[str, FileFeatures] = {}
    try:
        for number, (rel, size, mtime_ns, kind) in enumerate(header["files"]):
            first, last = int(indptr[number]), int(indptr[number + 1])
            counts = {
                vocab[t]: int(c) for t, c in zip(term_ids[first:last].tolist(), tfs[first:last].tolist(), strict=True)
            }
            s_first, s_last = int(sym_ptr[number]), int(sym_ptr[number + 1])
            symbols = tuple(zip(names[s_first:s_last], lines[s_first:s_last].tolist(), strict=True))
            out[str(rel)] = FileFeatures(
                path=str(rel), size=int(size), mtime_ns=int(mtime_ns), type=str(kind), counts=counts, symbols=symbols
            )
    except (IndexError, ValueError, TypeError):
        return {}
    return out


def file_index_bytes(index: FileIndex) -> int:
    """Approximate memory of a directory's file index (its term entries, names and per-file records)."""
    return index.approx_bytes + PASSAGE_BYTES * len(index.files)
