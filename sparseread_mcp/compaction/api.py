"""The surface of compaction for the MCP tool and the CLI: messages in, CompactResult out."""

from __future__ import annotations

from pathlib import Path

from ..models import CompactResult, CompactSpan
from ..tokens import TokenCounter
from .compactor import CompactionSettings, compact
from .router import Router
from .transcript import Format, load


def compact_messages(
    messages: list[dict[str, object]],
    *,
    fmt: Format | None = None,
    settings: CompactionSettings | None = None,
    counter: TokenCounter | None = None,
    audit: Path | None = None,
    router: Router | None = None,
) -> CompactResult:
    transcript = load(messages, fmt)
    counter = counter or TokenCounter()
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
