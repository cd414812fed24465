"""Directories: an inventory that respects .gitignore, and a file index built once per fingerprint.

The inventory collapses VCS and vendored folders, lists each file's type, size and token estimate
within a depth and an entry budget, and never follows a symlink out of the roots. The index ranks
files by path and content (BM25 over the path, weighted, and the head of the content); it is cached
per directory fingerprint, so repeated calls on an unchanged tree reuse it.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from stat import S_ISLNK, S_ISREG

import numpy as np

from .artifacts import looks_binary
from .deadline import checkpoint
from .locate.bm25 import Bm25Corpus
from .locate.terms import terms
from .progress import report
from .readers.registry import ReaderRegistry
from .roots import Roots

COLLAPSED = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        "node_modules",
        "bower_components",
        "vendor",
        "third_party",
        ".venv",
        "venv",
        "__pycache__",
        ".tox",
        ".nox",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".cache",
        "dist",
        "build",
        "target",
        ".next",
        ".gradle",
        ".idea",
        "site-packages",
        ".eggs",
    }
)
MAX_FILES = 20_000
INDEX_HEAD_BYTES = 16_384
MAX_CONTENT_BYTES = 2_000_000
_BINARY_SNIFF = 2048


@dataclass(frozen=True, slots=True, kw_only=True)
class FileEntry:
    path: str  # relative to the root, posix
    size: int
    type: str
    mtime_ns: int

    @property
    def tokens_estimate(self) -> int:
        return max(1, self.size // 4)


@dataclass(slots=True, kw_only=True)
class Inventory:
    root_path: str  # the directory, relative to its root
    files: list[FileEntry]
    collapsed: list[str]
    skipped: int  # files left out: ignored, binary, unreadable, or past MAX_FILES
    fingerprint: str
    truncated: bool = False
    index: FileIndex | None = field(default=None)

    @property
    def total_bytes(self) -> int:
        return sum(f.size for f in self.files)


def build_inventory(
    directory: Path,
    relative: str,
    roots: Roots,
    registry: ReaderRegistry,
    *,
    types: dict[tuple[str, int, int], str] | None = None,
) -> Inventory:
    """Walk `directory`; `types` caches each file's type by (path, size, mtime) across calls, so a warm
    inventory stats files but opens none."""
    files: list[FileEntry] = []
    collapsed: list[str] = []
    skipped = 0
    truncated = False
    specs: list[tuple[str, object]] = []
    digest = hashlib.sha256()
    for current, dirnames, filenames in os.walk(directory, topdown=True, followlinks=False):
        checkpoint()
        here = Path(current)
        rel_dir = here.relative_to(directory).as_posix()
        rel_dir = "" if rel_dir == "." else rel_dir
        spec = _gitignore(here)
        if spec is not None:
            specs.append((rel_dir, spec))
        kept = []
        for name in sorted(dirnames):
            rel = f"{rel_dir}/{name}" if rel_dir else name
            if name in COLLAPSED:
                collapsed.append(rel + "/")
            elif not _ignored(specs, rel, is_dir=True) and not (here / name).is_symlink():
                kept.append(name)
        dirnames[:] = kept
        for name in sorted(filenames):
            rel = f"{rel_dir}/{name}" if rel_dir else name
            path = here / name
            if _ignored(specs, rel, is_dir=False):
                skipped += 1
                continue
            if len(files) >= MAX_FILES:
                truncated = True
                skipped += 1
                continue
            try:
                stat = path.lstat()
                if S_ISLNK(stat.st_mode):
                    # Only a link can lead out of the walked directory: resolve it against the roots.
                    if not roots.contains(path):
                        skipped += 1
                        continue
                    stat = path.stat()
            except OSError:
                skipped += 1
                continue
            if not S_ISREG(stat.st_mode):
                skipped += 1
                continue
            key = (str(path), stat.st_size, stat.st_mtime_ns)
            kind = types.get(key) if types is not None else None
            if kind is None:
                kind = _file_type(path, registry)
                if types is not None:
                    types[key] = kind
            files.append(FileEntry(path=rel, size=stat.st_size, type=kind, mtime_ns=stat.st_mtime_ns))
            digest.update(f"{rel}\0{stat.st_size}\0{stat.st_mtime_ns}\n".encode())
    return Inventory(
        root_path=relative,
        files=files,
        collapsed=collapsed,
        skipped=skipped,
        fingerprint=digest.hexdigest(),
        truncated=truncated,
    )


def _gitignore(directory: Path) -> object | None:
    ignore = directory / ".gitignore"
    if not ignore.is_file():
        return None
    import pathspec

    try:
        return pathspec.GitIgnoreSpec.from_lines(ignore.read_text(encoding="utf-8", errors="replace").splitlines())
    except (ValueError, TypeError):  # a malformed pattern must not hide the whole tree
        return None


def _ignored(specs: list[tuple[str, object]], rel: str, *, is_dir: bool) -> bool:
    for base, spec in specs:
        if base and not rel.startswith(base + "/"):
            continue
        inner = rel[len(base) + 1 :] if base else rel
        if spec.match_file(inner + ("/" if is_dir else "")):  # type: ignore[attr-defined]
            return True
    return False


def _file_type(path: Path, registry: ReaderRegistry) -> str:
    try:
        with path.open("rb") as handle:
            head = handle.read(_BINARY_SNIFF)
    except OSError:
        return "unreadable"
    reader = registry.reader_for(path)
    if not reader.binary and looks_binary(head):
        return "binary"
    if reader.name == "code":
        from .readers.code_languages import BY_SUFFIX

        return BY_SUFFIX[path.suffix.lower()].name
    if reader.name == "text":
        return "markdown" if path.suffix.lower() in (".md", ".markdown", ".mdx") else "text"
    if reader.name in ("structured", "table"):
        suffix = path.suffix.lower().lstrip(".")
        return {"yml": "yaml", "ndjson": "jsonl", "xlsm": "xlsx", "tab": "tsv", "geojson": "json"}.get(suffix, suffix)
    return reader.name


class FileIndex:
    """BM25 over files: the path counts three times, then the head of the content."""

    def __init__(self, directory: Path, files: list[FileEntry]) -> None:
        self.files = [f for f in files if f.type not in ("binary", "unreadable")]
        corpus = []
        for number, entry in enumerate(self.files):
            report(number, len(self.files), f"indexing {entry.path}")
            head = ""
            if entry.type not in ("pdf", "table") and entry.size <= MAX_CONTENT_BYTES:
                try:
                    with (directory / entry.path).open("rb") as handle:
                        head = handle.read(INDEX_HEAD_BYTES).decode("utf-8", "replace")
                except OSError:
                    head = ""
            corpus.append(3 * terms(entry.path.replace("/", " ")) + terms(head))
        self.corpus = Bm25Corpus(corpus)

    def rank(self, query_terms: list[str]) -> list[tuple[FileEntry, float]]:
        scores = self.corpus.scores(query_terms)
        if not scores.size:
            return []
        order = np.argsort(-scores, kind="stable")
        top = float(scores[order[0]]) or 1.0
        return [(self.files[i], float(scores[i]) / top) for i in order if scores[i] > 0]


def inventory_lines(inventory: Inventory, *, depth: int, entries: int) -> list[tuple[str, str, int]]:
    """(title, anchor, level) rows: folders with totals, files up to `depth`, collapsed folders noted."""
    folders: dict[str, list[FileEntry]] = {}
    for entry in inventory.files:
        parts = entry.path.split("/")
        for level in range(1, len(parts)):
            folders.setdefault("/".join(parts[:level]), []).append(entry)
    rows: list[tuple[str, str, int]] = []
    listed = sorted(set(folders) | {f.path for f in inventory.files})
    by_path = {f.path: f for f in inventory.files}
    for path in listed:
        level = path.count("/") + 1
        if level > depth:
            continue
        if path in folders:
            members = folders[path]
            size = sum(m.size for m in members)
            rows.append((f"{path}/ ({len(members)} files, {_size(size)}, ~{size // 4} tokens)", path + "/", level))
        else:
            entry = by_path[path]
            rows.append((f"{path} {entry.type} {_size(entry.size)} ~{entry.tokens_estimate} tokens", path, level))
        if len(rows) >= entries:
            rows.append((f"… {len(listed) - len(rows)} more entries (narrow with a subfolder)", "", 1))
            break
    rows.extend((f"{c} (collapsed: VCS or vendored)", c, c.count("/")) for c in inventory.collapsed[:20])
    return rows


def _size(size: int) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024  # type: ignore[assignment]
    return f"{size} B"  # pragma: no cover
