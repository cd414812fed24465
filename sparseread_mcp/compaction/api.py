"""The surfaces of compaction: `compact_history` (messages in, messages out) for agent loops, and
`compact_messages` (messages in, `CompactResult` with the plan out) for the MCP tool and the CLI."""

from __future__ import annotations

import json
from collections.abc import Mapping, MutableMapping, Sequence
from dataclasses import replace
from pathlib import Path

from ..models import CompactResult, CompactSpan
from ..tokens import TokenCounter
from .compactor import CompactionSettings, compact
from .elide import DEFAULT_CAUTION, DEFAULT_KEEP_LAST, Elided, ElisionSettings, elide
from .router import Router
from .transcript import Format, Transcript, load


def compact_history(
    messages: Sequence[Mapping[str, object]],
    *,
    caution: float | None = DEFAULT_CAUTION,
    keep_last: int = DEFAULT_KEEP_LAST,
    fmt: Format | None = None,
    archive: MutableMapping[str, str] | None = None,
) -> list[dict[str, object]]:
    """The history to send the model, with old tool results shortened to the lines that still matter.

    `messages`: OpenAI chat messages (`role` system/user/assistant/tool, `tool_calls`, `tool_call_id`) or
    Anthropic messages (`tool_use` and `tool_result` blocks); the shape is detected unless `fmt` names it.
    Returns a new list in the same shape. Only tool results change: system, user and assistant messages
    (the agent's calls and arguments included) are returned as given, every call keeps its result, and a
    shortened result keeps its lines verbatim and in order, with a mark where lines were left out.

    `caution` is the knob: results within `caution` times the agent's reach so far (how far back, in
    results, it has gone for a string it used) keep every line with an identifier, path, id, number or error
    line that the history holds nowhere else; older ones only the lines with a path, an id or an error.
    Lower saves more; None keeps every such line whatever its age. `keep_last` results stay untouched.
    `archive`, when given, receives the full text of each shortened result under its tool call id, which
    the shortened result names. Calling it again on its own output is safe (shortened results are read back).

    Raises `IntentError` (naming the message and field) when `messages` is not a valid transcript.
    """
    transcript = load([dict(m) for m in messages], fmt)
    out, _ = elide(transcript, ElisionSettings(caution=caution, keep_last=keep_last), archive=archive)
    return out.dump()


def compact_messages(
    messages: list[dict[str, object]],
    *,
    fmt: Format | None = None,
    settings: ElisionSettings | CompactionSettings | None = None,
    counter: TokenCounter | None = None,
    audit: Path | None = None,
    router: Router | None = None,
) -> CompactResult:
    """Compact and say what was done. `ElisionSettings` (the default) shortens old tool results in place;
    `CompactionSettings` or a `router` run the span compactor instead, which replaces whole interactions
    (calls included) by extractive summaries and is kept for the routers trained on it."""
    transcript = load(messages, fmt)
    counter = counter or TokenCounter()
    if isinstance(settings, CompactionSettings) or router is not None:
        span_settings = settings if isinstance(settings, CompactionSettings) else None
        return _spans(transcript, span_settings, counter, audit, router)
    archive: dict[str, str] = {}
    out, plan = elide(transcript, settings, archive=archive)
    if audit is not None and archive:
        audit.parent.mkdir(parents=True, exist_ok=True)
        with audit.open("a", encoding="utf-8") as handle:
            for call_id, text in archive.items():
                handle.write(json.dumps({"tool_call_id": call_id, "content": text}, ensure_ascii=False) + "\n")
    before, after = _tokens(transcript, counter), _tokens(out, counter)
    if after > before:  # never longer: marks cost a few tokens, so a near-even trade is not made
        out, after, plan = transcript, before, [_unchanged(entry) for entry in plan]
    return CompactResult(
        format=out.format,
        messages=out.dump(),
        plan=[_span(number, entry, counter, transcript) for number, entry in enumerate(plan, start=1)],
        tokens_before=before,
        tokens_after=after,
        tokenizer=counter.name,
    )


def _span(number: int, entry: Elided, counter: TokenCounter, transcript: Transcript) -> CompactSpan:
    source = transcript.messages[entry.message]
    text = next((t for call_id, t in source.results if call_id == entry.call_id), source.text)
    source_tokens = counter.count(text)
    return CompactSpan(
        span=f"R{number}",
        messages=(entry.message, entry.message),
        interactions=1,
        min_score=0.0,
        source_tokens=source_tokens,
        summary_tokens=round(source_tokens * entry.chars_after / max(1, entry.chars_before)),
        committed=entry.committed,
        reason=f"{entry.reason}: {entry.kept_lines} of {entry.lines} lines kept ({entry.tool or 'tool'})",
    )


def _unchanged(entry: Elided) -> Elided:
    return replace(
        entry,
        chars_after=entry.chars_before,
        kept_lines=entry.lines,
        reason="left as it is: the shortened history would not be shorter in tokens",
    )


def _tokens(transcript: Transcript, counter: TokenCounter) -> int:
    return counter.count(json.dumps(transcript.dump(), ensure_ascii=False))


def _spans(
    transcript: Transcript,
    settings: CompactionSettings | None,
    counter: TokenCounter,
    audit: Path | None,
    router: Router | None,
) -> CompactResult:
    result = compact(transcript, settings=settings, counter=counter, audit=audit, router=router)
    return CompactResult(
        format=result.transcript.format,
        messages=result.transcript.dump(),
        plan=[
            CompactSpan(
                span=p.span,
                messages=p.messages,
                interactions=p.interactions,
                min_score=round(p.min_score, 3),
                source_tokens=p.source_tokens,
                summary_tokens=p.summary_tokens,
                committed=p.committed,
                reason=p.reason,
            )
            for p in result.plan
        ],
        tokens_before=result.tokens_before,
        tokens_after=result.tokens_after,
        tokenizer=counter.name,
    )
