"""Transcripts in OpenAI chat or Anthropic messages JSON, as one neutral form, and back.

The neutral form keeps each original message untouched (`raw`) next to what compaction needs: the role,
the text, the tool calls it makes and the tool results it carries. Serializing writes the raw messages
back, so anything compaction does not replace is returned byte-for-byte as it came.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Literal

from ..errors import IntentError

Format = Literal["openai", "anthropic"]


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


def load(messages: list[dict[str, object]], fmt: Format | None = None) -> Transcript:
    """Parse messages; refuse shapes that are not a chat transcript, saying which message and why."""
    if not isinstance(messages, list) or not all(isinstance(m, dict) for m in messages):
        raise IntentError("messages must be a JSON array of message objects")
    fmt = fmt or detect_format(messages)
    parse = _openai_message if fmt == "openai" else _anthropic_message
    parsed = []
    for number, raw in enumerate(messages):
        if "role" not in raw:
            raise IntentError(f"message {number} has no 'role': every message needs one")
        parsed.append(parse(raw))
    return Transcript(format=fmt, messages=parsed)


def load_file(text: str, fmt: Format | None = None) -> Transcript:
    """A JSON array, or JSON Lines with one message per line."""
    stripped = text.strip()
    try:
        data = json.loads(stripped) if stripped.startswith("[") else [json.loads(x) for x in stripped.splitlines() if x]
    except json.JSONDecodeError as exc:
        raise IntentError(f"the transcript is not JSON or JSON Lines ({exc})") from exc
    if isinstance(data, dict) and "messages" in data:
        data = data["messages"]
    if not isinstance(data, list):
        raise IntentError('the transcript must be a JSON array of messages, JSON Lines, or {"messages": [...]}')
    return load(data, fmt)


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
    role = str(raw.get("role"))
    calls = []
    for call in raw.get("tool_calls") or []:  # type: ignore[attr-defined]
        function = call.get("function", {}) if isinstance(call, dict) else {}
        calls.append(
            ToolCall(
                id=str(call.get("id")), name=str(function.get("name")), arguments=str(function.get("arguments", ""))
            )
        )
    results: tuple[tuple[str, str], ...] = ()
    if role == "tool":
        results = ((str(raw.get("tool_call_id")), _text_of(raw.get("content"))),)
    return Message(role=role, text=_text_of(raw.get("content")), raw=raw, calls=tuple(calls), results=results)


def _anthropic_message(raw: dict[str, object]) -> Message:
    role = str(raw.get("role"))
    content = raw.get("content")
    calls, results = [], []
    if isinstance(content, list):
        for block in content:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "tool_use":
                calls.append(
                    ToolCall(
                        id=str(block.get("id")),
                        name=str(block.get("name")),
                        arguments=json.dumps(block.get("input", {}), sort_keys=True),
                    )
                )
            elif block.get("type") == "tool_result":
                results.append((str(block.get("tool_use_id")), _text_of(block.get("content"))))
    return Message(role=role, text=_text_of(content), raw=raw, calls=tuple(calls), results=tuple(results))


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
                return f"message {number} answers call {call_id!r}, which is not open"
            open_calls.discard(call_id)
            answered.add(call_id)
        for call in message.calls:
            if call.id in open_calls or call.id in answered:
                return f"message {number} repeats call id {call.id!r}"
            open_calls.add(call.id)
    if open_calls:
        return f"calls without results: {', '.join(sorted(open_calls))}"
    return None
