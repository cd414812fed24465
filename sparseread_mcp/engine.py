"""The read engine: one contract, ReadRequest -> EvidencePack, usable without MCP."""

from __future__ import annotations

import difflib
import time
from dataclasses import dataclass
from stat import S_ISDIR, S_ISREG

from . import progress
from .ceiling import released_on_memory_error
from .commands.savings import build_trace, card_call, preview_call, read_call
from .config import HARD_RESPONSE_CAP_TOKENS, MIN_BUDGET_TOKENS, Settings
from .directory.collection import Inventory, build_inventory
from .directory.collection_read import preview_directory, read_directory
from .directory.fileindex import FileIndex, file_index_bytes
from .directory.repoindex import RepoIndexStore
from .errors import (
    BinaryArtifact,
    BudgetTooSmall,
    IntentError,
    SparsereadError,
    StaleArtifact,
    UnsupportedArtifact,
)
from .evidence import Candidate, pointer_for
from .exact import compact_pack, projection_pack, query_pack
from .files.anchors import Target, parse_target
from .files.artifacts import Artifact, LruCache, fingerprint_of, load_artifact
from .files.indexcache import IndexCache
from .files.large import large_card, read_range
from .files.revisions import Revisions
from .files.roots import ResolvedPath, Roots
from .files.views import card_pack, full_or_degraded, lines_of, outline_pack
from .gate.delivery import CoverageFn, Delivery, Extras, deliver_full, deliver_sparse, full_view_spans, page_start
from .gate.ledger import Ledger
from .gate.respond import fit_card, fit_pack, fit_preview, minimal_frame
from .gate.route import Route, choose_route
from .locate import LocatorSet
from .models import Card, EvidencePack, Intent, OpResult, Preview, Selection
from .preview import binary_card, build_preview
from .protocol import actions
from .protocol.card import build_card
from .protocol.coverage import episode_coverage
from .protocol.intents import (
    effective_intent,
    is_empty,
    missing_for_location,
    not_inherited,
    objective_of,
    query_for,
)
from .protocol.pointers import anchored_span, gone_pack, verify_pointer
from .protocol.session import Episode, Session
from .readers.base import ParsedArtifact, Reader, parsed_bytes
from .readers.registry import ReaderRegistry, default_registry
from .select.configuration import FULL_VIEW
from .select.policy import Policy
from .select.selector import TAU
from .stores.base import SessionStore
from .stores.persist import open_session_store
from .tokens import TokenCounter
from .vocabulary import PREVIEW_TOOL, READ_TOOL, Action, GateDecision, View


@dataclass(frozen=True, slots=True, kw_only=True)
class ReadRequest:
    target: str
    action: Action = "focus"
    intent: Intent | None = None
    view: View | None = None
    budget_tokens: int | None = None
    since: str | None = None
    cursor: str | None = None


