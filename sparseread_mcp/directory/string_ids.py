"""Strings to their positions in a list, in about a quarter of a dictionary's memory.

A directory index looks up a few words and names per query among hundreds of thousands (890,000 words and
348,000 definitions at 28,000 files of installed packages). Dictionaries for them held 127 MB, more than
the index's own arrays, so an index of that size did not fit its cache and was rebuilt on every call. Here
each string costs two 8-byte numbers: its hash, sorted, and its position. A lookup is a binary search, then
a comparison with the strings themselves (two strings may share a hash).

Hashes are Python's own, so they differ between processes: they are never saved, and a copy sent to
another process hashes its strings again.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np


class StringIds:
    """The positions of `strings` by a key of each (the string itself, or e.g. its case-folded form)."""

    def __init__(self, strings: Sequence[str], key: Callable[[str], str] | None = None) -> None:
        self._strings = strings
        self._key = key
        keyed = strings if key is None else map(key, strings)
        hashes = np.fromiter(map(hash, keyed), dtype=np.int64, count=len(strings))
        self._order = np.argsort(hashes, kind="stable")  # equal hashes keep the strings' order
        self._hashes = hashes[self._order]

    def positions(self, wanted: str) -> list[int]:
        """Every position whose string's key is `wanted`, in order."""
        code = hash(wanted)
        first = int(np.searchsorted(self._hashes, code, "left"))
        last = int(np.searchsorted(self._hashes, code, "right"))
        key = self._key
        return [
            n
            for n in self._order[first:last].tolist()
            if (self._strings[n] if key is None else key(self._strings[n])) == wanted
        ]

    def get(self, wanted: str) -> int | None:
        """The first position of `wanted` (a list of distinct strings has one), or None."""
        found = self.positions(wanted)
        return found[0] if found else None

    def __contains__(self, wanted: object) -> bool:
        return isinstance(wanted, str) and bool(self.positions(wanted))

    @property
    def nbytes(self) -> int:
        return int(self._order.nbytes + self._hashes.nbytes)

    def __reduce__(self) -> tuple[Any, ...]:
        return (StringIds, (self._strings, self._key))  # hashed again where it arrives
