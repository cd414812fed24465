"""Extractive span summaries: what was called, and the identifiers, paths, numbers and errors it saw.

Nothing is paraphrased or inferred: every kept string is copied from the span, so the summary never
claims what the source did not say. The originals stay in the audit log under the span id.

What a unit's summary keeps is decided by `unit_lines` alone, so the router can ask, before anything is
replaced, whether every string the rest of the history reuses from an observation survives in its summary.
Evidence pointers (`path@rev#L12-L18`) are kept verbatim: the model can re-read what was replaced.
A summary does not repeat what the history holds verbatim in messages that are never compacted (`held_marks`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from ..deadline import checkpoint
from ..wire_source import source_pointers
from .marks import LINE_NUMBER, reported_errors, salient
from .segments import Unit

#: A unit's listed marks may take this share of its observation's characters (at least _MIN_MARK_CHARS):
#: the summary stays several times shorter than what it replaces, and keeps every mark of most observations.
_MARK_SHARE = 0.25
_MIN_MARK_CHARS = 400
_MAX_MARK_CHARS = 8_000
_MAX_MARK = 80
#: Marks looked at per unit: past this many, the rest would not fit the share anyway.
_MAX_CANDIDATES = 4096
_MAX_POINTERS = 5
#: An evidence pointer (whole: `wire_source.source_pointers`) up to the lines its anchor names (`#L12`,
#: `#L12-L18`): what a summary lists to re-read. Used with `match` on one pointer, never to search text.
_LINE_ANCHORED = re.compile(r"([^#\s]+#L\d+(?:-L\d+)?)")
_MAX_ARGS = 160
_PARSE_ARGS = 4096
_MAX_SENTENCE = 240
#: Linear: a whitespace run is tried once, right after its sentence mark (a start inside it fails the lookbehind).
_SENTENCE = re.compile(r"(?<=[.!?])\s+")


class Summarizer(Protocol):
    def summarize(self, span_id: str, units: Sequence[Unit]) -> str: ...


def held_marks(units: Sequence[Unit]) -> frozenset[str]:
    """The salient marks of what compaction never replaces: system, user and plain assistant messages, earlier
    summaries, and the user's words that came with results (they stay after a summary). A summary need not
    list these: the history keeps them wherever the summary goes. One pass over the history."""
    kept = [u.reasoning + "\n" + u.observation for u in units if u.kind != "interaction"]
    kept += [u.user_text for u in units if u.user_text]
    return frozenset(salient("\n".join(kept)))


@dataclass(frozen=True, slots=True, kw_only=True)
class Elsewhere:
    """What a history keeps outside any one interaction, which that interaction's summary need not list.

    `held`: the marks of messages never compacted (`held_marks`). `listed`: for each mark, the last interaction
    whose own summary lists it. That interaction holds the mark raw now, and lists it whenever it is replaced:
    a summary lists a prefix of its marks in a fixed order (`_kept_marks`), so with fewer marks competing
    (more of them held, or left to later interactions) a mark it listed stays listed, and the last interaction
    listing a mark never leaves it to another."""

    held: frozenset[str] = frozenset()
    listed: Mapping[str, int] = field(default_factory=dict)

    def holds(self, mark: str, after: int) -> bool:
        """Whether the history keeps `mark` outside the interactions up to unit `after`."""
        return mark in self.held or self.listed.get(mark, -1) > after

    @classmethod
    def of(cls, units: Sequence[Unit]) -> Elsewhere:
        """Built once per history: each interaction summarized alone, with only `held` left out."""
        held = held_marks(units)
        listed: dict[str, int] = {}
        for unit in units:
            if unit.kind != "interaction":
                continue
            marks = salient(unit.observation)
            text = "\n".join(unit_lines(unit, marks=marks, elsewhere=cls(held=held)))
            listed.update((mark, unit.index) for mark in marks if mark in text)
        return cls(held=held, listed=listed)


@dataclass(frozen=True, slots=True, kw_only=True)
class ExtractiveSummarizer:
    """`elsewhere`: what the history keeps outside the span (`Elsewhere.of`), which a summary does not repeat."""

    elsewhere: Elsewhere = field(default_factory=Elsewhere)

    def summarize(self, span_id: str, units: Sequence[Unit]) -> str:
        # Short: with one-interaction spans a history holds many of these, each re-sent at every turn.
        count = f"{len(units)} tool interaction{'s' if len(units) > 1 else ''}"
        lines = [f"[compacted span {span_id}, {count}; strings below copied from them; originals in the audit log]"]
        seen: set[str] = set()  # marks listed for an earlier unit of the span are not listed again
        # Every unit's call and first sentence are shown whatever else fits: a mark inside one is not listed.
        calls = "\n".join(f"{_short_args(u.arguments)}\n{_first_sentence(u.reasoning)}" for u in units)
        for unit in units:
            lines.extend(unit_lines(unit, seen, elsewhere=self.elsewhere, calls=calls))
        return "\n".join(lines)


def unit_lines(
    unit: Unit,
    seen: set[str] | None = None,
    *,
    marks: set[str] | None = None,
    elsewhere: Elsewhere | None = None,
    calls: str = "",
) -> list[str]:
    """One interaction, summarized: the call (its arguments re-derive a file view or a search), the first
    sentence of its reasoning, the first error lines it reports (each once per span; a numbered line of a file
    is its text, not a report), the evidence pointers it printed, and its salient marks (paths and identifiers
    first, then numbers, then error lines) up to a share of its size, leaving out those the history keeps
    elsewhere (`elsewhere`) or the span's summary shows already (`seen`, `calls`).
    `marks`: the observation's salient marks, when the caller has them already."""
    checkpoint()
    seen = set() if seen is None else seen
    call = ", ".join(unit.tools)
    lines = [f"- {call}({_short_args(unit.arguments)})"]
    thought = _first_sentence(unit.reasoning)
    if thought:
        lines.append(f"  said: {thought}")
    errors = [line.strip()[:200] for line in reported_errors(unit.observation)[:2]]
    for error in errors:
        if error not in seen:
            seen.add(error)
            lines.append(f"  error: {error}")
    # Pointers as sro_ tools print them, whole or (protocol 6) `#anchor` after the answer's `source`.
    lined = (_LINE_ANCHORED.match(p) for p in source_pointers(unit.observation))
    pointers = [m[1] for m in lined if m][:_MAX_POINTERS]
    if pointers:
        lines.append("  re-read: " + " ".join(pointers))
    shown = "\n".join([*lines, *errors, calls])  # an error line the span listed already still covers its marks
    budget = min(_MAX_MARK_CHARS, max(_MIN_MARK_CHARS, int(len(unit.observation) * _MARK_SHARE)))
    found = salient(unit.observation) if marks is None else marks
    # A numbered line of a file is not listed whole: its names and numbers are marks of their own.
    found = {
        mark
        for mark in found
        if (elsewhere is None or not elsewhere.holds(mark, unit.index))
        and (" " not in mark or LINE_NUMBER.match(mark) is None)
    }
    kept = _kept_marks(found, shown, budget, seen)
    words = [m for m in kept if " " not in m]
    if words:
        lines.append("  saw: " + " ".join(words))
    phrases = [m for m in kept if " " in m]
    if phrases:
        lines.append("  lines: " + " | ".join(phrases))
    return lines


