"""A file index's rows: each file's term counts and definitions as flat arrays, never a dictionary per file.

One row per file, compressed-sparse-row style: file i's terms are `term_ids[ptr[i]:ptr[i + 1]]` (ids into
`words`) with their counts in `tfs`, and its definitions `names[sym_ptr[i]:sym_ptr[i + 1]]` at `lines`.
This is what the store saves and what a rebuild reuses: unchanged files are taken from the rows by array
gathers, only the files read again become rows from their features (fileindex.FileFeatures), and the
search arrays (by term, for BM25) are one stable sort of them. At 28,000 files of installed packages a
dictionary per file held 274 MB and rebuilding the search arrays from them took 5 s a call.
"""

from __future__ import annotations

import io
import itertools
import json
import zipfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .collection import FileEntry
from .string_ids import StringIds

#: Bump when the saved arrays change meaning.
FORMAT = 4


@dataclass(frozen=True, slots=True)
class FileRows:
    """Per-file term counts and definitions (see the module docstring)."""

    words: list[str]
    ptr: np.ndarray  # int64, one more than the rows
    term_ids: np.ndarray  # int32
    tfs: np.ndarray  # int32
    names: list[str]
    lines: np.ndarray  # int32
    sym_ptr: np.ndarray  # int64, one more than the rows

    @property
    def count(self) -> int:
        return len(self.ptr) - 1

    def symbols(self, row: int) -> Iterable[tuple[str, int]]:
        first, last = int(self.sym_ptr[row]), int(self.sym_ptr[row + 1])
        return zip(self.names[first:last], self.lines[first:last].tolist(), strict=True)


def empty(words: list[str]) -> FileRows:
    """No rows, over `words` (the list the rows joined to these will share)."""
    zero = np.zeros(1, dtype=np.int64)
    none = np.zeros(0, dtype=np.int32)
    return FileRows(words, zero, none, none, [], none, zero)


def from_counts(
    counts: Sequence[dict[str, int]],
    symbols: Sequence[Sequence[tuple[str, int]]],
    words: list[str],
    known: StringIds | None = None,
) -> FileRows:
    """Rows for files given as term -> count dictionaries; `known` finds the words `words` already has, and
    new words are appended to it (shared with the rows they will join). C-level passes over all (file, term)
    pairs, no loop per pair."""
    every = list(itertools.chain.from_iterable(counts))
    ids: dict[str, int] = {}  # only the words of these files
    for word in dict.fromkeys(every):
        found = known.get(word) if known is not None else None
        if found is None:
            found = len(words)
            words.append(word)
        ids[word] = found
    term_ids = np.fromiter(map(ids.__getitem__, every), dtype=np.int32, count=len(every))
    tfs = np.fromiter(itertools.chain.from_iterable(c.values() for c in counts), dtype=np.int32, count=len(every))
    names = [name for found in symbols for name, _ in found]
    lines = np.fromiter((line for found in symbols for _, line in found), dtype=np.int32, count=len(names))
    return FileRows(
        words,
        _offsets([len(c) for c in counts]),
        term_ids,
        tfs,
        names,
        lines,
        _offsets([len(s) for s in symbols]),
    )


def take(rows: FileRows, picks: np.ndarray) -> FileRows:
    """The rows `picks` (row numbers, in that order), same words."""
    starts, ends = rows.ptr[picks], rows.ptr[picks + 1]
    entries = _gather(starts, ends)
    s_starts, s_ends = rows.sym_ptr[picks], rows.sym_ptr[picks + 1]
    symbols = _gather(s_starts, s_ends)
    return FileRows(
        rows.words,
        _offsets(ends - starts),
        rows.term_ids[entries],
        rows.tfs[entries],
        [rows.names[n] for n in symbols.tolist()],
        rows.lines[symbols],
        _offsets(s_ends - s_starts),
    )


def join(first: FileRows, second: FileRows) -> FileRows:
    """`first`'s rows then `second`'s, which must share `first`'s words (see from_counts)."""
    if second.words is not first.words:
        raise ValueError("rows joined must share one word list")
    return FileRows(
        first.words,
        np.concatenate([first.ptr, first.ptr[-1] + second.ptr[1:]]),
        np.concatenate([first.term_ids, second.term_ids]),
        np.concatenate([first.tfs, second.tfs]),
        first.names + second.names,
        np.concatenate([first.lines, second.lines]),
        np.concatenate([first.sym_ptr, first.sym_ptr[-1] + second.sym_ptr[1:]]),
    )


def without_unused_words(rows: FileRows) -> FileRows:
    """The same rows over only the words they use (files that left took theirs with them)."""
    used = np.bincount(rows.term_ids, minlength=len(rows.words)) > 0
    if used.all():
        return rows
    renumber = np.cumsum(used, dtype=np.int64) - 1
    words = [word for word, keep in zip(rows.words, used.tolist(), strict=True) if keep]
    return FileRows(
        words, rows.ptr, renumber[rows.term_ids].astype(np.int32), rows.tfs, rows.names, rows.lines, rows.sym_ptr
    )


def by_term(rows: FileRows) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(files, counts, starts): term t's files are files[starts[t]:starts[t + 1]], in row order."""
    files = np.repeat(np.arange(rows.count, dtype=np.int32), np.diff(rows.ptr))
    order = np.argsort(rows.term_ids, kind="stable")
    starts = np.searchsorted(rows.term_ids[order], np.arange(len(rows.words) + 1))
    return files[order], rows.tfs[order].astype(np.float32), starts.astype(np.int64)


