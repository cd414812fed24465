"""A read as asked (`ReadRequest`) and as resolved for one file (`FileRead`): resolved once, then frozen."""

from __future__ import annotations

from dataclasses import dataclass

from ..files.anchors import Target
from ..gate.delivery import Delivery, Extras
from ..gate.route import Route
from ..models import Intent
from ..protocol.intents import continued_intent, is_empty, located_part, says_what_to_locate
from ..protocol.session import Session
from ..readers.base import ParsedArtifact
from ..vocabulary import Action, View


@dataclass(frozen=True, slots=True, kw_only=True)
class ReadRequest:
    target: str
    action: Action = "focus"
    intent: Intent | None = None
    view: View | None = None
    budget_tokens: int | None = None
    since: str | None = None
    cursor: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class FileRead:
    """One read of one parsed file, every default filled in: what each action's handler works from."""

    session: Session
    parsed: ParsedArtifact
    target: Target
    action: Action
    view: View
    #: The intent it reads with: the call's own, or the latest on this path continued (`intent_on`).
    intent: Intent | None
    since: str | None
    #: Whether the whole file fits natively (or the intent needs it whole).
    route: Route
    delivery: Delivery
    #: The frame so far: scope, invalidated pointers, notes about the intent.
    extras: Extras

    @property
    def located(self) -> bool:
        """Whether the intent says what to locate (a goal, slots or needles)."""
        return says_what_to_locate(self.intent)


def adopt_intent(session: Session, stated: Intent | None) -> None:
    """The first intent a session is given is shown on its card (`session_intent`); it is not applied
    to other files: see `intent_on`."""
    if session.intent is None and not is_empty(stated):
        session.intent = stated


def intent_on(
    session: Session, path: str, stated: Intent | None, *, continues: bool = True
) -> tuple[Intent | None, str | None]:
    """The intent a call on `path` reads with (its own, or the latest on this path continued) and, when
    it continued one, the note that says which; remembered as the latest on `path`. A call that must
    state its own (a claim to verify) continues nothing."""
    adopt_intent(session, stated)
    earlier = session.goals.get(path) if continues else None
    intent, note = continued_intent(stated, earlier)
    session.remember_goal(path, located_part(intent))
    # The note is said on the first call that continues a goal; the calls after it that continue the same
    # one say nothing (every refine of a long filing would pay for the quoted goal again).
    if note is None:
        session.noted.pop(path, None)
    elif session.noted.get(path) == note:
        note = None
    else:
        session.noted[path] = note
    return intent, note


def opening_extras(scope: str, invalidated: list[str], continued: str | None) -> Extras:
    """The frame every answer about a file starts from: what changed since it was read, and which earlier
    goal this call continued."""
    notes = ["the file changed since it was last read: earlier evidence listed in `invalidated`"] if invalidated else []
    if continued:
        notes.append(continued)
    return Extras(scope=scope, invalidated=tuple(invalidated), message="; ".join(notes) or None)
