"""Compaction: route, form spans, gate them, summarize, and commit only valid, shorter histories."""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..tokens import TokenCounter
from .router import DefaultRouter, Router
from .segments import Unit, segment
from .summarize import ExtractiveSummarizer, Summarizer
from .transcript import Transcript, summary_message, validate

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True, kw_only=True)
class CompactionSettings:
    keep_last: int = 3  # the latest K interactions are protected
    tau: float = 0.6  # every interaction of a span needs p >= tau
    kappa: int = 3  # a span needs more than kappa interactions
    min_tokens: int = 1_000  # and at least this many source tokens
    protected_tools: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True, kw_only=True)
class SpanPlan:
    span: str
    messages: tuple[int, int]  # first and last message position in the input
    interactions: int
    min_score: float
    source_tokens: int
    summary_tokens: int
    committed: bool
    reason: str


@dataclass(slots=True, kw_only=True)
class Compaction:
    transcript: Transcript
    tokens_before: int
    tokens_after: int
    scores: list[float | None]
    plan: list[SpanPlan] = field(default_factory=list)


def compact(
    transcript: Transcript,
    *,
    settings: CompactionSettings | None = None,
    router: Router | None = None,
    summarizer: Summarizer | None = None,
    counter: TokenCounter | None = None,
    audit: Path | None = None,
) -> Compaction:
    """Replace spans of interactions the current state no longer needs; never return an invalid history."""
    settings = settings or CompactionSettings()
    router = router or DefaultRouter()
    summarizer = summarizer or ExtractiveSummarizer()
    counter = counter or TokenCounter()
    before = _tokens(transcript, counter)
    problem = validate(transcript)
    if problem is not None:
        from ..errors import IntentError

        raise IntentError(f"the transcript is not protocol-valid ({problem}); fix it before compacting")
    units = segment(transcript)
    scores = _scores(transcript, units, settings, router)
    current = transcript
    plans: list[SpanPlan] = []
    replaced = 0  # messages removed so far: positions in `current` shift by this much
    for number, span in enumerate(_spans(units, scores, settings.tau)):
        span_id = f"S{number + 1}"
        first, last = span[0].messages[0], span[-1].messages[-1]
        source = [transcript.messages[i] for i in range(first, last + 1)]
        source_tokens = counter.count(json.dumps([m.raw for m in source], ensure_ascii=False))
        low = min(scores[u.index] or 0.0 for u in span)

        template = SpanPlan(
            span=span_id,
            messages=(first, last),
            interactions=len(span),
            min_score=low,
            source_tokens=source_tokens,
            summary_tokens=0,
            committed=False,
            reason="",
        )
        if len(span) <= settings.kappa or source_tokens < settings.min_tokens:
            gates = f"below the gates (needs > {settings.kappa} interactions and >= {settings.min_tokens} tokens)"
            plans.append(replace(template, reason=gates))
            continue
        try:
            text = summarizer.summarize(span_id, span)
        except Exception as exc:  # a failing summarizer must never cost the history
            logger.warning("summarizer failed on %s: %s", span_id, exc)
            plans.append(replace(template, reason=f"the summarizer failed ({type(exc).__name__}); the span stays raw"))
            continue
        summary = summary_message(transcript.format, text)
        start = first - replaced
        trial = Transcript(
            format=current.format,
            messages=[*current.messages[:start], summary, *current.messages[start + len(source) :]],
        )
        summary_tokens = counter.count(json.dumps(summary.raw, ensure_ascii=False))
        problem = validate(trial)
        committed = problem is None and summary_tokens < source_tokens
        reason = "replaced" if committed else (problem or "the summary is not shorter")
        plans.append(replace(template, committed=committed, reason=reason, summary_tokens=summary_tokens))
        if committed:
            current = trial
            replaced += len(source) - 1
            if audit is not None:
                _audit(audit, span_id, source)
    after = _tokens(current, counter)
    if after > before:  # cannot happen with the checks above; kept as the last line of defence
        return Compaction(transcript=transcript, tokens_before=before, tokens_after=before, scores=scores)
    return Compaction(transcript=current, tokens_before=before, tokens_after=after, scores=scores, plan=plans)


def _scores(
    transcript: Transcript, units: Sequence[Unit], settings: CompactionSettings, router: Router
) -> list[float | None]:
    """p per unit, None for what is protected: system and user messages, summaries, the latest K."""
    interactions = [u for u in units if u.kind == "interaction"]
    latest = {u.index for u in interactions[-settings.keep_last :]} if settings.keep_last else set()
    users = [u for u in units if u.kind == "protected" and transcript.messages[u.messages[0]].role == "user"]
    latest_turns = " ".join(u.reasoning for u in users[-2:])
    scores: list[float | None] = []
    for unit in units:
        protected = (
            unit.kind != "interaction" or unit.index in latest or any(t in settings.protected_tools for t in unit.tools)
        )
        scores.append(None if protected else router.score(unit, units, latest_turns=latest_turns))
    return scores


def _spans(units: Sequence[Unit], scores: Sequence[float | None], tau: float) -> list[list[Unit]]:
    """Maximal runs of adjacent selected interactions; a kept, protected or summary unit breaks a run."""
    spans: list[list[Unit]] = []
    run: list[Unit] = []
    for unit, score in zip(units, scores, strict=True):
        if score is not None and score >= tau:
            run.append(unit)
            continue
        if run:
            spans.append(run)
        run = []
    if run:
        spans.append(run)
    return spans


def _tokens(transcript: Transcript, counter: TokenCounter) -> int:
    return counter.count(json.dumps(transcript.dump(), ensure_ascii=False))


def _audit(path: Path, span_id: str, source: Sequence[object]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as handle:
        raws = [getattr(m, "raw", m) for m in source]
        handle.write(json.dumps({"span": span_id, "messages": raws}, ensure_ascii=False) + "\n")
