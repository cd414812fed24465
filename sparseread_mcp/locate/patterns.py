"""Regex needles (`/like this/`): compiled and matched by an engine that cannot run away.

A user's pattern is text from whoever drives the client, and the files it runs on come from anyone.
Python's `re` backtracks without limit and holds the GIL while it does, so one `/(a+)+$/` froze every
session. The `regex` package matches the same syntax (lookarounds and backreferences included), releases
the GIL while it matches a `str`, and takes a timeout: every match gets what is left of the call's
`MATCH_SECONDS` of matching (and of the call's limit), and a timeout becomes `PatternTooSlow`, naming the
needle.

Compiling is not covered by a timeout, and `regex` unrolls counted repeats when it compiles (`(?:(?:a{1000})
{1000}){1000}` is 27 characters and takes gigabytes), so a pattern is refused before compiling when it is
longer than `MAX_PATTERN_CHARS` or when its unrolled size, estimated from its counted repeats, passes
`MAX_PROGRAM_SIZE`; patterns that call themselves or a group (`(?R)`, `(?1)`, `(?&name)`) are refused, as their
matching took gigabytes in a second. Matching memory grows with the text it passes, so long texts are
matched in windows (see `_windows`).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

import regex

from .. import deadline
from ..errors import IntentError, PatternTooSlow

#: Longer patterns are refused: a needle is a few words, not a program (100k characters gave an internal error).
MAX_PATTERN_CHARS = 1000
#: The unrolled size a pattern may compile to, in atoms (about 300 bytes each when compiled): 100k is ~30 MB.
MAX_PROGRAM_SIZE = 100_000
#: Regex matching in one call, all needles and texts together, stops after this (or the call's limit);
#: outside a call, each match stops after this.
MATCH_SECONDS = 10.0
_KIND = "regex"
#: Matches counted per text: enough to rank a passage, bounded when a pattern matches everywhere.
MAX_COUNT = 1000
#: Longer texts (a minified line, one huge value) are matched a window at a time, so that a match's
#: backtracking memory stays bounded (about 10 to 60 MB here at worst).
WINDOW_CHARS = 100_000
OVERLAP_CHARS = 1_000


@dataclass(frozen=True, slots=True)
class NeedlePattern:
    """A compiled regex needle; `needle` is how the user wrote it, slashes included."""

    needle: str
    compiled: regex.Pattern[str]

    def search(self, text: str) -> bool:
        """Whether the pattern matches anywhere in `text`."""
        for pos, endpos, before in _windows(len(text)):
            with self._timed(text) as seconds:
                match = self.compiled.search(text, pos, endpos, timeout=seconds)
            if match is not None and match.start() < before:
                return True  # the leftmost match; one in the overlap is the next window's
        return False

    def count(self, text: str, *, cap: float | None = None) -> int:
        """Non-empty matches in `text`, at most MAX_COUNT (a pattern matching empty text marks no passage);
        `cap`: seconds of matching the call may still spend (default MATCH_SECONDS)."""
        found = resume = 0  # resume: where the last counted match ended, as one pass over the text would
        for pos, endpos, before in _windows(len(text)):
            with self._timed(text, cap) as seconds:
                for match in self.compiled.finditer(text, max(pos, resume), endpos, timeout=seconds):
                    if match.start() >= before:
                        break  # the next window counts it, with the text after it in view
                    if match.end() > match.start():
                        found += 1
                        resume = match.end()
                        if found >= MAX_COUNT:
                            return found
        return found

    @contextmanager
    def _timed(self, text: str, cap: float | None = None) -> Iterator[float]:
        """The step's timeout (what is left of the call's matching time); its time is then counted, and a
        timeout becomes PatternTooSlow. No checkpoint here, which would ask anyio about cancellation on
        every line: a call past its limit gets a tiny timeout, and the TimedOut is raised below."""
        started = time.monotonic()
        cap = MATCH_SECONDS if cap is None else cap
        try:
            yield max(0.01, deadline.allowance(_KIND, cap))
        except TimeoutError:
            deadline.checkpoint()  # the call's own limit (or a cancellation) is the better answer when it fired
            raise PatternTooSlow(
                f"needle {_short(self.needle)} was stopped: regex matching may take {cap:.3g} s of a call "
                f"(less when the call's limit is nearer), and it ran out on a text of {len(text):,} characters. "
                "Nested or overlapping repeats such as (a+)+ backtrack without end: use a plain needle, a simpler "
                "pattern or a narrower target"
            ) from None
        finally:
            deadline.spend(_KIND, time.monotonic() - started)


#: Counts every pattern in every text: (needles as written, texts, seconds of matching allowed) -> one row
#: of counts per text. The server installs one that runs in a worker process (`counted_by`).
PatternCounter = Callable[[tuple[str, ...], tuple[str, ...], float], list[list[int]]]
_COUNTER: ContextVar[PatternCounter | None] = ContextVar("sparseread_pattern_counter", default=None)


@contextmanager
def counted_by(counter: PatternCounter) -> Iterator[None]:
    """Match the user's patterns with `counter` inside this block (the server: in a worker)."""
    token = _COUNTER.set(counter)
    try:
        yield
    finally:
        _COUNTER.reset(token)


