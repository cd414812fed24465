"""A read as asked (`ReadRequest`) and as resolved for one file (`FileRead`): resolved once, then frozen."""

from __future__ import annotations

from dataclasses import dataclass

from ..files.anchors import Target
from ..gate.delivery import Delivery, Extras
from ..gate.route import Route
from ..models import Intent
from ..protocol.intents import is_empty, not_inherited, says_what_to_locate
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
    #: The intent this call states, and the one it reads with (the session's filled in).
    stated: Intent | None
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
    """The first intent a session is given becomes its own: later calls that state none read with it."""
    if session.intent is None and not is_empty(stated):
        session.intent = stated


def opening_extras(scope: str, invalidated: list[str], stated: Intent | None, session: Session) -> Extras:
    """The frame every answer about a file starts from: what changed since it was read, and which parts
    of the session intent this call did not inherit."""
    message = (
        "the file changed since it was last read: earlier evidence listed in `invalidated`" if invalidated else None
    )
    if skipped := not_inherited(stated, session.intent):
        note = f"the session intent's {skipped} was not applied: it belongs to the call that states it"
        message = f"{message}; {note}" if message else note
    return Extras(scope=scope, invalidated=tuple(invalidated), message=message)
