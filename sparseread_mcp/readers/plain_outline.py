"""The outline of plain text that has no Markdown headings: manuals as people and tools write them.

Three kinds of heading line are recognised, none of which needs a file format to be declared:
- a line right after a separator of ten or more `=`, `*` or `#` (or `-`, one level down), as vim help
  files open each section (`=====...` then `*01.1*  Two manuals`);
- a line underlined with a run of one punctuation character at least as long as most of it (reStructuredText,
  text converted from HTML: `=` is level 1, `-` level 2, others level 3);
- an unindented ALL-CAPS line of a few words after a blank line or a separator (pydoc's `NAME`,
  `DESCRIPTION`; vim's `INTRODUCTION    *tag*`), a level below the others when there are others.
Vim's `*tag*` markers are kept as plain words at the start of a title and dropped at its end.
"""

from __future__ import annotations

import re

from ..deadline import checkpoint
from ..files.lines import LineIndex
from .base import OutlineEntry

_SEPARATOR = re.compile(r"^\s*([=*#\-])\1{9,}\s*$")
_UNDERLINE = re.compile(r"^\s*([=\-~^\"'`#*+])\1{2,}\s*$")
_TAG = re.compile(r"\*([^*\s|]+)\*")
_MAX_TITLE = 100
_CAPS_WORDS = 6
_CHECK_EVERY = 4096
#: Fewer headings than this are not a structure (a lone caps line is an acronym, a quote, a shout).
MIN_HEADINGS = 2


def plain_outline(index: LineIndex) -> tuple[OutlineEntry, ...]:
    """The headings of `index` found by the rules above, each spanning to the next of its level or above."""
    lines = [index.text[index.starts[n - 1] : index.line_end(n)] for n in range(1, index.line_count + 1)]
    found: list[tuple[int, int, str, bool]] = []  # (line, level, title, caps rule)
    for number in range(1, len(lines) + 1):
        if number % _CHECK_EVERY == 0:
            checkpoint()  # a long manual takes a while: stop at the call's limit
        heading = _heading(lines, number - 1)
        if heading is not None:
            found.append((number, *heading))
    if len(found) < MIN_HEADINGS:
        return ()
    ruled = any(not caps for _, _, _, caps in found)
    headings = [(number, level + 1 if caps and ruled else level, title) for number, level, title, caps in found]
    entries = []
    for i, (first, level, title) in enumerate(headings):
        last = index.line_count
        for later, later_level, _ in headings[i + 1 :]:
            if later_level <= level:
                last = later - 1
                break
        entries.append(OutlineEntry(title=title, anchor=title, first_line=first, last_line=last, level=level))
    return tuple(entries)


def _heading(lines: list[str], at: int) -> tuple[int, str, bool] | None:
    """(level, title, whether by the caps rule) when line `at` (0-based) is a heading."""
    line = lines[at]
    stripped = line.strip()
    if not stripped or len(stripped) > _MAX_TITLE or not any(c.isalnum() for c in stripped):
        return None
    if _SEPARATOR.match(line) or _UNDERLINE.match(line):
        return None
    before = lines[at - 1] if at else ""
    after = lines[at + 1] if at + 1 < len(lines) else ""
    if (rule := _SEPARATOR.match(before)) and not _SEPARATOR.match(after):
        return (2 if rule.group(1) == "-" else 1), _title(stripped), False
    if (under := _UNDERLINE.match(after)) and len(after.strip()) >= 0.6 * len(stripped):
        mark = under.group(1)
        return {"=": 1, "-": 2}.get(mark, 3), _title(stripped), False
    if _is_caps(line) and (not before.strip() or _SEPARATOR.match(before)):
        return 1, _title(stripped), True
    return None


def _is_caps(line: str) -> bool:
    """An unindented line of a few words whose letters are all capitals (tags at its end aside)."""
    if line[:1].isspace():
        return False
    text = _without_trailing_tags(line)
    letters = [c for c in text if c.isalpha()]
    return (
        len(letters) >= 3
        and all(c.isupper() for c in letters)
        and len(text.split()) <= _CAPS_WORDS
        and not text.endswith((".", ",", ";"))
    )


def _title(text: str) -> str:
    """The heading as a reader names it: tags at its end dropped, others as plain words, blanks single."""
    return " ".join(_TAG.sub(r"\1", _without_trailing_tags(text)).split())


def _without_trailing_tags(text: str) -> str:
    """`text` with blanks made single and the vim tags (`*name*`) at its end dropped, unless it is only
    tags. Word by word, not by a pattern: `(\\s+\\*...\\*)+$` backtracks quadratically on a run of blanks."""
    words = text.split()
    while len(words) > 1 and _is_tag(words[-1]):
        words.pop()
    return " ".join(words)


def _is_tag(word: str) -> bool:
    return len(word) > 2 and word[0] == word[-1] == "*" and not any(c in "*|" for c in word[1:-1])