def count_matches(patterns: Sequence[NeedlePattern], texts: Sequence[str]) -> list[list[int]]:
    """Matches of each pattern in each text (a row per text), within what is left of the call's matching
    time; through the installed counter (a worker) when there is one, else here."""
    if not patterns:
        return [[] for _ in texts]
    counter = _COUNTER.get()
    if counter is None:
        return [[pattern.count(text) for pattern in patterns] for text in texts]
    allowed = deadline.allowance(_KIND, MATCH_SECONDS)
    started = time.monotonic()
    try:
        return counter(tuple(p.needle for p in patterns), tuple(texts), allowed)
    finally:
        deadline.spend(_KIND, time.monotonic() - started)


def count_here(needles: tuple[str, ...], texts: tuple[str, ...], allowed: float) -> list[list[int]]:
    """The worker's side of `count_matches`: compile the needles here and count, all of it within
    `allowed` seconds of matching."""
    compiled = [compile_needle(needle) for needle in needles]
    with deadline.deadline(allowed + 60):  # the call's own limit is the server's to enforce (it kills us)
        return [[pattern.count(text, cap=allowed) for pattern in compiled] for text in texts]


def _windows(length: int) -> Iterator[tuple[int, int, int]]:
    """(pos, endpos, count matches starting before this) over a text, WINDOW_CHARS at a time.

    A backtracking match keeps memory for every character it has passed (`(.)*` took 500 MB on 3 MB), so
    no match runs over more than a window. Windows overlap by OVERLAP_CHARS and a match starting in the
    overlap is left to the next window, which sees the text after it: only a match longer than the
    overlap can be cut or be found at a window's edge.
    """
    pos = 0
    while length - pos > WINDOW_CHARS:
        end = pos + WINDOW_CHARS
        yield pos, end, end - OVERLAP_CHARS
        pos = end - OVERLAP_CHARS
    yield pos, length, length


def compile_needle(needle: str) -> NeedlePattern:
    """Compile a `/pattern/` needle case-insensitively, or raise IntentError saying what to change."""
    source = needle[1:-1]
    if len(source) > MAX_PATTERN_CHARS:
        raise IntentError(
            f"needle {_short(needle)} is a pattern of {len(source):,} characters, over {MAX_PATTERN_CHARS:,}; "
            "use plain needles or a shorter pattern"
        )
    size = program_size(source)
    if size > MAX_PROGRAM_SIZE:
        raise IntentError(
            f"needle {_short(needle)} repeats to about {size:,} atoms when compiled, over {MAX_PROGRAM_SIZE:,}; "
            "use smaller counts in {m,n} or + and * instead"
        )
    if calls_a_group(source):
        raise IntentError(
            f"needle {_short(needle)} calls a group or itself ((?R), (?1), (?&name)), which can take gigabytes "
            "to match; write the repetition out or use plain needles"
        )
    try:
        return NeedlePattern(needle, regex.compile(source, regex.IGNORECASE | regex.VERSION0))
    except (regex.error, RecursionError, OverflowError, ValueError, IndexError) as exc:
        reason = str(exc)[:120] or type(exc).__name__
        raise IntentError(
            f"needle {_short(needle)} is not a valid regular expression ({reason}); fix it or use a plain needle"
        ) from None


