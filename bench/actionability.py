"""Actionability: can the agent still act on what it saw? Measured beside retention in the compaction bench.

Retention asks whether short strings (identifiers, paths, numbers) survive. An agent also copies longer text
verbatim from what it saw: an edit's old text from a file view, a search string, a line quoted in a reply.
Here a *quote* is a piece of an action (a line of a call argument or of the assistant's text, or a string in
quotes inside one) of at least `MIN_QUOTE` characters that occurs verbatim in an earlier observation, and that
the agent saw before it wrote it: text found in a system or user message (never compacted) or first written
in the agent's own earlier calls or words (an observation echoing it back, such as a failed edit, does not
make it observed data) is not a quote. At step t a quote is *actionable*
when the effective history still holds it verbatim (raw, or inside a summary), or when it can be re-read:
one of the observations it came from is a file view whose path the effective history still names, and no
call between that view and step t may have changed the file.

"May have changed" is decided conservatively, from the calls alone (this is the bench, not product code,
so it knows the common agents' tool shapes): an editing call (`str_replace`, `create`, `insert`, `edit`,
`undo_edit`, `write`...) whose result does not report an error in its first line, and that names the file
or names no file at all (SWE-agent edits the open file); and any other call that is not a view and whose
arguments name the file's base name (a shell command could write it). A view is an editor `view` command,
SWE-agent's `open`, a shell `cat FILE`, or an `sro_read` target.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass

from sparseread_mcp.compaction.marks import has_error
from sparseread_mcp.compaction.transcript import Message, ToolCall, Transcript

MIN_QUOTE = 16
_RESULT_HEAD = 300  # an edit's refusal is said in the first line of its result
_QUOTED = re.compile(r"\"([^\"\n]{16,})\"|'([^'\n]{16,})'|`([^`\n]{16,})`")
_CAT = re.compile(r"^\s*(?:cd \S+ && )?cat (?:-n )?([^\s|;&<>]+)\s*$")
_EDITS = frozenset({"str_replace", "create", "insert", "edit", "undo_edit", "write", "append", "write_file"})


@dataclass(frozen=True, slots=True)
class Quote:
    text: str
    sources: tuple[int, ...]  # positions of the observations (tool results) it occurs in


def leaves(arguments: str) -> list[str]:
    """The string values of a call's JSON arguments (the raw string when it is not JSON)."""
    try:
        parsed: object = json.loads(arguments)
    except (json.JSONDecodeError, RecursionError):
        return [arguments]
    out: list[str] = []
    stack = [parsed]
    while stack:
        value = stack.pop()
        if isinstance(value, str):
            out.append(value)
        elif isinstance(value, dict):
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
    return out


def _arguments(arguments: str) -> dict[str, object]:
    try:
        parsed = json.loads(arguments)
    except (json.JSONDecodeError, RecursionError):
        return {}
    return parsed if isinstance(parsed, dict) else {}


def viewed_path(call: ToolCall) -> str | None:
    """The file a call shows, when it is a plain view that re-reading gives again."""
    args = _arguments(call.arguments)
    command = args.get("command")
    if command == "view" and isinstance(args.get("path"), str):
        return str(args["path"])
    if call.name == "open":
        if isinstance(args.get("path"), str):
            return str(args["path"])
        if isinstance(command, str) and command.startswith("open "):
            return command.split()[1] if len(command.split()) > 1 else None
    if call.name.startswith("sro_read") and isinstance(args.get("target"), str):
        return str(args["target"]).split("#")[0].split("@")[0]
    if isinstance(command, str) and (match := _CAT.match(command)):
        return match.group(1)
    return None


