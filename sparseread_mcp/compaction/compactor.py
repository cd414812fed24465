"""Compaction: route, form spans, gate them, summarize, and commit only valid, shorter histories."""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..deadline import TimedOut, checkpoint
from ..errors import IntentError
from ..tokens import TokenCounter
from .router import DefaultRouter, History, Router
from .segments import Unit, segment
from .summarize import ExtractiveSummarizer, Summarizer
from .transcript import Message, Transcript, kept_message, short, summary_message, validate

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True, kw_only=True)
class CompactionSettings:
    # The latest interaction is protected; older ones keep their raw text by the router's rules (a string
    # later reused that the summary would drop, a line the agent copied), not by their age. Measured on the
    # development runs (bench/compaction_bench.py): keeping 3 and gating spans at > 3 interactions and
    # 1,000 tokens held no more of what later actions reuse or copy, and re-sent about a third more tokens.
    keep_last: int = 1  # the latest K interactions are protected
    tau: float = 0.6  # every interaction of a span needs p >= tau
    kappa: int = 0  # a span needs more than kappa interactions
    min_tokens: int = 0  # and at least this many source tokens (a summary is committed only when shorter)
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
    """Replace spans of interactions the current state no longer needs; never return an invalid history.

    Every loop checks the call's deadline: a history too long for the time limit ends in `TimedOut`, and
    the caller keeps the history it sent (nothing is written to the audit log before the end).
    """
    settings = settings or CompactionSettings()
    router = router or DefaultRouter()
    counter = counter or TokenCounter()
    problem = validate(transcript)
    if problem is not None:
        raise IntentError(f"the transcript is not protocol-valid: {problem}")
    checkpoint()
    before = _tokens(transcript, counter)
    units = segment(transcript)
    state = _state(transcript, units)
    summarizer = summarizer or ExtractiveSummarizer(elsewhere=state.elsewhere)
    scores = _scores(state, settings, router)
    plans: list[SpanPlan] = []
    replacements: dict[int, tuple[int, list[Message]]] = {}  # first message -> (last message, its stand-ins)
    for number, span in enumerate(_spans(units, scores, settings.tau)):
        checkpoint()
        plan, stand_ins = _try_span(f"S{number + 1}", span, transcript, scores, settings, summarizer, counter)
        plans.append(plan)
        if stand_ins is not None:
            replacements[plan.messages[0]] = (plan.messages[1], stand_ins)
    current = _apply(transcript, replacements)
    after = _tokens(current, counter)
    if after > before or validate(current) is not None:  # cannot happen (each span was checked); last defence
        return Compaction(transcript=transcript, tokens_before=before, tokens_after=before, scores=scores)
    if audit is not None:
        for plan in plans:
            if plan.committed:
                first, last = plan.messages
                _audit(audit, plan.span, transcript.messages[first : last + 1])
    return Compaction(transcript=current, tokens_before=before, tokens_after=after, scores=scores, plan=plans)


def _try_span(
    span_id: str,
    span: Sequence[Unit],
    transcript: Transcript,
    scores: Sequence[float | None],
    settings: CompactionSettings,
    summarizer: Summarizer,
    counter: TokenCounter,
) -> tuple[SpanPlan, list[Message] | None]:
    """The plan for one span and, when it is committed, the messages that stand in for it."""
    first, last = span[0].messages[0], span[-1].messages[-1]
    source = transcript.messages[first : last + 1]
    source_tokens = counter.count(json.dumps([m.raw for m in source], ensure_ascii=False))
    template = SpanPlan(
        span=span_id,
        messages=(first, last),
        interactions=len(span),
        min_score=min(scores[u.index] or 0.0 for u in span),
        source_tokens=source_tokens,
        summary_tokens=0,
        committed=False,
        reason="",
    )
    if len(span) <= settings.kappa or source_tokens < settings.min_tokens:
        gates = f"below the gates (needs > {settings.kappa} interactions and >= {settings.min_tokens} tokens)"
        return replace(template, reason=gates), None
    try:
        text = summarizer.summarize(span_id, span)
    except TimedOut:
        raise
    except Exception as exc:  # a failing summarizer must never cost the history
        logger.warning("summarizer failed on %s: %s", span_id, exc)
        return replace(template, reason=f"the summarizer failed ({type(exc).__name__}); the span stays raw"), None
    # The user's words that came with the span's last results stay, verbatim, after the summary.
    stand_ins = [summary_message(transcript.format, text)]
    if span[-1].keeps:
        stand_ins.append(kept_message(transcript.messages[last]))
    summary_tokens = counter.count(json.dumps([m.raw for m in stand_ins], ensure_ascii=False))
    problem = _closed(source)
    committed = problem is None and summary_tokens < source_tokens
    reason = "replaced" if committed else (problem or "the summary is not shorter")
    plan = replace(template, committed=committed, reason=reason, summary_tokens=summary_tokens)
    return plan, stand_ins if committed else None


