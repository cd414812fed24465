"""The shape of each stored field, checked when a session is read back from a store.

A store file is outside the server's control: a row can be cut, hand-edited or written by another
program. Every field is validated here, strictly (no coercion: a count stored as a string is wrong,
not converted) and with bounds (a count is a non-negative integer a float can hold exactly), and the
episode's own invariants are checked (its ledger never charged more of the full view than its pages
cover). A field that fails raises `ValueError` (pydantic's `ValidationError` is one), so the store drops
the session and starts it afresh instead of letting a bad value reach the gate.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, JsonValue, Strict

#: The largest count a stored field may hold: every character offset, token count and row fits, and a
#: float (a score, a ratio) still holds it exactly.
MAX_STORED_COUNT = 2**53

# Strict scalars (validated from `json.loads`, not pydantic's JSON parser, which refuses the lone
# surrogates a path with undecodable bytes is stored with); arrays are read as the tuples they stand for.
Count = Annotated[int, Strict(), Field(ge=0, le=MAX_STORED_COUNT)]
Text = Annotated[str, Strict()]
Flag = Annotated[bool, Strict()]
Number = Annotated[float, Field(allow_inf_nan=False)]


class _Stored(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")


class StoredMeta(_Stored):
    intent: dict[str, JsonValue] | None
    seen: dict[str, Text]
    whole: dict[str, Text] = Field(default_factory=dict)
    order: list[Text]
    #: path, the latest located intent on it (latest last)
    goals: list[tuple[Text, dict[str, JsonValue]]] = Field(default_factory=list)
    #: path, the note naming the goal the latest call on it continued
    noted: dict[Text, Text] = Field(default_factory=dict)


#: tool, path, fingerprint, type, action, decision, tokens, full_view_tokens, seconds, at
CallRow = tuple[Text, Text | None, Text | None, Text | None, Text | None, Text | None, Count, Count, Number, Number]


class StoredCalls(_Stored):
    calls: list[CallRow]
    dropped: Count


#: pointer, start, end, slots, text, full_view
DeliveredRow = tuple[Text, Count, Count, list[Text], Text, Flag]


class StoredEpisode(_Stored):
    id: Text
    path: Text
    type: Text
    fingerprint: Text
    rev: Text
    objective: Text
    full_view_tokens: Count
    #: full view length L, sparse characters sent E, full-view characters sent
    ledger: tuple[Count, Count, Count]
    slots: list[dict[str, JsonValue]]
    delivered: list[DeliveredRow]
    ranking: list[tuple[Count, Number]]
    full_view_next: Count | None
    full_view_origin: Count = 0
    full_view_done: Flag
    closed: Flag
    stale: Flag
    coverage: dict[str, dict[str, JsonValue]]

    def check(self) -> StoredEpisode:
        """This episode, when its values agree with each other; else ValueError naming the first that does not."""
        full_view, _, full_sent = self.ledger
        if full_sent > full_view:
            raise ValueError(f"episode {self.id[:40]!r} charged {full_sent} full-view characters of {full_view}")
        spans = sorted((start, end) for _, start, end, _, _, page in self.delivered if page)
        if any(start > end or end > full_view for start, end in spans):
            raise ValueError(f"episode {self.id[:40]!r} holds a full-view page outside its text")
        if full_sent > _covered(spans):
            raise ValueError(f"episode {self.id[:40]!r} charged more of the full view than its pages cover")
        if any(start > end for _, start, end, _, _, _ in self.delivered):
            raise ValueError(f"episode {self.id[:40]!r} holds a passage that ends before it starts")
        for offset in (self.full_view_next, self.full_view_origin):
            if offset is not None and offset > full_view:
                raise ValueError(f"episode {self.id[:40]!r} pages from {offset}, past its text of {full_view}")
        return self


def _covered(spans: list[tuple[int, int]]) -> int:
    """Characters covered by sorted spans, each counted once."""
    total, reached = 0, 0
    for start, end in spans:
        start = max(start, reached)
        if end > start:
            total += end - start
            reached = end
    return total
