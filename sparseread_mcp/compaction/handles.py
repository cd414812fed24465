"""Pointers: how a shortened result's header names its full text, and how a pointer finds it again.

A pointer is a piece of the tool call id (a long id costs some 20 tokens in every header); the whole id where
no short piece names one call alone. `resolve` takes a whole id first, so one always names its call.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from functools import lru_cache

from ..deadline import checkpoint
from ..tokens import TokenCounter

#: A pointer names the call by this many of its id's characters (twice as many where the end is shared).
HANDLE = 4
#: Pieces priced per id, from its end: a call id is some 8 to 40 characters; a hostile one may be far longer.
_TRIED = 64


def handles(call_ids: Sequence[str]) -> dict[str, str]:
    """The pointer each shortened result names: its call id's last `HANDLE` characters, or the last twice as
    many where another call ends the same way (`...cumru__dup1`), or else the last `HANDLE` characters of it
    that no other call id holds anywhere (`call_cyI7...W2wr` and `call_w3V1...W2wr` share their last 16), or
    the whole id when it is short (`call_10`: a piece of it would save nothing) or has no such piece.
    Where a piece no other call id holds costs fewer o200k tokens than that pointer, the cheapest such piece
    is named instead (`qbCZ` is one token less than `5lNb`, `u_01` one less than `toolu_01`): every header
    is re-sent at every turn, and call ids are random or numbered, so no piece means more than another.
    `resolve` takes a whole id first, so one always names its call."""
    out: dict[str, str] = {}
    for size in (HANDLE, 2 * HANDLE):
        ends = Counter(c[-size:] for c in call_ids if len(c) >= size)  # no other call may end with a pointer
        for c in call_ids:
            if c not in out and len(c) > size + HANDLE and ends[c[-size:]] == 1:
                out[c] = c[-size:]
    # How many distinct call ids hold each piece: a piece held by one id alone names it wherever it sits.
    held = Counter(piece for c in set(call_ids) for piece in _pieces(c))
    for number, c in enumerate(call_ids):
        if number % 256 == 0:
            checkpoint()  # pricing pieces is some 0.1 ms an id: a history of 10,000 calls takes about a second
        alone = [piece for piece in reversed(_pieces(c)) if held[piece] == 1 and piece != c][:_TRIED]  # from the end
        out[c] = min([out.get(c, c), *alone], key=_cost)  # the first of the cheapest: today's pointer on a tie
    return {c: out.get(c, c) for c in call_ids}


def _pieces(call_id: str) -> list[str]:
    """Its distinct `HANDLE`-character pieces, in order."""
    return list(dict.fromkeys(call_id[start : start + HANDLE] for start in range(len(call_id) - HANDLE + 1)))


@lru_cache(maxsize=65536)
def _cost(piece: str) -> int:
    """The o200k tokens a pointer adds to its header (`[compacted: ` and the pointer, then `]`)."""
    return _COUNTER.count(f" {piece}]")


_COUNTER = TokenCounter()


def resolve(archive: Mapping[str, str], pointer: str) -> str | None:
    """The full text a shortened result's pointer names: by its whole call id, by the end of one when no other
    archived call id ends the same way, or by a piece of one that no other archived call id holds."""
    if pointer in archive:
        return archive[pointer]
    found = [key for key in archive if key.endswith(pointer)] if pointer else []
    if not found and pointer:
        found = [key for key in archive if pointer in key]
    return archive[found[0]] if len(found) == 1 else None
