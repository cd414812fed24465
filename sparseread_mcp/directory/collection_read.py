"""Reading a directory: previews, cross-file focus/collect delegating to each file's reader, search.

Items always come from files, one pointer each (`path@rev#anchor`). Focus ranks files by path and
content, then lets each top file's own reader locate passages; search (needles without a goal)
scans every text file and returns matching lines with context, the total count, and a cursor.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..deadline import checkpoint
from ..errors import IntentError, SparsereadError
from ..evidence import Hit, item_for, passage_candidate
from ..files.artifacts import content_rev
from ..gate.delivery import serialized_chars
from ..gate.ledger import Ledger
from ..gate.respond import evidence_pack, fit_pack, fit_preview, pointers_note, shrink_pack
from ..models import (
    ArtifactInfo,
    ArtifactRef,
    EpisodeRef,
    EvidenceItem,
    EvidencePack,
    Exposure,
    Gate,
    Intent,
    OpResult,
    OutlineItem,
    Preview,
    SlotCoverage,
)
from ..protocol.actions import slots_of
from ..protocol.coverage import summarize, support
from ..protocol.intents import objective_of, query_for, says_what_to_locate
from ..protocol.session import DeliveredItem, Episode, Session
from ..tokens import stamp_tokens
from ..vocabulary import PREVIEW_TOOL, READ_TOOL
from .code_answer import CODE_FILES, CODE_SHARE, pending_note, ranked_code
from .collection import Inventory, inventory_lines
from .filenames import is_source
from .needlesearch import walk_note as _walk_note

if TYPE_CHECKING:
    from .context import DirectoryContext
    from .fileindex import FileIndex

TOP_FILES = 6
PASSAGES_PER_FILE = 3
_READ_HINT = f"read a file's passage: {READ_TOOL}(pointer)"


def preview_directory(engine: DirectoryContext, inventory: Inventory, budget: int) -> Preview:
    rows = inventory_lines(inventory, depth=3, entries=200)
    base = Preview(
        artifact=ArtifactInfo(
            path=inventory.root_path or ".",
            type="directory",
            fingerprint=inventory.fingerprint,
            size_bytes=inventory.total_bytes,
        ),
        full_view_chars=inventory.total_bytes,
        full_view_tokens=inventory.total_bytes // 4,
        outline=[],
        samples=[],
        signals={
            "files": len(inventory.files),
            "bytes": inventory.total_bytes,
            "tokens_estimate": inventory.total_bytes // 4,
            "collapsed_folders": len(inventory.collapsed),
            "skipped": inventory.skipped,
            "truncated": "yes" if inventory.truncated else "no",
            **({"left_out": note} if (note := _walk_note(inventory)) else {}),
        },
        route="sparse",
        reason="a directory is read by ranking its files; focus, collect or search with needles",
        tokenizer=engine.counter.name,
    )
    outline = [OutlineItem(title=title, anchor=anchor, lines=(1, 1), level=level) for title, anchor, level in rows]
    # Rows are in walk order (a folder, then what it holds): a tight budget keeps the head, not a level.
    return fit_preview(base.model_copy(update={"outline": outline}), budget, engine.counter, by_level=False)


def read_directory(
    engine: DirectoryContext,
    session: Session,
    inventory: Inventory,
    *,
    action: str,
    intent: Intent | None,
    budget: int,
    continuing: Episode | None = None,
) -> EvidencePack:
    """Focus, collect or search a directory; with `continuing`, deliver that episode's next queued items."""
    if action == "verify":
        raise IntentError("verify works on a file or a pointer (path@rev#anchor), not on a directory")
    episode = continuing or _episode(session, inventory, objective_of(intent))
    result: OpResult | None = None
    if continuing is None and action != "refine":
        if not says_what_to_locate(intent):
            raise IntentError(
                f"{inventory.root_path or '.'} is a directory: pass intent.goal (ranked files and passages) or "
                f"intent.needles (search every file), or {PREVIEW_TOOL} it for the inventory"
            )
        if intent.needles and not intent.goal and not intent.slots:
            hits, result = engine.search_folder(inventory, list(intent.needles))
        else:
            # Built once per call: a large tree's first index may be partial, and a second build would
            # read more files into it past the call's share of time (see engine.file_index).
            index = engine.file_index(inventory, first=query_for(intent).terms)
            if action != "collect" and not intent.slots and _is_code(index):
                hits, result = ranked_code(engine, inventory, intent, index)
            else:
                hits = _ranked(engine, inventory, intent, index, collect=action == "collect")
                result = _index_note(index)
        episode.pending = list(hits)
    return _deliver(engine, episode, inventory, intent, budget, result)


