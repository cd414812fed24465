"""Directories: an inventory that respects .gitignore (the file index is in fileindex.py).

The inventory collapses VCS and vendored folders, lists each file's type, size and token estimate
within a depth and an entry budget, and never follows a symlink out of the roots.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from stat import S_ISDIR, S_ISLNK, S_ISREG

from ..deadline import checkpoint
from ..errors import OutsideRoots, UnsupportedArtifact
from ..files import safeopen
from ..files.artifacts import looks_binary
from ..files.roots import ResolvedPath
from ..readers.registry import ReaderRegistry
from .ignorefile import IgnoreFile
from .leftout import DEPTH_CAP, FILE_CAP, IGNORED, UNREADABLE, WalkCuts

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
#: Folders below this depth are not walked.
MAX_DEPTH = 64
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
    skipped: int  # files left out: ignored, binary, unreadable, or past MAX_FILES (folders past MAX_DEPTH)
    fingerprint: str
    truncated: bool = False
    #: The file cap this walk ran under (MAX_FILES unless the settings name another).
    max_files: int = MAX_FILES
    #: What the walk left out and why (folders not entered, files dropped per folder): answers say it.
    cuts: WalkCuts = field(default_factory=WalkCuts)

    @property
    def total_bytes(self) -> int:
        return sum(f.size for f in self.files)


def build_inventory(
    location: ResolvedPath,
    relative: str,
    registry: ReaderRegistry,
    *,
    types: dict[tuple[str, int, int], str] | None = None,
    max_files: int = MAX_FILES,
) -> Inventory:
    """Walk the directory at `location`; `types` caches each file's type by (path, size, mtime) across
    calls, so a warm inventory stats files but opens none.

    The walk runs on descriptors (`os.fwalk` from a descriptor opened beneath the root): a folder swapped
    for a symlink mid-walk is skipped, never entered, and a file symlink is followed only while it stays
    beneath the root (see safeopen)."""
    files: list[FileEntry] = []
    collapsed: list[str] = []
    skipped = 0
    truncated = False
    cuts = WalkCuts()
    specs: list[tuple[str, IgnoreFile]] = []
    digest = hashlib.sha256()
    top = safeopen.open_beneath(location.root, location.relative, label=location.relative)
    try:
        if not S_ISDIR(os.fstat(top).st_mode):
            raise UnsupportedArtifact(f"{location.relative!r} is not a directory: read it as a file")
        for current, dirnames, filenames, dirfd in os.fwalk(".", dir_fd=top, follow_symlinks=False):
            checkpoint()
            rel_dir = "" if current == "." else Path(current).relative_to(".").as_posix()
            spec = _gitignore(dirfd)
            if spec is not None:
                specs.append((rel_dir, spec))
            dirnames[:], depth_cut = _folders_to_walk(rel_dir, dirnames, specs, collapsed, cuts)
            if depth_cut:
                truncated = True
                skipped += depth_cut
            for name in sorted(filenames):
                rel = f"{rel_dir}/{name}" if rel_dir else name
                if _ignored(specs, rel, is_dir=False):
                    skipped += 1
                    cuts.file(rel_dir, IGNORED)
                    continue
                if len(files) >= max_files:
                    truncated = True
                    skipped += 1
                    cuts.file(rel_dir, FILE_CAP)
                    continue
                found = _stat_entry(location, dirfd, name, rel)
                if found is None:
                    skipped += 1
                    cuts.file(rel_dir, UNREADABLE)
                    continue
                key = (f"{location.relative}/{rel}", found.st_size, found.st_mtime_ns)
                kind = types.get(key) if types is not None else None
                if kind is None:
                    kind = _file_type(location, dirfd, name, rel, registry)
                    if types is not None:
                        types[key] = kind
                files.append(FileEntry(path=rel, size=found.st_size, type=kind, mtime_ns=found.st_mtime_ns))
                digest.update(f"{rel}\0{found.st_size}\0{found.st_mtime_ns}\n".encode("utf-8", "surrogateescape"))
    finally:
        os.close(top)
    return Inventory(
        root_path=relative,
        files=files,
        collapsed=collapsed,
        skipped=skipped,
        fingerprint=digest.hexdigest(),
        truncated=truncated,
        max_files=max_files,
        cuts=cuts,
    )


def _folders_to_walk(
    rel_dir: str, names: list[str], specs: list[tuple[str, IgnoreFile]], collapsed: list[str], cuts: WalkCuts
) -> tuple[list[str], int]:
    """The subfolders of `rel_dir` the walk enters (not vendored, not ignored), and how many the depth
    cap cut: fwalk recurses and holds a descriptor per level, so a hostile chain of folders would exhaust
    both; deeper folders are left out and the inventory says so."""
    if rel_dir.count("/") + 1 >= MAX_DEPTH and names:
        for name in names:
            cuts.folder(f"{rel_dir}/{name}" if rel_dir else name, DEPTH_CAP)
        return [], len(names)
    kept = []
    for name in sorted(names):
        rel = f"{rel_dir}/{name}" if rel_dir else name
        if name in COLLAPSED:
            collapsed.append(rel + "/")
        elif _ignored(specs, rel, is_dir=True):
            cuts.folder(rel, IGNORED)
        else:
            kept.append(name)  # fwalk itself never enters a symlink (follow_symlinks=False)
    return kept, 0


def _stat_entry(location: ResolvedPath, dirfd: int, name: str, rel: str) -> os.stat_result | None:
    """A listed name's stat when it is a regular file (a symlink only when it stays beneath the root)."""
    try:
        found = os.stat(name, dir_fd=dirfd, follow_symlinks=False)
        if S_ISLNK(found.st_mode):
            found = location.child(rel).stat()  # followed beneath the root, or refused
    except (OSError, OutsideRoots, UnsupportedArtifact):
        return None
    return found if S_ISREG(found.st_mode) else None


