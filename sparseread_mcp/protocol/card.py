"""The session card: reading state compact enough to keep at the top of a context."""

from __future__ import annotations

from ..models import ArtifactRef, Card, EpisodeState, SlotCoverage
from ..vocabulary import PREVIEW_TOOL, READ_TOOL
from .session import Session


def build_card(
    session: Session, *, changed: list[str], only_path: str | None = None, store_problem: str | None = None
) -> Card:
    """Episodes with their ledgers, the latest coverage per slot, pointers gathered, and next steps."""
    states: list[EpisodeState] = []
    pointers: list[str] = []
    retirable: list[str] = []
    coverage: dict[str, SlotCoverage] = {}
    for episode in session.episodes.values():
        if only_path is not None and episode.path != only_path:
            continue
        states.append(
            EpisodeState(
                id=episode.id,
                artifact=ArtifactRef(path=episode.path, type=episode.type, fingerprint=episode.fingerprint),
                objective=episode.objective,
                full_view_chars=episode.ledger.full_view_chars,
                episode_chars=episode.ledger.sparse_chars,
                remaining_chars=episode.ledger.remaining,
                full_view_delivered=episode.full_view_done,
                closed=episode.closed,
                stale=episode.stale,
            )
        )
        if episode.stale:
            retirable.extend(f"{d.pointer} (stale: the file changed)" for d in episode.delivered)
        else:
            pointers.extend(d.pointer for d in episode.delivered)
            coverage.update(episode.coverage)
            if episode.full_view_started:
                retirable.extend(
                    f"{d.pointer} (superseded by the full view)" for d in episode.delivered if not d.full_view
                )
    steps = [f"re-read changed file {p}: its earlier evidence is stale" for p in changed]
    missing = [c.slot for c in coverage.values() if c.status != "found"]
    if missing:
        steps.append(f"collect or refine for unresolved slots: {', '.join(missing)}")
    if not states:
        steps.append(f"{PREVIEW_TOOL} a file, then {READ_TOOL} with an intent")
    return Card(
        session_intent=session.intent,
        episodes=states,
        coverage=list(coverage.values()),
        pointers=pointers[-40:],
        changed=changed,
        retirable=retirable[-40:],
        next=steps,
        store=store_problem,
    )
