"""Evidence pointers: dereference and verify `path@rev#anchor` against the source."""

from __future__ import annotations

import difflib
from collections.abc import Callable

from ..errors import AnchorError
from ..files.anchors import Anchor, Target
from ..files.lines import LineIndex
from ..files.textdiff import TextDiff, line_diff
from ..gate.respond import evidence_pack
from ..models import ArtifactRef, EpisodeRef, EvidencePack, Exposure, Gate, Verification
from ..readers.base import ParsedArtifact


def anchored_span(parsed: ParsedArtifact, anchor: Anchor) -> tuple[int, int]:
    """The span an anchor names in this artifact (lines, columns, page, section, row or key path)."""
    return parsed.span_of(anchor)


#: How two texts are diffed: `line_diff` here; the engine passes one that runs in a worker.
Differ = Callable[..., TextDiff]


def verify_pointer(
    target: Target,
    old: ParsedArtifact | None,
    current: ParsedArtifact | None,
    current_revs: set[str],
    *,
    diff: Differ = line_diff,
) -> Verification:
    """ok / moved / changed / gone for a pointer, given the version it names (`old`) when known; `diff`
    compares the anchored text then and now (bounded, see textdiff)."""
    pointer = f"{target.path}@{target.rev}#{target.anchor.format() if target.anchor else ''}"
    if current is None:
        return Verification(status="gone", reason="the file no longer exists inside the roots", pointer=pointer)
    assert target.anchor is not None
    if target.rev in current_revs:
        return Verification(status="ok", reason="the file is unchanged since the pointer was made", pointer=pointer)
    if old is None:
        return Verification(
            status="changed",
            reason=(
                f"the file's revision is now {current.artifact.rev} and this server never saw {target.rev}, "
                "so the anchored text cannot be compared; read the anchor again"
            ),
            pointer=pointer,
        )
    try:
        start, end = old.span_of(target.anchor)
    except AnchorError:
        return Verification(
            status="changed", reason="the anchor does not exist in the version it names", pointer=pointer
        )
    snippet = old.artifact.text[start:end]
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
    if not _still_there(snippet, now, text):
        return Verification(
            status="gone",
            reason="the anchored text exists nowhere in the current file (deleted, not edited in place)",
            pointer=pointer,
        )
    changes = diff(snippet, now, old_label=f"at {target.rev}", new_label="now", context=1)
    return Verification(
        status="changed", reason="the anchored text differs in the current file", pointer=pointer, diff=changes.text
    )


#: How alike the text now at the anchor must be to the old text to count as the same place, edited.
SAME_PLACE_RATIO = 0.5
#: Bounds on the comparison, so an attacker's huge lines cannot make it quadratic.
_COMPARE_CHARS = 2_000


def _still_there(old: str, now: str, text: str) -> bool:
    """Whether the anchored text still has a place: edited where it was, or some of its lines remain."""
    if now.strip():
        matcher = difflib.SequenceMatcher(None, old[:_COMPARE_CHARS], now[:_COMPARE_CHARS], autojunk=False)
        if matcher.quick_ratio() >= SAME_PLACE_RATIO and matcher.ratio() >= SAME_PLACE_RATIO:
            return True
    current_lines = {line.strip() for line in text.split("\n") if len(line.strip()) >= 8}
    return any(line.strip() in current_lines for line in old.split("\n") if len(line.strip()) >= 8)


def _whole_or_exact(lines: LineIndex, start: int, end: int) -> tuple[int, int]:
    first, last = lines.line_of(start), lines.line_of(max(start, end - 1))
    if start == lines.starts[first - 1] and end == lines.line_end(last):
        return start, end
    if first == last:
        return start, end
    return lines.starts[first - 1], lines.line_end(last)


def gone_pack(target: Target, tokenizer: str) -> EvidencePack:
    """The answer for a pointer whose file no longer exists: nothing to show, and that said plainly."""
    pointer = f"{target.path}@{target.rev}#{target.anchor.format() if target.anchor else ''}"
    return evidence_pack(
        episode=EpisodeRef(
            id="gone",
            artifact=ArtifactRef(path=target.path, type="missing", fingerprint=""),
            objective=f"verify {pointer}",
        ),
        action="verify",
        view="card",
        items=[],
        verification=Verification(status="gone", reason="the file no longer exists inside the roots", pointer=pointer),
        scope="no file to read",
        exposure=Exposure(
            payload_chars=0, payload_tokens=0, episode_chars=0, full_view_chars=0, full_view_tokens=0, remaining_chars=0
        ),
        gate=Gate(decision="sparse", reason="nothing delivered: the file is gone"),
        tokenizer=tokenizer,
        next_steps=["search the directory for the quoted text to see whether it moved to another file"],
    )


__all__ = ["anchored_span", "gone_pack", "verify_pointer"]
