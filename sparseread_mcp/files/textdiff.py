"""Line diffs of two versions of a text, bounded: past a size, where they differ instead of how.

`difflib` is quadratic in the lines that differ (a 60,000-line file with every other line edited ran for
ten minutes), so a unified diff is computed only when the differing middle (what is left once the common
head and tail are set aside) is small. Past that the answer says which line ranges of the new version
differ, found in one linear pass, and both fingerprints: still enough to decide what to read again.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

#: Differing lines (both versions together) past which no line diff is computed.
MAX_DIFF_LINES = 2_000
#: And differing characters, so a few enormous lines are bounded too.
MAX_DIFF_CHARS = 400_000
#: Ranges named in a summary; the rest are counted.
MAX_RANGES = 20


@dataclass(frozen=True, slots=True, kw_only=True)
class TextDiff:
    text: str
    #: True for a unified diff; False for a summary of the changed ranges (over the bounds).
    exact: bool


def line_diff(old: str, new: str, *, old_label: str, new_label: str, context: int = 2) -> TextDiff:
    """A unified diff of `old` against `new`, or, over the bounds, the ranges of `new` that differ."""
    before, after = old.split("\n"), new.split("\n")
    head = _common_head(before, after)
    tail = _common_head(before[head:][::-1], after[head:][::-1])
    middle_old, middle_new = before[head : len(before) - tail], after[head : len(after) - tail]
    lines = len(middle_old) + len(middle_new)
    chars = sum(map(len, middle_old)) + sum(map(len, middle_new))
    if lines <= MAX_DIFF_LINES and chars <= MAX_DIFF_CHARS:
        text = "\n".join(difflib.unified_diff(before, after, old_label, new_label, lineterm="", n=context))
        return TextDiff(text=text, exact=True)
    return TextDiff(text=_changed_ranges(middle_old, middle_new, head, len(before), len(after)), exact=False)


def _common_head(first: list[str], second: list[str]) -> int:
    count = 0
    for a, b in zip(first, second, strict=False):
        if a != b:
            break
        count += 1
    return count


def _changed_ranges(middle_old: list[str], middle_new: list[str], head: int, old_count: int, new_count: int) -> str:
    """Lines of the new version's differing middle that the old one does not have, as ranges (linear)."""
    old_lines = set(middle_old)
    ranges: list[tuple[int, int]] = []
    for offset, line in enumerate(middle_new):
        number = head + offset + 1
        if line in old_lines:
            continue
        if ranges and ranges[-1][1] == number - 1:
            ranges[-1] = (ranges[-1][0], number)
        else:
            ranges.append((number, number))
    new_set = set(middle_new)
    removed = sum(1 for line in middle_old if line not in new_set)
    shown = ", ".join(f"L{a}" if a == b else f"L{a}-L{b}" for a, b in ranges[:MAX_RANGES])
    more = f" (+{len(ranges) - MAX_RANGES} more ranges)" if len(ranges) > MAX_RANGES else ""
    return (
        f"{old_count} -> {new_count} lines; {len(middle_old) + len(middle_new)} lines differ, over the "
        f"{MAX_DIFF_LINES}-line bound of a line diff, so only where: new or edited lines now at "
        f"{shown or 'none (only removals)'}{more}; {removed} old lines removed or edited. Read those ranges."
    )
