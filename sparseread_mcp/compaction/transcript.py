"""Transcripts in OpenAI chat or Anthropic messages JSON, as one neutral form, and back.

The neutral form keeps each original message untouched (`raw`) next to what compaction needs: the role,
the text, the tool calls it makes and the tool results it carries. Serializing writes the raw messages
back, so anything compaction does not replace is returned byte-for-byte as it came.

Transcripts come from clients and files nobody vetted: `load` checks every field compaction reads and
bounds the whole input (messages, characters, nesting) before anything walks it, and refuses what does
not fit with an `IntentError` that names the message, the field and what to send instead.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Literal

from ..deadline import checkpoint
from ..errors import IntentError

Format = Literal["openai", "anthropic"]

#: Bounds on one transcript: far above a long agent run (a 1M-token context is about 4M characters), low
#: enough that every pass over it stays within a call's time limit.
MAX_MESSAGES = 20_000
MAX_CHARS = 8_000_000  # all strings together, keys included
MAX_DEPTH = 64  # nesting of lists and objects inside one message
MAX_NODES = 2_000_000  # values of any kind inside all messages
_SHOWN = 60  # characters of an offending value quoted in an error
_MAX_INT_BITS = 1024


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCall:
    id: str
    name: str
    arguments: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Message:
    role: str  # system, user, assistant, tool
    text: str
    raw: dict[str, object]
    calls: tuple[ToolCall, ...] = ()
    results: tuple[tuple[str, str], ...] = ()  # (call id, result text)
    summary: bool = False  # a replacement written by compaction
    # What a message carrying tool results holds besides them (the user's text or images next to an
    # Anthropic tool_result): never compacted, it is kept verbatim and in order wherever the results go.
    kept: tuple[dict[str, object], ...] = ()
    kept_text: str = ""


@dataclass(slots=True, kw_only=True)
class Transcript:
    format: Format
    messages: list[Message] = field(default_factory=list)

    def dump(self) -> list[dict[str, object]]:
        return [m.raw for m in self.messages]


def detect_format(messages: list[dict[str, object]]) -> Format:
    for message in messages:
        if message.get("role") == "tool" or "tool_calls" in message:
            return "openai"
        content = message.get("content")
        if isinstance(content, list) and any(
            isinstance(b, dict) and b.get("type") in ("tool_use", "tool_result") for b in content
        ):
            return "anthropic"
    return "openai"


def load(messages: object, fmt: Format | None = None) -> Transcript:
    """Parse messages; refuse shapes that are not a chat transcript, saying which message and why."""
    if not isinstance(messages, list):
        raise IntentError(
            f"messages must be a JSON array of message objects, not {_kind(messages)}; send "
            '[{"role": "user", "content": "..."}, ...]'
        )
    if len(messages) > MAX_MESSAGES:
        raise IntentError(
            f"the transcript has {len(messages)} messages, over the limit of {MAX_MESSAGES}; compact a recent "
            "part of it (the latest messages) or split it"
        )
    _check_size(messages)
    for number, raw in enumerate(messages):
        if not isinstance(raw, dict):
            raise IntentError(
                f"message {number} is {_kind(raw)}, not an object; send each message as "
                '{"role": "...", "content": ...}'
            )
        if "role" not in raw:
            raise IntentError(f"message {number} has no 'role': send one with every message ('user', 'assistant', ...)")
        if not isinstance(raw["role"], str):
            raise IntentError(
                f"message {number} has a 'role' that is {_kind(raw['role'])}; send a string such as "
                "'user', 'assistant' or 'tool'"
            )
    fmt = fmt or detect_format(messages)
    check = _check_openai if fmt == "openai" else _check_anthropic
    parse = _openai_message if fmt == "openai" else _anthropic_message
    parsed = []
    for number, raw in enumerate(messages):
        check(number, raw)
        parsed.append(parse(raw))
    return Transcript(format=fmt, messages=parsed)


def load_file(text: str, fmt: Format | None = None) -> Transcript:
    """A JSON array, or JSON Lines with one message per line."""
    if len(text) > 2 * MAX_CHARS:
        raise IntentError(
            f"the transcript file has {len(text):,} characters, over the limit of {2 * MAX_CHARS:,}; compact a "
            "recent part of it"
        )
    stripped = text.strip()
    try:
        data = _parse(stripped)
    except json.JSONDecodeError as exc:
        raise IntentError(f"the transcript is not JSON or JSON Lines ({exc})") from exc
    except RecursionError as exc:
        raise IntentError(f"the transcript nests deeper than JSON can be read here (over {MAX_DEPTH} levels)") from exc
    if not isinstance(data, list):
        raise IntentError('the transcript must be a JSON array of messages, JSON Lines, or {"messages": [...]}')
    return load(data, fmt)


def _parse(text: str) -> object:
    """A JSON array, `{"messages": [...]}` (on one line or many), or JSON Lines of messages."""
    if text.startswith("["):
        return json.loads(text)
    if text.startswith("{"):
        try:
            whole = json.loads(text)
        except json.JSONDecodeError:  # JSON Lines: the first line parses, the second is "extra data"
            whole = None
        if isinstance(whole, dict) and "messages" in whole:
            return whole["messages"]
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def _check_size(messages: list[object]) -> None:
    """Walk every value once, without recursion, and stop at the first bound passed."""
    chars = nodes = 0
    for number, message in enumerate(messages):
        stack: list[tuple[object, int]] = [(message, 0)]
        while stack:
            value, depth = stack.pop()
            nodes += 1
            if nodes % 65_536 == 0:
                checkpoint()
            if depth > MAX_DEPTH:
                raise IntentError(
                    f"message {number} nests lists and objects over {MAX_DEPTH} levels deep; a chat message "
                    "needs a few: send its content as text or flat blocks"
                )
            if isinstance(value, (dict, list)) and nodes + len(stack) + len(value) > MAX_NODES:
                raise IntentError(
                    f"the transcript holds over {MAX_NODES:,} JSON values (message {number}); compact a recent "
                    "part of it"
                )
            if isinstance(value, str):
                chars += len(value)
            elif isinstance(value, dict):
                for key, item in value.items():
                    if not isinstance(key, str):
                        raise IntentError(f"message {number} has a key that is {_kind(key)}; send string keys")
                    chars += len(key)
                    stack.append((item, depth + 1))
            elif isinstance(value, list):
                stack.extend((item, depth + 1) for item in value)
            elif isinstance(value, int) and value.bit_length() > _MAX_INT_BITS:
                # json.dumps refuses to write integers past 4,300 digits; far smaller ones are not data
                raise IntentError(
                    f"message {number} holds a number over {_MAX_INT_BITS} bits long; send such a value as a string"
                )
            elif not (value is None or isinstance(value, (bool, int, float))):
                raise IntentError(f"message {number} holds {_kind(value)}; send JSON values only")
            if chars > MAX_CHARS:
                raise IntentError(
                    f"the transcript has over {MAX_CHARS:,} characters (at message {number}); compact a recent "
                    "part of it or split it"
                )


def _check_openai(number: int, raw: dict[str, object]) -> None:
    where = f"message {number} ({raw['role']!s:.20})"
    _check_content(where, raw.get("content"), "parts")
    calls = raw.get("tool_calls")
    if calls is not None:
        if not isinstance(calls, list):
            raise IntentError(f"{where}: 'tool_calls' is {_kind(calls)}; send a list of tool call objects")
        for k, call in enumerate(calls):
            at = f"{where}, tool call {k}"
            if not isinstance(call, dict):
                raise IntentError(f"{at} is {_kind(call)}; send an object with 'id' and 'function'")
            _need_string(at, call, "id", "the id its tool message answers with")
            function = call.get("function")
            if not isinstance(function, dict):
                raise IntentError(
                    f"{at}: 'function' is {_kind(function)}; send an object with 'name' and 'arguments' (a JSON string)"
                )
            _need_string(f"{at}, function", function, "name", "the tool's name")
            if not isinstance(function.get("arguments", ""), str):
                raise IntentError(
                    f"{at}: 'function.arguments' is {_kind(function.get('arguments'))}; send the arguments as a "
                    "JSON string"
                )
    if raw["role"] == "tool":
        _need_string(where, raw, "tool_call_id", "the id of the tool call it answers")


def _check_anthropic(number: int, raw: dict[str, object]) -> None:
    where = f"message {number} ({raw['role']!s:.20})"
    content = raw.get("content")
    _check_content(where, content, "content blocks")
    if not isinstance(content, list):
        return
    for k, block in enumerate(content):
        assert isinstance(block, dict)  # checked by _check_content
        at = f"{where}, content block {k} ({block['type']!s:.20})"
        if block["type"] == "tool_use":
            _need_string(at, block, "id", "the id its tool_result answers with")
            _need_string(at, block, "name", "the tool's name")
        elif block["type"] == "tool_result":
            _need_string(at, block, "tool_use_id", "the id of the tool_use it answers")
            _check_content(at, block.get("content"), "content blocks")


def _check_content(where: str, content: object, blocks: str) -> None:
    if content is None or isinstance(content, str):
        return
    if not isinstance(content, list):
        raise IntentError(f"{where}: 'content' is {_kind(content)}; send a string or a list of {blocks}")
    for k, block in enumerate(content):
        if not isinstance(block, dict):
            raise IntentError(
                f"{where}: item {k} of 'content' is {_kind(block)}; send each as an object with a 'type', such as "
                '{"type": "text", "text": "..."}'
            )
        if not isinstance(block.get("type"), str):
            raise IntentError(
                f"{where}: item {k} of 'content' has no 'type' string; send one with each, such as "
                '{"type": "text", "text": "..."}'
            )


def _need_string(where: str, owner: dict[str, object], key: str, meaning: str) -> None:
    if not isinstance(owner.get(key), str):
        got = "no" if key not in owner else _kind(owner[key]) + " as"
        raise IntentError(f"{where} has {got} '{key}'; send a string: {meaning}")


def _kind(value: object) -> str:
    """A short description of an offending value: its JSON type and a few characters of it."""
    names = {dict: "an object", list: "an array", str: "a string", bool: "a boolean", type(None): "null"}
    name = names.get(type(value)) or ("a number" if isinstance(value, (int, float)) else type(value).__name__)
    small = isinstance(value, (str, float, bool)) or (isinstance(value, int) and value.bit_length() <= 64)
    shown = repr(value) if small else ""
    return f"{name} {shown[:_SHOWN]}".rstrip()


def short(text: str) -> str:
    """An id or value quoted in an error, cut so that a hostile one cannot flood the message."""
    return repr(text) if len(text) <= _SHOWN else repr(text[:_SHOWN]) + "..."


def _text_of(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, dict):
                if block.get("type") == "text":
                    parts.append(str(block.get("text", "")))
                elif block.get("type") == "tool_result":
                    parts.append(_text_of(block.get("content")))
        return "\n".join(parts)
    return "" if content is None else json.dumps(content)


def _openai_message(raw: dict[str, object]) -> Message:
    """Parse one OpenAI message; `_check_openai` has vouched for every field read here."""
    role = str(raw.get("role"))
    calls = []
    for call in raw.get("tool_calls") or []:  # type: ignore[attr-defined]
        function = call["function"]
        calls.append(ToolCall(id=call["id"], name=function["name"], arguments=function.get("arguments", "")))
    results: tuple[tuple[str, str], ...] = ()
    if role == "tool":
        results = ((str(raw.get("tool_call_id")), _text_of(raw.get("content"))),)
    return Message(role=role, text=_text_of(raw.get("content")), raw=raw, calls=tuple(calls), results=results)


def _anthropic_message(raw: dict[str, object]) -> Message:
    """Parse one Anthropic message; `_check_anthropic` has vouched for every field read here."""
    role = str(raw.get("role"))
    content = raw.get("content")
    calls, results, others = [], [], []
    if isinstance(content, list):
        for block in content:
            if block["type"] == "tool_use":
                calls.append(
                    ToolCall(
                        id=block["id"],
                        name=block["name"],
                        arguments=json.dumps(block.get("input", {}), sort_keys=True, ensure_ascii=False),
                    )
                )
            elif block["type"] == "tool_result":
                results.append((block["tool_use_id"], _text_of(block.get("content"))))
            else:
                others.append(block)
    kept = tuple(others) if results else ()
    return Message(
        role=role,
        text=_text_of(content),
        raw=raw,
        calls=tuple(calls),
        results=tuple(results),
        kept=kept,
        kept_text=_text_of(list(kept)),
    )


def kept_message(message: Message) -> Message:
    """What stays of a message carrying tool results once they are compacted: its other blocks, verbatim
    and in order, in a message of the same role with the same other fields."""
    raw = {**message.raw, "content": list(message.kept)}
    return Message(role=message.role, text=message.kept_text, raw=raw)


def summary_message(fmt: Format, text: str) -> Message:
    """A replacement for a compacted span: plain assistant text, valid in both formats."""
    raw: dict[str, object] = (
        {"role": "assistant", "content": text}
        if fmt == "openai"
        else {"role": "assistant", "content": [{"type": "text", "text": text}]}
    )
    return Message(role="assistant", text=text, raw=raw, summary=True)


def validate(transcript: Transcript) -> str | None:
    """None when every call has exactly one result after it and every result answers an earlier call."""
    open_calls: set[str] = set()
    answered: set[str] = set()
    for number, message in enumerate(transcript.messages):
        for call_id, _ in message.results:
            if call_id not in open_calls:
                return (
                    f"message {number} answers call {short(call_id)}, which no earlier message opened (or "
                    "which was answered already); send each tool result after the call it answers, once"
                )
            open_calls.discard(call_id)
            answered.add(call_id)
        for call in message.calls:
            if call.id in open_calls or call.id in answered:
                return f"message {number} repeats call id {short(call.id)}; send every tool call with its own id"
            open_calls.add(call.id)
    if open_calls:
        shown = ", ".join(short(c) for c in sorted(open_calls)[:5])
        more = f" and {len(open_calls) - 5} more" if len(open_calls) > 5 else ""
        return f"calls without results: {shown}{more}; send a result for every call (or drop the call)"
    return None