def changes(call: ToolCall, path: str, result: str = "") -> bool:
    """Whether the call may have changed `path` (conservatively); `result` is what it answered."""
    if viewed_path(call) is not None:
        return False
    args = _arguments(call.arguments)
    command = args.get("command")
    word = command.split()[0] if isinstance(command, str) and command.split() else ""
    base = path.rstrip("/").rsplit("/", 1)[-1]
    if call.name in _EDITS or command in _EDITS or word in _EDITS:
        if has_error(result[:_RESULT_HEAD].lstrip().split("\n", 1)[0]):
            return False  # the edit was refused (no match, a syntax check): the file is as it was
        named = args.get("path") or args.get("filename") or args.get("file_name")
        return not isinstance(named, str) or named.rsplit("/", 1)[-1] == base
    return base in call.arguments


def _pieces(text: str) -> Iterator[str]:
    for line in text.splitlines():
        stripped = line.strip()
        if len(stripped) >= MIN_QUOTE:
            yield stripped
        for match in _QUOTED.finditer(line):
            inner = next(g for g in match.groups() if g is not None).strip()
            if len(inner) >= MIN_QUOTE:
                yield inner


def quotes(transcript: Transcript, step: int) -> list[Quote]:
    """What the action at message `step` quotes verbatim from earlier observations."""
    messages = transcript.messages
    action = messages[step]
    observations = [(i, text) for i, m in enumerate(messages[:step]) for _, text in m.results]
    texts = [action.text, *(leaf for c in action.calls for leaf in leaves(c.arguments))]
    found: dict[str, Quote] = {}
    for text in texts:
        for piece in _pieces(text):
            if piece in found:
                continue
            sources = tuple(i for i, observation in observations if piece in observation)
            if sources and not any(piece in _own(m) for m in messages[: sources[0]] if not m.results):
                found[piece] = Quote(piece, sources)
    return list(found.values())


def _own(message: Message) -> str:
    """What a message that carries no tool result says: system or user text, or the agent's words and calls."""
    return "\n".join([message.text, *(leaf for c in message.calls for leaf in leaves(c.arguments))])


class Actionability:
    """Per transcript: each step's quotes, and which of their source observations are file views."""

    def __init__(self, transcript: Transcript) -> None:
        self.transcript = transcript
        calls: dict[str, tuple[int, ToolCall]] = {}
        self.result_of: dict[str, str] = {}  # call id -> its result
        self.view_of: dict[int, str] = {}  # observation position -> the file it shows
        self.call_at: dict[int, int] = {}  # observation position -> position of its call
        for i, m in enumerate(transcript.messages):
            for call in m.calls:
                calls[call.id] = (i, call)
            for call_id, result in m.results:
                self.result_of[call_id] = result
                if call_id in calls:
                    position, call = calls[call_id]
                    self.call_at[i] = position
                    path = viewed_path(call)
                    if path:
                        self.view_of[i] = path
        self.steps = {t: quotes(transcript, t) for t, m in enumerate(transcript.messages) if m.role == "assistant"}

    def unchanged(self, source: int, step: int) -> bool:
        path = self.view_of[source]
        start = self.call_at[source] + 1
        between = self.transcript.messages[start:step]
        return not any(changes(c, path, self.result_of.get(c.id, "")) for m in between for c in m.calls)

    def score(self, step: int, effective: list[Message]) -> tuple[float, float] | None:
        """(share of quotes held verbatim, share held verbatim or re-readable), or None without quotes."""
        found = self.steps.get(step) or []
        if not found:
            return None
        text = history_text(effective)
        verbatim = actionable = 0
        for quote in found:
            if quote.text in text:
                verbatim += 1
                actionable += 1
                continue
            if any(s in self.view_of and self.view_of[s] in text and self.unchanged(s, step) for s in quote.sources):
                actionable += 1
        return verbatim / len(found), actionable / len(found)


def history_text(messages: list[Message]) -> str:
    """What the model reads of a history: message texts and call arguments (their string values unescaped)."""
    parts: list[str] = []
    for m in messages:
        parts.append(m.text)
        for call in m.calls:
            parts.extend(leaves(call.arguments))
    return "\n".join(parts)
