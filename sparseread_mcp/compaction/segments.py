"""Interactions: a call (with its reasoning) and all of its results, never separated."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Literal

from .transcript import Transcript

Kind = Literal["protected", "interaction", "summary"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Unit:
    index: int
    messages: tuple[int, ...]  # positions in the transcript, contiguous
    kind: Kind
    tools: tuple[str, ...] = ()
    arguments: str = ""
    observation: str = ""
    reasoning: str = ""
    written: str = ""  # what the agent wrote into its calls: the string values of their arguments, one per line
    user_text: str = ""  # text that came with its results (kept verbatim when the unit is compacted)
    keeps: bool = False  # its last message holds blocks besides tool results, which must survive


def segment(transcript: Transcript) -> list[Unit]:
    """System, user and plain assistant messages stand alone; an assistant call takes its results along.

    Parallel calls stay in one interaction: it ends when every call it opened has its result, or at a
    message that holds more than results (the user's words next to them), which must stay where it is.
    """
    units: list[Unit] = []
    messages = transcript.messages
    i = 0
    while i < len(messages):
        message = messages[i]
        if message.summary:
            units.append(Unit(index=len(units), messages=(i,), kind="summary", observation=message.text))
            i += 1
            continue
        if message.role == "assistant" and message.calls:
            open_ids = {c.id for c in message.calls}
            members = [i]
            observation = []
            keeps = False
            j = i + 1
            while j < len(messages) and open_ids and messages[j].results and not messages[j].calls and not keeps:
                for call_id, text in messages[j].results:
                    open_ids.discard(call_id)
                    observation.append(text)
                keeps = bool(messages[j].kept)
                members.append(j)
                j += 1
            units.append(
                Unit(
                    index=len(units),
                    messages=tuple(members),
                    kind="interaction",
                    tools=tuple(c.name for c in message.calls),
                    arguments="\n".join(c.arguments for c in message.calls),
                    written="\n".join(argument_strings(c.arguments) for c in message.calls),
                    observation="\n".join(observation),
                    reasoning=message.text,
                    user_text=messages[j - 1].kept_text if keeps else "",
                    keeps=keeps,
                )
            )
            i = j
            continue
        units.append(Unit(index=len(units), messages=(i,), kind="protected", reasoning=message.text))
        i += 1
    return units


def argument_strings(arguments: str) -> str:
    """The string and number values of a call's JSON arguments, one after another (the raw text when it is
    not JSON):
    what the agent wrote, unescaped, so that a line it copied from an observation reads as it did there.
    The transcript's size was bounded when it was loaded, so parsing and walking it here is bounded too."""
    try:
        parsed: object = json.loads(arguments)
    except (json.JSONDecodeError, RecursionError):
        return arguments
    strings: list[str] = []
    stack = [parsed]
    while stack:
        value = stack.pop()
        if isinstance(value, str):
            strings.append(value)
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            strings.append(str(value))  # an element index or an amount copied from an observation
        elif isinstance(value, dict):
            stack.extend(reversed(list(value.values())))
        elif isinstance(value, list):
            stack.extend(reversed(value))
    return "\n".join(strings)
