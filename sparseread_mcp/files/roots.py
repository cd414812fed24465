"""Roots: the only places anything may be read from.

Every path is resolved with realpath (symlinks followed) and then checked with a separator-aware
containment test, so `..`, absolute paths, symlinks pointing out and sibling prefixes (`/data` vs
`/data2`) are all refused before a single byte is read. That check names the file; the bytes are
then read through `safeopen` (a descriptor walk from the root that never follows a symlink out), so
a file swapped for a symlink after the check is refused too. `absolute` is for display, suffixes and
git, never for opening.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from ..errors import OutsideRoots, UnsupportedArtifact
from . import safeopen


@dataclass(frozen=True, slots=True, kw_only=True)
class ResolvedPath:
    """A path known to lie inside `root`; `relative` is what results show."""

    root: Path
    absolute: Path
    relative: str

    def stat(self) -> os.stat_result:
        """What is there now (directory, regular file, size), from a descriptor opened beneath the root."""
        return safeopen.stat_beneath(self.root, self.relative, label=self.relative)

    def is_dir(self) -> bool:
        return stat.S_ISDIR(self.stat().st_mode)

    def read(self, *, max_bytes: int) -> safeopen.FileRead:
        """The whole file, read once from one descriptor opened beneath the root."""
        return safeopen.read_beneath(self.root, self.relative, max_bytes=max_bytes, label=self.relative)

    def digest(self, *, head: int = 16) -> safeopen.FileDigest:
        """Size, sha256 and first bytes of the file, streamed from one descriptor opened beneath the root."""
        return safeopen.digest_beneath(self.root, self.relative, head=head, label=self.relative)

    def child(self, relative: str) -> ResolvedPath:
        """A path below this directory (as listed by a walk), to be opened beneath the same root."""
        shown = relative if self.relative == "." else f"{self.relative}/{relative}"
        return ResolvedPath(root=self.root, absolute=self.root / shown, relative=shown)


class Roots:
    """The configured roots, realpath-normalised once."""

    def __init__(self, roots: tuple[Path, ...]) -> None:
        real: list[Path] = []
        for root in roots:
            resolved = Path(os.path.realpath(root))
            if not resolved.is_dir():
                raise UnsupportedArtifact(f"root {str(root)!r} is not a directory: pass an existing folder")
            real.append(resolved)
        self._roots = tuple(real)

    @property
    def paths(self) -> tuple[Path, ...]:
        return self._roots

    def contains(self, candidate: Path) -> bool:
        """True when the realpath of `candidate` is a root or lies below one."""
        try:
            real = os.path.realpath(candidate)
        except OSError:  # a link swapped while being resolved: not known to be inside
            return False
        return any(_is_within(real, str(root)) for root in self._roots)

    def resolve(self, path: str) -> ResolvedPath:
        """Resolve a user path to an existing location inside a root, or raise."""
        if not path or "\x00" in path:
            raise UnsupportedArtifact("empty or malformed path: pass a file path relative to a root")
        _check_encodable(path)
        raw = _expand_home(path)
        candidates = [raw] if raw.is_absolute() else [root / raw for root in self._roots]
        outside = False
        for candidate in candidates:
            real = _realpath(candidate, path)
            root = next((r for r in self._roots if _is_within(real, str(r))), None)
            if root is None:
                outside = True
                continue
            if os.path.exists(real):
                relative = os.path.relpath(real, root)
                return ResolvedPath(root=root, absolute=Path(real), relative=Path(relative).as_posix())
        if outside:
            raise OutsideRoots(
                f"path {path!r} resolves outside the readable roots; pass a path relative to a root "
                f"(roots: {', '.join(r.name or '/' for r in self._roots)})"
            )
        raise UnsupportedArtifact(
            f"no such file: {path!r} (relative to the roots); check the name with a directory listing"
        )


def _check_encodable(path: str) -> None:
    """Refuse a path no file system name can spell: a lone surrogate outside the range that stands for an
    undecodable byte (as `os.fsdecode` writes one, `\\udc80`-`\\udcff`) has no bytes at all."""
    try:
        os.fsencode(path)
    except UnicodeEncodeError as exc:
        raise UnsupportedArtifact(
            f"path {path[:80]!r} has a character no file name can hold ({path[exc.start : exc.end]!r} at "
            f"{exc.start}): pass the name as a directory listing shows it"
        ) from exc


def _realpath(candidate: Path, shown: str) -> str:
    try:
        return os.path.realpath(candidate)
    except OSError as exc:  # a symlink swapped for a file (or back) while realpath read it
        raise UnsupportedArtifact(
            f"{shown!r} changed while being resolved ({exc.strerror}): read it again once it is stable"
        ) from exc


def _is_within(real: str, root: str) -> bool:
    # commonpath compares whole components, so /data2 is not inside /data.
    try:
        return os.path.commonpath([real, root]) == root
    except ValueError:  # different drives on Windows
        return False


def _expand_home(path: str) -> Path:
    """`~/x` is the user's home; `~name/x` for an unknown name is just a relative path."""
    if not path.startswith("~"):
        return Path(path)
    try:
        return Path(path).expanduser()
    except RuntimeError:
        return Path(path)
