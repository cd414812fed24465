"""A needle search over a folder: every file read, every pattern matched, in a worker process.

What comes back is bounded by the inventory (its file cap) and the per-file size cap: the matching lines
with a line of context, the per-file counts, and what was not searched (see leftout)."""

from __future__ import annotations

import hashlib
from collections import Counter

from ..deadline import checkpoint
from ..errors import OutsideRoots, UnsupportedArtifact
from ..evidence import Hit
from ..files.anchors import format_lines
from ..files.artifacts import content_rev
from ..files.roots import ResolvedPath
from ..locate.patterns import literal_needle
from ..models import EvidenceItem, Intent, OpResult
from ..protocol.intents import query_for
from .collection import MAX_DEPTH, Inventory
from .leftout import Unsearched, left_out_line, walk_cut_by_cap

SEARCH_CONTEXT_LINES = 1
SEARCH_SKIP_TYPES = frozenset({"binary", "unreadable", "pdf", "xlsx", "parquet"})


def search_folder(base: ResolvedPath, inventory: Inventory, needles: list[str], cap: int) -> tuple[list[Hit], OpResult]:
    """Every match of the needles in every text file under `base` (the inventory's folder), as lines with
    context; never whole files. Runs in a worker: it reads every file and runs the user's patterns."""
    query = query_for(Intent(needles=needles))
    patterns = list(query.patterns) + [literal_needle(n) for n in query.needles]
    hits: list[Hit] = []
    per_file: list[tuple[str, int]] = []
    too_large: list[str] = []
    not_searched: Counter[str] = Counter()
    total = scanned = 0
    for entry in inventory.files:
        checkpoint()
        if entry.type in SEARCH_SKIP_TYPES:
            not_searched[entry.type] += 1
            continue
        if entry.size > cap:
            too_large.append(entry.path)
            continue
        data = _read_verified(base, entry.path, cap)
        if data is None:
            not_searched["unreadable"] += 1
            continue  # gone, unreadable, grown past the cap, or a symlink out of the root: never shown
        scanned += 1
        text = data.decode("utf-8", "replace")
        lines = text.split("\n")
        matched = [n for n, line in enumerate(lines, start=1) if any(p.search(line) for p in patterns)]
        if not matched:
            continue
        total += len(matched)
        rel = f"{inventory.root_path}/{entry.path}" if inventory.root_path else entry.path
        per_file.append((rel, len(matched)))
        rev = content_rev(hashlib.sha256(data).hexdigest())
        for first, last in _windows(matched, len(lines)):
            snippet = "\n".join(lines[first - 1 : last])
            anchor = format_lines(first, last)
            item = EvidenceItem(
                pointer=f"{rel}@{rev}#{anchor}",
                anchor=anchor,
                lines=(first, last),
                page=None,
                text=snippet,
                score=1.0,
                slots=[],
            )
            hits.append(Hit(item=item, start=first, end=last, path=rel))
    per_file.sort(key=lambda pair: -pair[1])
    left_out = walk_note(inventory, Unsearched(types=not_searched, too_large=tuple(too_large), size_cap=cap))
    if left_out and walk_cut_by_cap(inventory.cuts):
        left_out = f"the count stopped at a cap: at least {total:,} matching lines; {left_out}"
    result = OpResult(
        value=total,
        scanned=f"{scanned} text files under {inventory.root_path or '.'}",
        columns=["path", "matching lines"],
        rows=[[p, c] for p, c in per_file[:50]],
        row_count=len(per_file),
        rows_scanned=scanned,
        query=" | ".join(needles),
        capped=len(per_file) > 50,
        provenance=["line-by-line scan, case-insensitive"],
        left_out=left_out,
    )
    return hits, result


def walk_note(inventory: Inventory, unsearched: Unsearched | None = None) -> str | None:
    """What the walk (and, given `unsearched`, the answer) left out, in one line; None when nothing."""
    return left_out_line(
        inventory.cuts,
        inventory.collapsed,
        max_files=inventory.max_files,
        max_depth=MAX_DEPTH,
        unsearched=unsearched,
        folder=inventory.root_path,
    )


def _read_verified(base: ResolvedPath, relative: str, cap: int) -> bytes | None:
    """A listed file's bytes, read once beneath the root (a symlink swapped in is refused); None when it
    cannot be read, is not there any more, or is over `cap`."""
    try:
        return base.child(relative).read(max_bytes=cap).data
    except (OSError, OutsideRoots, UnsupportedArtifact):
        return None


def _windows(matched: list[int], line_count: int) -> list[tuple[int, int]]:
    windows: list[tuple[int, int]] = []
    for n in matched:
        first, last = max(1, n - SEARCH_CONTEXT_LINES), min(line_count, n + SEARCH_CONTEXT_LINES)
        if windows and first <= windows[-1][1] + 1:
            windows[-1] = (windows[-1][0], last)
        else:
            windows.append((first, last))
    return windows
