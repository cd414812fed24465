"""Every answer about one parsed file: the derived and coarse views first, then one handler per action.

Each handler takes the resolved `FileRead` and returns its EvidencePack; what it adds to the frame it
adds to a new `Extras`, and the gate (`gate/sparse.py`, `gate/pages.py`) builds and fits the answer.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from functools import partial

from ..config import Settings
from ..errors import BudgetTooSmall, IntentError
from ..evidence import pointer_for
from ..files.revisions import Revisions
from ..files.roots import Roots
from ..files.textdiff import line_diff
from ..gate.delivery import Extras
from ..gate.pages import deliver_full
from ..gate.respond import minimal_frame
from ..gate.route import choose_route
from ..gate.sparse import deliver_sparse
from ..locate import LocatorSet
from ..models import EvidencePack, OpResult
from ..preview import build_preview
from ..protocol import actions
from ..protocol.intents import missing_for_location, query_for
from ..protocol.pointers import Differ, anchored_span
from ..select.policy import Policy
from ..tokens import TokenCounter
from ..vocabulary import Action, GateDecision
from .absence import check_pack
from .exact import compact_pack, projection_pack, query_pack
from .located import located_pack
from .read import FileRead
from .views import anchored_pack, card_pack, full_or_degraded, outline_pack

#: Items a verdict is shown with: the stretch that supports (or contradicts) the claim and the next best, or
#: an undecided claim's three closest places (short windows, see protocol/closest.py).
VERIFY_ITEMS = 3
#: An undecided claim (`unverified`, `not_found`) whose closest place the agent already holds whole gets that
#: place named (`already_delivered`) and no other: the claim was most likely written from it, and the less
#: close places cost a short filing's verify 300-500 tokens (bench/results/issue30_agent_loop.md, session 17).
UNDECIDED_HELD_ALONE = True
UNDECIDED = frozenset({"unverified", "not_found"})

Handler = Callable[[FileRead], EvidencePack]


class FileAnswers:
    """The answers about one parsed file, dispatched by action (see `answer`)."""

    def __init__(
        self,
        *,
        settings: Settings,
        counter: TokenCounter,
        locators: LocatorSet,
        selection: Policy,
        revisions: Revisions,
        roots: Roots,
        diff: Differ = line_diff,
    ) -> None:
        self.settings = settings
        self.diff = diff  # bounded; the engine's runs in a worker
        self.counter = counter
        self.locators = locators
        self.locator = locators.get("bm25")  # refine, verify and where a full view begins use BM25
        self.selection = selection
        self.revisions = revisions
        self.roots = roots
        self.by_action: dict[Action, Handler] = {
            "scout": self._scout,
            "focus": self._locate,
            "collect": self._locate,
            "refine": self._refine,
            "verify": self._verify,
            "check": check_pack,
        }

    def answer(self, read: FileRead) -> EvidencePack:
        """A diff, an exact result or a coarse view when the request asks for one; else its action's."""
        try:
            derived, read = self._derived(read)
            if derived is not None:
                return derived
            if read.view in ("outline", "card", "summary"):
                return self._coarse(read)
            return self.by_action[read.action](read)
        except BudgetTooSmall:
            # The last rung of every degradation: nothing else fits, so the card (gate/respond.py) answers.
            d, extras = read.delivery, read.extras
            route = choose_route(full_view_tokens=d.episode.full_view_tokens, native_fit_tokens=0, intent=None)
            message = (
                f"nothing more than the card fits budget_tokens={d.budget_tokens}: raise budget_tokens or narrow "
                "the target with an anchor"
            )
            card = Extras(scope=extras.scope, invalidated=extras.invalidated, message=message)
            return card_pack(d, route, self.counter, card)

    # -- before the action ---------------------------------------------------------------------
    def _derived(self, read: FileRead) -> tuple[EvidencePack | None, FileRead]:
        """The answers that are not located passages: a diff since a version, the compact or projected
        view, an exact query. None when the request asks for none of them (with the read to go on with)."""
        d, extras, parsed = read.delivery, read.extras, read.parsed
        if read.since:
            if (diff := self._since(read, read.since)) is not None:
                return diff, read
            message = f"the diff since {read.since} is larger than the file: here is the view asked for"
            read = replace(read, extras=replace(extras, message=message))
            extras = read.extras
        if read.view == "compact":
            try:
                return compact_pack(d, parsed, extras), read
            except BudgetTooSmall:
                message = (
                    f"the compact view does not fit budget_tokens={d.budget_tokens}: here is the outline; read "
                    "symbols by anchor (path#Symbol) or raise budget_tokens"
                )
                sparse = choose_route(full_view_tokens=d.episode.full_view_tokens, native_fit_tokens=0, intent=None)
                return outline_pack(d, sparse, self.counter, replace(extras, result=None, message=message)), read
        if read.view == "projection":
            return projection_pack(d, parsed, extras, settings=self.settings, roots=self.roots), read
        if read.intent is not None and read.intent.query:
            return query_pack(d, parsed, read.intent.query, extras), read
        return None, read

    def _since(self, read: FileRead, since: str) -> EvidencePack | None:
        d, artifact = read.delivery, read.parsed.artifact
        if since in self.revisions.revs_of(artifact) or since == artifact.fingerprint:
            return deliver_sparse(d, [], replace(read.extras, message=f"unchanged since {since}"), max_items=0)
        old = self.revisions.text(artifact.location, since)
        if old is None:
            raise IntentError(
                f"since={since!r} is not a revision git or this server has: pass a commit or an earlier "
                "pointer's sha256: rev, or read without `since`"
            )
        changes = self.diff(old, artifact.text, old_label=since, new_label=artifact.rev, context=2, label=artifact.path)
        diff = changes.text
        if changes.exact and len(diff) >= len(artifact.text):
            return None  # the diff would cost more than the file: answer with the view asked for
        result = OpResult(value=diff, scanned=f"diff of {since} against {artifact.rev}")
        return deliver_sparse(d, [], replace(read.extras, result=result), max_items=0)

    def _coarse(self, read: FileRead) -> EvidencePack:
        """The outline or the card (a summary is the outline: nothing here generates text)."""
        extras = read.extras
        if read.view == "card":
            return card_pack(read.delivery, read.route, self.counter, extras)
        if read.view == "summary":
            message = (
                "no summarizer is configured (no client sampling, no model endpoint): here is the outline, "
                "which is not generated"
            )
            extras = replace(extras, message=message)
        return outline_pack(read.delivery, read.route, self.counter, extras)

    # -- the actions ---------------------------------------------------------------------------
    def _scout(self, read: FileRead) -> EvidencePack:
        return self._preview_pack(read, read.extras)

    def _locate(self, read: FileRead) -> EvidencePack:
        """focus and collect: the whole file when that is the answer, an anchored range, else located
        evidence (or, when the intent says too little, a preview)."""
        if (whole := self._whole_if_due(read)) is not None:
            return whole
        if read.target.anchor is not None:
            start, end = anchored_span(read.parsed, read.target.anchor)
            return anchored_pack(read.delivery, start, end, read.extras)
        missing = missing_for_location(read.intent)
        if missing is not None:
            return self._preview_pack(read, replace(read.extras, message=missing))
        assert read.intent is not None
        return located_pack(
            read, selection=self.selection, locators=self.locators, passage_chars=self.settings.passage_chars
        )

    def _refine(self, read: FileRead) -> EvidencePack:
        """More near what was found: around an anchor, or the neighbours of the episode's evidence; a
        first refine in an episode locates like focus."""
        if (whole := self._whole_if_due(read)) is not None:
            return whole
        d, parsed, intent = read.delivery, read.parsed, read.intent
        limit = actions.max_items(intent)
        if read.target.anchor is not None:
            around = anchored_span(parsed, read.target.anchor)
            cands = actions.refine(parsed, d.episode, intent, self.locator, around=around)
            return deliver_sparse(d, cands, read.extras, max_items=limit)
        if not d.episode.delivered:
            return self._locate(read)
        # A refine reads with the intent it continues (the goal a collect ranked by leaves no ranking in the
        # episode), with what it states itself on top: else it could only offer neighbours.
        cands = actions.refine(parsed, d.episode, read.intent, self.locator, around=None)
        extras = read.extras
        if not cands:
            extras = extras.hinted("nothing left near the evidence found; try a different goal or needles")
        pack = deliver_sparse(d, cands, extras, max_items=limit)
        self.selection.follow_up(d.episode.id, pack.exposure.payload_chars)
        return pack

    def _verify(self, read: FileRead) -> EvidencePack:
        """A claim checked against the file: the verdict and the passages it rests on."""
        if (whole := self._whole_if_due(read)) is not None:
            return whole
        if read.target.anchor is not None:
            start, end = anchored_span(read.parsed, read.target.anchor)
            return anchored_pack(read.delivery, start, end, read.extras)
        if read.intent is None or not read.intent.goal:
            raise IntentError("verify needs a claim in intent.goal, or a pointer target path@rev#anchor")
        cands, verification = actions.verify_claim(read.parsed, read.intent.goal, self.locator, held=read.delivery.held)
        artifact = read.parsed.artifact
        held_spans = partial(read.session.held_spans, artifact.path, artifact.fingerprint)
        undecided = UNDECIDED_HELD_ALONE and verification.status in UNDECIDED
        if undecided and cands and held_spans(cands[0].start, cands[0].end):
            cands = cands[:1]  # the closest place is one the agent read: named; the less close are not sent
        cands = actions.unheld(read.parsed, cands, held_spans)
        # Only the passages the verdict rests on: those this session already received (a collect's items,
        # a page of a full view) are named, not sent again (deliver_sparse), and none comes in their place.
        extras = replace(read.extras, verification=verification)
        return deliver_sparse(read.delivery, cands[:VERIFY_ITEMS], extras, max_items=VERIFY_ITEMS)

    # -- shared steps --------------------------------------------------------------------------
    def _whole_if_due(self, read: FileRead) -> EvidencePack | None:
        """The whole file when it is the answer (asked for, or it fits natively and no range is named);
        pointers only when this session already holds that whole version; else None."""
        artifact, native, anchor = read.parsed.artifact, read.route.native, read.target.anchor
        if (
            read.view != "full"
            and native
            and anchor is None
            and read.action in ("focus", "collect", "verify")
            and read.session.whole.get(artifact.path) == artifact.fingerprint
            and read.located
        ):
            return self._already_whole(read)
        if read.view == "full" or (native and anchor is None and read.action not in ("verify", "check")):
            return self._whole(read)
        return None

    def _whole(self, read: FileRead) -> EvidencePack:
        """The whole file: natively when it fits, else the full view in pages from the best match."""
        d, route, full = read.delivery, read.route, read.view == "full"
        decision: GateDecision = "native_fit" if route.native and not full else "full_view"
        reason = "view=full was asked: the faithful full view" if full else route.reason
        origin = 0 if route.native else d.origin()  # paged: page 1 holds the best match
        pack = full_or_degraded(d, route, self.counter, read.extras, decision=decision, reason=reason, start=origin)
        self.selection.follow_up(d.episode.id, pack.exposure.payload_chars)  # an escalation, if it followed
        if pack.view == "full" and pack.cursor is None and pack.items:
            read.session.whole[read.parsed.artifact.path] = read.parsed.artifact.fingerprint
        return pack

    def _already_whole(self, read: FileRead) -> EvidencePack:
        """This session already holds the whole of this small file's version: name where the matches are
        (and, for verify, the verdict) instead of sending its text again."""
        parsed, intent, extras = read.parsed, read.intent, read.extras
        assert intent is not None
        if read.action == "verify" and intent.goal:
            cands, verification = actions.verify_claim(parsed, intent.goal, self.locator)
            extras = replace(extras, verification=verification)
        else:
            ranking = self.locator.rank(parsed, query_for(intent))
            cands = actions.candidates_of(parsed, ranking, intent)
        pointers = [pointer_for(parsed, c.start, c.end) for c in cands]
        reason = "already sent whole in this session: matches named, not resent (view='full' resends)"
        d = read.delivery
        spans = [(c.start, c.end) for c in cands]
        pack = d.pack(items=[], spans=spans, decision="native_fit", reason=reason, extras=extras, already=pointers)
        return d.fit(minimal_frame(pack, self.counter))

    def _preview_pack(self, read: FileRead, extras: Extras) -> EvidencePack:
        d, route = read.delivery, read.route
        if route.native:
            return deliver_full(d, extras, start=0, decision="native_fit", reason=route.reason)
        # Whole here; the pack sheds what of it does not fit beside the frame (gate/respond.py).
        preview = build_preview(
            read.parsed,
            full_view_tokens=d.episode.full_view_tokens,
            route=route,
            counter=self.counter,
            budget_tokens=None,
        )
        return deliver_sparse(replace(d, view="preview"), [], replace(extras, preview=preview), max_items=0)