class ReadEngine:
    """Holds the caches and sessions; every public method is safe to call from worker threads."""

    def __init__(self, settings: Settings, *, registry: ReaderRegistry | None = None) -> None:
        self.settings = settings
        self.roots = Roots(settings.roots)
        self.registry = registry or default_registry(settings)
        self.counter = TokenCounter(settings.tokenizer, margin=settings.token_margin)
        self.sessions: SessionStore = open_session_store(settings.store)
        # Replicas on a shared store share parsed artifacts too, through the cache directory.
        self.index_cache = IndexCache(settings.cache_dir, roots=self.roots) if isinstance(settings.store, str) else None
        self.locators = LocatorSet(semantic_model=settings.semantic_model, cache_dir=settings.cache_dir)
        self.locator = self.locators.get("bm25")  # refine, verify and directories locate with BM25
        self.selection = Policy(settings, self.locators)
        cache_bytes = settings.cache_mb * 1024 * 1024  # 3/4 for parsed files, 1/4 for directory indexes
        self._parsed: LruCache[tuple[str, str, str], ParsedArtifact] = LruCache(
            32, max_bytes=cache_bytes * 3 // 4, weigh=parsed_bytes
        )  # (path, fingerprint, rev)
        self._full_tokens: LruCache[str, int] = LruCache(512)
        self.revisions = Revisions(self.roots)  # earlier versions: git for commits, memory for content hashes
        self._indexes: LruCache[str, FileIndex] = LruCache(
            8, max_bytes=cache_bytes // 4, weigh=file_index_bytes
        )  # directory fingerprint -> file index
        self._file_types: dict[tuple[str, int, int], str] = {}  # (path, size, mtime) -> inventory type
        self.repo_indexes = RepoIndexStore.for_settings(settings, self.roots)  # None: not kept on disk

    # -- artifacts ---------------------------------------------------------------------------
    def open(self, path: str) -> ParsedArtifact:
        """Resolve inside the roots, fingerprint, and parse once per (path, fingerprint)."""
        location = self.roots.resolve(path)
        reader = self.registry.reader_for(location.absolute)
        loaded = load_artifact(location, binary=reader.binary, max_bytes=self.settings.max_parse_bytes)
        artifact = self.revisions.stamp(loaded)
        key = (artifact.path, artifact.fingerprint, artifact.rev)
        large = artifact.size_bytes >= progress.large_bytes(binary=reader.binary) and self._parsed.get(key) is None
        with progress.preparing(f"{artifact.path} ({artifact.size_bytes // 1024} KiB)", large=large):
            parsed = self._parsed.get_or_build(key, lambda: self._parse(reader, artifact))
        self.revisions.remember(parsed.artifact)
        return parsed

    def open_at(self, path: str, rev: str) -> ParsedArtifact | None:
        """The version of `path` that `rev` names (a commit from git, or a content hash seen before)."""
        location = self.roots.resolve(path)
        reader = self.registry.reader_for(location.absolute)
        artifact = self.revisions.artifact_at(location, rev, binary=reader.binary)
        if artifact is None:
            return None
        return self._parsed.get_or_build(
            (artifact.path, artifact.fingerprint, rev),
            lambda: self._parse(reader, artifact),
        )

    def _parse(self, reader: Reader, artifact: Artifact) -> ParsedArtifact:
        # A parse is where a call's big allocations happen: out of memory, it is released right here.
        cache, chars = self.index_cache, self.settings.passage_chars
        if cache is None:
            return released_on_memory_error(lambda: reader.parse(artifact, passage_chars=chars))
        return released_on_memory_error(lambda: cache.parse(reader, artifact, passage_chars=chars))

    @property
    def parse_count(self) -> int:
        """How many parses ran (cache misses): repeated reads of an unchanged file add none."""
        return self._parsed.builds

    def full_view_tokens(self, parsed: ParsedArtifact) -> int:
        text = parsed.artifact.text
        return self._full_tokens.get_or_build(parsed.artifact.fingerprint, lambda: self.counter.count(text))

    def inventory(self, relative: str) -> Inventory:
        """The directory's inventory (walked each call: its fingerprint tells whether the index is reusable)."""
        location = self.roots.resolve(relative)
        if len(self._file_types) > 200_000:
            self._file_types.clear()  # a bound, not a policy: the next walk refills what it needs
        if self.repo_indexes is not None:  # a new session on a known tree: types from the stored index
            self.repo_indexes.fill_types(location, self._file_types)
        return build_inventory(
            location,
            location.relative if location.relative != "." else "",
            self.registry,
            types=self._file_types,
        )

    def file_index(self, inventory: Inventory) -> FileIndex:
        """The directory's file index, built once per directory fingerprint."""
        base = self.roots.resolve(inventory.root_path or ".")
        large = len(inventory.files) >= progress.LARGE_FILE_COUNT and self._indexes.get(inventory.fingerprint) is None
        with progress.preparing(
            f"the index of {inventory.root_path or '.'}/ ({len(inventory.files)} files)", large=large
        ):
            return self._indexes.get_or_build(inventory.fingerprint, lambda: self._build_index(base, inventory))

    def _build_index(self, base: ResolvedPath, inventory: Inventory) -> FileIndex:
        if self.repo_indexes is None:
            return FileIndex.build(base, inventory.files)
        return self.repo_indexes.index(base, inventory.files)

    # -- tools -------------------------------------------------------------------------------
    def preview(
        self,
        session_key: str,
        path: str,
        intent: Intent | None = None,
        budget_tokens: int | None = None,
        *,
        reserve_tokens: int = 0,
    ) -> Preview:
        """The Object Preview of `path`, within `budget_tokens` less `reserve_tokens` (kept free for what
        the caller adds to the answer, such as an HTTP session handle)."""
        budget = self._budget(budget_tokens) - reserve_tokens
        session = self.sessions.get(session_key)
        with session.lock:
            started = time.monotonic()
            preview = self._preview(session, path, intent, budget)
            session.record_call(preview_call(preview, time.monotonic() - started))
            self.sessions.commit(session)
            return preview

    def _preview(self, session: Session, path: str, intent: Intent | None, budget: int) -> Preview:
        target_path = parse_target(path).path
        location = self.roots.resolve(target_path)
        found = location.stat()  # what is there now, opened beneath the root (see safeopen)
        if S_ISDIR(found.st_mode):
            return preview_directory(self, self.inventory(target_path), budget)
        if S_ISREG(found.st_mode) and found.st_size > self.settings.max_parse_bytes:
            return fit_preview(large_card(location, self.settings.max_parse_bytes, self.counter), budget, self.counter)
        try:
            parsed = self.open(target_path)
        except BinaryArtifact as exc:
            return fit_preview(binary_card(location, str(exc), self.counter), budget, self.counter)
        self._note_version(session, parsed)
        if session.intent is None and not is_empty(intent):
            session.intent = intent
        route = choose_route(
            full_view_tokens=self.full_view_tokens(parsed),
            native_fit_tokens=self.settings.native_fit_tokens,
            intent=effective_intent(intent, session.intent),
        )
        reader = self.registry.reader_for(location.absolute)
        preview = build_preview(
            parsed,
            full_view_tokens=self.full_view_tokens(parsed),
            route=route,
            counter=self.counter,
            budget_tokens=budget,
            configurations=self.registry.configurations(reader),
        )
        preview = fit_preview(preview, budget, self.counter)  # the guarantee: within budget, or a clear error
        if preview.content is not None:
            session.whole[parsed.artifact.path] = parsed.artifact.fingerprint
        return preview

    def read(self, session_key: str, request: ReadRequest, *, reserve_tokens: int = 0) -> EvidencePack:
        """The EvidencePack for `request`, within its budget less `reserve_tokens` (kept free for what the
        caller adds, such as an HTTP session handle)."""
        budget = self._budget(request.budget_tokens) - reserve_tokens
        session = self.sessions.get(session_key)
        with session.lock:
            started = time.monotonic()
            try:
                pack = self._read(session, request, budget)
                session.record_call(read_call(pack, request.action, time.monotonic() - started))
                return pack
            finally:
                self.sessions.commit(session)  # persistent stores write the session in one transaction

    def _read(self, session: Session, request: ReadRequest, budget: int) -> EvidencePack:
        if request.cursor:
            return self._continue(session, request.cursor, budget)
        target = parse_target(request.target)
        if target.rev is not None and request.action == "verify":
            return self._verify_pointer(session, target, budget)
        location = self.roots.resolve(target.path)
        found = location.stat()  # what is there now, opened beneath the root (see safeopen)
        if target.rev is None and S_ISDIR(found.st_mode):
            if session.intent is None and not is_empty(request.intent):
                session.intent = request.intent
            return read_directory(
                self,
                session,
                self.inventory(target.path),
                action=request.action,
                budget=budget,
                intent=effective_intent(request.intent, session.intent),
            )
        if S_ISREG(found.st_mode) and found.st_size > self.settings.max_parse_bytes:
            return read_range(location, target, budget, self.counter)
        parsed = self.open(target.path)
        invalidated = self._note_version(session, parsed)
        if session.intent is None and not is_empty(request.intent):
            session.intent = request.intent
        intent = effective_intent(request.intent, session.intent)
        return self._dispatch(session, parsed, target, request, intent, budget, invalidated)

    def card(
        self,
        session_key: str,
        path: str | None = None,
        *,
        trace: bool = False,
        budget_tokens: int | None = None,
        reserve_tokens: int = 0,
    ) -> Card:
        """The session's reading state; re-fingerprints read files to say which changed. With `trace`,
        also what the session's reads cost and saved (see savings.py). Fitted to `budget_tokens` less
        `reserve_tokens`."""
        budget = self._budget(budget_tokens) - reserve_tokens
        session = self.sessions.get(session_key)
        with session.lock:
            started = time.monotonic()
            wanted = self.roots.resolve(path).relative if path else None
            changed = sorted(p for p in session.seen if (wanted is None or p == wanted) and self._changed(session, p))
            card = build_card(session, changed=changed, only_path=wanted, store_problem=self.sessions.problem)
            if trace:
                card = card.model_copy(update={"trace": build_trace(session)})
            card = fit_card(card, budget, self.counter)
            session.record_call(card_call(card, time.monotonic() - started))
            self.sessions.commit(session)
            return card

    def _changed(self, session: Session, path: str) -> bool:
        try:
            return fingerprint_of(self.roots.resolve(path)) != session.seen[path]
        except SparsereadError:
            return True

    # -- dispatch ----------------------------------------------------------------------------
    def _dispatch(
        self,
        session: Session,
        parsed: ParsedArtifact,
        target: Target,
        request: ReadRequest,
        intent: Intent | None,
        budget: int,
        invalidated: list[str],
    ) -> EvidencePack:
        action, view = request.action, request.view or "snippets"
        if target.rev is not None:
            return self._dereference(session, parsed, target, intent, budget)
        episode = self._episode(session, parsed, objective_of(intent), intent)
        d = self._delivery(parsed, episode, intent, budget, action, view)
        extras = Extras(scope=self._scope(parsed), invalidated=invalidated)
        if invalidated:
            extras.message = "the file changed since it was last read: earlier evidence listed in `invalidated`"
        if skipped := not_inherited(request.intent, session.intent):
            note = f"the session intent's {skipped} was not applied: it belongs to the call that states it"
            extras.message = f"{extras.message}; {note}" if extras.message else note
        try:
            return self._answer(session, parsed, target, request, intent, d, extras)
        except BudgetTooSmall:
            # The last rung of every degradation: nothing else fits, so the card (gate/respond.py) answers.
            route = choose_route(full_view_tokens=episode.full_view_tokens, native_fit_tokens=0, intent=None)
            card_extras = Extras(
                scope=extras.scope,
                invalidated=extras.invalidated,
                message=f"nothing more than the card fits budget_tokens={budget}: raise budget_tokens or narrow "
                "the target with an anchor",
            )
            return card_pack(d, route, self.counter, card_extras)

    def _answer(
        self,
        session: Session,
        parsed: ParsedArtifact,
        target: Target,
        request: ReadRequest,
        intent: Intent | None,
        d: Delivery,
        extras: Extras,
    ) -> EvidencePack:
        action, view, episode = request.action, request.view or "snippets", d.episode
        if (early := self._exact_or_derived(parsed, request, intent, d, extras)) is not None:
            return early
        route = choose_route(
            full_view_tokens=episode.full_view_tokens, native_fit_tokens=self.settings.native_fit_tokens, intent=intent
        )
        if view in ("outline", "card", "summary"):
            if view == "summary":
                extras.message = (
                    "no summarizer is configured (no client sampling, no model endpoint): here is the outline, "
                    "which is not generated"
                )
            return (
                card_pack(d, route, self.counter, extras)
                if view == "card"
                else outline_pack(d, route, self.counter, extras)
            )
        if action == "scout":
            return self._preview_pack(d, parsed, intent, extras)
        artifact = parsed.artifact
        if (
            view != "full"
            and route.native
            and target.anchor is None
            and action in ("focus", "collect", "verify")
            and session.whole.get(artifact.path) == artifact.fingerprint
            and intent is not None
            and (intent.goal or intent.slots or intent.needles)
        ):
            return self._already_whole(d, parsed, intent, extras, action)
        if view == "full" or (route.native and target.anchor is None and action != "verify"):
            return self._whole(session, parsed, route, view, intent, d, extras)
        if target.anchor is not None:
            start, end = anchored_span(parsed, target.anchor)
            if action == "refine":
                cands = actions.refine(parsed, episode, intent, self.locator, around=(start, end))
                return deliver_sparse(d, cands, extras, max_items=actions.max_items(intent))
            return self._anchored(d, start, end, extras)
        if action == "verify":
            if intent is None or not intent.goal:
                raise IntentError("verify needs a claim in intent.goal, or a pointer target path@rev#anchor")
            cands, verification = actions.verify_claim(parsed, intent.goal, self.locator)
            extras.verification = verification
            return deliver_sparse(d, cands, extras, max_items=2)
        if action == "refine" and episode.delivered:
            cands = actions.refine(parsed, episode, request.intent, self.locator, around=None)
            if not cands:
                extras.next.append("nothing left near the evidence found; try a different goal or needles")
            pack = deliver_sparse(d, cands, extras, max_items=actions.max_items(intent))
            self.selection.follow_up(episode.id, pack.exposure.payload_chars)
            return pack
        missing = missing_for_location(intent)
        if missing is not None:
            extras.message = missing
            return self._preview_pack(d, parsed, intent, extras)
        assert intent is not None
        return self._located(parsed, intent, action, route, d, extras)

    def _exact_or_derived(
        self, parsed: ParsedArtifact, request: ReadRequest, intent: Intent | None, d: Delivery, extras: Extras
    ) -> EvidencePack | None:
        """The answers that are not located passages: a diff since a version, the compact or projected
        view, an exact query. None when the request asks for none of them."""
        view, budget, episode = request.view or "snippets", d.budget_tokens, d.episode
        if request.since and (answer := self._since(d, parsed, request.since, extras)) is not None:
            return answer
        if request.since:
            extras.message = f"the diff since {request.since} is larger than the file: here is the view asked for"
        if view == "compact":
            try:
                return compact_pack(d, parsed, extras)
            except BudgetTooSmall:
                extras.result = None
                extras.message = (
                    f"the compact view does not fit budget_tokens={budget}: here is the outline; read symbols by "
                    "anchor (path#Symbol) or raise budget_tokens"
                )
                sparse = choose_route(full_view_tokens=episode.full_view_tokens, native_fit_tokens=0, intent=None)
                return outline_pack(d, sparse, self.counter, extras)
        if view == "projection":
            return projection_pack(d, parsed, extras, cache_dir=self.settings.cache_dir, roots=self.roots)
        if intent is not None and intent.query:
            return query_pack(d, parsed, intent.query, extras)
        return None

    def _whole(
        self,
        session: Session,
        parsed: ParsedArtifact,
        route: Route,
        view: str,
        intent: Intent | None,
        d: Delivery,
        extras: Extras,
    ) -> EvidencePack:
        """The whole file: natively when it fits, else the full view in pages from the best match."""
        artifact, episode = parsed.artifact, d.episode
        decision: GateDecision = "native_fit" if route.native and view != "full" else "full_view"
        reason = route.reason if view != "full" else "view=full was asked: the faithful full view"
        origin = 0
        if not route.native and intent is not None and d.origin is not None:
            origin = d.origin()  # paged: page 1 begins where the best match is
        pack = full_or_degraded(d, route, self.counter, extras, decision=decision, reason=reason, start=origin)
        self.selection.follow_up(episode.id, pack.exposure.payload_chars)  # an escalation, if it followed
        if pack.view == "full" and pack.cursor is None and pack.items:
            session.whole[artifact.path] = artifact.fingerprint
        return pack

    def _located(
        self, parsed: ParsedArtifact, intent: Intent, action: Action, route: Route, d: Delivery, extras: Extras
    ) -> EvidencePack:
        """Located evidence: the selector's configuration, then focus or collect within the gate."""
        episode = d.episode
        if intent.want == "count" and (intent.needles):
            extras.result = self._count(parsed, intent)
        choice = self.selection.choose(parsed, intent)
        configuration = choice.configuration.qualified(parsed.type)
        if choice.configuration == FULL_VIEW:
            origin = self._likeliest_region(parsed, intent, episode)
            reason = choice.reason
            if origin:
                page = parsed.lines.page_of(origin)
                where = f"L{parsed.lines.line_of(origin)}" + (f" (p{page})" if page else "")
                reason += f"; its pages begin at {where}, where the best match is, then cover the rest"
            extras.selection = Selection(configuration=configuration, reason=reason)
            return full_or_degraded(d, route, self.counter, extras, decision="full_view", reason=reason, start=origin)
        extras.selection = Selection(configuration=configuration, reason=choice.reason, reliability=choice.reliability)
        if choice.robust:
            low = choice.reliability is None or choice.reliability < TAU
            why = "below the calibrated reliability threshold" if low else "from calibration on other files"
            extras.next.append(
                f"this sparse answer is {why} (see selection.reliability): if the evidence is not here, "
                "refine, add needles, or ask view='full' (its pages begin at the best match)"
            )
        locator = self.locators.get(choice.configuration.location)
        form = choice.configuration.exposure
        max_chars = actions.exposure_chars(intent, self.settings.passage_chars)
        if action == "collect":
            slot_count = len(actions.slots_of(intent))
            limit = max(actions.max_items(intent), 2 * slot_count)
            max_chars = max(max_chars, 2 * slot_count * self.settings.passage_chars)
            cands = actions.collect(parsed, intent, locator, episode, form=form, max_chars=max_chars)
        else:
            cands, ranking = actions.focus(parsed, intent, locator, episode, form=form, max_chars=max_chars)
            episode.ranking = ranking[: actions.RANKING_KEPT]  # refine needs the head of it, not every passage
            limit = actions.max_items(intent)
        if not cands:
            self._say_why_empty(parsed, intent, extras)
        if not parsed.focus_context:
            # The exposure plan is already bounded in characters, as calibrated: small passages (table rows)
            # may be many; an item cap would show less than what was measured.
            limit = max(limit, len(cands))
        pack = deliver_sparse(d, cands, extras, max_items=limit)
        self.selection.answered(episode.id, choice, pack.exposure.payload_chars)
        return pack

    def _say_why_empty(self, parsed: ParsedArtifact, intent: Intent, extras: Extras) -> None:
        """A focus or collect that proposes nothing says whether nothing matched or all was sent already."""
        if any(score > 0 for _, score in self.locator.rank(parsed, query_for(intent))):
            extras.empty_reason = "nothing new to deliver: every match was delivered already in this episode"
            extras.next.append("refine for neighbours, or state a new goal")
            return
        extras.empty_reason = "nothing delivered: no passage matches the goal"
        if parsed.queries is not None:
            extras.message = (
                f"no row or value of this {parsed.type} matches the goal's words; to compute over it, pass "
                "intent.query (one read-only SELECT over the table `data`) using the schema"
            )
            extras.next.append(f"{PREVIEW_TOOL} shows the schema (column names and types) to write intent.query")
        else:
            extras.next.append(f"try other words, needles (exact strings) or {PREVIEW_TOOL} for the outline")

    def _anchored(self, d: Delivery, start: int, end: int, extras: Extras) -> EvidencePack:
        """An explicit range is delivered whole or not at all; too large, it suggests sub-ranges."""
        candidate = Candidate(start=start, end=end, score=1.0)
        try:
            return deliver_sparse(d, [candidate], extras, max_items=1, resend=True)
        except BudgetTooSmall:
            inside = [p for p in d.parsed.passages if p.start >= start and p.end <= end]
            hints = [pointer_for(d.parsed, p.start, p.end).split("#", 1)[1] for p in inside[:12]]
            extras.message = (
                f"the range is larger than budget_tokens={d.budget_tokens}: here is its outline; read a "
                "sub-range (see `next`) or raise budget_tokens"
            )
            extras.next = [f"sub-range: #{h}" for h in hints]
            route = choose_route(full_view_tokens=d.episode.full_view_tokens, native_fit_tokens=0, intent=None)
            return outline_pack(d, route, self.counter, extras, lines=lines_of(d.parsed, start, end))

    def _preview_pack(self, d: Delivery, parsed: ParsedArtifact, intent: Intent | None, extras: Extras) -> EvidencePack:
        route = choose_route(
            full_view_tokens=d.episode.full_view_tokens,
            native_fit_tokens=self.settings.native_fit_tokens,
            intent=intent,
        )
        if route.native:
            return deliver_full(d, extras, start=0, decision="native_fit", reason=route.reason)
        # Whole here; the pack sheds what of it does not fit beside the frame (gate/respond.py).
        extras.preview = build_preview(
            parsed, full_view_tokens=d.episode.full_view_tokens, route=route, counter=self.counter, budget_tokens=None
        )
        d.view = "preview"
        return deliver_sparse(d, [], extras, max_items=0)

    def _dereference(
        self, session: Session, parsed: ParsedArtifact, target: Target, intent: Intent | None, budget: int
    ) -> EvidencePack:
        assert target.anchor is not None
        extras = Extras(scope=self._scope(parsed))
        if target.rev not in self.revisions.revs_of(parsed.artifact):
            earlier = self.open_at(target.path, target.rev or "")
            if earlier is None:
                raise StaleArtifact(
                    f"{target.path} changed since {target.rev} (now {parsed.artifact.rev}) and that version is not "
                    "in git or in this server's memory: verify the pointer with action='verify'"
                )
            parsed = earlier
            extras.message = f"the text as of {target.rev}; the file has changed since (action='verify' says how)"
        episode = self._episode(session, parsed, objective_of(intent), intent)
        d = self._delivery(parsed, episode, intent, budget, "focus", "lines")
        start, end = anchored_span(parsed, target.anchor)
        return self._anchored(d, start, end, extras)

    def _verify_pointer(self, session: Session, target: Target, budget: int) -> EvidencePack:
        try:
            parsed = self.open(target.path)
        except UnsupportedArtifact:
            return fit_pack(gone_pack(target, self.counter.name), budget, self.counter)
        revs = self.revisions.revs_of(parsed.artifact)
        earlier = None if target.rev in revs else self.open_at(target.path, target.rev or "")
        verification = verify_pointer(target, earlier, parsed, revs)
        episode = self._episode(session, parsed, f"verify {target.path}@{target.rev}", None)
        d = self._delivery(parsed, episode, None, budget, "verify", "lines")
        extras = Extras(scope=self._scope(parsed), verification=verification)
        cands: list[Candidate] = []
        if verification.status == "ok" and target.anchor is not None:
            start, end = anchored_span(parsed, target.anchor)
            cands = [Candidate(start=start, end=end, score=1.0)]
        return deliver_sparse(d, cands, extras, max_items=1) if cands else deliver_sparse(d, [], extras, max_items=0)

    def _continue(self, session: Session, cursor: str, budget: int) -> EvidencePack:
        episode_id, _, offset_text = cursor.rpartition(":")
        episode = session.episodes.get(episode_id)
        if episode is not None and episode.type == "directory" and offset_text == "dir":
            inventory = self.inventory(episode.path if episode.path != "." else ".")
            if inventory.fingerprint != episode.fingerprint:
                raise StaleArtifact(f"{episode.path} changed since this search; run it again")
            return read_directory(
                self, session, inventory, action="refine", intent=None, budget=budget, continuing=episode
            )
        # Any cursor of a full view still being paged is live: a ranked page (a refine, a new focus) may
        # have moved the latest one, and the pages only ever cover what was not sent yet.
        live = offset_text.isdigit() and len(offset_text) <= 15  # an offset, never a 4,300-digit int() error
        if episode is None or not live or episode.full_view_next is None:
            raise IntentError(f"cursor {cursor!r} is not a live cursor of this session; call {READ_TOOL} again")
        parsed = self.open(episode.path)
        if parsed.artifact.fingerprint != episode.fingerprint:
            episode.stale = True
            raise StaleArtifact(f"{episode.path} changed while its full view was paged; read it again")
        d = self._delivery(parsed, episode, None, budget, "focus", "full")
        extras = Extras(scope=self._scope(parsed))
        reason = "the next page of the full view (the pages together are one full view)"
        try:
            return deliver_full(d, extras, start=int(offset_text), decision="full_view", reason=reason, continuing=True)
        except BudgetTooSmall:
            extras.left_out = (
                f"no page of the full view fits budget_tokens={budget}: pass this cursor again with a larger "
                "budget_tokens"
            )
            return d.fit(d.pack(items=[], spans=[], decision="full_view", reason=reason, extras=extras, cursor=cursor))

    def _since(self, d: Delivery, parsed: ParsedArtifact, since: str, extras: Extras) -> EvidencePack | None:
        if since in self.revisions.revs_of(parsed.artifact) or since == parsed.artifact.fingerprint:
            extras.message = f"unchanged since {since}"
            return deliver_sparse(d, [], extras, max_items=0)
        old = self.revisions.text(parsed.artifact.location, since)
        if old is None:
            raise IntentError(
                f"since={since!r} is not a revision git or this server has: pass a commit or an earlier "
                "pointer's sha256: rev, or read without `since`"
            )
        diff = "\n".join(
            difflib.unified_diff(
                old.split("\n"), parsed.artifact.text.split("\n"), since, parsed.artifact.rev, lineterm="", n=2
            )
        )
        if len(diff) >= len(parsed.artifact.text):
            return None  # the diff would cost more than the file: answer with the view asked for
        extras.result = OpResult(value=diff, scanned=f"diff of {since} against {parsed.artifact.rev}")
        return deliver_sparse(d, [], extras, max_items=0)

    # -- helpers -----------------------------------------------------------------------------
    def _budget(self, budget: int | None) -> int:
        value = self.settings.default_budget_tokens if budget is None else budget
        if not MIN_BUDGET_TOKENS <= value <= HARD_RESPONSE_CAP_TOKENS:
            raise BudgetTooSmall(
                f"budget_tokens={value} is out of range: use {MIN_BUDGET_TOKENS}..{HARD_RESPONSE_CAP_TOKENS}"
            )
        return value

    def _episode(self, session: Session, parsed: ParsedArtifact, objective: str, intent: Intent | None) -> Episode:
        artifact = parsed.artifact
        episode = session.find_episode(artifact.path, artifact.fingerprint, objective)
        if episode is None:
            episode = Episode(
                id=session.new_episode_id(),
                path=artifact.path,
                type=parsed.type,
                fingerprint=artifact.fingerprint,
                rev=artifact.rev,
                objective=objective,
                full_view_tokens=self.full_view_tokens(parsed),
                ledger=Ledger(full_view_chars=len(artifact.text)),
                slots=tuple(intent.slots or ()) if intent else (),
            )
            session.add_episode(episode)
        return episode

    def _delivery(
        self, parsed: ParsedArtifact, episode: Episode, intent: Intent | None, budget: int, action: str, view: str
    ) -> Delivery:
        located = intent if intent is not None and (intent.goal or intent.slots or intent.needles) else None
        return Delivery(
            parsed=parsed,
            episode=episode,
            counter=self.counter,
            budget_tokens=budget,
            action=action,
            view=view,
            coverage=self._coverage_fn(parsed, episode, intent),
            origin=(lambda: self._likeliest_region(parsed, located, episode)) if located is not None else None,
        )

    def _coverage_fn(self, parsed: ParsedArtifact, episode: Episode, intent: Intent | None) -> CoverageFn:
        slots = actions.slots_of(intent) if intent and (intent.goal or intent.slots or intent.needles) else []
        return episode_coverage(parsed, episode, slots, unit_limit=2 * self.settings.passage_chars)

    def _note_version(self, session: Session, parsed: ParsedArtifact) -> list[str]:
        """When a file's fingerprint moved, its earlier evidence and coverage are invalidated."""
        artifact = parsed.artifact
        previous = session.seen.get(artifact.path)
        invalidated: list[str] = []
        if previous is not None and previous != artifact.fingerprint:
            for episode in session.episodes.values():
                if episode.path == artifact.path and episode.fingerprint != artifact.fingerprint and not episode.stale:
                    episode.stale = episode.closed = True
                    invalidated.extend(item.pointer for item in episode.delivered)
        session.seen[artifact.path] = artifact.fingerprint
        session.changed.discard(artifact.path)
        return invalidated

    def _count(self, parsed: ParsedArtifact, intent: Intent) -> OpResult:
        text = parsed.artifact.text.casefold()
        needles = [n for n in intent.needles or [] if n.strip()]
        total = sum(text.count(n.casefold()) for n in needles)
        return OpResult(
            value=total,
            scanned=f"all {len(parsed.artifact.text)} characters",
            provenance=[f"case-insensitive occurrences of {', '.join(map(repr, needles))}"],
        )

    def _scope(self, parsed: ParsedArtifact) -> str:
        return (
            f"{parsed.type} reader; located with {self.locator.name} over {len(parsed.passages)} passages "
            f"({parsed.lines.line_count} lines)"
        )

    def _already_whole(
        self, d: Delivery, parsed: ParsedArtifact, intent: Intent, extras: Extras, action: str
    ) -> EvidencePack:
        """This session already holds the whole of this small file's version: name where the matches are
        (and, for verify, the verdict) instead of sending its text again."""
        if action == "verify" and intent.goal:
            cands, extras.verification = actions.verify_claim(parsed, intent.goal, self.locator)
        else:
            ranking = self.locator.rank(parsed, query_for(intent))
            cands = actions.candidates_of(parsed, ranking, intent)
        pointers = [pointer_for(parsed, c.start, c.end) for c in cands]
        reason = "already sent whole in this session: matches named, not resent (view='full' resends)"
        pack = d.pack(
            items=[],
            spans=[(c.start, c.end) for c in cands],
            decision="native_fit",
            reason=reason,
            extras=extras,
            already=pointers,
        )
        return d.fit(minimal_frame(pack, self.counter))

    def _likeliest_region(self, parsed: ParsedArtifact, intent: Intent, episode: Episode | None = None) -> int:
        """Where a full view should begin: the best BM25 passage (needles included) not yet sent in the
        episode, at the start of its line when that is near, else at the passage itself (a single long
        line has no better place)."""
        if not (intent.goal or intent.slots or intent.needles):
            return 0
        sent = full_view_spans(episode) if episode is not None else []
        for index, _ in self.locator.rank(parsed, query_for(intent))[: actions.RANKING_KEPT]:
            passage = parsed.passages[index]
            if not any(s < passage.end and passage.start < e for s, e in sent):
                return page_start(parsed, sent, passage.start)
        return 0
