"""Pointers said once per file: an answer whose pointers name one file and version two times or more states
that `path@rev` once, as its `source`, and each of those pointers as its anchor alone (`#L12-L18`).

A pointer's `path@rev` is some 20 tokens (`Super_Bowl_50.txt@sha256:e6b4a58741fa`), as long as a short
sentence; an answer of four passages repeated it four times, and its coverage and `already_delivered` again.
The full pointer is `source` + the relative one, byte for byte, so a citation loses nothing: an agent quotes
`source` followed by the anchor, and `absolute` (used by `wire.record_of`) reads an answer back with its
pointers whole. A pointer of another file or version in the same answer stays whole.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

#: The keys whose values are pointers (one, or a list): items' and samples' `pointer`, a slot's `pointers`,
#: `already_delivered`, `retire`, a verdict's `pointer`. Nothing else is rewritten (an item's text may well
#: begin with `#`).
POINTER_KEYS = frozenset({"pointer", "pointers", "already_delivered", "retire"})
#: A whole pointer: a path, `@`, a revision (a `sha256:` prefix or a git commit), `#`, an anchor. Tried only
#: where a path's run of characters starts (linear in any search, not only in the `fullmatch` used here).
_WHOLE = re.compile(r"(?<![^\s#@])([^\s#@]+@(?:sha256:[0-9a-f]{12}|[0-9a-f]{7,40}))(#\S+)")
#: Stating `source` costs about what one pointer's `path@rev` does: it pays from the second pointer on.
MIN_SHARED = 2


def relative_to_source(record: dict[str, Any]) -> dict[str, Any]:
    """`record` with the pointers of its most named file and version said relative to a `source` (stated
    after `episode`, or first), where two or more pointers name it; unchanged otherwise."""
    named = Counter(m[1] for p in strings_at(record, POINTER_KEYS) if (m := _WHOLE.fullmatch(p)))
    if not named:
        return record
    source, count = named.most_common(1)[0]
    if count < MIN_SHARED:
        return record
    cut = len(source)
    rewritten: dict[str, Any] = _rewrite(record, lambda p: p[cut:] if p.startswith(source + "#") else p)
    out: dict[str, Any] = {}
    for key, value in rewritten.items():
        if key != "episode" and "source" not in out:
            out["source"] = source
        out[key] = value
    out.setdefault("source", source)
    return out


def absolute(record: dict[str, Any]) -> dict[str, Any]:
    """`record` with every relative pointer made whole again from its `source` (which goes); a record
    without one is returned as it is."""
    source = record.get("source")
    if not isinstance(source, str):
        return record
    whole: dict[str, Any] = _rewrite(record, lambda p: source + p if p.startswith("#") else p)
    del whole["source"]
    return whole


def source_pointers(text: str) -> list[str]:
    """The whole pointers an answer's JSON text names, relative ones made whole from its `source`."""
    found = [m.group() for m in _WHOLE_IN_TEXT.finditer(text)]
    source = _SOURCE_IN_TEXT.search(text)
    if source is not None:
        found += [source[1] + m[1] for m in _RELATIVE_IN_TEXT.finditer(text)]
    return found


#: A whole pointer in any text; anchored where a run of path characters starts, so it is tried once per run
#: (linear: a start inside the run would rescan the rest of it, quadratic on `aaaa...` without an `@`).
_WHOLE_IN_TEXT = re.compile(r"(?<![\w./-])[\w./-]+@(?:sha256:[0-9a-f]{12}|[0-9a-f]{7,40})#[^\s\"',]+")
_SOURCE_IN_TEXT = re.compile(r'"source":"([^"\s#@]+@(?:sha256:[0-9a-f]{12}|[0-9a-f]{7,40}))"')
#: A relative pointer in JSON text: a `pointer`'s value or a member of a list of pointers.
_RELATIVE_IN_TEXT = re.compile(r'(?:"pointer":|[\[,])"(#[^"\s]+)"')


def strings_at(value: Any, keys: frozenset[str], key: str | None = None) -> Iterator[str]:
    """Every string of `value` (a JSON record) held at one of `keys`, directly or in a list."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield from strings_at(v, keys, k)
    elif isinstance(value, list):
        for v in value:
            yield from strings_at(v, keys, key)
    elif isinstance(value, str) and key in keys:
        yield value


def _rewrite(value: Any, change: Callable[[str], str], key: str | None = None) -> Any:
    if isinstance(value, dict):
        return {k: _rewrite(v, change, k) for k, v in value.items()}
    if isinstance(value, list):
        return [_rewrite(v, change, key) for v in value]
    if isinstance(value, str) and key in POINTER_KEYS:
        return change(value)
    return value