def _episode(session: Session, inventory: Inventory, objective: str) -> Episode:
    path = inventory.root_path or "."
    episode = session.find_episode(path, inventory.fingerprint, objective)
    if episode is None:
        episode = Episode(
            id=session.new_episode_id(),
            path=path,
            type="directory",
            fingerprint=inventory.fingerprint,
            rev=content_rev(inventory.fingerprint),
            objective=objective,
            full_view_tokens=inventory.total_bytes // 4,
            ledger=Ledger(full_view_chars=max(1, inventory.total_bytes)),
        )
        session.add_episode(episode)
    return episode


def _is_code(index: FileIndex) -> bool:
    """A code directory: at least CODE_SHARE of its indexed files, or CODE_FILES of them, are source files."""
    sources = index.derived(("sources",), lambda: sum(is_source(f.path) for f in index.files))
    return bool(index.files) and (sources >= CODE_SHARE * len(index.files) or sources >= CODE_FILES)


def _index_note(index: FileIndex) -> OpResult | None:
    """What a partial index left out, as a result of its own (None when the index covers the folder)."""
    if not index.pending:
        return None
    return OpResult(
        value=len(index.files),
        scanned=f"{len(index.files)} files indexed",
        left_out=pending_note(index),
    )


def _ranked(
    engine: DirectoryContext, inventory: Inventory, intent: Intent, index: FileIndex, *, collect: bool
) -> list[Hit]:
    hits: list[tuple[float, Hit]] = []
    slot_queries = (
        [(s.id, query_for(intent, slot_id=s.id)) for s in intent.slots]
        if collect and intent.slots
        else [(None, query_for(intent))]
    )
    for slot_id, query in slot_queries:
        files = index.rank(list(query.terms))
        if not files:
            continue
        floor = files[0][1] * 0.3
        for entry, file_score in files[:TOP_FILES]:
            checkpoint()
            if file_score < floor:
                break
            try:
                parsed = engine.open(f"{inventory.root_path}/{entry.path}" if inventory.root_path else entry.path)
            except SparsereadError:
                continue  # unreadable or unsupported files are skipped, not fatal
            ranking = engine.locator.rank(parsed, query)
            slots = tuple([slot_id] if slot_id else [s.id for s in slots_of(intent)])
            for passage_index, score in ranking[:PASSAGES_PER_FILE]:
                candidate = passage_candidate(parsed, passage_index, score, slots)
                hit = Hit(
                    item=item_for(parsed, candidate),
                    start=candidate.start,
                    end=candidate.end,
                    path=parsed.artifact.path,
                )
                hits.append((file_score * (0.5 + 0.5 * score), hit))
    hits.sort(key=lambda pair: -pair[0])
    unique: dict[str, Hit] = {}
    for score, hit in hits:
        item = hit.item.model_copy(update={"score": round(score, 4)})
        if item.pointer in unique:
            merged = sorted(set(unique[item.pointer].item.slots) | set(item.slots))
            unique[item.pointer] = Hit(
                item=unique[item.pointer].item.model_copy(update={"slots": merged}),
                start=hit.start,
                end=hit.end,
                path=hit.path,
            )
        else:
            unique[item.pointer] = Hit(item=item, start=hit.start, end=hit.end, path=hit.path)
    return list(unique.values())


def _deliver(
    engine: DirectoryContext,
    episode: Episode,
    inventory: Inventory,
    intent: Intent | None,
    budget: int,
    result: OpResult | None,
) -> EvidencePack:
    """The episode's next queued items that fit `budget` (at most 12), recorded as delivered."""
    delivered = {d.pointer for d in episode.delivered}
    pending = [h for h in episode.pending if isinstance(h, Hit) and h.item.pointer not in delivered]
    # A result says what it did not cover itself; otherwise the pack's left_out says what the walk cut.
    walk_note = _walk_note(inventory) if result is None or result.left_out is None else None
    frame = _Frame(engine=engine, episode=episode, inventory=inventory, intent=intent, result=result, walk=walk_note)
    fit_pack(frame.pack([], len(pending)), budget, engine.counter)  # the frame fits, or BudgetTooSmall says so
    chosen = _fitting(frame, pending, budget)
    left_out = _pointers_only(frame, pending, budget) if pending and not chosen else None
    pack = frame.pack([h.item for h in chosen], len(pending) - len(chosen), left_out)
    pack = fit_pack(pack, budget, engine.counter)
    checkpoint()  # a cancelled call stops here with nothing recorded
    episode.ledger.record(pack.exposure.payload_chars)
    for hit in chosen:
        episode.delivered.append(
            DeliveredItem(
                pointer=hit.item.pointer, start=0, end=0, slots=tuple(hit.item.slots), support={}, text=hit.item.text
            )
        )
    episode.coverage.update({c.slot: c for c in pack.coverage})
    return pack