def by_file(files: np.ndarray, tfs: np.ndarray, starts: np.ndarray, count: int) -> tuple[np.ndarray, ...]:
    """by_term's inverse: (ptr, term_ids, tfs) of `count` rows, each row's terms in id order."""
    terms = np.repeat(np.arange(len(starts) - 1, dtype=np.int32), np.diff(starts))
    order = np.argsort(files, kind="stable")
    ptr = np.searchsorted(files[order], np.arange(count + 1)).astype(np.int64)
    return ptr, terms[order], tfs[order].astype(np.int32)


def _offsets(lengths: Sequence[int] | np.ndarray) -> np.ndarray:
    out = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=out[1:])
    return out


def _gather(starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Every index in [starts[i], ends[i]) for each i, in order (one vectorised pass)."""
    lengths = (ends - starts).astype(np.int64)
    total = int(lengths.sum())
    if not total:
        return np.zeros(0, dtype=np.int64)
    offsets = np.repeat(starts.astype(np.int64) - _offsets(lengths)[:-1], lengths)
    out: np.ndarray = np.arange(total, dtype=np.int64) + offsets
    return out


def save(path: Path, files: list[FileEntry], rows: FileRows) -> None:
    """Write `files` and their rows as arrays and JSON (no pickles), whole or not at all."""
    from ..files.atomicfile import write_atomically

    listed = [[f.path, f.size, f.mtime_ns, f.type] for f in files]
    header = {"format": FORMAT, "files": listed, "vocab": rows.words, "names": rows.names}
    buffer = io.BytesIO()
    np.savez_compressed(
        buffer,
        header=np.frombuffer(json.dumps(header).encode(), dtype=np.uint8),
        # The files again, alone: a new session's walk needs only their types (see load_files).
        files=np.frombuffer(json.dumps({"format": FORMAT, "files": listed}).encode(), dtype=np.uint8),
        indptr=rows.ptr,
        term_ids=rows.term_ids,
        tfs=rows.tfs,
        lines=rows.lines,
        sym_ptr=rows.sym_ptr,
    )
    write_atomically(path, buffer.getvalue())


def load(path: Path) -> tuple[list[FileEntry], FileRows] | None:
    """The files and rows saved at `path`; None when missing, of another format, or malformed (loaded
    with allow_pickle=False, and every offset and id checked: a planted file can make a wrong ranking,
    never run code or index out of bounds)."""
    try:
        with path.open("rb") as handle, np.load(handle, allow_pickle=False) as stored:
            header = json.loads(bytes(stored["header"]).decode())
            if header.get("format") != FORMAT:
                return None
            arrays = [stored[k] for k in ("indptr", "term_ids", "tfs", "lines", "sym_ptr")]
    except (OSError, ValueError, KeyError, TypeError, zipfile.BadZipFile, json.JSONDecodeError, EOFError):
        return None
    try:
        files = _entries(header["files"])
        words, names = [str(w) for w in header["vocab"]], [str(n) for n in header["names"]]
        ptr, sym_ptr = arrays[0].astype(np.int64), arrays[4].astype(np.int64)
        term_ids, tfs, lines = (a.astype(np.int32) for a in arrays[1:4])
        _check(len(files), len(words), len(names), ptr, term_ids, tfs, lines, sym_ptr)
    except (IndexError, ValueError, TypeError):
        return None
    return files, FileRows(words, ptr, term_ids, tfs, names, lines, sym_ptr)


def load_files(path: Path) -> list[FileEntry] | None:
    """The files saved at `path` without the rows: a tenth of the bytes to read and parse at 28,000 files
    (an index saved before the files had a member of their own: its header, which lists them too)."""
    try:
        with path.open("rb") as handle, np.load(handle, allow_pickle=False) as stored:
            member = "files" if "files" in stored.files else "header"
            listed = json.loads(bytes(stored[member]).decode())
    except (OSError, ValueError, KeyError, TypeError, zipfile.BadZipFile, json.JSONDecodeError, EOFError):
        return None
    try:
        return _entries(listed["files"]) if listed.get("format") == FORMAT else None
    except (AttributeError, KeyError, ValueError, TypeError):
        return None


def _entries(listed: list[Any]) -> list[FileEntry]:
    """The files as saved, `[path, size, mtime, type]` each."""
    return [FileEntry(path=str(p), size=int(s), type=str(t), mtime_ns=int(m)) for p, s, m, t in listed]


def _check(files: int, words: int, names: int, *arrays: np.ndarray) -> None:
    """Refuse saved rows whose arrays do not fit together (a damaged or planted file)."""
    ptr, term_ids, tfs, lines, sym_ptr = arrays
    if ptr.ndim != 1 or len(ptr) != files + 1 or len(sym_ptr) != files + 1 or ptr[0] != 0 or sym_ptr[0] != 0:
        raise ValueError("row offsets do not match the files")
    if np.any(np.diff(ptr) < 0) or np.any(np.diff(sym_ptr) < 0):
        raise ValueError("row offsets go backwards")
    if ptr[-1] != len(term_ids) or len(tfs) != len(term_ids) or sym_ptr[-1] != len(lines) or len(lines) != names:
        raise ValueError("row offsets do not match the entries")
    if len(term_ids) and (term_ids.min() < 0 or term_ids.max() >= words):
        raise ValueError("a term id outside the vocabulary")
