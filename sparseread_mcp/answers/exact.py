"""Exact operations and derived views: results over the whole artifact, exposed as results, never items."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from ..config import Settings
from ..errors import ConfigError, IntentError
from ..files.roots import Roots
from ..gate.delivery import Delivery, Extras
from ..gate.sparse import deliver_sparse
from ..models import EvidencePack, OpResult
from ..readers.base import ParsedArtifact


def query_pack(d: Delivery, parsed: ParsedArtifact, query: str, extras: Extras) -> EvidencePack:
    """An exact operation: processing covers every row, exposure is only the result."""
    if parsed.queries is None:
        raise IntentError(
            f"intent.query runs on tables (CSV, TSV, JSONL, Parquet, XLSX) and JSON; {parsed.artifact.path} is "
            f"{parsed.type}: use goal or needles instead"
        )
    return deliver_sparse(d, [], replace(extras, result=parsed.queries.run(query)), max_items=0)


def projection_pack(
    d: Delivery, parsed: ParsedArtifact, extras: Extras, *, settings: Settings, roots: Roots
) -> EvidencePack:
    """A calculation-ready TSV of the whole table, written outside every root within the disk quota all
    projections share (the least recently written go first); the pack names it."""
    if parsed.queries is None:
        raise IntentError(f"view='projection' is for tables; {parsed.artifact.path} is {parsed.type}")
    cache_dir = settings.cache_dir
    folder = cache_dir / "projections"
    if any(roots.contains(parent) for parent in (folder, *folder.parents) if parent.exists()):
        raise ConfigError(f"the cache directory {cache_dir} is inside a root; set SPARSEREAD_CACHE_DIR elsewhere")
    name = f"{parsed.artifact.fingerprint[:16]}-{Path(parsed.artifact.path).stem}.tsv"
    result = parsed.queries.project(folder / name, quota_bytes=settings.projection_quota_mb * 2**20)
    return deliver_sparse(d, [], replace(extras, result=result), max_items=0)


def compact_pack(d: Delivery, parsed: ParsedArtifact, extras: Extras) -> EvidencePack:
    """Code without comments and blank lines: lossy, so it is a result, never items or the full view. Over
    the budget, it is BudgetTooSmall (the pack's fit says so) and the engine answers with the outline."""
    if parsed.compact_text is None:
        raise IntentError(f"view='compact' exists for source code only; {parsed.artifact.path} is {parsed.type}")
    result = OpResult(
        value=parsed.compact_text,
        scanned=f"compact view: comments and blank lines dropped (lossy; {len(parsed.artifact.text)} chars "
        "in the faithful full view)",
    )
    return deliver_sparse(d, [], replace(extras, result=result), max_items=0)
