"""Salient marks (identifiers, paths, long numbers, error lines) found in linear time.

Every pattern here runs on text an attacker may have written (tool results, arguments), so none may
backtrack: candidates are maximal runs of path characters, found by one greedy character class, and each
run is taken apart by a single left-to-right pass. Nothing looks at a character more than a few times.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from ..deadline import checkpoint

#: Maximal runs of the characters identifiers, paths and numbers are made of; every mark lies inside one.
_RUN = re.compile(r"[\w./-]+")
_NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?![\w.])")  # linear: a start inside a run of digits fails at once
_ERROR = re.compile(r"(?i)\b(error|exception|traceback|failed|failure|not found|denied|invalid)\b")
_ASCII_NAME = re.compile(r"[A-Za-z0-9_-]+")
_EXTENSIONS = frozenset(
    {"py", "js", "ts", "go", "rs", "java", "c", "h", "md", "json", "yml", "yaml", "toml", "txt", "csv", "log"}
)
_EXTENSION_CHARS = 8
#: Numbers this short are everywhere (counts, indexes); they cannot tie a later action to an observation.
_MIN_NUMBER_DIGITS = 3
_MIN_IDENTIFIER = 5
_ERROR_LINE_CHARS = 120
#: Runs between deadline checks: a checkpoint per run would cost more than the scan on short runs.
_CHECK_EVERY = 4096


def runs(pattern: re.Pattern[str], text: str) -> Iterator[str]:
    """The maximal runs `pattern` (one greedy character class) finds in `text`, with a deadline check every
    _CHECK_EVERY runs."""
    for number, run in enumerate(pattern.finditer(text)):
        if number % _CHECK_EVERY == 0:
            checkpoint()
        yield run.group()


def salient(text: str) -> set[str]:
    """Identifiers, paths, long numbers and error lines: what later actions reuse."""
    found: set[str] = set()
    for token in runs(_RUN, text):
        found.update(identifiers(token))
        found.update(paths(token))
    found |= {n for n in _NUMBER.findall(text) if len(n.replace(".", "")) >= _MIN_NUMBER_DIGITS}
    checkpoint()
    found |= {line.strip()[:_ERROR_LINE_CHARS] for line in error_lines(text) if len(line.strip()) > 12}
    return found


def error_lines(text: str) -> list[str]:
    """Lines that report an error, failure or denial."""
    return [line for line in text.split("\n") if _ERROR.search(line)]


#: A line number a view printed before a line of the file (`  312\t`, `1474:`, `12|`). Linear: `\d+` is
#: tried once, where the line starts.
LINE_NUMBER = re.compile(r"\s*\d+[\t:|]")


def reported_errors(text: str) -> list[str]:
    """Error lines a result reports, leaving out the lines of a file a view printed with their numbers: the
    words `error` or `exception` in code (`except ValueError as error:`) are the file's text, not a failure."""
    return [line for line in error_lines(text) if LINE_NUMBER.match(line) is None]


def has_error(text: str) -> bool:
    return _ERROR.search(text) is not None


def identifiers(token: str) -> list[str]:
    """Names with a letter and a digit, at least five characters of [A-Za-z0-9_-] (`TOKEN-4242`, `a1b2c`).

    Same answers as `\\b(?=[\\w-]*\\d)(?=[\\w-]*[A-Za-z])[A-Za-z0-9_-]{5,}\\b` on ASCII text, whose two
    lookaheads rescanned a run from every word boundary in it (quadratic on `a-a-a-...`)."""
    out = []
    for piece in re.split(r"[./]", token):
        name = piece.strip("-")
        if (
            len(name) >= _MIN_IDENTIFIER
            and _ASCII_NAME.fullmatch(name)
            and any(c.isdigit() for c in name)
            and any(c.isalpha() for c in name)
        ):
            out.append(name)
    return out


def paths(token: str) -> list[str]:
    """File paths in one run of path characters: `dir/.../name.ext` (the longest, ending at the last
    segment with an extension), and bare names with a known extension (`setup.py`) outside of those."""
    out = []
    segments = token.split("/")
    covered = [False] * len(segments)  # whether a slash path took the segment (then no bare name inside it)
    start = 0
    while start < len(segments):
        if not segments[start]:
            start += 1
            continue
        end = start
        while end + 1 < len(segments) and segments[end + 1]:
            end += 1
        # segments[start..end] are non-empty and joined by single slashes; a slash path needs a
        # directory before its last segment, and that last segment needs an extension.
        for last in range(end, start, -1):
            cut = _extension_end(segments[last])
            if cut:
                lead = "/" if start > 0 and not segments[start - 1] else ""
                out.append(lead + "/".join([*segments[start:last], segments[last][:cut]]))
                for i in range(start, last + 1):
                    covered[i] = True
                break
        start = end + 1
    for i, segment in enumerate(segments):
        if not covered[i]:
            out.extend(_bare_names(segment))
    return out


def _extension_end(segment: str) -> int:
    """Where `name.ext` ends in a segment: after up to 8 word characters following its last dot that has
    a name before it and a word character after it; 0 when there is none."""
    for dot in range(len(segment) - 2, 0, -1):
        if segment[dot] == "." and _is_word(segment[dot + 1]):
            length = 0
            while length < _EXTENSION_CHARS and dot + 1 + length < len(segment) and _is_word(segment[dot + 1 + length]):
                length += 1
            return dot + 1 + length
    return 0


def _bare_names(segment: str) -> list[str]:
    """`name.ext` with a known extension inside one segment (no slash): `setup.py`, `a-b.json`."""
    out = []
    parts = segment.split(".")
    resume = 0  # after `x.py-y`, the next name starts right after `py`, at the dash (as the regex did)
    for i in range(len(parts) - 1):
        name, after = parts[i][resume:], parts[i + 1]
        start = 0 if resume else next((k for k, c in enumerate(name) if _is_word(c)), len(name))
        extension = after.split("-", 1)[0]
        resume = 0
        if start < len(name) and extension in _EXTENSIONS:
            out.append(name[start:] + "." + extension)
            resume = len(extension)
    return out


def _is_word(char: str) -> bool:
    return char.isalnum() or char == "_"
