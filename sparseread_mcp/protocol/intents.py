"""Intents: what a call continues of the latest intent on its file, objectives and queries."""

from __future__ import annotations

from typing import TypeGuard

from ..locate.base import Query, build_query
from ..locate.terms import terms
from ..models import Intent


def is_empty(intent: Intent | None) -> bool:
    return intent is None or not any(value not in (None, [], "") for value in intent.model_dump().values())


#: Fields a call takes from the latest located intent on its file when it leaves them unsaid: what to find
#: and the answer's shape. Never a `query` (an exact operation is one call's) nor `need_full`.
CONTINUED = ("goal", "slots", "needles", "want", "coverage")
#: How much of a continued goal the answer quotes to say which one it used.
QUOTED_GOAL_CHARS = 80


def continued_intent(call: Intent | None, earlier: Intent | None) -> tuple[Intent | None, str | None]:
    """The intent a call reads with, and the note that says which goal it continued (None when it
    continued none): its own, or, when it states no goal (and no query), the latest located intent on the
    same file or folder (`earlier`) with the call's own fields over it. A call never takes another file's
    goal: the caller passes only this path's."""
    if earlier is None or _states_its_own(call):
        return call, None
    fields = {k: v for k, v in earlier.model_dump().items() if k in CONTINUED}
    if call is not None:
        fields.update({k: v for k, v in call.model_dump().items() if v is not None})
    if not says_what_to_locate(earlier):
        return Intent.model_validate(fields), None
    objective = objective_of(earlier)
    quoted = objective if len(objective) <= QUOTED_GOAL_CHARS else objective[: QUOTED_GOAL_CHARS - 3] + "..."
    note = f'continuing your latest goal on this file: "{quoted}" (state a goal to change it)'
    return Intent.model_validate(fields), note


def _states_its_own(call: Intent | None) -> bool:
    """A goal or an exact query: the call's own objective, nothing continued (slots without a goal keep
    the latest goal as their context, and its episode)."""
    return call is not None and bool(call.goal or call.query)


def located_part(intent: Intent | None) -> Intent | None:
    """What a later call on the same path may continue: the intent's located fields, when it has any."""
    if not says_what_to_locate(intent):
        return None
    return Intent.model_validate({k: v for k, v in intent.model_dump().items() if k in CONTINUED})


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
