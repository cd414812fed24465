"""Sessions and episodes: the reading state of one MCP session."""

from __future__ import annotations

import itertools
import secrets
import threading
from dataclasses import dataclass, field

from ..gate.ledger import Ledger
from ..models import Intent, Slot, SlotCoverage


@dataclass(slots=True, kw_only=True)
class DeliveredItem:
    pointer: str
    start: int
    end: int
    slots: tuple[str, ...]
    support: dict[str, float]
    text: str = ""  # kept for directory episodes, whose items come from many files
    full_view: bool = False  # a page of the full view, not a sparse item


@dataclass(slots=True, kw_only=True)
class Episode:
    """One artifact version under one objective, with its ledger and what it has delivered."""

    id: str
    path: str
    type: str
    fingerprint: str
    rev: str
    objective: str
    full_view_tokens: int
    ledger: Ledger
    slots: tuple[Slot, ...] = ()
    delivered: list[DeliveredItem] = field(default_factory=list)
    ranking: list[tuple[int, float]] = field(default_factory=list)
    full_view_next: int | None = None  # offset of the next full-view page while paging
    #: Where paging began (page 1); the next pages go where the unread matches are (gate/page_place.py).
    full_view_origin: int = 0
    full_view_done: bool = False
    closed: bool = False
    stale: bool = False
    coverage: dict[str, SlotCoverage] = field(default_factory=dict)
    #: Directory episodes: the ranked cross-file candidates still to offer (refine and cursors).
    pending: list[object] = field(default_factory=list)

    def overlaps_delivered(self, start: int, end: int) -> bool:
        # Equal spans count too, so even an empty line is never sent twice.
        return any((d.start < end and start < d.end) or (d.start, d.end) == (start, end) for d in self.delivered)

    @property
    def full_view_started(self) -> bool:
        return self.full_view_done or self.full_view_next is not None


@dataclass(frozen=True, slots=True, kw_only=True)
class CallRecord:
    """One tool call as the session's trace sees it: what it cost the reader's context, and for which
    artifact version. `path` is None for calls about the session itself (the card)."""

    tool: str  # preview | read | card
    path: str | None
    fingerprint: str | None
    type: str | None
    action: str | None
    decision: str | None  # the gate decision of a read, the route of a preview
    tokens: int  # the whole response, as the reader's context receives it
    full_view_tokens: int  # L of the artifact in tokens at the time of the call (0 when there is none)
    seconds: float
    at: float  # unix time

    def to_json(self) -> list[object]:
        return [self.tool, self.path, self.fingerprint, self.type, self.action, self.decision, self.tokens,
                self.full_view_tokens, round(self.seconds, 6), round(self.at, 3)]  # fmt: skip

    @classmethod
    def from_json(cls, row: list[object]) -> CallRecord:
        tool, path, fingerprint, type_, action, decision, tokens, full, seconds, at = row
        return cls(
            tool=str(tool),
            path=None if path is None else str(path),
            fingerprint=None if fingerprint is None else str(fingerprint),
            type=None if type_ is None else str(type_),
            action=None if action is None else str(action),
            decision=None if decision is None else str(decision),
            tokens=int(str(tokens)),
            full_view_tokens=int(str(full)),
            seconds=float(str(seconds)),
            at=float(str(at)),
        )


@dataclass(slots=True, kw_only=True)
class Session:
    key: str
    intent: Intent | None = None
    episodes: dict[str, Episode] = field(default_factory=dict)
    #: The fingerprint each path had when it was last read in this session.
    seen: dict[str, str] = field(default_factory=dict)
    #: Path -> fingerprint of the versions whose whole content this session was sent (a native preview or
    #: read): later reads of that version answer with pointers instead of sending it again.
    whole: dict[str, str] = field(default_factory=dict)
    changed: set[str] = field(default_factory=set)
    #: Path (file or folder) -> the latest located intent stated or continued on it, latest last: a call
    #: without a goal on that path continues it (and never another path's).
    goals: dict[str, Intent] = field(default_factory=dict)
    #: Path -> the note naming the goal the latest call on it continued: said once, not on every refine.
    noted: dict[str, str] = field(default_factory=dict)
    #: Every tool call's cost, for `trace` and the card's savings (the latest MAX_CALLS are kept).
    calls: list[CallRecord] = field(default_factory=list)
    calls_dropped: int = 0
    lock: threading.RLock = field(default_factory=threading.RLock)
    _counter: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    def find_episode(self, path: str, fingerprint: str, objective: str) -> Episode | None:
        for episode in self.episodes.values():
            if (episode.path, episode.fingerprint, episode.objective) == (path, fingerprint, objective):
                return episode
        return None

    def held_spans(self, path: str, fingerprint: str, start: int, end: int) -> list[tuple[int, int]]:
        """The spans of this file version a live episode of this session sent that overlap [start, end)."""
        return sorted(
            (d.start, d.end)
            for episode in self.episodes.values()
            if (episode.path, episode.fingerprint) == (path, fingerprint) and not episode.stale
            for d in episode.delivered
            if d.start < end and start < d.end
        )

    def holds(self, path: str, fingerprint: str, start: int, end: int) -> bool:
        """Whether every character of [start, end) of this file version was sent in a live episode of this
        session (sparse items and full-view pages alike): the agent has that text already."""
        spans = self.held_spans(path, fingerprint, start, end)
        reached = start
        for first, last in spans:
            if first > reached:
                return False
            reached = max(reached, last)
        return reached >= end

    def add_episode(self, episode: Episode) -> None:
        """Keep at most MAX_EPISODES; the oldest go first (a cursor into one then says it is not live)."""
        self.episodes[episode.id] = episode
        while len(self.episodes) > MAX_EPISODES:
            self.episodes.pop(next(iter(self.episodes)))

    def remember_goal(self, path: str, intent: Intent | None) -> None:
        """`intent` is now the latest on `path` (latest last; at most MAX_EPISODES paths are kept)."""
        if intent is None:
            return
        self.goals.pop(path, None)
        self.goals[path] = intent
        while len(self.goals) > MAX_EPISODES:
            self.goals.pop(next(iter(self.goals)))

    def record_call(self, call: CallRecord) -> None:
        self.calls.append(call)
        if len(self.calls) > MAX_CALLS:
            self.calls_dropped += len(self.calls) - MAX_CALLS
            del self.calls[: len(self.calls) - MAX_CALLS]

    def note_version(self, path: str, fingerprint: str) -> list[str]:
        """Record that `path` was read at `fingerprint`; when that moved, its earlier episodes go stale and
        their evidence is invalidated (the pointers are returned)."""
        previous = self.seen.get(path)
        invalidated: list[str] = []
        if previous is not None and previous != fingerprint:
            for episode in self.episodes.values():
                if episode.path == path and episode.fingerprint != fingerprint and not episode.stale:
                    episode.stale = episode.closed = True
                    invalidated.extend(item.pointer for item in episode.delivered)
        self.seen[path] = fingerprint
        self.changed.discard(path)
        return invalidated

    def new_episode_id(self) -> str:
        # Unguessable, so a cursor from one session is useless in another.
        return f"ep{next(self._counter)}-{secrets.token_hex(4)}"


#: Bounds that keep a long-running server's memory flat: least recently used first out. Persistent
#: stores keep the same number of sessions, each for SESSION_TTL_SECONDS after its last use.
MAX_SESSIONS = 1_024
SESSION_TTL_SECONDS = 7 * 24 * 3600
MAX_EPISODES = 512
MAX_CALLS = 2_000
