"""A session as named JSON fields, the one serialization every persistent store writes, and the
three-way merge of two writers' changes to them.

Fields: `fmt` (the format version below), `meta` (session intent, the fingerprint each path was read at,
episode order), `calls` (the trace of tool calls) and one `ep:<id>` per episode. A store drops a session
written in another format (it starts afresh, and the store logs why) rather than misread it: see
`foreign_format`. Shared stores write only the fields a call changed;
when another replica changed the same session meanwhile, `merge_fields` puts this call's changes onto
theirs: an episode both changed keeps every item either delivered (so refine never resends one) and
the exposure both added (so the ledger never forgets any), which keeps the gate's bounds across replicas.
"""

from __future__ import annotations

import json
from typing import Any, cast

from ..gate.ledger import Ledger
from ..models import Intent, Slot, SlotCoverage
from ..protocol.session import MAX_CALLS, MAX_EPISODES, CallRecord, DeliveredItem, Episode, Session
from .schema import CallRow, StoredCalls, StoredEpisode, StoredMeta

FORMAT = "fmt"
#: The layout of the fields written here. Bump it whenever a field's name, shape or meaning changes: a
#: server then drops the sessions an older (or newer) release wrote instead of misreading them.
FORMAT_VERSION = "1"
META = "meta"
CALLS = "calls"
EPISODE = "ep:"


def session_fields(session: Session) -> dict[str, str]:
    """The session's persistent state, one JSON string per field (stable, so equal state compares equal)."""
    meta = {
        "intent": session.intent.model_dump(mode="json") if session.intent else None,
        "seen": session.seen,
        "whole": session.whole,
        "order": list(session.episodes),
        "goals": [[path, intent.model_dump(mode="json", exclude_none=True)] for path, intent in session.goals.items()],
        "noted": session.noted,
    }
    calls = {"calls": [c.to_json() for c in session.calls], "dropped": session.calls_dropped}
    fields = {FORMAT: FORMAT_VERSION, META: _dumps(meta), CALLS: _dumps(calls)}
    fields.update({EPISODE + e.id: _dumps(episode_state(e)) for e in session.episodes.values()})
    return fields


def foreign_format(fields: dict[str, str]) -> str | None:
    """Why `fields` cannot be read here (a session written in another format version), else None.
    No fields at all is the empty session in every format."""
    if not fields or fields.get(FORMAT) == FORMAT_VERSION:
        return None
    written = str(fields[FORMAT])[:16] if FORMAT in fields else "none (before formats were versioned)"
    return f"it was written in session format {written} and this server reads format {FORMAT_VERSION}"


def unreadable(fields: dict[str, str]) -> str | None:
    """Why `fields` cannot be read here (another format version, or values this format never writes:
    a row cut or hand-edited), else None. A store starts such a session afresh, and its next commit
    replaces the stored fields."""
    if (foreign := foreign_format(fields)) is not None:
        return foreign
    try:
        apply_fields(Session(key="check"), fields)
    except ValueError as exc:
        return f"its stored fields are not what this server writes ({_first_line(exc)})"
    return None


def _first_line(exc: ValueError) -> str:
    lines = str(exc).splitlines()
    return " ".join(lines[:3])[:200]


def apply_fields(session: Session, fields: dict[str, str]) -> None:
    """Replace the session's persistent state (not its lock) with `fields`; absent fields mean empty.
    Fields in another format, or that are not what this format writes (a row cut or hand-edited), are
    refused with ValueError and the session is left as it was, never half-read: stores check
    `foreign_format` first and start the session afresh on ValueError."""
    if (foreign := foreign_format(fields)) is not None:
        raise ValueError(f"a stored session cannot be read: {foreign}")
    meta = StoredMeta.model_validate(_json(fields.get(META, '{"intent": null, "seen": {}, "order": []}')))
    calls = StoredCalls.model_validate(_json(fields.get(CALLS, '{"calls": [], "dropped": 0}')))
    order = [i for i in meta.order if EPISODE + i in fields]
    order += sorted(i for f in fields if f.startswith(EPISODE) and (i := f.removeprefix(EPISODE)) not in order)
    episodes = {i: episode_from_state(_stored_episode(fields[EPISODE + i])) for i in order[-MAX_EPISODES:]}
    intent = Intent.model_validate(meta.intent) if meta.intent else None
    session.intent = intent
    session.seen = dict(meta.seen)
    session.whole = dict(meta.whole)
    session.goals = {path: Intent.model_validate(goal) for path, goal in meta.goals}
    session.noted = dict(meta.noted)
    session.calls = [_call(row) for row in calls.calls]
    session.calls_dropped = calls.dropped
    session.episodes = episodes


