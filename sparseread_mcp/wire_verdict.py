"""What a verify answer says on the wire: the verdict, and only what it adds (see `sparseread_mcp.wire`).

A verdict about the one claim there is says more than the claim's coverage; about a file the agent holds
whole it is the citation alone; about passages the agent already holds it is the verdict and where in them
to look; a verdict that shows nothing and charged nothing is its status, its reason and what was searched.
"""

from __future__ import annotations

import re
from typing import Any

from .vocabulary import HELD_IN_SESSION

#: Ledger counts left out when nothing was charged: an absent count is 0.
ZERO_BY_DEFAULT = ("chars", "E", "full_chars")

#: An anchor's extent, columns included: `L12`, `L12-L18`, `L3:C5-C9`, `L3:C5-L4:C2`, `p3:L4-L9`.
_EXTENT = re.compile(r"(?:p\d+:)?L(\d+)(?::C(\d+))?(?:-(?:L(\d+))?(?::?C(\d+))?)?")


def _encloses(outer: str, inner: str) -> bool:
    """Whether pointer `outer` names every character `inner` names, in the same file and version."""
    if outer.rsplit("#", 1)[0] != inner.rsplit("#", 1)[0] or "#" not in outer or "#" not in inner:
        return False
    a, b = (_EXTENT.fullmatch(p.rsplit("#", 1)[1]) for p in (outer, inner))
    if a is None or b is None:
        return False

    def bounds(m: re.Match[str]) -> tuple[tuple[int, int], tuple[int, float]]:
        first, first_col, last, last_col = m.groups()
        start = (int(first), int(first_col or 1))
        end_line = int(last or first)
        end_col: float = int(last_col) if last_col else (int(first_col) if first_col and not last else float("inf"))
        return start, (end_line, end_col)

    (outer_start, outer_end), (inner_start, inner_end) = bounds(a), bounds(b)
    return outer_start <= inner_start and inner_end <= outer_end


def verdict_said_once(pack: dict[str, Any]) -> None:
    """A verdict about the one claim there is says more than its coverage, and names its own pointer; about
    a file held whole, that pointer is the citation."""
    verdict = pack.get("verification")
    if isinstance(verdict, dict) and pack.get("gate", {}).get("decision") == "native_fit" and not pack["items"]:
        _held_whole_verdict(pack, verdict)
        return
    if isinstance(verdict, dict) and pack.get("gate", {}).get("reason") == HELD_IN_SESSION and not pack["items"]:
        _held_passages_verdict(pack, verdict)
        return
    if isinstance(verdict, dict) and not pack["items"] and not _charged(pack):
        _verdict_with_nothing_shown(pack)
        return
    if not isinstance(verdict, dict) or len(pack.get("coverage", [])) != 1:
        return
    slot = pack.pop("coverage")[0]["slot"]
    if pack.get("unresolved") == [slot]:  # the claim's one slot: the verdict says how it stands
        del pack["unresolved"]
    rest = [p for p in pack.get("already_delivered", []) if p != verdict.get("pointer")]
    if rest:
        pack["already_delivered"] = rest
    else:
        pack.pop("already_delivered", None)


def _held_whole_verdict(pack: dict[str, Any], verdict: dict[str, Any]) -> None:
    """About a file the agent holds whole, the answer is the verdict: its status and its pointer (the
    citation). The agent judges with the whole file before it: no reason, gate, ledger or echo."""
    verdict.pop("reason", None)
    verdict.pop("diff", None)
    verdict_alone(pack)


def _held_passages_verdict(pack: dict[str, Any], verdict: dict[str, Any]) -> None:
    """About passages the agent already received in this session, the answer is the verdict and the
    passages' pointers (where in what it holds to look); a verdict other than `supported` keeps its
    reason and diff, which say what disagrees."""
    pointer = str(verdict.get("pointer", ""))
    inside = [p for p in pack.get("already_delivered", []) if p != pointer]
    if verdict.get("status") == "supported":
        verdict.pop("reason", None)
        # The verdict's pointer says where, in a passage the agent holds, the claim stands: naming that
        # passage again says nothing more.
        inside = [p for p in inside if not _encloses(p, pointer)]
    verdict_alone(pack)
    if inside:
        pack["already_delivered"] = inside


def _verdict_with_nothing_shown(pack: dict[str, Any]) -> None:
    """A verdict that shows no passage and charged nothing (`not_found`: no passage holds half of the claim)
    is its status and reason, and the scope that says what was searched: no episode (nothing was delivered in
    it), gate, ledger, echo or slots left open (the verdict says the claim was not found)."""
    verdict = pack["verification"]
    delivered = [p for p in pack.get("already_delivered", []) if p != verdict.get("pointer")]
    verdict_alone(pack, keep=("scope",))
    if delivered:
        pack["already_delivered"] = delivered


def _charged(pack: dict[str, Any]) -> bool:
    return any(pack.get("exposure", {}).get(key) for key in ZERO_BY_DEFAULT)


def verdict_alone(pack: dict[str, Any], *, keep: tuple[str, ...] = ()) -> None:
    """No frame beside the verdict (but the members named in `keep`): no echo, coverage, gate, hints or
    episode, and no ledger when nothing was charged."""
    charged = _charged(pack)
    for key in ("action", "coverage", "unresolved", "already_delivered", "scope", "gate", "next", "episode"):
        if key not in keep:
            pack.pop(key, None)
    if not charged:
        pack.pop("exposure", None)
