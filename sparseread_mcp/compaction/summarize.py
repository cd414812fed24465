"""Extractive span summaries: what was called, and the identifiers, paths, numbers and errors it saw.

Nothing is paraphrased or inferred: every kept string is copied from the span, so the summary never
claims what the source did not say. The originals stay in the audit log under the span id.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Protocol

from .router import _ERROR, salient
from .segments import Unit

_MAX_MARKS = 12
_MAX_ARGS = 160
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
            call = ", ".join(unit.tools)
            lines.append(f"- {call}({_short_args(unit.arguments)})")
            thought = _first_sentence(unit.reasoning)
            if thought:
                lines.append(f"  said: {thought}")
            errors = [ln.strip() for ln in unit.observation.split("\n") if _ERROR.search(ln)][:2]
            for error in errors:
                lines.append(f"  error: {error[:200]}")
            marks = sorted(salient(unit.observation) - set(errors), key=lambda m: (-len(m), m))[:_MAX_MARKS]
            if marks:
                lines.append("  saw: " + "; ".join(m[:80] for m in marks))
        return "\n".join(lines)


def _short_args(arguments: str) -> str:
    try:
        parsed = json.loads(arguments) if arguments.strip().startswith("{") else arguments
    except json.JSONDecodeError:
        parsed = arguments
    text = json.dumps(parsed, ensure_ascii=False) if isinstance(parsed, dict) else str(parsed)
    text = " ".join(text.split())
    return text if len(text) <= _MAX_ARGS else text[: _MAX_ARGS - 1] + "…"


def _first_sentence(text: str) -> str:
    text = " ".join(text.split())
    if not text:
        return ""
    first = _SENTENCE.split(text, maxsplit=1)[0]
    return first if len(first) <= 240 else first[:239] + "…"
