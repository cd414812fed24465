"""Routers: how replaceable a past interaction is, given the current state. p in [0, 1].

The default router is transparent and state-conditioned. It routes on whether the raw text is still
needed: an observation whose strings the rest of the history reuses (identifiers, paths, numbers, error
lines) all survive in its extractive summary is replaceable, because the summary carries them; one with a
reused string the summary would drop keeps its raw text, and so does one a later action copied a line from
(an edit's old text, a search string, a line quoted in a reply): the agent is acting on its raw text, and
no summary keeps whole lines; unless its call, kept in the summary, would give the text again (it names a
file that no later successful call may have changed), or later observations printed most of its lines again
(an edit's echo of the region it changed supersedes the view the edit was copied from). What a call can
re-derive (a file view, a search) stays in the summary as the call itself, with any evidence pointers it
printed. Strings the history keeps in messages never compacted (the task, earlier summaries) survive anyway.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol, overload

from ..deadline import checkpoint
from ..vocabulary import TOOL_PREFIX
from ..wire_source import source_pointers
from .marks import has_error, paths, salient
from .segments import Unit
from .summarize import Elsewhere, unit_lines

__all__ = ["FEATURE_NAMES", "DefaultRouter", "Features", "History", "Router", "features", "salient"]

#: Only the head of an observation decides whether it reports an error.
_ERROR_HEAD = 2000
#: A call's result says that it failed in its first line (an editor's refusal, a syntax check).
_FIRST_LINE = 300
#: Files are looked for in the head of a call's arguments (a path comes first; an edit's text follows).
_MAX_ARGUMENTS = 4096
_RUN = re.compile(r"[\w./-]+")
#: A copied line is at least this long: shorter lines (`return None`, `}`) recur by chance.
_MIN_COPIED = 16
#: A line number a view printed before the line (`  312\t`, `1474:`, `12|`), not part of the text copied.
_LINE_NUMBER = re.compile(r"\d+[\t:|]")


class History(Sequence[Unit]):
    """The units of a history, with what the router asks about "everything after unit k" built once.

    Rebuilding the later text for every unit made scoring quadratic in the history's length; here the
    later actions of every unit are one suffix of a single string, and a mark is looked up once.
    """

    def __init__(self, units: Sequence[Unit], *, latest_turns: str = "") -> None:
        self.units = tuple(units)
        self.latest_turns = latest_turns
        pieces: list[str] = []
        starts: list[int] = []  # where each unit's piece begins in the joined text
        own: list[int | None] = []  # where the user text that came with a unit's results begins
        offset = 0
        for unit in self.units:
            piece = unit.arguments + " " + unit.reasoning
            own.append(offset + len(piece) + 1 if unit.user_text else None)
            if unit.user_text:
                piece += " " + unit.user_text
            pieces.append(piece)
            starts.append(offset)
            offset += len(piece) + 1
        joined = " ".join(pieces)
        # The later actions of unit k are exactly the suffix from the piece of unit k + 1: the same string
        # the router used to build for every unit ("later pieces" + " " + the latest user turns).
        self._text = joined + " " + latest_turns
        nexts = [*starts[1:], len(joined)]
        self._from = [mine if mine is not None else after for mine, after in zip(own, nexts, strict=True)]
        self._position = {unit.index: i for i, unit in enumerate(self.units)}
        #: Marks the history keeps outside each unit (messages never compacted, later units' summaries).
        self.elsewhere = Elsewhere.of(self.units)
        self._copied = _copied_from(self.units, _rereadable(self.units))
        self._last_seen: dict[str, int] = {}
        self._last_call: dict[tuple[tuple[str, ...], str], int] = {}
        self._last_clean: dict[tuple[str, ...], int] = {}
        self._interactions_after = [0] * (len(self.units) + 1)
        for i in range(len(self.units) - 1, -1, -1):
            unit = self.units[i]
            interaction = unit.kind == "interaction"
            self._interactions_after[i] = self._interactions_after[i + 1] + interaction
            if interaction:
                self._last_call.setdefault((unit.tools, unit.arguments), i)
                if not has_error(unit.observation[:_ERROR_HEAD]):
                    self._last_clean.setdefault(unit.tools, i)

    def __len__(self) -> int:
        return len(self.units)

    @overload
    def __getitem__(self, index: int) -> Unit: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[Unit]: ...
    def __getitem__(self, index: int | slice) -> Unit | Sequence[Unit]:
        return self.units[index]

    def used_later(self, unit: Unit, mark: str) -> bool:
        """Whether a later action (or the user text that came with this unit's results) contains `mark`."""
        last = self._last_seen.get(mark)
        if last is None:
            last = self._last_seen[mark] = self._text.rfind(mark)
        return last >= self._from[self._position[unit.index]]

    def called_again(self, unit: Unit) -> bool:
        return self._last_call.get((unit.tools, unit.arguments), -1) > self._position[unit.index]

    def succeeded_later(self, unit: Unit) -> bool:
        return self._last_clean.get(unit.tools, -1) > self._position[unit.index]

    def copied(self, unit: Unit) -> bool:
        """Whether a later action copied a line from this observation (the newest that held it then), and
        its call cannot simply give it again."""
        return self._position[unit.index] in self._copied

    def interactions_after(self, unit: Unit) -> int:
        return self._interactions_after[self._position[unit.index] + 1]


def _copied_from(units: Sequence[Unit], rereadable: set[int]) -> set[int]:
    """Positions of the observations whose raw text later actions copied lines from: for each line an action
    writes (in its words or its call arguments) that an earlier observation printed, the newest such
    observation, unless the call of one that printed it would give it again (`rereadable`). A line the agent
    (or the user) wrote before any observation printed it is their own text, not copied data: a failed edit
    that echoes the agent's new text back does not make that echo needed.

    An observation most of whose lines later observations printed again is superseded, and no longer counts:
    a newer view of the same text (a re-read, or an edit's echo of the region it changed) is what the agent
    copies from next, and of the lines not printed again, those a change replaced are gone from the file.
    Two passes, each line hashed once per pass: linear in the history."""
    holders: dict[str, tuple[int, bool]] = {}  # line -> (the newest observation holding it, any re-readable)
    written: set[str] = set()
    copied: set[int] = set()
    shown: list[list[str]] = []  # per position, the lines its observation printed
    for position, unit in enumerate(units):
        lines = _lines(unit.reasoning + "\n" + unit.written)
        for line in lines:
            holder = holders.get(line)
            if holder is not None and not holder[1]:
                copied.add(holder[0])
        written.update(lines)
        shown.append(_lines(unit.observation))
        for line in shown[-1]:
            if line not in written:
                before = holders.get(line)
                holders[line] = (position, position in rereadable or (before is not None and before[1]))
    newest = {line: position for position, lines in enumerate(shown) for line in lines}
    return {p for p in copied if not _superseded(shown[p], p, newest)}


def _superseded(lines: Sequence[str], position: int, newest: dict[str, int]) -> bool:
    """Whether later observations printed at least half of these distinct lines again."""
    distinct = set(lines)
    return bool(distinct) and 2 * sum(newest[line] > position for line in distinct) >= len(distinct)


def _rereadable(units: Sequence[Unit]) -> set[int]:
    """Positions of the interactions whose call would give the same observation again: the call names a file,
    and no later call that may have changed it succeeded. A later call may have changed it when it names that
    file, or names no file at all (an editor that edits the file it has open), and its result does not say in
    its first line that it failed. One backward pass."""
    rereadable: set[int] = set()
    named_later: set[str] = set()  # files named by later calls that succeeded
    nameless_later = False  # a later call that names no file succeeded
    for position in range(len(units) - 1, -1, -1):
        if position % 256 == 0:
            checkpoint()
        unit = units[position]
        if unit.kind != "interaction":
            continue
        files = _files(unit.arguments)
        if files and not nameless_later and not files & named_later:
            rereadable.add(position)
        if not has_error(unit.observation[:_FIRST_LINE].split("\n", 1)[0]):
            named_later |= files
            nameless_later = nameless_later or not files
    return rereadable


def _files(arguments: str) -> set[str]:
    """The base names of the files a call's arguments name."""
    return {found.rsplit("/", 1)[-1] for run in _RUN.findall(arguments[:_MAX_ARGUMENTS]) for found in paths(run)}


def _lines(text: str) -> list[str]:
    """Lines long enough to be copied, stripped of indentation and of a line number a view put before them."""
    out = []
    for number, line in enumerate(text.split("\n")):
        if number % 4096 == 0:
            checkpoint()
        line = line.strip()
        if (match := _LINE_NUMBER.match(line)) is not None:
            line = line[match.end() :].strip()
        if len(line) >= _MIN_COPIED:
            out.append(line)
    return out


@dataclass(frozen=True, slots=True, kw_only=True)
class Features:
    referenced: float  # share of the observation's salient strings used later
    survives: float  # share of those used strings its summary or the never-compacted messages keep (1 if none)
    asked: bool  # the user's words that came with its results name one of its strings
    copied: bool  # a later action copied a line of it (the newest holder then), its call cannot give it again,
    # and later observations did not print most of its lines again
    superseded: bool
    resolved: bool
    rederivable: bool
    is_error: bool
    size: float  # observation characters / 4,000, capped at 1
    age: float  # interactions since, / 5, capped at 1

    def vector(self) -> list[float]:
        return [
            self.referenced,
            self.survives,
            float(self.asked),
            float(self.copied),
            float(self.superseded),
            float(self.resolved),
            float(self.rederivable),
            float(self.is_error),
            self.size,
            self.age,
        ]


FEATURE_NAMES = (
    "referenced",
    "survives",
    "asked",
    "copied",
    "superseded",
    "resolved",
    "rederivable",
    "is_error",
    "size",
    "age",
)


def features(unit: Unit, state: Sequence[Unit], *, latest_turns: str = "") -> Features:
    """Features of `unit` against the units after it in the effective history `state` (a `History` built
    once for many units; any other sequence is indexed on each call)."""
    history = state if isinstance(state, History) and state.latest_turns == latest_turns else None
    history = history or History(state, latest_turns=latest_turns)
    checkpoint()
    marks = salient(unit.observation)
    used: list[str] = []
    for number, mark in enumerate(marks):
        if number % 256 == 0:
            checkpoint()
        if history.used_later(unit, mark):
            used.append(mark)
    survives = 1.0
    if used:
        summary = "\n".join(unit_lines(unit, marks=marks, elsewhere=history.elsewhere))
        survives = sum(mark in summary or history.elsewhere.holds(mark, unit.index) for mark in used) / len(used)
    asked = bool(unit.user_text and marks & salient(unit.user_text))
    is_error = has_error(unit.observation[:_ERROR_HEAD])
    return Features(
        referenced=len(used) / len(marks) if marks else 0.0,
        survives=survives,
        asked=asked,
        copied=history.copied(unit),
        superseded=history.called_again(unit),
        resolved=is_error and history.succeeded_later(unit),
        rederivable=any(t.startswith(TOOL_PREFIX) for t in unit.tools) and bool(source_pointers(unit.observation)),
        is_error=is_error,
        size=min(1.0, len(unit.observation) / 4000),
        age=min(1.0, history.interactions_after(unit) / 5),
    )


class Router(Protocol):
    @property
    def name(self) -> str: ...

    def score(self, unit: Unit, state: Sequence[Unit], *, latest_turns: str = "") -> float: ...


class DefaultRouter:
    """Transparent rules over the features. With `verify`, an observation counts as re-derivable only when
    the evidence pointers it carries still verify (the file did not change), checking at most five."""

    name = "default"

    def __init__(self, verify: Callable[[str], bool] | None = None) -> None:
        self._verify = verify

    def score(self, unit: Unit, state: Sequence[Unit], *, latest_turns: str = "") -> float:
        f = features(unit, state, latest_turns=latest_turns)
        if f.rederivable and self._verify is not None:
            pointers = source_pointers(unit.observation)[:5]
            if not pointers or not all(self._verify(p) for p in pointers):
                f = dataclasses.replace(f, rederivable=False)
        if f.survives < 1.0:
            return 0.1  # something later reuses a string its summary would drop: the raw text is needed
        if f.asked:
            return 0.1  # the user's words next to its results are about it: the answer needs the raw text
        if f.copied:
            return 0.1  # the agent copies lines from it (edits from a view, quotes it): it acts on the raw text
        # Everything reused survives in the summary: replaceable, the more so when a newer result or a
        # verified pointer stands in for it, when it is large and when it is older.
        p = 0.65 + 0.1 * f.superseded + 0.1 * f.resolved + 0.1 * f.rederivable + 0.05 * f.size + 0.05 * f.age
        return min(1.0, p)