@dataclass(frozen=True, slots=True, kw_only=True)
class _Frame:
    """What every pack one directory delivery tries shares: the episode, the inventory, the intent."""

    engine: DirectoryContext
    episode: Episode
    inventory: Inventory
    intent: Intent | None
    result: OpResult | None
    walk: str | None = None  # what the walk left out, when no result says it

    def note(self, left_out: str | None) -> str | None:
        """`left_out` (the items that did not fit), then what the walk left out."""
        return "; ".join(n for n in (left_out, self.walk) if n) or None

    def pack(self, items: list[EvidenceItem], remaining: int, left_out: str | None = None) -> EvidencePack:
        """The pack with these items, `remaining` more queued, and `left_out` naming what did not fit."""
        episode, counter = self.episode, self.engine.counter
        coverage = _coverage(episode, self.intent, items)
        payload = serialized_chars(items)
        pack = evidence_pack(
            episode=EpisodeRef(
                id=episode.id,
                artifact=ArtifactRef(path=episode.path, type="directory", fingerprint=episode.fingerprint),
                objective=episode.objective,
            ),
            action="focus",
            view="pointers" if left_out else "snippets",
            items=items,
            result=self.result,
            coverage=coverage,
            unresolved=[c.slot for c in coverage if c.status != "found"],
            scope=f"directory: {len(self.inventory.files)} files ({self.inventory.total_bytes} bytes); items come "
            f"from {len({i.pointer.split('@')[0] for i in items})} files, each located by its own reader",
            exposure=Exposure(
                payload_chars=payload,
                payload_tokens=sum(counter.count(i.text) for i in items),
                episode_chars=episode.ledger.sparse_chars + payload,
                full_view_chars=episode.ledger.full_view_chars,
                full_view_tokens=episode.full_view_tokens,
                remaining_chars=max(0, episode.ledger.remaining - payload),  # E may pass L for a collection
            ),
            gate=Gate(
                decision="sparse",
                reason=f"{len(items)} item(s) from the directory, {remaining} more queued; a collection is "
                "not replaced by one full view, so each file's reads carry its own bound",
            ),
            next_steps=["pass `cursor` (or action='refine') for the next items", _READ_HINT]
            if remaining
            else [_READ_HINT],
            left_out=self.note(left_out),
            cursor=f"{episode.id}:dir" if remaining else None,
            tokenizer=counter.name,
        )
        return stamp_tokens(pack, counter)


def _coverage(episode: Episode, intent: Intent | None, items: list[EvidenceItem]) -> list[SlotCoverage]:
    """Each slot's support in everything the episode delivered so far and in `items`."""
    slots = slots_of(intent) if intent and (intent.goal or intent.slots) else []
    evidence: dict[str, list[tuple[str, float]]] = {}
    texts = [(d.pointer, d.text) for d in episode.delivered] + [(i.pointer, i.text) for i in items]
    for slot in slots:
        for pointer, text in texts:
            if (value := support(slot, text)) > 0:
                evidence.setdefault(slot.id, []).append((pointer, value))
    return summarize([s.id for s in slots], evidence)


def _fitting(frame: _Frame, pending: list[Hit], budget: int) -> list[Hit]:
    """The queued hits, in order, that fit the budget together (at most 12; the first one shrunk if need be)."""
    chosen: list[Hit] = []
    for hit in pending:
        if len(chosen) >= 12:
            break
        trial = frame.pack([h.item for h in [*chosen, hit]], len(pending) - len(chosen) - 1)
        if trial.tokens > budget and not chosen:
            trial = shrink_pack(trial, budget, frame.engine.counter)  # the first item before hints and echoes
        if trial.tokens <= budget:
            chosen.append(hit)
    return chosen


def _pointers_only(frame: _Frame, pending: list[Hit], budget: int) -> str | None:
    """When no item fits: the note naming the next ones by pointer, as many as fit (the cursor holds them all)."""
    pointers = [h.item.pointer for h in pending]
    for count in (5, 3, 1, 0):
        left_out = pointers_note(pointers[:count], budget, total=len(pointers), what="item(s)")
        shrunk = shrink_pack(frame.pack([], len(pending), left_out), budget, frame.engine.counter)
        if shrunk.tokens <= budget and shrunk.left_out == frame.note(left_out):
            return left_out
    return None  # not even the count fits: the gate's reason says how many are queued
