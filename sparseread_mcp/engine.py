"""The read engine: one contract, ReadRequest -> EvidencePack, usable without MCP."""

from __future__ import annotations

import time
from collections.abc import Sequence
from functools import partial
from stat import S_ISDIR, S_ISREG

from .answers.as_lines import asks_for_lines
from .answers.handlers import FileAnswers
from .answers.read import FileRead, ReadRequest, intent_on, opening_extras
from .answers.resumed import dereference, next_page, verify_pointed
from .commands.savings import build_trace, card_call, preview_call, read_call
from .config import HARD_RESPONSE_CAP_TOKENS, MIN_BUDGET_TOKENS, Settings
from .directory.collection import Inventory
from .directory.collection_read import preview_directory, read_directory
from .directory.fileindex import FileIndex
from .directory.indexes import FolderIndexes
from .directory.repoindex import RepoIndexStore
from .errors import BinaryArtifact, BudgetTooSmall, SparsereadError, StaleArtifact
from .evidence import Hit
from .files.anchors import Target, parse_target
from .files.artifacts import LruCache
from .files.indexcache import IndexCache
from .files.large import large_card, read_range
from .files.revisions import Revisions
from .files.roots import Roots
from .files.textdiff import TextDiff
from .gate.delivery import CoverageFn, Delivery, Extras
from .gate.ledger import Ledger
from .gate.respond import fit_card, fit_preview
from .gate.route import choose_route
from .isolation import WorkerPool, shared_pool, tasks
from .isolation.opened import OpenedFiles
from .locate import LocatorSet
from .locate.base import concept_terms
from .locate.bm25 import passage_index
from .models import Card, EvidencePack, Intent, OpResult, Preview
from .preview import PREVIEW_SAMPLES, binary_card, build_preview
from .protocol import actions
from .protocol.card import build_card
from .protocol.coverage import episode_coverage
from .protocol.intents import objective_of, query_for, says_what_to_locate
from .protocol.session import Episode, Session
from .readers.base import ParsedArtifact
from .readers.registry import ReaderRegistry, default_registry
from .select.policy import Policy
from .stores import SessionStore, open_session_store
from .tokens import TokenCounter

__all__ = ["ReadEngine", "ReadRequest"]


