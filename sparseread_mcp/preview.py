"""The Object Preview: a bounded first look at an artifact, and the gate's route for it."""

from __future__ import annotations

import re
from itertools import islice

from .files.artifacts import magic_kind
from .files.roots import ResolvedPath
from .files.safeopen import FileDigest
from .gate.respond import shrink_preview
from .gate.route import Route
from .locate.terms import terms
from .models import ArtifactInfo, EvidenceItem, OutlineItem, Preview
from .readers.base import OutlineEntry, ParsedArtifact
from .tokens import TokenCounter, stamp_tokens

_SAMPLE_CHARS = 240
#: Places in a matched passage where its sample may begin (line and sentence starts), the first ones.
_SAMPLE_OPENINGS = 64
#: The opening of a sample, whose terms count first when choosing where it begins.
_OPENING_CHARS = 80
#: A letter: a line with one says a word (a row's label), a line without holds figures.
_LETTER = re.compile(r"[^\W\d_]")
_SENTENCE_END = re.compile(r"[.;:!?]\s+")
#: Samples in a preview: the intent's best matches, else passages spread through the file.
PREVIEW_SAMPLES = 3


def build_preview(
    parsed: ParsedArtifact,
    *,
    full_view_tokens: int,
    route: Route,
    counter: TokenCounter,
    budget_tokens: int | None,
    configurations: list[str] | None = None,
    line_range: tuple[int, int] | None = None,
    matches: list[int] | None = None,
    focus: dict[str, float] | None = None,
) -> Preview:
    """Outline, samples and signals; shed toward `budget_tokens` (gate/respond.py) when one is given, else
    whole (a pack that carries it fits it to what the pack leaves). The samples show the passages
    `matches` (indexes, best first: what the preview's intent located) where they say most of the `focus`
    terms (each weighted by its rarity), else the opening of passages spread through it; an outline cut to
    the budget keeps the entries that hold the matches."""
    artifact = parsed.artifact
    entries = list(parsed.outline)
    if line_range is not None:
        entries = [e for e in entries if line_range[0] <= e.first_line <= line_range[1]]
    native = route.native
    # Without headings, where the topics are; a preview with an intent shows its best matches instead.
    topics = [] if native or entries or matches else topic_starts(parsed)
    preview = Preview(
        artifact=ArtifactInfo(
            path=artifact.path, type=parsed.type, fingerprint=artifact.fingerprint, size_bytes=artifact.size_bytes
        ),
        full_view_chars=len(artifact.text),
        full_view_tokens=full_view_tokens,
        outline=[_outline_item(e) for e in entries] or topics,
        samples=[] if native else _samples(parsed, matches, focus or {}),
        # The whole content is here: signals and other ways to read it would only repeat what it shows.
        signals={} if native else {**_signals(parsed), **({"outline": TOPICS_SIGNAL} if topics else {})},
        route="native" if native else "sparse",
        reason=route.reason,
        content=artifact.text if native else None,
        configurations=[] if native else configurations or [],
        tokenizer=counter.name,
    )
    if budget_tokens is None:
        return stamp_tokens(preview, counter)
    keep = _holding(entries, parsed, matches)
    fitted = shrink_preview(preview, budget_tokens, counter, keep=keep)
    if fitted.content is None and native:
        # The content did not fit: what it would have made redundant is worth its tokens again.
        again = preview.model_copy(
            update={
                "content": None,
                "reason": fitted.reason,
                "signals": _signals(parsed),
                "configurations": configurations or [],
            }
        )
        fitted = shrink_preview(again, budget_tokens, counter, keep=keep)
    return fitted


#: Where a text without headings has its topics: this many stretches, each named by the sentence that
#: opens it (its first TOPIC_TITLE_CHARS, verbatim) and anchored to the whole stretch.
TOPIC_STRETCHES = 12
TOPIC_TITLE_CHARS = 64
TOPICS_SIGNAL = "no headings: sentence starts spread over the text, each anchoring the stretch it opens"
#: A text shorter than this many characters per stretch gets fewer stretches.
_STRETCH_MIN_CHARS = 1_500


