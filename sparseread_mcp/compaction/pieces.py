"""Long lines cut into verbatim pieces, each kept or left out on its own (see elide's docstring)."""

from __future__ import annotations

from collections.abc import Sequence

PIECE = 100  # other long lines (minified code, long prose) are cut into pieces of about this many characters
#: Where a long line is cut: each separator, and how much of it ends the piece before the cut.
_MEMBER_CUTS = (("}, {", 2), ("], ", 2), (', "', 2))
_CUTS = (("}, {", 4), ("], ", 3), (", ", 2), ("; ", 2), (" ", 1))
MEMBER = 25  # one-line JSON is cut between members about every this many characters


def pieces(line: str, member: int) -> list[tuple[int, int]]:
    """A line as one span, or a long line as verbatim spans covering it. Structured text (one-line JSON) is cut
    between members (`, "`, `}, {`, `], `) about every `member` characters, so a record's id, date or price
    stays or goes on its own; other text (minified code, long prose) only past `PIECE` characters, at a
    separator near every `PIECE` (a code line is never cut between words)."""
    if len(line) <= member:
        return [(0, len(line))]
    out = []
    start = 0
    while len(line) - start > member:
        cut = _cut(line[start : start + 2 * member], member, _MEMBER_CUTS)
        if cut <= 0 and len(line) - start > PIECE:
            cut = _cut(line[start : start + 2 * PIECE], PIECE, _CUTS)
            cut = cut if cut > 0 else 2 * PIECE  # no separator at all (base64, a hash): cut where it is
        if cut <= 0:
            break
        out.append((start, start + cut))
        start += cut
    out.append((start, len(line)))
    return [(a, b) for a, b in out if line[a:b].strip()]


def _cut(window: str, size: int, separators: Sequence[tuple[str, int]]) -> int:
    """Where to cut `window`: after the first separator found past half of `size` (-1 when none is)."""
    for separator, keep in separators:
        found = window.find(separator, size // 2)
        if found != -1:
            return found + keep
    return -1


def joined(line: str, kept: Sequence[tuple[int, int]]) -> str:
    """The kept spans of a line: neighbours rejoined as the line had them, each gap one ` ⋯ `."""
    runs: list[list[int]] = []
    for start, end in kept:
        if runs and runs[-1][1] == start:
            runs[-1][1] = end
        else:
            runs.append([start, end])
    return " ⋯ ".join(line[a:b].strip() for a, b in runs)