class ReadEngine:
    """Holds the caches and sessions; every public method is safe to call from worker threads."""

    def __init__(self, settings: Settings, *, registry: ReaderRegistry | None = None) -> None:
        self.settings = settings
        self.roots = Roots(settings.roots)
        self.registry = registry or default_registry(settings)
        # Every parse, hash, diff and directory walk runs in these worker processes (see isolation/).
        self.workers: WorkerPool = shared_pool(size=settings.worker_count, memory_mb=settings.worker_memory_mb)
        self.counter = TokenCounter(settings.tokenizer, margin=settings.token_margin)
        self.sessions: SessionStore = open_session_store(settings.store)
        # Replicas on a shared store share parsed artifacts too, through the cache directory.
        self.index_cache = IndexCache(settings.cache_dir, roots=self.roots) if isinstance(settings.store, str) else None
        self.locators = LocatorSet(semantic_model=settings.semantic_model, cache_dir=settings.cache_dir)
        self.locator = self.locators.get("bm25")  # refine, verify and directories locate with BM25
        # Half for parsed files, half for directory indexes: by default that holds one index of a tree at
        # the walk cap (19,216 files of installed packages: 242 MB), which is otherwise read back each call.
        cache_bytes = settings.cache_mb * 1024 * 1024
        self._full_tokens: LruCache[str, int] = LruCache(512)
        self.revisions = Revisions(self.roots)  # earlier versions: git for commits, memory for content hashes
        self.files = OpenedFiles(
            settings,
            roots=self.roots,
            registry=self.registry,
            revisions=self.revisions,
            workers=self.workers,
            index_cache=self.index_cache,
            cache_bytes=cache_bytes // 2,
        )
        self.answers = FileAnswers(
            settings=settings,
            counter=self.counter,
            locators=self.locators,
            selection=Policy(settings, self.locators),
            revisions=self.revisions,
            roots=self.roots,
            diff=self.diff,
        )
        # directory -> (path, size, mtime) -> inventory type, learned by the walks in the workers
        self._file_types: LruCache[str, dict[tuple[str, int, int], str]] = LruCache(16)
        self.repo_indexes = RepoIndexStore.for_settings(settings, self.roots)  # None: not kept on disk
        # Looked up at each build, so a replaced reader (a test's counting one) is the one used.
        self.indexes = FolderIndexes(
            lambda base, entries, *, label: self.files.extract_features(base, entries, label=label),
            self.repo_indexes,
            cache_bytes // 2,
        )

    @property
    def selection(self) -> Policy:
        """Which configuration answers a located read (held by the file answers, which use it)."""
        return self.answers.selection

    @selection.setter
    def selection(self, selection: Policy) -> None:
        self.answers.selection = selection

    # -- artifacts ---------------------------------------------------------------------------
    def open(self, path: str, *, as_lines: bool = False) -> ParsedArtifact:
        """Resolve inside the roots; a worker reads, fingerprints and (once per version) parses the file. A
        text file its reader refuses (malformed JSON, YAML or TOML, a CSV that does not load as a table) is
        read as plain lines when `as_lines` (a line anchor, view='lines'); otherwise the refusal says how."""
        return self.files.open(path, as_lines=as_lines)

    def open_at(self, path: str, rev: str) -> ParsedArtifact | None:
        """The version of `path` that `rev` names (a commit from git, or a content hash seen before)."""
        return self.files.open_at(path, rev)

    @property
    def parse_count(self) -> int:
        """How many parses ran (cache misses): repeated reads of an unchanged file add none."""
        return self.files.parse_count

    def full_view_tokens(self, parsed: ParsedArtifact) -> int:
        text = parsed.artifact.text
        return self._full_tokens.get_or_build(parsed.artifact.fingerprint, lambda: self.counter.count(text))

    def inventory(self, relative: str) -> Inventory:
        """The directory's inventory, walked by a worker each call (its ignore files compiled and matched
        there); its fingerprint tells whether the index is reusable."""
        location = self.roots.resolve(relative)
        types = self._file_types.get(location.relative) or {}
        if self.repo_indexes is not None and not types:  # a new session on a known tree: the stored types
            self.repo_indexes.fill_types(location, types)
        shown = location.relative if location.relative != "." else ""
        found, learned = self.files.work(
            tasks.inventory,
            location,
            shown,
            self.registry,
            types,
            self.settings.inventory_max_files,
            label=f"{location.relative}/",
        )
        self._file_types.put(location.relative, learned)
        return found

    def file_index(self, inventory: Inventory, *, first: Sequence[str] = ()) -> FileIndex:
        """The directory's file index, built once per fingerprint and within the call's time (a large
        tree's first one may be partial: see directory/indexes.py)."""
        return self.indexes.get(self.roots.resolve(inventory.root_path or "."), inventory, first=first)

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
        with session.lock, self.files.isolated(session_key):
            started = time.monotonic()
            preview = self._preview(session, path, intent, budget)
            session.record_call(preview_call(preview, time.monotonic() - started))
            self.sessions.commit(session)
            return preview

    def _preview(self, session: Session, path: str, intent: Intent | None, budget: int) -> Preview:
        target_path = parse_target(path, exists=self._exists).path
        location = self.roots.resolve(target_path)
        found = location.stat()  # what is there now, opened beneath the root (see safeopen)
        if S_ISDIR(found.st_mode):
            return preview_directory(self, self.inventory(target_path), budget)
        if S_ISREG(found.st_mode) and found.st_size > self.settings.max_parse_bytes:
            digest = self.files.work(tasks.digest, location, 16, label=location.relative)
            card = large_card(location, digest, self.settings.max_parse_bytes, self.counter)
            return fit_preview(card, budget, self.counter)
        try:
            parsed = self.open(target_path)
        except BinaryArtifact as exc:
            digest = self.files.work(tasks.digest, location, 16, label=location.relative)
            return fit_preview(binary_card(location, digest, str(exc), self.counter), budget, self.counter)
        session.note_version(parsed.artifact.path, parsed.artifact.fingerprint)
        intent, _ = intent_on(session, parsed.artifact.path, intent)
        route = choose_route(
            full_view_tokens=self.full_view_tokens(parsed),
            native_fit_tokens=self.settings.native_fit_tokens,
            intent=intent,
        )
        reader = self.registry.reader_for(location.absolute)
        matches, focus = self._best_matches(parsed, intent) if not route.native else (None, {})
        preview = build_preview(
            parsed,
            full_view_tokens=self.full_view_tokens(parsed),
            route=route,
            counter=self.counter,
            budget_tokens=budget,
            configurations=self.registry.configurations(reader),
            matches=matches,
            focus=focus,
        )
        preview = fit_preview(preview, budget, self.counter)  # the guarantee: within budget, or a clear error
        if preview.content is not None:
            session.whole[parsed.artifact.path] = parsed.artifact.fingerprint
        return preview

    def _best_matches(self, parsed: ParsedArtifact, intent: Intent | None) -> tuple[list[int] | None, dict[str, float]]:
        """The passages the preview's own intent ranks first (BM25), for its samples, and the terms it
        looked for (the glossary's too, where this document needs them), each weighted by its rarity here
        (BM25's idf); None and none without one."""
        if not says_what_to_locate(intent):
            return None, {}
        query = query_for(intent)
        ranked = [index for index, _ in self.locator.rank(parsed, query)[:PREVIEW_SAMPLES]]
        index = passage_index(parsed)
        return ranked, {term: index.rarity(term) for term in concept_terms(parsed, query)}

    def read(self, session_key: str, request: ReadRequest, *, reserve_tokens: int = 0) -> EvidencePack:
        """The EvidencePack for `request`, within its budget less `reserve_tokens` (kept free for what the
        caller adds, such as an HTTP session handle)."""
        budget = self._budget(request.budget_tokens) - reserve_tokens
        session = self.sessions.get(session_key)
        with session.lock, self.files.isolated(session_key):
            started = time.monotonic()
            try:
                pack = self._read(session, request, budget)
                session.record_call(read_call(pack, request.action, time.monotonic() - started))
                return pack
            finally:
                self.sessions.commit(session)  # persistent stores write the session in one transaction

    def _read(self, session: Session, request: ReadRequest, budget: int) -> EvidencePack:
        if request.cursor:
            return self._directory_page(session, request.cursor, budget) or next_page(
                self, session, request.cursor, budget
            )
        target = parse_target(request.target, exists=self._exists)
        if target.rev is not None and request.action == "verify":
            return verify_pointed(self, session, target, budget)
        location = self.roots.resolve(target.path)
        found = location.stat()  # what is there now, opened beneath the root (see safeopen)
        if target.rev is None and S_ISDIR(found.st_mode):
            inventory = self.inventory(target.path)
            intent, _ = intent_on(session, inventory.root_path or ".", request.intent)
            return read_directory(self, session, inventory, action=request.action, budget=budget, intent=intent)
        if S_ISREG(found.st_mode) and found.st_size > self.settings.max_parse_bytes:
            return read_range(location, target, budget, self.counter, stream=self.files.stream)
        parsed = self.open(target.path, as_lines=asks_for_lines(target, request))
        invalidated = session.note_version(parsed.artifact.path, parsed.artifact.fingerprint)
        verify = request.action == "verify"
        intent, continued = intent_on(session, parsed.artifact.path, request.intent, continues=not verify)
        if target.rev is not None:
            return dereference(self, session, parsed, target, intent, budget)
        opening = opening_extras(self.scope_of(parsed), invalidated, continued)
        return self.answers.answer(self._file_read(session, parsed, target, request, intent, budget, opening))

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
        with session.lock, self.files.isolated(session_key):
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

    def _exists(self, path: str) -> bool:
        """Whether `path` names something inside the roots (which way to read a name holding `#` or `@`)."""
        try:
            self.roots.resolve(path)
        except SparsereadError:
            return False
        return True

    def _changed(self, session: Session, path: str) -> bool:
        try:
            location = self.roots.resolve(path)
            return self.files.work(tasks.digest, location, 0, label=path).fingerprint != session.seen[path]
        except SparsereadError:
            return True

    def search_folder(self, inventory: Inventory, needles: list[str]) -> tuple[list[Hit], OpResult]:
        return self.files.search_folder(inventory, needles)

    def diff(self, old: str, new: str, *, old_label: str, new_label: str, context: int, label: str) -> TextDiff:
        return self.files.diff(old, new, old_label=old_label, new_label=new_label, context=context, label=label)

    # -- one file ----------------------------------------------------------------------------
    def _file_read(
        self,
        session: Session,
        parsed: ParsedArtifact,
        target: Target,
        request: ReadRequest,
        intent: Intent | None,
        budget: int,
        opening: Extras,
    ) -> FileRead:
        """The request resolved for this file, once: its episode, delivery, route and opening frame."""
        episode = self.episode_for(session, parsed, objective_of(intent), intent)
        view = request.view or "snippets"
        return FileRead(
            session=session,
            parsed=parsed,
            target=target,
            action=request.action,
            view=view,
            intent=intent,
            since=request.since,
            route=choose_route(
                full_view_tokens=episode.full_view_tokens,
                native_fit_tokens=self.settings.native_fit_tokens,
                intent=intent,
            ),
            delivery=self.delivery_for(parsed, episode, intent, budget, request.action, view, session=session),
            extras=opening,
        )

    def _directory_page(self, session: Session, cursor: str, budget: int) -> EvidencePack | None:
        """The next stretch of a directory search, when the cursor is one (else None)."""
        episode_id, _, offset_text = cursor.rpartition(":")
        episode = session.episodes.get(episode_id)
        if episode is None or episode.type != "directory" or offset_text != "dir":
            return None
        inventory = self.inventory(episode.path if episode.path != "." else ".")
        if inventory.fingerprint != episode.fingerprint:
            raise StaleArtifact(f"{episode.path} changed since this search; run it again")
        return read_directory(self, session, inventory, action="refine", intent=None, budget=budget, continuing=episode)

    # -- helpers -----------------------------------------------------------------------------
    def _budget(self, budget: int | None) -> int:
        value = self.settings.default_budget_tokens if budget is None else budget
        if not MIN_BUDGET_TOKENS <= value <= HARD_RESPONSE_CAP_TOKENS:
            raise BudgetTooSmall(
                f"budget_tokens={value} is out of range: use {MIN_BUDGET_TOKENS}..{HARD_RESPONSE_CAP_TOKENS}"
            )
        return value

    def episode_for(self, session: Session, parsed: ParsedArtifact, objective: str, intent: Intent | None) -> Episode:
        artifact = parsed.artifact
        episode = session.find_episode(artifact.path, artifact.fingerprint, objective)
        if episode is not None and episode.ledger.full_view_chars != len(artifact.text):
            # Restored from a store whose row was edited: its ledger is not of this text, so the gate's
            # bounds would not hold. It is replaced, as a session in another format is.
            session.episodes.pop(episode.id, None)
            episode = None
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

    def delivery_for(
        self,
        parsed: ParsedArtifact,
        episode: Episode,
        intent: Intent | None,
        budget: int,
        action: str,
        view: str,
        *,
        session: Session | None = None,
    ) -> Delivery:
        """How this read is delivered; with `session`, what that session already holds of the file is named,
        not sent again."""
        located = intent if says_what_to_locate(intent) else None
        artifact = parsed.artifact
        return Delivery(
            parsed=parsed,
            episode=episode,
            counter=self.counter,
            budget_tokens=budget,
            action=action,
            view=view,
            coverage=self._coverage_fn(parsed, episode, intent),
            locator=self.locator,
            located=located,
            held=None if session is None else partial(session.holds, artifact.path, artifact.fingerprint),
        )

    def _coverage_fn(self, parsed: ParsedArtifact, episode: Episode, intent: Intent | None) -> CoverageFn:
        slots = actions.slots_of(intent) if says_what_to_locate(intent) else []
        return episode_coverage(parsed, episode, slots, unit_limit=2 * self.settings.passage_chars)

    def scope_of(self, parsed: ParsedArtifact) -> str:
        return (
            f"{parsed.type} reader; located with {self.locator.name} over {len(parsed.passages)} passages "
            f"({parsed.lines.line_count} lines)"
        )