def topic_starts(parsed: ParsedArtifact) -> list[OutlineItem]:
    """An outline for text without headings (a single-line article, a transcript): TOPIC_STRETCHES
    stretches of equal length, each begun at the first sentence (or line) start inside it and named by
    that sentence's opening words; reading an entry's anchor reads its stretch."""
    text, lines = parsed.artifact.text, parsed.lines
    count = min(TOPIC_STRETCHES, len(text) // _STRETCH_MIN_CHARS)
    if count < 2:
        return []
    starts: list[int] = []
    for k in range(count):
        at = _sentence_start(text, k * len(text) // count) if k else 0
        if at < len(text) and (not starts or at > starts[-1]):
            starts.append(at)
    out = []
    for start, end in zip(starts, [*starts[1:], len(text)], strict=True):
        end = len(text[:end].rstrip())
        title = _title_end(text, start, min(end, start + TOPIC_TITLE_CHARS))
        anchor = lines.anchor_for(start, end).format()
        first, last = lines.line_of(start), lines.line_of(max(start, end - 1))
        out.append(OutlineItem(title=" ".join(text[start:title].split()), anchor=anchor, lines=(first, last)))
    return out


def _title_end(text: str, start: int, limit: int) -> int:
    """Where a topic's title ends: its sentence's end, else the last space before `limit`."""
    found = _SENTENCE_END.search(text, start, limit)
    if found:
        return found.start() + 1
    space = text.rfind(" ", start + 1, limit)
    return space if space > start and limit < len(text) else limit


def _sentence_start(text: str, at: int) -> int:
    """The first sentence or line start at or after `at` (within a stretch's reach), else `at`."""
    reach = min(len(text), at + _STRETCH_MIN_CHARS)
    newline = text.find("\n", at, reach)
    found = _SENTENCE_END.search(text, at, reach)
    candidates = [x for x in (newline + 1 if newline >= 0 else -1, found.end() if found else -1) if x > 0]
    start = min(candidates) if candidates else at
    while start < len(text) and text[start].isspace():
        start += 1
    return start


def _holding(entries: list[OutlineEntry], parsed: ParsedArtifact, matches: list[int] | None) -> frozenset[str]:
    """The anchors of the outline entries (and their parents) that hold a matched passage."""
    if not matches:
        return frozenset()
    lines = [parsed.lines.line_of(parsed.passages[i].start) for i in matches[:PREVIEW_SAMPLES]]
    return frozenset(e.anchor for e in entries if any(e.first_line <= n <= e.last_line for n in lines))


def _outline_item(entry: OutlineEntry) -> OutlineItem:
    return OutlineItem(
        title=entry.title,
        anchor=entry.anchor,
        lines=(entry.first_line, entry.last_line),
        level=entry.level,
        signature=entry.signature,
    )


def _samples(parsed: ParsedArtifact, matches: list[int] | None, focus: dict[str, float]) -> list[EvidenceItem]:
    """A few verbatim cuts, each ending at a line or space: of the matches given, the part that says most
    of the `focus` terms (term -> weight); else the opening of body passages spread through the file."""
    from .evidence import Candidate, item_for

    out: list[EvidenceItem] = []
    if matches:
        chosen = [parsed.passages[i] for i in matches[:PREVIEW_SAMPLES]]
    else:
        body = [p for p in parsed.passages if p.kind != "heading" and len(parsed.text_of(p).strip()) > 40]
        chosen = body[:: max(1, len(body) // PREVIEW_SAMPLES)][:PREVIEW_SAMPLES]
    text = parsed.artifact.text
    for passage in chosen:
        if matches and focus:
            start = _most_said(parsed, passage.start, passage.end, focus)
            limit = min(passage.end, start + _SAMPLE_CHARS)
            end = _row_end(text, start, limit) or _cut(text, start, passage.end)
        else:
            start = passage.start
            line = parsed.lines.line_of(start)
            short = passage.end - start <= _SAMPLE_CHARS
            end = passage.end if short else min(passage.end, parsed.lines.line_end(line))
            end = _cut(text, start, end)
        if end > start:
            out.append(item_for(parsed, Candidate(start=start, end=end, score=0.0)))
    return out


def _most_said(parsed: ParsedArtifact, start: int, end: int, focus: dict[str, float]) -> int:
    """Where in [start, end) a sample says most of the `focus` terms (by weight): the first such line start, or
    sentence start within a line longer than a sample (a table's row label, not the number above it)."""
    text = parsed.artifact.text
    lines = parsed.lines
    openings: list[int] = []
    line = lines.line_of(start)
    while len(openings) < _SAMPLE_OPENINGS:
        at = max(start, lines.starts[line - 1])
        if at >= end:
            break
        line_end = min(end, lines.line_end(line))
        if text[at:line_end].strip():
            openings.append(at)
        if line_end - at > _SAMPLE_CHARS:  # a long line (a single-line document): its sentences too
            room = _SAMPLE_OPENINGS - len(openings)
            openings.extend(m.end() for m in islice(_SENTENCE_END.finditer(text, at, line_end), room))
        if line >= lines.line_count:
            break
        line += 1
    best, said = start, (0.0, 0.0, 0.0)
    for at in openings[:_SAMPLE_OPENINGS]:
        window = text[at : min(end, at + _SAMPLE_CHARS)]
        # What the sample opens with counts first (its first line, then its first words): a row label that
        # names the terms, not a row of numbers before it that happens to reach them.
        opening = window[:_OPENING_CHARS]
        first_line = opening.split("\n", 1)[0]
        first, opens, whole = (
            sum(focus.get(t, 0.0) for t in set(terms(part))) for part in (first_line, opening, window)
        )
        count = (first, opens, whole)
        if count > said:
            best, said = at, count
    return best


def _row_end(text: str, start: int, limit: int) -> int | None:
    """Where a table row that begins at `start` ends, before `limit`: its label's line and the lines of
    figures under it (PDF extraction puts each cell on a line of its own), up to the next line that says a
    word. None when the line after the first says words (prose), or the row runs past `limit`."""
    first = text.find("\n", start, limit)
    if first < 0:
        return None
    end, at = first, first + 1
    while at < limit:
        newline = text.find("\n", at, limit)
        line = text[at : newline if newline >= 0 else limit]
        if _LETTER.search(line):
            return end if end > first else None
        if newline < 0:
            return None  # the row may run past the sample
        if line.strip():
            end = newline  # a line of figures (blank lines after the last one stay out)
        at = newline + 1
    return None


def _cut(text: str, start: int, end: int) -> int:
    """`end`, or the last line break or space before it when the span is longer than a sample."""
    if end - start <= _SAMPLE_CHARS:
        return end
    space = max(text.rfind("\n", start + 1, start + _SAMPLE_CHARS), text.rfind(" ", start + 1, start + _SAMPLE_CHARS))
    return space if space > start else start + _SAMPLE_CHARS


def _signals(parsed: ParsedArtifact) -> dict[str, int | str | None]:
    lines = parsed.lines
    longest = max((lines.line_end(n) - lines.starts[n - 1] for n in range(1, lines.line_count + 1)), default=0)
    return {
        **parsed.signals,
        "lines": lines.line_count,
        "pages": lines.page_count,
        "passages": len(parsed.passages),
        "headings": sum(1 for p in parsed.passages if p.kind == "heading") or len(parsed.outline),
        "longest_line_chars": longest,
    }


def binary_card(location: ResolvedPath, found: FileDigest, reason: str, counter: TokenCounter) -> Preview:
    """What can be said of a binary file without reading it as text: its card (size, hash and magic bytes,
    `found` by a worker from one descriptor opened beneath the root)."""
    card = Preview(
        artifact=ArtifactInfo(
            path=location.relative, type="binary", fingerprint=found.fingerprint, size_bytes=found.size
        ),
        full_view_chars=0,
        full_view_tokens=0,
        outline=[],
        samples=[],
        signals={"format": magic_kind(found.head)},
        route="sparse",
        reason=reason,
        tokenizer=counter.name,
    )
    return stamp_tokens(card, counter)
