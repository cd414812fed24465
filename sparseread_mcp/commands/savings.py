"""What reading through sparseread cost and saved, per session: the data behind `trace` and the card.

Each preview, read and card call is recorded on the session (`CallRecord`). The counterfactual is an
agent that reads every artifact it touched in full, once per version: one full view L per (path,
fingerprint), however many calls or episodes touched it, so nothing is counted twice. Exposure is every
response token our tools returned, JSON frames and hints included, so the saving is never flattered.
A directory has no single full view to compare with: its searches count as exposure with a
counterfactual of 0. Card calls have no artifact: they are overhead and count against the saving.
"""

from __future__ import annotations

import statistics
import time
from collections import defaultdict

from ..models import ArtifactTrace, CallTrace, Card, EvidencePack, Preview, Trace
from ..protocol.session import CallRecord, Session

#: Calls listed in a trace's `recent` (the totals always cover every kept call).
RECENT_CALLS = 12
_BAR_CELLS = " ▏▎▍▌▋▊▉█"


def preview_call(preview: Preview, seconds: float) -> CallRecord:
    artifact = preview.artifact
    return CallRecord(
        tool="preview",
        path=artifact.path,
        fingerprint=artifact.fingerprint,
        type=artifact.type,
        action="scout",
        decision=preview.route,
        tokens=preview.tokens,
        full_view_tokens=0 if artifact.type == "directory" else preview.full_view_tokens,
        seconds=seconds,
        at=time.time(),
    )


def read_call(pack: EvidencePack, action: str, seconds: float) -> CallRecord:
    artifact = pack.episode.artifact
    return CallRecord(
        tool="read",
        path=artifact.path,
        fingerprint=artifact.fingerprint,
        type=artifact.type,
        action=action,
        decision=pack.gate.decision,
        tokens=pack.tokens,
        full_view_tokens=0 if artifact.type == "directory" else pack.exposure.full_view_tokens,
        seconds=seconds,
        at=time.time(),
    )


def card_call(card: Card, seconds: float) -> CallRecord:
    return CallRecord(
        tool="card",
        path=None,
        fingerprint=None,
        type=None,
        action=None,
        decision=None,
        tokens=card.tokens,
        full_view_tokens=0,
        seconds=seconds,
        at=time.time(),
    )


def build_trace(session: Session, *, recent: int = RECENT_CALLS) -> Trace:
    """Exposure per artifact against one full read of each version, with the latest calls."""
    by_path: dict[str, list[CallRecord]] = defaultdict(list)
    overhead = 0
    for call in session.calls:
        if call.path is None:
            overhead += call.tokens
        else:
            by_path[call.path].append(call)
    artifacts = [_artifact(path, calls) for path, calls in by_path.items()]
    artifacts.sort(key=lambda a: a.exposure_tokens, reverse=True)
    exposure = sum(a.exposure_tokens for a in artifacts) + overhead
    counterfactual = sum(a.full_view_tokens for a in artifacts)
    return Trace(
        session=session.key,
        calls=len(session.calls),
        calls_dropped=session.calls_dropped,
        artifacts=artifacts,
        overhead_tokens=overhead,
        exposure_tokens=exposure,
        counterfactual_tokens=counterfactual,
        saved_tokens=counterfactual - exposure,
        fallbacks=sum(a.fallbacks for a in artifacts),
        median_ms=round(statistics.median(c.seconds for c in session.calls) * 1000, 2) if session.calls else 0.0,
        recent=[
            CallTrace(
                tool=c.tool,
                path=c.path,
                action=c.action,
                decision=c.decision,
                tokens=c.tokens,
                ms=round(c.seconds * 1000, 2),
            )
            for c in session.calls[-recent:]
        ]
        if recent
        else [],
    )


def _artifact(path: str, calls: list[CallRecord]) -> ArtifactTrace:
    # One full read per version: the largest L recorded for each fingerprint (they agree; max is safe).
    versions: dict[str | None, int] = {}
    for call in calls:
        versions[call.fingerprint] = max(versions.get(call.fingerprint, 0), call.full_view_tokens)
    exposure = sum(c.tokens for c in calls)
    full = sum(versions.values())
    return ArtifactTrace(
        path=path,
        type=calls[-1].type or "unknown",
        versions=len(versions),
        calls=len(calls),
        exposure_tokens=exposure,
        full_view_tokens=full,
        saved_tokens=full - exposure,
        fallbacks=sum(1 for c in calls if c.decision == "fallback"),
    )


def bar(fraction: float, width: int = 20) -> str:
    """A left-aligned unicode bar, eighth-cell resolution; past 1.0 it fills and ends with `▶`."""
    over = fraction > 1
    eighths = round(min(max(fraction, 0.0), 1.0) * width * 8)
    full, part = divmod(eighths, 8)
    text = "█" * full + (_BAR_CELLS[part] if part else "")
    return (text[: width - 1] + "▶") if over else text.ljust(width)


def render_trace(trace: Trace, *, width: int = 20) -> str:
    """A table a person reads: per artifact, exposure as a bar against its full read L."""
    fallbacks = f", {trace.fallbacks} fallback{'s' if trace.fallbacks != 1 else ''}" if trace.fallbacks else ""
    lines = [
        f"session {trace.session}: {trace.calls} calls, {len(trace.artifacts)} artifacts{fallbacks}, "
        f"median {trace.median_ms:.1f} ms"
    ]
    if trace.calls_dropped:
        lines.append(f"  ({trace.calls_dropped} older calls no longer kept; totals cover the rest)")
    name_width = min(40, max([len(a.path) for a in trace.artifacts] + [8]))
    lines.append(f"  {'artifact':<{name_width}}  calls  {'exposure / L':<{width + 6}}  {'tokens':>17}  {'saved':>8}")
    for a in trace.artifacts:
        path = a.path if len(a.path) <= name_width else "…" + a.path[-(name_width - 1) :]
        if a.full_view_tokens:
            share = a.exposure_tokens / a.full_view_tokens
            gauge = f"{bar(share, width)} {share:>4.0%}"
        else:
            gauge = f"{'(no single full view)':<{width}}     "
        lines.append(
            f"  {path:<{name_width}}  {a.calls:>5}  {gauge}  {a.exposure_tokens:>7,} / {a.full_view_tokens:>7,}"
            f"  {a.saved_tokens:>8,}"
        )
    if trace.overhead_tokens:
        lines.append(f"  {'(cards)':<{name_width}}  {'':>5}  {'':<{width + 5}}  {trace.overhead_tokens:>7,}")
    lines.append(_summary(trace))
    return "\n".join(lines)


def _summary(trace: Trace) -> str:
    if not trace.counterfactual_tokens:
        return f"total: {trace.exposure_tokens:,} tokens exposed; nothing read that has a single full view"
    share = trace.saved_tokens / trace.counterfactual_tokens
    verb = "saved" if trace.saved_tokens >= 0 else "cost"
    return (
        f"total: {trace.exposure_tokens:,} tokens exposed vs {trace.counterfactual_tokens:,} for one full read "
        f"of each artifact: {verb} {abs(trace.saved_tokens):,} ({abs(share):.0%})"
    )
