"""What one delivery needs: the artifact and episode it charges, the budget, and the frame it carries.

Both are values: a step that adds to the frame (a message, a hint, a result) makes a new `Extras`, so
nothing an earlier step set changes behind a later one. Sparse batches go through `sparse.py`, the full
view through `pages.py`; both build their packs with `Delivery.pack` and fit them in `respond.py`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from ..locate.base import Locator
from ..models import (
    ArtifactRef,
    EpisodeRef,
    EvidenceItem,
    EvidencePack,
    Exposure,
    Gate,
    Intent,
    OpResult,
    Preview,
    Selection,
    SlotCoverage,
    Verification,
)
from ..protocol.session import Episode
from ..readers.base import ParsedArtifact
from ..tokens import TokenCounter, stamp_tokens
from ..vocabulary import GateDecision
from ..wire import wire_json
from .page_place import likeliest_region
from .respond import evidence_pack, fit_pack, shrink_pack

CoverageFn = Callable[[list[tuple[int, int]]], tuple[list[SlotCoverage], list[str]]]


@dataclass(frozen=True, slots=True, kw_only=True)
class Extras:
    """Everything in a pack besides items, coverage, exposure and the gate."""

    scope: str
    result: OpResult | None = None
    verification: Verification | None = None
    message: str | None = None
    next: tuple[str, ...] = ()
    invalidated: tuple[str, ...] = ()
    preview: Preview | None = None
    left_out: str | None = None
    selection: Selection | None = None
    #: Why nothing was proposed, when the caller knows better than "no passage matches".
    empty_reason: str | None = None

    def hinted(self, *steps: str) -> Extras:
        """These extras with `steps` added to `next`."""
        return replace(self, next=(*self.next, *steps))


@dataclass(frozen=True, slots=True, kw_only=True)
class Delivery:
    parsed: ParsedArtifact
    episode: Episode
    counter: TokenCounter
    budget_tokens: int
    action: str
    view: str
    coverage: CoverageFn
    #: With the request's located intent, where a full view should begin (see `origin`); None: at 0.
    locator: Locator | None = None
    located: Intent | None = None
    #: Whether this session already received every character of a span of this file version, in another
    #: episode: located answers name such a match instead of sending it again. None: nothing is known.
    held: Callable[[int, int], bool] | None = None

    def origin(self) -> int:
        """Where a full view for this request begins: its best-located passage not yet sent, else 0."""
        if self.locator is None or self.located is None:
            return 0
        return likeliest_region(self.parsed, self.locator, self.located, self.episode, self.budget_tokens)

    def render(self, pack: EvidencePack) -> tuple[str, int]:
        text = wire_json(pack)
        return text, self.counter.count(text)

    def finish(self, pack: EvidencePack) -> EvidencePack:
        """Stamp the response's own token count (counted on its serialized form)."""
        return stamp_tokens(pack, self.counter)

    def fit(self, pack: EvidencePack) -> EvidencePack:
        """Finish a pack within the budget, shedding hints and echoes (never evidence), or BudgetTooSmall."""
        return fit_pack(pack, self.budget_tokens, self.counter)

    def shrink(self, pack: EvidencePack) -> EvidencePack:
        """Finish a pack, shed as far as it goes toward the budget (it may still be over)."""
        return shrink_pack(pack, self.budget_tokens, self.counter)

    def commit(self, pack: EvidencePack) -> EvidencePack:
        """Remember the coverage a delivered pack reported, for the session card, with every pointer an
        answer of the episode named for each slot (an answer names only those not named before)."""
        for c in pack.coverage:
            told = self.episode.coverage.get(c.slot)
            earlier = told.pointers if told is not None else []
            pointers = [*earlier, *(p for p in c.pointers if p not in earlier)]
            self.episode.coverage[c.slot] = c.model_copy(update={"pointers": pointers})
        return pack

    def unsaid(self, coverage: list[SlotCoverage]) -> list[SlotCoverage]:
        """Each slot's coverage without the pointers an earlier answer of the episode named for it: the
        agent has them (a refine of a long filing would list the same five again, about 150 tokens)."""
        out = []
        for c in coverage:
            told = self.episode.coverage.get(c.slot)
            if told is not None:
                c = c.model_copy(update={"pointers": [p for p in c.pointers if p not in told.pointers]})
            out.append(c)
        return out

    def pack(
        self,
        *,
        items: list[EvidenceItem],
        spans: list[tuple[int, int]],
        decision: GateDecision,
        reason: str,
        extras: Extras,
        retire: list[str] | None = None,
        already: list[str] | None = None,
        cursor: str | None = None,
        full_chars: int = 0,
        support: list[tuple[int, int]] | None = None,
    ) -> EvidencePack:
        """`spans` are what this pack delivers; `support`, what the agent already holds from another
        episode: both count for coverage, neither twice in the ledger."""
        episode, artifact = self.episode, self.parsed.artifact
        payload = full_chars or serialized_chars(items)
        sparse = 0 if full_chars else payload
        coverage, unresolved = self.coverage(spans + (support or []))
        coverage = self.unsaid(coverage)
        return evidence_pack(
            episode=EpisodeRef(
                id=episode.id,
                artifact=ArtifactRef(path=artifact.path, type=self.parsed.type, fingerprint=artifact.fingerprint),
                objective=episode.objective,
            ),
            action=self.action,
            view=self.view,
            items=items,
            result=extras.result,
            verification=extras.verification,
            coverage=coverage,
            unresolved=unresolved,
            scope=extras.scope,
            exposure=Exposure(
                payload_chars=payload,
                payload_tokens=sum(self.counter.count(i.text) for i in items),
                episode_chars=episode.ledger.sparse_chars + sparse,
                full_view_chars=episode.ledger.full_view_chars,
                full_view_tokens=episode.full_view_tokens,
                remaining_chars=max(0, episode.ledger.remaining - sparse),
                full_view_delivered_chars=episode.ledger.full_chars + full_chars,
            ),
            gate=Gate(decision=decision, reason=reason),
            selection=extras.selection,
            retire=retire,
            already=already,
            invalidated=list(extras.invalidated),
            next_steps=list(extras.next),
            message=extras.message,
            left_out=extras.left_out,
            preview=extras.preview,
            tokenizer=self.counter.name,
            cursor=cursor,
        )


def serialized_chars(items: list[EvidenceItem]) -> int:
    """A sparse batch is charged what it costs the reader: each item as serialized, pointer included."""
    return sum(len(wire_json(item)) for item in items)