def _stored_episode(text: str) -> dict[str, Any]:
    """An episode's field as the JSON `episode_state` writes, once its shape and invariants are checked."""
    state = _json(text)
    StoredEpisode.model_validate(state).check()
    return cast(dict[str, Any], state)


def _json(text: str) -> object:
    """A stored field's JSON value; ValueError when it is not JSON text."""
    if not isinstance(text, str | bytes):
        raise ValueError(f"a field is stored as {type(text).__name__}, not JSON text")
    try:
        return json.loads(text)
    except RecursionError as exc:  # nested past the interpreter's stack: nothing this server wrote
        raise ValueError("a field is nested too deeply to be a stored session") from exc


def _call(row: CallRow) -> CallRecord:
    tool, path, fingerprint, type_, action, decision, tokens, full, seconds, at = row
    return CallRecord(
        tool=tool,
        path=path,
        fingerprint=fingerprint,
        type=type_,
        action=action,
        decision=decision,
        tokens=tokens,
        full_view_tokens=full,
        seconds=seconds,
        at=at,
    )


def merge_fields(base: dict[str, str], mine: dict[str, str], theirs: dict[str, str]) -> dict[str, str]:
    """`theirs` with the changes `mine` made since `base` put on top (field by field, then inside a field).
    All three are in this format (a store checks `foreign_format` on what it reads)."""
    merged: dict[str, str] = {}
    for name in sorted(base.keys() | mine.keys() | theirs.keys()):
        was, now, other = base.get(name), mine.get(name), theirs.get(name)
        if now == was:
            value = other  # this writer left it alone: theirs stands
        elif other == was:
            value = now  # only this writer changed it (None: dropped it)
        elif now is None or other is None:
            value = now if other is None else other  # changed on one side, dropped on the other: keep it
        elif name == FORMAT:
            value = now  # both wrote this format (a first write onto a session another replica began)
        elif name == META:
            value = _dumps(_merge_meta(_loads(was), json.loads(now), json.loads(other)))
        elif name == CALLS:
            value = _dumps(_merge_calls(_loads(was), json.loads(now), json.loads(other)))
        else:
            value = _dumps(_merge_episode(_loads(was), json.loads(now), json.loads(other)))
        if value is not None:
            merged[name] = value
    return _bounded(merged)


def _merge_meta(was: dict[str, Any], now: dict[str, Any], other: dict[str, Any]) -> dict[str, Any]:
    seen_before = was.get("seen", {})
    seen = {**other["seen"], **{p: f for p, f in now["seen"].items() if seen_before.get(p) != f}}
    whole_before = was.get("whole", {})
    whole = {
        **other.get("whole", {}),
        **{p: f for p, f in now.get("whole", {}).items() if whole_before.get(p) != f},
    }
    order = [*other["order"], *(i for i in now["order"] if i not in other["order"])]
    # Goals: theirs, then the ones this writer set since `base` (latest last), at most MAX_EPISODES.
    goals_before = {path: goal for path, goal in was.get("goals", [])}
    mine = [[p, g] for p, g in now.get("goals", []) if goals_before.get(p) != g]
    changed = {p for p, _ in mine}
    goals = [*([p, g] for p, g in other.get("goals", []) if p not in changed), *mine][-MAX_EPISODES:]
    merged = {"intent": other["intent"] or now["intent"], "seen": seen, "whole": whole, "order": order}
    return {**merged, "goals": goals}


