"""Routers: how replaceable a past interaction is, given the current state. p in [0, 1].

The default router is transparent and state-conditioned. It favours precision: anything the rest of the
history still uses (an identifier, a path, a number, an error string) keeps its interaction, unless a
later interaction repeats the same read.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from .segments import Unit

_IDENTIFIER = re.compile(r"\b(?=[A-Za-z0-9_-]*\d)(?=[A-Za-z0-9_-]*[A-Za-z])[A-Za-z0-9_-]{5,}\b")
_PATH = re.compile(
    r"(?:\.{0,2}/)?(?:[\w.-]+/)+[\w.-]+\.\w{1,8}|\b[\w-]+\.(?:py|js|ts|go|rs|java|c|h|md|json|ya?ml|toml|txt|csv|log)\b"
)
_NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?![\w.])")
_ERROR = re.compile(r"(?i)\b(error|exception|traceback|failed|failure|not found|denied|invalid)\b")
_POINTER = re.compile(r"@(?:sha256:[0-9a-f]{12}|[0-9a-f]{7,40})#")
#: Numbers this short are everywhere (counts, indexes); they cannot tie a later action to an observation.
_MIN_NUMBER_DIGITS = 3


def salient(text: str) -> set[str]:
    """Identifiers, paths, long numbers and error lines: what later actions reuse."""
    found = set(_IDENTIFIER.findall(text)) | set(_PATH.findall(text))
    found |= {n for n in _NUMBER.findall(text) if len(n.replace(".", "")) >= _MIN_NUMBER_DIGITS}
    found |= {line.strip()[:120] for line in text.split("\n") if _ERROR.search(line) and len(line.strip()) > 12}
    return found


@dataclass(frozen=True, slots=True, kw_only=True)
class Features:
    referenced: float  # share of the observation's salient strings used later
    superseded: bool
    resolved: bool
    rederivable: bool
    is_error: bool
    size: float  # observation characters / 4,000, capped at 1
    age: float  # interactions since, / 5, capped at 1

    def vector(self) -> list[float]:
        return [
            self.referenced,
            float(self.superseded),
            float(self.resolved),
            float(self.rederivable),
            float(self.is_error),
            self.size,
            self.age,
        ]


FEATURE_NAMES = ("referenced", "superseded", "resolved", "rederivable", "is_error", "size", "age")


def features(unit: Unit, state: Sequence[Unit], *, latest_turns: str = "") -> Features:
    """Features of `unit` against the units after it in the effective history `state`."""
    later = [u for u in state if u.index > unit.index]
    later_actions = " ".join(u.arguments + " " + u.reasoning for u in later) + " " + latest_turns
    marks = salient(unit.observation)
    used = {m for m in marks if m in later_actions}
    same_call = [
        u for u in later if u.kind == "interaction" and u.tools == unit.tools and u.arguments == unit.arguments
    ]
    is_error = bool(_ERROR.search(unit.observation[:2000]))
    resolved = is_error and any(
        u.kind == "interaction" and u.tools == unit.tools and not _ERROR.search(u.observation[:2000]) for u in later
    )
    later_interactions = sum(1 for u in later if u.kind == "interaction")
    return Features(
        referenced=len(used) / len(marks) if marks else 0.0,
        superseded=bool(same_call),
        resolved=resolved,
        rederivable=any(t.startswith("sro_") for t in unit.tools) and bool(_POINTER.search(unit.observation)),
        is_error=is_error,
        size=min(1.0, len(unit.observation) / 4000),
        age=min(1.0, later_interactions / 5),
    )


class Router(Protocol):
    @property
    def name(self) -> str: ...

    def score(self, unit: Unit, state: Sequence[Unit], *, latest_turns: str = "") -> float: ...


_FULL_POINTER = re.compile(r"[\w./-]+@(?:sha256:[0-9a-f]{12}|[0-9a-f]{7,40})#[^\s\"',]+")


class DefaultRouter:
    """Transparent rules over the features. With `verify`, an observation counts as re-derivable only when
    the evidence pointers it carries still verify (the file did not change), checking at most five."""

    name = "default"

    def __init__(self, verify: Callable[[str], bool] | None = None) -> None:
        self._verify = verify

    def score(self, unit: Unit, state: Sequence[Unit], *, latest_turns: str = "") -> float:
        f = features(unit, state, latest_turns=latest_turns)
        if f.rederivable and self._verify is not None:
            pointers = _FULL_POINTER.findall(unit.observation)[:5]
            if not pointers or not all(self._verify(p) for p in pointers):
                f = dataclasses.replace(f, rederivable=False)
        if f.superseded:
            return 0.9  # the same call was made again later: its newer result stands in for this one
        if f.referenced > 0:
            return 0.1 if f.referenced >= 0.05 or not f.resolved else 0.5
        # Unused by anything later: replaceable once a few interactions have passed it by.
        p = 0.5 + 0.2 * f.resolved + 0.15 * f.rederivable + 0.05 * f.size + 0.15 * f.age
        return min(1.0, p)