#: A .gitignore larger than this is not a real one: it is skipped rather than parsed.
_GITIGNORE_BYTES = 1 << 20


def _gitignore(dirfd: int) -> IgnoreFile | None:
    descriptor = safeopen.open_file_at(dirfd, ".gitignore")
    if descriptor is None:
        return None
    try:
        data = safeopen.read_head(descriptor, _GITIGNORE_BYTES + 1)
    except OSError:
        return None
    finally:
        os.close(descriptor)
    if len(data) > _GITIGNORE_BYTES:
        return None
    return IgnoreFile.parse(data.decode("utf-8", "replace"))  # linear-time rules (see ignorefile)


def _ignored(specs: list[tuple[str, IgnoreFile]], rel: str, *, is_dir: bool) -> bool:
    """Whether the ignore files above `rel` exclude it: the deepest file with a rule that matches decides
    (a `!` rule there re-includes), as git does."""
    for base, spec in reversed(specs):
        if base and not rel.startswith(base + "/"):
            continue
        decided = spec.decides(rel[len(base) + 1 :] if base else rel, is_dir=is_dir)
        if decided is not None:
            return decided
    return False


def _file_type(location: ResolvedPath, dirfd: int, name: str, rel: str, registry: ReaderRegistry) -> str:
    path = location.absolute / rel
    try:
        descriptor = safeopen.open_file_at(dirfd, name)
        if descriptor is None:  # a symlink: its head is read beneath the root, or not at all
            child = location.child(rel)
            head = safeopen.head_beneath(child.root, child.relative, _BINARY_SNIFF, label=child.relative)
        else:
            try:
                head = safeopen.read_head(descriptor, _BINARY_SNIFF)
            finally:
                os.close(descriptor)
    except (OSError, OutsideRoots, UnsupportedArtifact):
        return "unreadable"
    reader = registry.reader_for(path)
    if not reader.binary and looks_binary(head):
        return "binary"
    if reader.name == "code":
        from ..readers.code_languages import BY_SUFFIX

        return BY_SUFFIX[path.suffix.lower()].name
    if reader.name == "text":
        return "markdown" if path.suffix.lower() in (".md", ".markdown", ".mdx") else "text"
    if reader.name in ("structured", "table"):
        suffix = path.suffix.lower().lstrip(".")
        return {"yml": "yaml", "ndjson": "jsonl", "xlsm": "xlsx", "tab": "tsv", "geojson": "json"}.get(suffix, suffix)
    return reader.name


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
