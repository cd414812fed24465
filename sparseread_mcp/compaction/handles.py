"""Pointers: how a shortened result's header names its full text, and how a pointer finds it again.

A pointer is a piece of the tool call id (a long id costs some 20 tokens in every header); the whole id where
no short piece names one call alone. `resolve` takes a whole id first, so one always names its call.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

#: A pointer names the call by this many of its id's characters (twice as many where the end is shared).
HANDLE = 4


def handles(call_ids: Sequence[str]) -> dict[str, str]:
    """The pointer each shortened result names: its call id's last `HANDLE` characters, or the last twice as
    many where another call ends the same way (`...cumru__dup1`), or else the last `HANDLE` characters of it
    that no other call id holds anywhere (`call_cyI7...W2wr` and `call_w3V1...W2wr` share their last 16), or
    the whole id when it is short (`call_10`: a piece of it would save nothing) or has no such piece.
    `resolve` takes a whole id first, so one always names its call."""
    out: dict[str, str] = {}
    for size in (HANDLE, 2 * HANDLE):
        ends = Counter(c[-size:] for c in call_ids if len(c) >= size)  # no other call may end with a pointer
        for c in call_ids:
            if c not in out and len(c) > size + HANDLE and ends[c[-size:]] == 1:
                out[c] = c[-size:]
    for c in call_ids:
        if c in out or len(c) <= 3 * HANDLE:
            continue
        others = [other for other in call_ids if other != c]
        for start in range(len(c) - HANDLE - 1, -1, -1):
            piece = c[start : start + HANDLE]
            if not any(piece in other for other in others):
                out[c] = piece
                break
    return {c: out.get(c, c) for c in call_ids}


def resolve(archive: Mapping[str, str], pointer: str) -> str | None:
    """The full text a shortened result's pointer names: by its whole call id, by the end of one when no other
    archived call id ends the same way, or by a piece of one that no other archived call id holds."""
    if pointer in archive:
        return archive[pointer]
    found = [key for key in archive if key.endswith(pointer)] if pointer else []
    if not found and pointer:
        found = [key for key in archive if pointer in key]
    return archive[found[0]] if len(found) == 1 else None
