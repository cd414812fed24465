"""Evidence pointers: dereference and verify `path@rev#anchor` against the source."""

from __future__ import annotations

import difflib
import re
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
    place = edited_place(snippet, start, old.lines, current)
    if place is None:
        return Verification(
            status="gone",
            reason="the anchored text exists nowhere in the current file, not even edited (deleted)",
            pointer=pointer,
        )
    now = text[place[0] : place[1]]
    moved_to = current.anchor_for(*place).format()
    same = moved_to == target.anchor.format()
    changes = diff(snippet, now, old_label=f"at {target.rev}", new_label="now", context=1)
    where = "where it was" if same else f"now at {moved_to}"
    return Verification(
        status="changed",
        reason=f"the anchored text was edited: its closest match in the current file is {where} (the diff)",
        pointer=pointer,
        new_anchor=None if same else moved_to,
        diff=changes.text,
    )


#: How much of the old text (its words, in runs) a place must keep to count as that text, edited.
SAME_PLACE_RATIO = 0.5
#: Bounds on the comparison, so an attacker's huge lines cannot make it quadratic.
_COMPARE_CHARS = 2_000
#: How far (in lines) from its old first line an edited passage is looked for line by line.
SHIFT_LINES = 200
#: How far (in characters) from where it was a part of a line (a column anchor) is looked for.
SHIFT_CHARS = 4_000
_SPACE = re.compile(r"\s+")
#: Places elsewhere in the file (where one of its lines or rarer words is) compared, at most.
_ELSEWHERE = 200
#: Places compared in full (`ratio`) after the cheap bound (`quick_ratio`) ranked them.
_FULL_COMPARES = 8
#: What a place with a line more or fewer than the old text gives up against one of the same size.
_RESIZED = 0.1
#: The shortest run of words counted as kept from the old text (two for a text under 12 words).
_MIN_RUN = 3
_WORD = re.compile(r"[^\W\d_]{6,}")


def edited_place(old: str, old_start: int, old_lines: LineIndex, current: ParsedArtifact) -> tuple[int, int] | None:
    """The span of the current file most like `old` (it began at `old_start` in a file whose lines were
    `old_lines`): whole lines for a text of whole lines, a run of as many (one fewer or more: an edit may
    join or split a line) starting within `SHIFT_LINES` of where it was; a stretch of as many characters
    within `SHIFT_CHARS` of where it was for a part of a line (a column anchor in a long line); or where
    one of its lines or longer words is now. None when no place keeps `SAME_PLACE_RATIO` of it and none of
    its lines is left anywhere: the text is gone."""
    line = old_lines.line_of(old_start)
    whole = "\n" in old or old_lines.line_end(line) - old_lines.starts[line - 1] <= len(old)
    text = current.artifact.text
    spans = _line_spans(old, line, current) if whole else _inline_spans(old, old_start, text)
    best = _closest(old, spans, text)
    if best is not None and best[0] >= SAME_PLACE_RATIO:
        return best[1], best[2]
    if best is not None and _a_line_remains(old, text):
        return best[1], best[2]  # some of its lines are still there: the closest place, however edited
    return None


def _line_spans(old: str, old_line: int, current: ParsedArtifact) -> dict[tuple[int, int], bool]:
    """Runs of whole lines to compare, each with whether its size differs from the old text's."""
    lines = current.lines
    count = lines.line_count
    size = old.count("\n") + 1
    starts = set(range(max(1, old_line - SHIFT_LINES), min(count, old_line + SHIFT_LINES) + 1))
    starts |= {lines.line_of(at) for at in _elsewhere(old, current.artifact.text)}
    return {
        (lines.starts[first - 1], lines.line_end(min(count, first + max(0, size + extra - 1)))): extra != 0
        for first in starts
        for extra in (1, -1, 0)  # the same size last: it wins where two sizes give the same span
    }


def _inline_spans(old: str, old_start: int, text: str) -> dict[tuple[int, int], bool]:
    """Stretches of the old text's length, starting at a word near where it was or where its words are."""
    size = len(old)
    low, high = max(0, old_start - SHIFT_CHARS), min(len(text), old_start + SHIFT_CHARS)
    starts = {low, old_start if old_start < len(text) else low}
    starts |= {m.end() for m in _SPACE.finditer(text, low, high)}
    starts |= set(_elsewhere(old, text))
    return {(a, _word_end(text, a + size)): False for a in starts if a < len(text)}