def _kept_marks(marks: set[str], shown: str, budget: int, seen: set[str]) -> list[str]:
    """The marks not already in `shown`, listed for the span (`seen`, updated) nor inside a longer kept
    mark, within `budget` characters."""
    candidates = sorted(marks, key=_priority)[:_MAX_CANDIDATES]
    kept: list[str] = []
    joined = shown
    used = 0
    for number, mark in enumerate(candidates):
        if number % 256 == 0:
            checkpoint()
        mark = mark[:_MAX_MARK]
        if mark in seen:
            continue
        if mark in joined:
            continue
        if used + len(mark) + 2 > budget:
            break  # a prefix of the priority order: what fits stays listed when fewer marks compete
        kept.append(mark)
        seen.add(mark)
        joined += "\n" + mark
        used += len(mark) + 2
    return kept


def _priority(mark: str) -> tuple[int, int, str]:
    # Identifiers and paths are what later calls reuse most; numbers next; whole error lines last. Longer
    # first within a kind, so that a shorter mark inside a kept one costs nothing.
    kind = 2 if " " in mark else (1 if mark.replace(".", "").isdigit() else 0)
    return (kind, -len(mark), mark)


def _short_args(arguments: str) -> str:
    # Only short arguments are parsed (to print them compactly): a long or deeply nested one would cost
    # more to read than the 160 characters shown of it.
    parsed: object = arguments
    if arguments.strip().startswith("{") and len(arguments) <= _PARSE_ARGS:
        try:
            parsed = json.loads(arguments)
        except (json.JSONDecodeError, RecursionError):
            parsed = arguments
    try:
        text = _named(parsed) if isinstance(parsed, dict) else str(parsed)[: 4 * _MAX_ARGS]
    except RecursionError:  # nested deeper than printing goes: shown as the agent sent it
        text = arguments[: 4 * _MAX_ARGS]
    text = " ".join(text.split())
    return text if len(text) <= _MAX_ARGS else text[: _MAX_ARGS - 1] + "…"


def _named(arguments: dict[str, object]) -> str:
    """`path=src/a.py, view_range=[10, 40]`: each argument by name, strings bare. JSON's quotes would be
    escaped again inside the history (`{\\"path\\": ...}`), and every token here is re-sent at every turn."""
    return ", ".join(
        f"{k}={v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)}" for k, v in arguments.items()
    )


def _first_sentence(text: str) -> str:
    # Only the head can hold a first sentence short enough to show; the rest is never looked at.
    text = " ".join(text[: 8 * _MAX_SENTENCE].split())
    if not text:
        return ""
    first = _SENTENCE.split(text, maxsplit=1)[0]
    return first if len(first) <= _MAX_SENTENCE else first[: _MAX_SENTENCE - 1] + "…"
