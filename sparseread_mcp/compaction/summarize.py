"""Extractive span summaries: what was called, and the identifiers, paths, numbers and errors it saw.

Nothing is paraphrased or inferred: every kept string is copied from the span, so the summary never
claims what the source did not say. The originals stay in the audit log under the span id.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Protocol

from ..deadline import checkpoint
from .marks import error_lines, salient
from .segments import Unit

_MAX_MARKS = 12
_MAX_ARGS = 160
_PARSE_ARGS = 4096
_MAX_SENTENCE = 240
#: Linear: a whitespace run is tried once, right after its sentence mark (a start inside it fails the lookbehind).
_SENTENCE = re.compile(r"(?<=[.!?])\s+")


class Summarizer(Protocol):
    def summarize(self, span_id: str, units: Sequence[Unit]) -> str: ...


class ExtractiveSummarizer:
    def summarize(self, span_id: str, units: Sequence[Unit]) -> str:
        lines = [
            f"[compacted span {span_id}: {len(units)} earlier tool interactions; originals in the audit log "
            f"under {span_id}. Quoted strings below are copied from them.]"
        ]
        for unit in units:
            checkpoint()
            call = ", ".join(unit.tools)
            lines.append(f"- {call}({_short_args(unit.arguments)})")
            thought = _first_sentence(unit.reasoning)
            if thought:
                lines.append(f"  said: {thought}")
            errors = [line.strip() for line in error_lines(unit.observation)][:2]
            for error in errors:
                lines.append(f"  error: {error[:200]}")
            marks = sorted(salient(unit.observation) - set(errors), key=lambda m: (-len(m), m))[:_MAX_MARKS]
            if marks:
                lines.append("  saw: " + "; ".join(m[:80] for m in marks))
        return "\n".join(lines)


def _short_args(arguments: str) -> str:
    # Only short arguments are parsed (to print them compactly): a long or deeply nested one would cost
    # more to read than the 160 characters shown of it.
    parsed: object = arguments
    if arguments.strip().startswith("{") and len(arguments) <= _PARSE_ARGS:
        try:
            parsed = json.loads(arguments)
        except (json.JSONDecodeError, RecursionError):
            parsed = arguments
    text = json.dumps(parsed, ensure_ascii=False) if isinstance(parsed, dict) else str(parsed)[: 4 * _MAX_ARGS]
    text = " ".join(text.split())
    return text if len(text) <= _MAX_ARGS else text[: _MAX_ARGS - 1] + "…"


def _first_sentence(text: str) -> str:
    # Only the head can hold a first sentence short enough to show; the rest is never looked at.
    text = " ".join(text[: 8 * _MAX_SENTENCE].split())
    if not text:
        return ""
    first = _SENTENCE.split(text, maxsplit=1)[0]
    return first if len(first) <= _MAX_SENTENCE else first[: _MAX_SENTENCE - 1] + "…"
