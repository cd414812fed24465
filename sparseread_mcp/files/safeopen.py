"""Opening files beneath a root without a time-of-check/time-of-use race.

`Roots.resolve` checks a path with realpath, but a file can be swapped for a symlink to outside the
root between that check and the read. Everything that reads therefore opens through `open_beneath`:
the root is opened as a descriptor and the relative path walked one component at a time with
`O_NOFOLLOW` relative to its parent's descriptor, so a symlink swapped in anywhere fails to open
instead of being followed. Symlinks met on the way are resolved here, component by component, and
followed only while they stay beneath the root (at most MAX_LINKS of them). What was opened is then
checked with `fstat`, and its bytes are read from that one descriptor, once.

Not covered: a directory already opened being renamed to outside the root by someone who can write
there (Linux's `openat2(RESOLVE_BENEATH)` would close that; Python does not expose it).
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from ..deadline import checkpoint
from ..errors import OutsideRoots, UnsupportedArtifact

#: Symlinks followed in one open, like the kernel's own limit.
MAX_LINKS = 40
#: Components in one path: a bound on the walk, far above any real tree.
MAX_COMPONENTS = 4096
_BLOCK = 1 << 20
#: Files larger than this are fingerprinted by a sample (size, modification time, first and last MiB)
#: instead of hashed whole: hashing a 100 GB sparse file took a core-minute for every preview.
FULL_HASH_BYTES = 1 << 30

_NOFOLLOW = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC
#: A FIFO or a device swapped in must not block the open; regular files ignore O_NONBLOCK.
_FILE_FLAGS = _NOFOLLOW | os.O_NONBLOCK
_DIR_FLAGS = _NOFOLLOW | os.O_DIRECTORY


@dataclass(frozen=True, slots=True, kw_only=True)
class FileRead:
    """A regular file's bytes, read once from one verified descriptor."""

    data: bytes
    #: The modification time of what was read (from the same descriptor).
    mtime_ns: int


@dataclass(frozen=True, slots=True, kw_only=True)
class FileDigest:
    """A regular file's size, sha256 and first bytes, streamed from one verified descriptor."""

    size: int
    fingerprint: str
    head: bytes
    #: True when the file was over FULL_HASH_BYTES: the fingerprint is of a sample, not of every byte.
    sampled: bool = False


def open_beneath(root: Path, relative: str, *, label: str | None = None) -> int:
    """A descriptor of `relative` (a file or a directory) beneath `root`, never leaving it; the caller
    closes it. Raises OutsideRoots when a symlink leads out, UnsupportedArtifact when nothing is there."""
    shown = label or relative
    parts = _components(relative, shown)
    try:
        stack = [os.open(root, _DIR_FLAGS)]
    except OSError as exc:
        raise _missing(shown, exc) from exc
    links = 0
    try:
        while parts:
            name = parts.pop(0)
            if name == "..":
                if len(stack) == 1:
                    raise _outside(shown)
                os.close(stack.pop())
                continue
            flags = _DIR_FLAGS if parts else _FILE_FLAGS
            try:
                stack.append(os.open(name, flags, dir_fd=stack[-1]))
                continue
            except OSError as exc:
                # Under O_NOFOLLOW a symlink fails with ELOOP (ENOTDIR with O_DIRECTORY): follow it here.
                if exc.errno not in (errno.ELOOP, errno.ENOTDIR):
                    raise _missing(shown, exc) from exc
                try:
                    target = os.readlink(name, dir_fd=stack[-1])
                except OSError:
                    raise _missing(shown, exc) from exc
            links += 1
            if links > MAX_LINKS:
                raise UnsupportedArtifact(f"{shown!r} goes through more than {MAX_LINKS} symlinks: pass a real path")
            if os.path.isabs(target):
                inside = _below(str(root), target)
                if inside is None:
                    raise _outside(shown)
                for extra in stack[1:]:
                    os.close(extra)
                del stack[1:]
                target = inside
            parts[:0] = _components(target, shown)
            if len(parts) > MAX_COMPONENTS:
                raise UnsupportedArtifact(f"{shown!r} expands to too many path components: pass a real path")
        return stack.pop()
    finally:
        for descriptor in stack:
            os.close(descriptor)


@contextmanager
def opened(root: Path, relative: str, *, label: str | None = None) -> Iterator[tuple[int, os.stat_result]]:
    """`open_beneath` with its `fstat`, closed on exit."""
    descriptor = open_beneath(root, relative, label=label)
    try:
        yield descriptor, os.fstat(descriptor)
    finally:
        os.close(descriptor)


def stat_beneath(root: Path, relative: str, *, label: str | None = None) -> os.stat_result:
    """What `relative` is (directory, regular file, size), from the descriptor that would be read."""
    with opened(root, relative, label=label) as (_, info):
        return info


