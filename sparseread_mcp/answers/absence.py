"""`action="check"`: does the file say it at all? Counts and where, never text.

A needle's count is its occurrences (any case; a `/pattern/`: its matches); a goal word's count is the
passages holding it (stemmed, any case, as location matches words; the goal's first MAX_WORDS distinct
words). `where` names the first passages.

An agent that suspects "the document does not say" should not read its way to that conclusion (each
refine costs a page of filler). One call counts each needle (exact, any case; `/regex/` as every pattern
is bounded) and each word of the goal (as location matches them: stemmed, any case) over the whole text,
with the first places each occurs, and names the passages where most of the goal's words meet. The answer
is an exact result of a few dozen tokens; reading the places is a second, deliberate call.
"""

from __future__ import annotations

from dataclasses import replace

from ..errors import IntentError
from ..gate.sparse import deliver_sparse
from ..locate.base import build_query
from ..locate.patterns import count_matches
from ..locate.terms import terms
from ..models import EvidencePack, OpResult
from ..readers.base import ParsedArtifact
from .read import FileRead

#: Places named per needle or word (the rest are counted).
PLACES_SHOWN = 4
#: Passages named where the goal's words meet.
MEETINGS_SHOWN = 3
#: The goal's first this many distinct words are counted (a goal may be a whole paragraph).
MAX_WORDS = 16
_TERMS_KEY = "check.terms"


def check_pack(read: FileRead) -> EvidencePack:
    """The counts and places of the intent's needles and goal words, as an exact result."""
    parsed, intent = read.parsed, read.intent
    needles = [n for n in (intent.needles if intent else None) or [] if n.strip()]
    words = list(dict.fromkeys(terms(intent.goal or "")))[:MAX_WORDS] if intent else []
    if not needles and not words:
        raise IntentError("check needs intent.needles (exact strings, '/regex/') or intent.goal (its words count)")
    rows: list[list[str | int | float | bool | None]] = []
    per_passage = _needle_counts(parsed, needles)
    for needle, counts in zip(needles, per_passage, strict=True):
        rows.append([needle, sum(counts.values()), _places(parsed, counts, needle=needle)])
    sets = _passage_terms(parsed) if words else []
    for word in words:
        counts = {i: 1 for i, held in enumerate(sets) if word in held}
        rows.append([word, len(counts), _places(parsed, counts)])
    absent = [str(row[0]) for row in rows if row[1] == 0]
    provenance = [_meetings(parsed, sets, words)] if len(words) > 1 else []
    value = f"absent: {', '.join(absent)}" if absent else "every needle and word occurs"
    result = OpResult(
        value=value,
        scanned=f"all {len(parsed.artifact.text):,} characters",
        columns=["term", "count", "where"],
        rows=rows,
        provenance=provenance,
    )
    return deliver_sparse(read.delivery, [], replace(read.extras, result=result), max_items=0)


def _needle_counts(parsed: ParsedArtifact, needles: list[str]) -> list[dict[int, int]]:
    """Per needle, passage index -> occurrences (exact any-case strings; patterns as bounded matches)."""
    if not needles:
        return []
    texts = [parsed.text_of(p) for p in parsed.passages]
    patterns = build_query([], needles).patterns
    by_needle = {p.needle: k for k, p in enumerate(patterns)}
    matched = count_matches(patterns, texts) if patterns else [[] for _ in texts]
    folded = [t.casefold() for t in texts]
    out: list[dict[int, int]] = []
    for needle in needles:
        counts: dict[int, int] = {}
        for index, text in enumerate(folded):
            k = by_needle.get(needle)
            found = matched[index][k] if k is not None else text.count(needle.casefold())
            if found:
                counts[index] = found
        out.append(counts)
    return out


def _passage_terms(parsed: ParsedArtifact) -> list[set[str]]:
    """Each passage's terms, computed once per file version."""
    cached = parsed.locator_state.get(_TERMS_KEY)
    if cached is None:
        cached = [set(terms(parsed.text_of(p))) for p in parsed.passages]
        parsed.locator_state[_TERMS_KEY] = cached
    assert isinstance(cached, list)
    return cached


def _places(parsed: ParsedArtifact, counts: dict[int, int], *, needle: str | None = None) -> str:
    """The first PLACES_SHOWN passages, and how many more: the line of a literal needle's first
    occurrence in each, else the passage's lines (`L12-L18`, `p3:L4-L9`)."""
    if not counts:
        return ""
    order = sorted(counts)
    shown = [_where(parsed, index, needle) for index in order[:PLACES_SHOWN]]
    more = f" (+{len(order) - PLACES_SHOWN} more)" if len(order) > PLACES_SHOWN else ""
    return " ".join(shown) + more


def _where(parsed: ParsedArtifact, index: int, needle: str | None = None) -> str:
    passage = parsed.passages[index]
    start, end = passage.start, passage.end
    if needle is not None and not (needle.startswith("/") and needle.endswith("/") and len(needle) > 2):
        offset = parsed.text_of(passage).casefold().find(needle.casefold())
        if offset != -1:
            start = end = min(passage.start + offset, passage.end)  # casefolding rarely changes a length
    lines = parsed.lines
    first, last = lines.line_of(start), lines.line_of(max(start, end - 1))
    span = f"L{first}" if first == last else f"L{first}-L{last}"
    page = lines.page_of(start)
    if page:
        base = lines.line_of(lines.page_span(page)[0]) - 1
        span = f"p{page}:" + (f"L{first - base}" if first == last else f"L{first - base}-L{last - base}")
    return span


def _meetings(parsed: ParsedArtifact, sets: list[set[str]], words: list[str]) -> str:
    """Where most of the goal's words meet: the passages holding the most of them."""
    held = sorted(((sum(w in s for w in words), i) for i, s in enumerate(sets)), key=lambda p: (-p[0], p[1]))
    best = [(n, i) for n, i in held[:MEETINGS_SHOWN] if n]
    if not best:
        return "no passage holds any word of the goal"
    places = ", ".join(f"{_where(parsed, i)} ({n} of {len(words)})" for n, i in best)
    return f"most goal words together: {places}"