def _word_end(text: str, at: int) -> int:
    """`at`, or the end of the word it falls in (never a cut word), at most 40 characters on."""
    if at >= len(text):
        return len(text)
    space = _SPACE.search(text, at, at + 40)
    return space.start() if space else at


def _closest(old: str, spans: dict[tuple[int, int], bool], text: str) -> tuple[float, int, int] | None:
    """The span keeping the most of the old text (its words, in runs), as (share kept, start, end)."""
    # Compared word by word: an edit keeps runs of words, and words are a tenth of the characters to match.
    matcher: difflib.SequenceMatcher[str] = difflib.SequenceMatcher(None, autojunk=False)
    wanted = old[:_COMPARE_CHARS].split()
    matcher.set_seq2(wanted)  # the old text's index is built once, each place compared to it
    scored: list[tuple[float, int, int]] = []
    for a, b in sorted(spans):
        matcher.set_seq1(text[a : min(b, a + _COMPARE_CHARS)].split())
        scored.append((matcher.quick_ratio(), a, b))
    scored.sort(key=lambda s: (-s[0], s[1]))
    best: tuple[float, int, int] | None = None
    for _quick, a, b in scored[:_FULL_COMPARES]:
        matcher.set_seq1(text[a : min(b, a + _COMPARE_CHARS)].split())
        kept = _kept_share(matcher, len(wanted), 2 if len(wanted) < 12 else _MIN_RUN)
        kept -= _RESIZED if spans[(a, b)] else 0.0  # as many lines as before, unless another size is clearly closer
        if best is None or kept > best[0]:
            best = (kept, a, b)
    return best


def _kept_share(matcher: difflib.SequenceMatcher[str], size: int, run: int) -> float:
    """The share of the old text's `size` words that the place keeps in runs of `run` words or more: an
    edit keeps most of a passage in long runs; another passage in the same words shares only short ones."""
    kept = sum(block.size for block in matcher.get_matching_blocks() if block.size >= run)
    return kept / max(1, size)


def _elsewhere(old: str, text: str) -> set[int]:
    """Where the old text may begin now beyond the shift window: where one of its lines (8 characters or
    more) or its longer words occur, less their offset in the old text."""
    found: set[int] = set()
    probes = [line.strip() for line in old.split("\n") if len(line.strip()) >= 8][:4]
    probes += sorted(set(_WORD.findall(old[:_COMPARE_CHARS])), key=len, reverse=True)[:4]
    for probe in probes:
        offset = max(0, old.find(probe))
        at = text.find(probe)
        hits = 0
        while at != -1 and hits < _ELSEWHERE // max(1, len(probes)):
            found.add(max(0, at - offset))
            hits += 1
            at = text.find(probe, at + len(probe))
    return found


def _a_line_remains(old: str, text: str) -> bool:
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
    reason = "the file no longer exists inside the roots"
    steps = ["search the directory for the quoted text to see whether it moved to another file"]
    return unread_pack(target, tokenizer, Verification(status="gone", reason=reason, pointer=_pointer(target)), steps)


def refused_pack(target: Target, tokenizer: str, refusal: str) -> EvidencePack:
    """The answer for a pointer into a file that is still there but cannot be read as text now (binary,
    over a limit, its reader failed): not `gone`, and the anchored text not compared."""
    reason = f"the file is still there, but it cannot be read to compare the anchored text ({refusal[:300]})"
    steps = ["check the file (sro_preview) and read the anchor again once it reads"]
    verdict = Verification(status="unverified", reason=reason, pointer=_pointer(target))
    return unread_pack(target, tokenizer, verdict, steps)


def _pointer(target: Target) -> str:
    return f"{target.path}@{target.rev}#{target.anchor.format() if target.anchor else ''}"


def unread_pack(target: Target, tokenizer: str, verification: Verification, steps: list[str]) -> EvidencePack:
    """A pointer's verdict when its file is not read: no items, nothing charged."""
    return evidence_pack(
        episode=EpisodeRef(
            id=verification.status,
            artifact=ArtifactRef(path=target.path, type="missing", fingerprint=""),
            objective=f"verify {_pointer(target)}",
        ),
        action="verify",
        view="card",
        items=[],
        verification=verification,
        scope="no file to read",
        exposure=Exposure(
            payload_chars=0, payload_tokens=0, episode_chars=0, full_view_chars=0, full_view_tokens=0, remaining_chars=0
        ),
        gate=Gate(decision="sparse", reason=f"nothing delivered: {verification.reason}"),
        tokenizer=tokenizer,
        next_steps=steps,
    )


__all__ = ["anchored_span", "edited_place", "gone_pack", "refused_pack", "verify_pointer"]
