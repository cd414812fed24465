"""Evidence pointers: dereference and verify `path@rev#anchor` against the source."""

from __future__ import annotations

import difflib

from ..anchors import Anchor, Target
from ..errors import AnchorError
from ..lines import LineIndex
from ..models import Verification
from ..readers.base import ParsedArtifact, find_outline_entry


def anchored_span(parsed: ParsedArtifact, anchor: Anchor) -> tuple[int, int]:
    """The span an anchor names in this artifact (lines, columns, page, section, row or key path)."""
    return parsed.span_of(anchor)


def verify_pointer(target: Target, old_text: str | None, current: ParsedArtifact | None) -> Verification:
    """ok / moved / changed / gone for a pointer whose revision text may be known."""
    pointer = f"{target.path}@{target.rev}#{target.anchor.format() if target.anchor else ''}"
    if current is None:
        return Verification(status="gone", reason="the file no longer exists inside the roots", pointer=pointer)
    assert target.anchor is not None
    if current.artifact.rev == target.rev:
        return Verification(status="ok", reason="the file is unchanged since the pointer was made", pointer=pointer)
    if old_text is None:
        return Verification(
            status="changed",
            reason=(
                f"the file's revision is now {current.artifact.rev} and this server never saw {target.rev}, "
                "so the anchored text cannot be compared; read the anchor again"
            ),
            pointer=pointer,
        )
    old_index = LineIndex(old_text)
    start, end = old_index.span_of(target.anchor) if target.anchor.kind != "section" else (0, 0)
    snippet = old_text[start:end]
    text = current.artifact.text
    found = text.find(snippet) if snippet else -1
    if found != -1:
        new_anchor = current.anchor_for(*_whole_or_exact(current.lines, found, found + len(snippet)))
        same = new_anchor.format() == target.anchor.format()
        return Verification(
            status="ok" if same else "moved",
            reason="the anchored text is unchanged" + ("" if same else f"; it now sits at {new_anchor.format()}"),
            pointer=pointer,
            new_anchor=None if same else new_anchor.format(),
        )
    try:
        now_start, now_end = current.span_of(target.anchor)
        now = text[now_start:now_end]
    except AnchorError:  # the anchor may be out of range in the new version
        now = ""
    diff = "\n".join(
        difflib.unified_diff(snippet.split("\n"), now.split("\n"), f"at {target.rev}", "now", lineterm="", n=1)
    )
    return Verification(
        status="changed", reason="the anchored text differs in the current file", pointer=pointer, diff=diff
    )


def _whole_or_exact(lines: LineIndex, start: int, end: int) -> tuple[int, int]:
    first, last = lines.line_of(start), lines.line_of(max(start, end - 1))
    if start == lines.starts[first - 1] and end == lines.line_end(last):
        return start, end
    if first == last:
        return start, end
    return lines.starts[first - 1], lines.line_end(last)


__all__ = ["anchored_span", "find_outline_entry", "verify_pointer"]
