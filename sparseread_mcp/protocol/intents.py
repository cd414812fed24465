"""Intents: merging the access intent over the session intent, objectives and queries."""

from __future__ import annotations

from typing import TypeGuard

from ..locate.base import Query, build_query
from ..locate.terms import terms
from ..models import Intent


def is_empty(intent: Intent | None) -> bool:
    return intent is None or not any(value not in (None, [], "") for value in intent.model_dump().values())


#: Fields a call never takes from the session intent: a query is written against one artifact's schema
#: (SQL for a table, a filter for JSON), so applied to another artifact it is wrong or fails.
NEVER_INHERITED = ("query",)


def effective_intent(call: Intent | None, session: Intent | None) -> Intent | None:
    """The call's fields win; the session intent only fills what the call leaves unsaid and applies."""
    if session is None:
        return call
    inherited = {k: v for k, v in session.model_dump().items() if k not in NEVER_INHERITED}
    if call is not None:
        inherited.update({k: v for k, v in call.model_dump().items() if v is not None})
    merged = Intent.model_validate(inherited)
    return None if call is None and is_empty(merged) else merged


def not_inherited(call: Intent | None, session: Intent | None) -> str | None:
    """The session-intent fields this call did not take (for the pack to say so), as `a`, `b`; else None."""
    if session is None:
        return None
    left = [f"`{name}`" for name in NEVER_INHERITED if getattr(session, name) and getattr(call, name, None) is None]
    return ", ".join(left) or None


def says_what_to_locate(intent: Intent | None) -> TypeGuard[Intent]:
    """Whether the intent names something to find: a goal, slots or needles."""
    return intent is not None and bool(intent.goal or intent.slots or intent.needles)


def objective_of(intent: Intent | None) -> str:
    """The objective an episode is keyed on: the goal, else the slot questions, else the needles."""
    if intent is None:
        return ""
    if intent.goal and intent.goal.strip():
        return " ".join(intent.goal.split())
    if intent.slots:
        return " | ".join(slot.question for slot in intent.slots)
    if intent.needles:
        return "find: " + ", ".join(intent.needles)
    return ""


def missing_for_location(intent: Intent | None) -> str | None:
    """None when the intent says enough to locate evidence, else what to add."""
    if intent is not None:
        if intent.goal and terms(intent.goal):
            return None
        if intent.slots or intent.needles:
            return None
    return (
        "the intent is underspecified: add `goal` (the question in words), `slots` "
        "([{id, question, aliases}]) or `needles` (exact strings); here is a bounded preview instead"
    )


def query_for(intent: Intent, *, slot_id: str | None = None) -> Query:
    """Goal, slot questions, aliases and needles, all in one query (or one slot's)."""
    texts: list[str] = []
    needles = list(intent.needles or [])
    for slot in intent.slots or []:
        if slot_id is None or slot.id == slot_id:
            texts.append(slot.question)
            texts.extend(slot.aliases)
    context: tuple[str, ...] = ()
    if slot_id is None and intent.goal:
        texts.append(intent.goal)
    elif slot_id is not None and intent.goal:
        # The goal gives context to a slot but must not drown its own words: each of its terms once (as
        # terms: tokenized again, a stemmed term would be stemmed twice, `exceed` to `exce`).
        context = tuple(dict.fromkeys(terms(intent.goal)))
    goal = (intent.goal or "") if slot_id is not None else ""
    return build_query(texts, needles, known_terms=context, context=goal)
