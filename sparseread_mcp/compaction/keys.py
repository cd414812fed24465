"""Keys: the strings of a tool result that a later step may type again, found in linear time.

A key is what an agent copies from an observation into a later call or reply: a code identifier
(`padded_cols`, `formatted_data.append`, `models.CASCADE`, `UnicodeDecodeError`, `PGPASSWORD`), a path
(`src/a.py`, `setup.py`), an id mixing letters and digits (`HAT028`, `omar_davis_3817`), a number of three
digits or more (`1859`, `2024-05-21`), or a line that reports an error. Plain words (`the`, `models`)
are not keys: they recur everywhere and no step depends on one observation for them.

The rule is generic on purpose (no vocabulary of any one agent or domain): it decides which lines of an
old observation must stay, so it is written from what agents reuse, not from any one set of runs.
Every pattern runs on text an attacker may have written: candidates are maximal runs of one greedy
character class, each taken apart by plain string operations (no backtracking).
"""

from __future__ import annotations

import re

from .marks import LINE_NUMBER, reported_errors, runs

#: Maximal runs of the characters identifiers, paths, dates and numbers are made of.
_RUN = re.compile(r"[\w./:-]+")
_MIN_KEY = 4
_MIN_DIGITS = 3
_MAX_KEY = 200
_ERROR_CHARS = 160


def keys(text: str) -> set[str]:
    """The keys of `text` (see the module's docstring), each at most 200 characters."""
    found: set[str] = set()
    for run in runs(_RUN, text):
        token = run.strip("./:-")[:_MAX_KEY]
        if len(token) >= _MIN_KEY or (token.isdigit() and len(token) >= _MIN_DIGITS):
            found.update(_split(token))
    return found


def line_keys(line: str) -> set[str]:
    """The keys of one line of an observation (a file view's line number is one: agents view and edit by
    line number), plus the line itself when it reports an error (not a numbered line of a file, whose
    `error` is the file's text)."""
    found = keys(line)
    if LINE_NUMBER.match(line) is None and reported_errors(line):
        found.add(line.strip()[:_ERROR_CHARS])
    return found


def _split(token: str) -> list[str]:
    """The token when it is a key, and its key parts: `a/b/c.py` gives `c.py` too, `x.y_z` gives `y_z`.
    A view's line number glued to the line's first word (`1491:class`, `4:EXTRAS_REQUIRE`) is two strings,
    the number and the word, not an id mixing letters and digits."""
    head, colon, rest = token.partition(":")
    if colon and head.isdigit() and any(c.isalpha() for c in rest):
        number = [head] if _is_key(head) else []
        return number + (_split(rest) if len(rest) >= _MIN_KEY else [])
    out = [token] if _is_key(token) else []
    if len(out) and ("/" in token or ":" in token):
        out.extend(p for p in re.split(r"[/:]", token) if len(p) >= _MIN_KEY and _is_key(p))
    elif not out and "." in token:
        out.extend(p for p in token.split(".") if len(p) >= _MIN_KEY and _is_key(p))
    return out


def _is_key(token: str) -> bool:
    digits = sum(c.isdigit() for c in token)
    letters = sum(c.isalpha() for c in token)
    if not letters:
        return digits >= _MIN_DIGITS  # a number, a date, a time
    if digits:
        return True  # an id: HAT028, omar_davis_3817, a1b2c
    if "/" in token or "_" in token.strip("_") or "." in token:
        return True  # a path, snake_case, a dotted name or a file name
    body = token.strip("_-")
    if body.isupper() and len(body) >= _MIN_KEY:
        return True  # a constant: PGPASSWORD
    # camelCase or CamelCase with a capital inside: UnicodeDecodeError, getAttr (not `Reservation`)
    return any(c.isupper() for c in body[1:]) and any(c.islower() for c in body)