def read_beneath(root: Path, relative: str, *, max_bytes: int, label: str | None = None) -> FileRead:
    """A regular file's whole content, at most `max_bytes`; refuses anything else."""
    shown = label or relative
    with opened(root, relative, label=label) as (descriptor, info):
        require_regular(info, shown)
        if info.st_size > max_bytes:
            raise UnsupportedArtifact(
                f"{shown!r} is {info.st_size} bytes, over the {max_bytes}-byte limit for a whole read: "
                "read a line range (path#L1-L200)"
            )
        chunks: list[bytes] = []
        total = 0
        while block := os.read(descriptor, min(_BLOCK, max_bytes + 1 - total)):
            chunks.append(block)
            total += len(block)
            if total > max_bytes:  # it grew while being read
                raise UnsupportedArtifact(f"{shown!r} grew past {max_bytes} bytes while being read: read it again")
        return FileRead(data=b"".join(chunks), mtime_ns=info.st_mtime_ns)


def head_beneath(root: Path, relative: str, size: int, *, label: str | None = None) -> bytes:
    """The first `size` bytes of a regular file beneath the root."""
    with opened(root, relative, label=label) as (descriptor, info):
        require_regular(info, label or relative)
        return read_head(descriptor, size)


def digest_beneath(root: Path, relative: str, *, head: int = 16, label: str | None = None) -> FileDigest:
    """Size, sha256 and head of a regular file of any size, all from the same descriptor."""
    with opened(root, relative, label=label) as (descriptor, info):
        require_regular(info, label or relative)
        if info.st_size > FULL_HASH_BYTES:
            first = os.pread(descriptor, head, 0) if head else b""
            return FileDigest(
                size=info.st_size, fingerprint=sampled_fingerprint(descriptor, info), head=first, sampled=True
            )
        digest = hashlib.sha256()
        first = b""
        size = 0
        while block := os.read(descriptor, _BLOCK):
            checkpoint()
            if size < head:
                first = (first + block)[:head]
            digest.update(block)
            size += len(block)
        return FileDigest(size=size, fingerprint=digest.hexdigest(), head=first)


def sampled_fingerprint(descriptor: int, info: os.stat_result) -> str:
    """A sha256 of a huge file's size, modification time and first and last MiB (read with pread): it
    changes with any append, truncation or touch, and with edits at either end, in constant time."""
    digest = hashlib.sha256(b"sampled\0%d\0%d\0" % (info.st_size, info.st_mtime_ns))
    digest.update(os.pread(descriptor, _BLOCK, 0))
    digest.update(os.pread(descriptor, _BLOCK, max(0, info.st_size - _BLOCK)))
    return digest.hexdigest()


def read_head(descriptor: int, size: int) -> bytes:
    chunks: list[bytes] = []
    total = 0
    while total < size and (block := os.read(descriptor, size - total)):
        chunks.append(block)
        total += len(block)
    return b"".join(chunks)


def open_file_at(directory: int, name: str) -> int | None:
    """A regular file directly in an open directory, not following a symlink; None for anything else."""
    try:
        return _regular_only(os.open(name, _FILE_FLAGS, dir_fd=directory))
    except OSError:
        return None


def open_no_follow(path: Path) -> int | None:
    """A regular file at an already-resolved path, not following a final symlink and never blocking on a
    FIFO; None for anything else. For sniffing a file's type, never for reading what is shown."""
    try:
        return _regular_only(os.open(path, _FILE_FLAGS))
    except OSError:
        return None


def _regular_only(descriptor: int) -> int | None:
    """The descriptor when it is a regular file; closed, and None, for anything else."""
    if stat.S_ISREG(os.fstat(descriptor).st_mode):
        return descriptor
    os.close(descriptor)
    return None


def require_regular(info: os.stat_result, shown: str) -> None:
    if stat.S_ISDIR(info.st_mode):
        raise UnsupportedArtifact(f"{shown!r} is a directory: preview it, or pass a file inside it")
    if not stat.S_ISREG(info.st_mode):
        # A FIFO or a device would block or never end: only regular files are read.
        raise UnsupportedArtifact(f"{shown!r} is not a regular file (a pipe, socket or device)")


def _components(path: str, shown: str) -> list[str]:
    if "\x00" in path:
        raise UnsupportedArtifact(f"{shown!r} holds a NUL byte: pass a plain path")
    parts = [p for p in path.split("/") if p not in ("", ".")]
    if len(parts) > MAX_COMPONENTS:
        raise UnsupportedArtifact(f"{shown!r} has too many path components: pass a real path")
    return parts


def _below(root: str, target: str) -> str | None:
    """`target` (absolute, unnormalised) relative to `root`, or None when it is not below it. `..` in the
    rest is walked later against descriptors, so it can climb only as far as the root."""
    root_parts = [p for p in root.split("/") if p]
    parts = [p for p in target.split("/") if p not in ("", ".")]
    if parts[: len(root_parts)] != root_parts:
        return None
    return "/".join(parts[len(root_parts) :])


def _outside(shown: str) -> OutsideRoots:
    return OutsideRoots(
        f"path {shown!r} resolves outside the readable roots (a symlink leads out); pass a path relative to a root"
    )


def _missing(shown: str, exc: OSError) -> UnsupportedArtifact:
    if exc.errno in (errno.ENOENT, errno.ENOTDIR):
        return UnsupportedArtifact(
            f"no such file: {shown!r} (relative to the roots); check the name with a directory listing"
        )
    return UnsupportedArtifact(f"cannot read {shown!r}: {exc.strerror}")
