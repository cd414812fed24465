"""Reads that name where they resume: a pointer (`path@rev#anchor`) dereferenced or verified, and the
cursor of a full view being paged. They need only opened files and the frame of an answer about one,
which the engine lends through `Files`; sessions, caches and routing stay the engine's."""

from __future__ import annotations

from dataclasses import replace
from functools import partial
from typing import Protocol

from ..errors import BudgetTooSmall, IntentError, SparsereadError, StaleArtifact, UnsupportedArtifact
from ..evidence import Candidate
from ..files.anchors import Target
from ..files.revisions import Revisions
from ..files.roots import Roots
from ..files.textdiff import TextDiff
from ..gate.delivery import Delivery, Extras
from ..gate.page_place import densest_unread
from ..gate.pages import deliver_full
from ..gate.respond import fit_pack
from ..gate.sparse import deliver_sparse
from ..models import EvidencePack, Intent
from ..protocol.intents import objective_of
from ..protocol.pointers import anchored_span, gone_pack, refused_pack, verify_pointer
from ..protocol.session import Episode, Session
from ..readers.base import ParsedArtifact
from ..tokens import TokenCounter
from ..vocabulary import READ_TOOL
from .views import anchored_pack

#: The longest offset a cursor may carry: never a 4,300-digit `int()` error.
_OFFSET_DIGITS = 15


class Files(Protocol):
    """What resuming a read needs of the engine."""

    revisions: Revisions
    counter: TokenCounter
    roots: Roots

    def open(self, path: str, *, as_lines: bool = False) -> ParsedArtifact: ...

    def open_at(self, path: str, rev: str) -> ParsedArtifact | None: ...

    def episode_for(
        self, session: Session, parsed: ParsedArtifact, objective: str, intent: Intent | None
    ) -> Episode: ...

    def delivery_for(
        self, parsed: ParsedArtifact, episode: Episode, intent: Intent | None, budget: int, action: str, view: str
    ) -> Delivery: ...

    def scope_of(self, parsed: ParsedArtifact) -> str: ...

    def diff(self, old: str, new: str, *, old_label: str, new_label: str, context: int, label: str) -> TextDiff: ...


def dereference(
    files: Files, session: Session, parsed: ParsedArtifact, target: Target, intent: Intent | None, budget: int
) -> EvidencePack:
    """The text a pointer names, as of its version: from git or memory when the file has changed since."""
    assert target.anchor is not None
    extras = Extras(scope=files.scope_of(parsed))
    if target.rev not in files.revisions.revs_of(parsed.artifact):
        earlier = files.open_at(target.path, target.rev or "")
        if earlier is None:
            raise StaleArtifact(
                f"{target.path} changed since {target.rev} (now {parsed.artifact.rev}) and that version is not "
                "in git or in this server's memory: verify the pointer with action='verify'"
            )
        parsed = earlier
        message = f"the text as of {target.rev}; the file has changed since (action='verify' says how)"
        extras = replace(extras, message=message)
    episode = files.episode_for(session, parsed, objective_of(intent), intent)
    delivery = files.delivery_for(parsed, episode, intent, budget, "focus", "lines")
    start, end = anchored_span(parsed, target.anchor)
    return anchored_pack(delivery, start, end, extras)


def verify_pointed(files: Files, session: Session, target: Target, budget: int) -> EvidencePack:
    """Whether a pointer still says what it said (ok, moved, changed, gone), with its text when ok."""
    try:
        parsed = files.open(target.path, as_lines=True)  # a pointer into a file read as lines
    except UnsupportedArtifact as refusal:
        if _exists(files, target.path):  # binary now, over a limit, a reader that failed: not gone
            return fit_pack(refused_pack(target, files.counter.name, str(refusal)), budget, files.counter)
        return fit_pack(gone_pack(target, files.counter.name), budget, files.counter)
    revs = files.revisions.revs_of(parsed.artifact)
    earlier = None if target.rev in revs else files.open_at(target.path, target.rev or "")
    verification = verify_pointer(target, earlier, parsed, revs, diff=partial(files.diff, label=target.path))
    episode = files.episode_for(session, parsed, f"verify {target.path}@{target.rev}", None)
    delivery = files.delivery_for(parsed, episode, None, budget, "verify", "lines")
    extras = Extras(scope=files.scope_of(parsed), verification=verification)
    if verification.status != "ok" or target.anchor is None:
        return deliver_sparse(delivery, [], extras, max_items=0)
    start, end = anchored_span(parsed, target.anchor)
    return deliver_sparse(delivery, [Candidate(start=start, end=end, score=1.0)], extras, max_items=1)


def _exists(files: Files, path: str) -> bool:
    try:
        files.roots.resolve(path).stat()
    except SparsereadError:
        return False
    return True


def next_page(files: Files, session: Session, cursor: str, budget: int) -> EvidencePack:
    """The next page of a full view being paged in the session: where the episode's unread matches are
    densest (`densest_unread`), else the cursor's place; the pages only ever cover what was not sent yet."""
    episode_id, _, offset_text = cursor.rpartition(":")
    episode = session.episodes.get(episode_id)
    # Any cursor of a full view still being paged is live: a ranked page (a refine, a new focus) may have
    # moved the latest one.
    live = offset_text.isdigit() and len(offset_text) <= _OFFSET_DIGITS
    if episode is None or not live or episode.full_view_next is None:
        raise IntentError(f"cursor {cursor!r} is not a live cursor of this session; call {READ_TOOL} again")
    parsed = files.open(episode.path, as_lines=True)  # the pages of a file read as lines
    if parsed.artifact.fingerprint != episode.fingerprint:
        episode.stale = True
        raise StaleArtifact(f"{episode.path} changed while its full view was paged; read it again")
    delivery = files.delivery_for(parsed, episode, None, budget, "focus", "full")
    extras = Extras(scope=files.scope_of(parsed))
    reason = "the next page of the full view (the pages together are one full view)"
    start = densest_unread(parsed, episode, budget)  # where the unread matches cluster, else in text order
    try:
        return deliver_full(
            delivery,
            extras,
            start=int(offset_text) if start is None else start,
            decision="full_view",
            reason=reason,
            continuing=True,
        )
    except BudgetTooSmall:
        waiting = replace(
            extras,
            left_out=f"no page of the full view fits budget_tokens={budget}: pass this cursor again with a larger "
            "budget_tokens",
        )
        pack = delivery.pack(items=[], spans=[], decision="full_view", reason=reason, extras=waiting, cursor=cursor)
        return delivery.fit(pack)
