"""Artifacts: one file version, its fingerprint, and the parsed form cached per fingerprint."""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

from ..errors import BinaryArtifact, UnsupportedArtifact
from ..vocabulary import PREVIEW_TOOL
from .gitrev import blob_sha
from .roots import ResolvedPath

#: Bytes inspected for NUL when deciding whether a file is text.
_SNIFF_BYTES = 8192
#: A whole read's ceiling when the caller names none (the default parse limit).
_MAX_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True, slots=True, kw_only=True)
class Artifact:
    """One version of one file: its bytes decoded, its fingerprint and its revision tag."""

    path: str
    location: ResolvedPath
    text: str
    size_bytes: int
    fingerprint: str
    #: The raw bytes of the single verified read, kept for readers that extract their own text (PDF,
    #: workbooks, tables: a reader feeds these to its library, never the path).
    data: bytes | None = None
    #: The git blob id of the bytes, to tell whether the file is unmodified against HEAD.
    blob: str = ""
    #: The commit that holds exactly these bytes, when git tracks the file unmodified.
    commit: str | None = None

    @property
    def rev(self) -> str:
        """The revision used in pointers: the commit when there is one, else `sha256:` plus 12 hex digits."""
        return self.commit or content_rev(self.fingerprint)


def content_rev(fingerprint: str) -> str:
    return f"sha256:{fingerprint[:12]}"


def load_artifact(location: ResolvedPath, *, binary: bool = False, max_bytes: int = _MAX_BYTES) -> Artifact:
    """Read and fingerprint a file inside the roots, once, from a descriptor opened beneath its root (a
    symlink swapped in is refused, not followed); refuse directories, and binary content unless `binary`
    (then the bytes are kept for the reader to extract its own text). The fingerprint, the text and the
    bytes all come from that single read."""
    try:
        data = location.read(max_bytes=max_bytes).data
    except OSError as exc:
        raise UnsupportedArtifact(f"cannot read {location.relative!r}: {exc.strerror}") from exc
    if binary:
        return Artifact(
            path=location.relative,
            location=location,
            text="",
            size_bytes=len(data),
            fingerprint=hashlib.sha256(data).hexdigest(),
            data=data,
            blob=blob_sha(data),
        )
    return artifact_from_bytes(location, data)


def fingerprint_of(location: ResolvedPath) -> str:
    """The content fingerprint alone (to tell whether a file changed), streamed in blocks from a descriptor
    opened beneath the root."""
    try:
        return location.digest().fingerprint
    except OSError as exc:
        raise UnsupportedArtifact(f"cannot read {location.relative!r}: {exc.strerror}") from exc


def artifact_from_bytes(location: ResolvedPath, data: bytes) -> Artifact:
    if looks_binary(data[:_SNIFF_BYTES]):
        kind = magic_kind(data[:16])
        raise BinaryArtifact(
            f"{location.relative!r} is binary ({kind}): no reader shows it as text; {PREVIEW_TOOL} gives its card"
        )
    return Artifact(
        path=location.relative,
        location=location,
        text=decode_text(data),
        size_bytes=len(data),
        fingerprint=hashlib.sha256(data).hexdigest(),
        blob=blob_sha(data),
    )


def decode_text(data: bytes) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        # Latin-1 maps every byte to one character, so anchors still count real characters.
        return data.decode("latin-1")


_MAGIC = (
    (b"\x89PNG", "PNG image"),
    (b"\xff\xd8\xff", "JPEG image"),
    (b"GIF8", "GIF image"),
    (b"PK\x03\x04", "ZIP archive"),
    (b"%PDF", "PDF"),
    (b"\x7fELF", "ELF executable"),
    (b"\x1f\x8b", "gzip data"),
    (b"SQLite format 3", "SQLite database"),
    (b"MZ", "Windows executable"),
    (b"\x00asm", "WebAssembly"),
    (b"BZh", "bzip2 data"),
    (b"\xfd7zXZ", "xz data"),
)


def magic_kind(head: bytes) -> str:
    """A short guess at a binary format from its first bytes."""
    return next((name for magic, name in _MAGIC if head.startswith(magic)), "unknown binary format")


_CONTROL = bytes([*range(0, 9), *range(14, 27), *range(28, 32)])  # not tab, newlines, form feed or ESC


def looks_binary(sniff: bytes) -> bool:
    """A few stray NULs happen in real text (PDF extractions); binary formats are full of control bytes."""
    if not sniff:
        return False
    if sniff.count(b"\x00") > max(2, len(sniff) // 100):
        return True
    controls = len(sniff) - len(sniff.translate(None, _CONTROL))
    return controls > len(sniff) // 10


K = TypeVar("K")
V = TypeVar("V")


class LruCache(Generic[K, V]):
    """A small thread-safe LRU map; `get_or_build` builds each missing value once.

    Bounded by `capacity` entries and, given `max_bytes` and `weigh` (a value's approximate size), by
    memory: the least recently used go first, and a value larger than the whole budget is returned to
    its caller but not kept."""

    def __init__(self, capacity: int, *, max_bytes: int | None = None, weigh: Callable[[V], int] | None = None) -> None:
        self._capacity = capacity
        self._max_bytes = max_bytes if weigh is not None else None
        self._weigh = weigh
        self._items: OrderedDict[K, V] = OrderedDict()
        self._sizes: dict[K, int] = {}
        self._lock = threading.RLock()
        self._building: dict[K, threading.Lock] = {}
        self.builds = 0
        self.evictions = 0
        #: The approximate bytes held (0 without a weigher).
        self.bytes = 0

    def __len__(self) -> int:
        return len(self._items)

    def get(self, key: K) -> V | None:
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return self._items[key]
            return None

    def items(self) -> list[tuple[K, V]]:
        """A snapshot of the entries, least recently used first."""
        with self._lock:
            return list(self._items.items())

    def put(self, key: K, value: V) -> None:
        size = self._weigh(value) if self._weigh is not None else 0
        with self._lock:
            self._drop(key)
            if self._max_bytes is not None and size > self._max_bytes:
                self.evictions += 1
                return
            self._items[key] = value
            self._sizes[key] = size
            self.bytes += size
            while len(self._items) > self._capacity or (self._max_bytes is not None and self.bytes > self._max_bytes):
                self._drop(next(iter(self._items)))
                self.evictions += 1

    def _drop(self, key: K) -> None:
        if key in self._items:
            del self._items[key]
            self.bytes -= self._sizes.pop(key)

    def get_or_build(self, key: K, build: Callable[[], V]) -> V:
        """Build each missing value once; a build holds only its own key, so a long parse of one file
        never makes other files (or other sessions) wait."""
        found = self.get(key)
        if found is not None:
            return found
        with self._lock:
            key_lock = self._building.setdefault(key, threading.Lock())
        try:
            with key_lock:
                found = self.get(key)
                if found is None:
                    found = build()
                    with self._lock:
                        self.builds += 1
                        self.put(key, found)
        finally:
            with self._lock:
                self._building.pop(key, None)
        return found