def literal_needle(needle: str) -> NeedlePattern:
    """A plain needle as a case-insensitive pattern (linear: it has no repeats), for line-by-line search."""
    return NeedlePattern(needle, regex.compile(regex.escape(needle), regex.IGNORECASE | regex.VERSION0))


def program_size(pattern: str) -> int:
    """An upper estimate of the atoms `pattern` unrolls to: counted repeats multiply what they repeat.

    One pass over the text, no recursion: groups push a running sum, `{m,n}` multiplies the last atom
    by its larger bound. Escapes and character classes are one atom. It over-counts rather than under.
    """
    stack: list[int] = []
    total = 0  # atoms in the current group so far
    last = 0  # the size of the last atom, which a quantifier repeats
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if char == "\\":
            i += 2
            if i < len(pattern) and pattern[i] == "{":  # \p{..}, \N{..}, \x{..}: the braces belong to the escape
                i = _after(pattern, i, "}")
            last = 1
            total += 1
            continue
        if char == "[":
            i = _class_end(pattern, i)
            last = 1
            total += 1
            continue
        if char == "(":
            stack.append(total)
            total = 0
            last = 0
        elif char == ")":
            inner = max(total, 1)
            total = (stack.pop() if stack else 0) + inner
            last = inner
        elif char == "{" and (bound := _repeat_bound(pattern, i)) is not None:
            count, i = bound
            total += last * (count - 1)
            last *= count
            continue
        else:
            last = 1
            total += 1
        i += 1
    while stack:
        total += stack.pop()
    return total


def calls_a_group(pattern: str) -> bool:
    """Whether the pattern calls itself or a group: `(?R)`, `(?0)`, `(?1)`, `(?+1)`, `(?-1)`, `(?&name)`,
    `(?P>name)` (escapes and character classes skipped)."""
    i = 0
    while i < len(pattern):
        if pattern[i] == "\\":
            i += 2
        elif pattern[i] == "[":
            i = _class_end(pattern, i)
        elif pattern[i] == "(" and _GROUP_CALL.match(pattern, i):
            return True
        else:
            i += 1
    return False


_GROUP_CALL = re.compile(r"\(\?(?:R|[+-]?\d|&|P>)")


def _repeat_bound(pattern: str, i: int) -> tuple[int, int] | None:
    """At a `{`: the larger bound of `{m}`, `{m,}`, `{,n}` or `{m,n}` and the index after it; None otherwise."""
    end = pattern.find("}", i)
    if end < 0:
        return None
    body = pattern[i + 1 : end]
    parts = body.split(",")
    if len(parts) > 2 or not all(p.strip().isdigit() or not p.strip() for p in parts) or not body.strip(", "):
        return None
    numbers = [int(p) for p in parts if p.strip()]
    return max(1, *numbers), end + 1


def _class_end(pattern: str, i: int) -> int:
    """The index after the character class that opens at i (`[]a]` and `[^]a]` hold a literal `]`)."""
    j = i + 1
    if j < len(pattern) and pattern[j] == "^":
        j += 1
    if j < len(pattern) and pattern[j] == "]":
        j += 1
    while j < len(pattern) and pattern[j] != "]":
        j += 2 if pattern[j] == "\\" else 1
    return j + 1


def _after(pattern: str, i: int, closing: str) -> int:
    end = pattern.find(closing, i)
    return len(pattern) if end < 0 else end + 1


def _short(needle: str) -> str:
    return repr(needle) if len(needle) <= 60 else repr(needle[:57]) + "…"