def _closed(source: Sequence[Message]) -> str | None:
    """None when the span answers every call it opens and opens every call it answers: then removing it
    keeps the rest of a valid history valid, without checking the whole history again for each span."""
    opened = {call.id for message in source for call in message.calls}
    answered = {call_id for message in source for call_id, _ in message.results}
    if answered - opened:
        return f"the span holds results of calls outside it ({short(sorted(answered - opened)[0])})"
    if opened - answered:
        return f"the span opens calls answered outside it ({short(sorted(opened - answered)[0])})"
    return None


def _apply(transcript: Transcript, replacements: dict[int, tuple[int, list[Message]]]) -> Transcript:
    messages: list[Message] = []
    i = 0
    while i < len(transcript.messages):
        if i in replacements:
            last, stand_ins = replacements[i]
            messages.extend(stand_ins)
            i = last + 1
            continue
        messages.append(transcript.messages[i])
        i += 1
    return Transcript(format=transcript.format, messages=messages)


def _state(transcript: Transcript, units: Sequence[Unit]) -> History:
    """The history as the router sees it, with the user's latest two turns as the current state."""
    turns = [
        u.reasoning if u.kind == "protected" else u.user_text
        for u in units
        if (u.kind == "protected" and transcript.messages[u.messages[0]].role == "user") or u.user_text
    ]
    return History(units, latest_turns=" ".join(turns[-2:]))


def _scores(state: History, settings: CompactionSettings, router: Router) -> list[float | None]:
    """p per unit, None for what is protected: system and user messages, summaries, the latest K."""
    interactions = [u for u in state if u.kind == "interaction"]
    latest = {u.index for u in interactions[-settings.keep_last :]} if settings.keep_last else set()
    scores: list[float | None] = []
    for unit in state:
        checkpoint()
        protected = (
            unit.kind != "interaction" or unit.index in latest or any(t in settings.protected_tools for t in unit.tools)
        )
        scores.append(None if protected else router.score(unit, state, latest_turns=state.latest_turns))
    return scores


def _spans(units: Sequence[Unit], scores: Sequence[float | None], tau: float) -> list[list[Unit]]:
    """Maximal runs of adjacent selected interactions; a kept, protected or summary unit breaks a run, and
    so does the user's text next to results (it ends the run that holds it, and stays in place)."""
    spans: list[list[Unit]] = []
    run: list[Unit] = []
    for unit, score in zip(units, scores, strict=True):
        if score is not None and score >= tau:
            run.append(unit)
            if not unit.keeps:
                continue
        if run:
            spans.append(run)
        run = []
    if run:
        spans.append(run)
    return spans


def _tokens(transcript: Transcript, counter: TokenCounter) -> int:
    return counter.count(json.dumps(transcript.dump(), ensure_ascii=False))


def _audit(path: Path, span_id: str, source: Sequence[Message]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as handle:
        raws = [m.raw for m in source]
        handle.write(json.dumps({"span": span_id, "messages": raws}, ensure_ascii=False) + "\n")
