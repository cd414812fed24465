"""`sparseread-mcp calibrate`: rebuild the calibration table from development question sets.

Any folder with a `questions.jsonl` whose rows name a `doc_file` and gold character spans (`gold_spans`
[{start, end}], `gold_spans_merged` [[start, end]] or `gold_row_spans`) is a calibration set. Each request
is answered by every configuration at the default focus exposure; success means the returned passages
cover at least 80% of the gold characters. Only counts and mean exposures are written, never the data.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .artifacts import load_artifact
from .errors import SparsereadError
from .locate import LOCATORS
from .locate.base import build_query
from .readers.base import ParsedArtifact
from .readers.registry import default_registry
from .roots import Roots
from .selector import FULL_VIEW, Selector, group_of, intent_type

EXPOSURE_CHARS = 1_500
SUCCESS_SHARE = 0.8


def calibrate(data: Path, *, passage_chars: int = 500) -> Selector:
    selector = Selector(defaults={})
    registry = default_registry()
    kind = intent_type(query=False, verbatim=False, multi_file=False)
    for questions in sorted(data.glob("*/questions.jsonl")):
        roots = Roots((questions.parent,))
        parsed_by_doc: dict[str, ParsedArtifact] = {}
        for line in questions.read_text().splitlines():
            row = json.loads(line)
            gold = _gold(row)
            if not gold or "doc_file" not in row:
                continue
            try:
                parsed = parsed_by_doc.get(row["doc_file"])
                if parsed is None:
                    location = roots.resolve(row["doc_file"])
                    reader = registry.reader_for(location.absolute)
                    artifact = load_artifact(location, binary=reader.binary)
                    parsed = parsed_by_doc[row["doc_file"]] = reader.parse(artifact, passage_chars=passage_chars)
            except SparsereadError:
                continue
            text = parsed.artifact.text
            group = group_of(parsed.type, len(text), kind)
            query = build_query([str(row.get("question", ""))], [])
            for name in ("bm25", "lexical"):
                spans = select_within(parsed, LOCATORS[name]().rank(parsed, query), EXPOSURE_CHARS)
                success = covered(spans, gold) >= SUCCESS_SHARE
                selector.record(
                    group, f"{name} x snippets", success=success, exposed_chars=sum(e - s for s, e in spans)
                )
            selector.record(group, FULL_VIEW, success=True, exposed_chars=len(text))
    return selector


def _gold(row: dict[str, Any]) -> list[tuple[int, int]]:
    """Gold character spans, from whichever of the known fields the set provides."""
    spans = row.get("gold_spans")
    if isinstance(spans, list) and spans and isinstance(spans[0], dict):
        return [(int(g["start"]), int(g["end"])) for g in spans]
    for key in ("gold_spans_merged", "gold_row_spans"):
        pairs = row.get(key)
        if isinstance(pairs, list) and pairs:
            return [(int(s), int(e)) for s, e in pairs]
    return []


def select_within(parsed: ParsedArtifact, ranking: list[tuple[int, float]], max_chars: int) -> list[tuple[int, int]]:
    """Greedy by rank: take each passage that still fits the character budget (looking 50 deep)."""
    spans, used = [], 0
    for index, _ in ranking[:50]:
        passage = parsed.passages[index]
        size = passage.end - passage.start
        if used + size <= max_chars:
            spans.append((passage.start, passage.end))
            used += size
    return spans


def covered(spans: list[tuple[int, int]], gold: list[tuple[int, int]]) -> float:
    """Share of the gold characters that the spans cover (overlaps counted once)."""
    total = sum(e - s for s, e in gold)
    if not total:
        return 0.0
    hit = 0
    for gs, ge in gold:
        cursor = gs
        for s, e in sorted((max(gs, s), min(ge, e)) for s, e in spans if s < ge and gs < e):
            s = max(s, cursor)
            if e > s:
                hit += e - s
                cursor = e
    return hit / total