def _merge_calls(was: dict[str, Any], now: dict[str, Any], other: dict[str, Any]) -> dict[str, Any]:
    known = {_dumps(c) for c in [*was.get("calls", []), *other["calls"]]}
    calls = sorted([*other["calls"], *(c for c in now["calls"] if _dumps(c) not in known)], key=lambda c: c[9])
    overflow = max(0, len(calls) - MAX_CALLS)
    return {"calls": calls[overflow:], "dropped": other["dropped"] + overflow}


def _merge_episode(was: dict[str, Any], now: dict[str, Any], other: dict[str, Any]) -> dict[str, Any]:
    merged = dict(other)
    known = {(d[0], d[1], d[2]) for d in other["delivered"]}
    merged["delivered"] = [*other["delivered"], *(d for d in now["delivered"] if (d[0], d[1], d[2]) not in known)]
    # Exposure is additive: the full-view length stays, what each writer added since `base` is summed.
    full, sparse, shown = other["ledger"]
    before = was.get("ledger", [full, 0, 0])
    merged["ledger"] = [full, sparse + now["ledger"][1] - before[1], shown + now["ledger"][2] - before[2]]
    for flag in ("closed", "stale", "full_view_done"):
        merged[flag] = other[flag] or now[flag]
    for key in ("ranking", "full_view_next", "full_view_origin", "slots"):
        if now[key] != was.get(key):
            merged[key] = now[key]
    merged["coverage"] = {**other["coverage"], **now["coverage"]}
    return merged


def _bounded(fields: dict[str, str]) -> dict[str, str]:
    if META not in fields:
        return fields
    meta = json.loads(fields[META])
    dropped = meta["order"][:-MAX_EPISODES]
    if not dropped:
        return fields
    meta["order"] = meta["order"][-MAX_EPISODES:]
    kept = {k: v for k, v in fields.items() if not (k.startswith(EPISODE) and k.removeprefix(EPISODE) in dropped)}
    kept[META] = _dumps(meta)
    return kept


def episode_state(e: Episode) -> dict[str, object]:
    """An episode as JSON values (directory episodes' queued candidates are not kept)."""
    return {
        "id": e.id,
        "path": e.path,
        "type": e.type,
        "fingerprint": e.fingerprint,
        "rev": e.rev,
        "objective": e.objective,
        "full_view_tokens": e.full_view_tokens,
        "ledger": [e.ledger.full_view_chars, e.ledger.sparse_chars, e.ledger.full_chars],
        "slots": [s.model_dump(mode="json") for s in e.slots],
        "delivered": [[d.pointer, d.start, d.end, list(d.slots), d.text, d.full_view] for d in e.delivered],
        "ranking": [[i, s] for i, s in e.ranking],
        "full_view_next": e.full_view_next,
        "full_view_origin": e.full_view_origin,
        "full_view_done": e.full_view_done,
        "closed": e.closed,
        "stale": e.stale,
        "coverage": {k: v.model_dump(mode="json") for k, v in e.coverage.items()},
    }


def episode_from_state(s: dict[str, Any]) -> Episode:  # s: the JSON written by episode_state
    full, sparse, shown = s["ledger"]
    return Episode(
        id=s["id"],
        path=s["path"],
        type=s["type"],
        fingerprint=s["fingerprint"],
        rev=s["rev"],
        objective=s["objective"],
        full_view_tokens=s["full_view_tokens"],
        ledger=Ledger(full_view_chars=full, sparse_chars=sparse, full_chars=shown),
        slots=tuple(Slot.model_validate(x) for x in s["slots"]),
        delivered=[
            DeliveredItem(pointer=p, start=a, end=b, slots=tuple(sl), support={}, text=t, full_view=f)
            for p, a, b, sl, t, f in s["delivered"]
        ],
        ranking=[(int(i), float(v)) for i, v in s["ranking"]],
        full_view_next=s["full_view_next"],
        full_view_origin=int(s.get("full_view_origin", 0)),
        full_view_done=s["full_view_done"],
        closed=s["closed"],
        stale=s["stale"],
        coverage={k: SlotCoverage.model_validate(v) for k, v in s["coverage"].items()},
    )


def _dumps(value: object) -> str:
    # ASCII: a path with undecodable bytes (a lone surrogate) would fail a store's UTF-8 write.
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def _loads(value: str | None) -> dict[str, Any]:
    return json.loads(value) if value is not None else {}
