"""What a passage is under: the titles of its page and of the sections around it, indexed with it.

A clause's words are often only in its heading ("11.1 Term." above "The term of this Agreement shall
continue ..."), a statement's only in its page title ("Consolidated Statements of Cash Flows" above rows
of figures): a passage scored by its own text alone misses what it is about. The titles are indexed as
extra terms of every passage beneath them (never shown), in prose documents (text, Markdown, PDF, HTML);
they are found from the text alone:
- a paged document: the first lines of each page;
- Markdown: the heading a passage falls under (the reader's `section`);
- plain text: numbered headings (`11.`, `11.1`, `ARTICLE 7`, `Section 2.3`, `IV.`), run-in or on a line
  of their own (inside a long line too, after a sentence end, when numbered `8.1` or deeper), and short
  lines in capitals, each title kept until a heading of the same or a higher level replaces it.
"""

from __future__ import annotations

import re
from collections import Counter

from ..deadline import checkpoint
from ..readers.base import ParsedArtifact
from .terms import terms

_STATE_KEY = "context.titles"
_VOCABULARY_KEY = "context.heading_vocabulary"
#: A word in more than this share of a document's distinct headings is everywhere (an article's or a
#: part's title repeated above its sections), not one topic's word.
HEADING_WORD_SHARE = 0.25
#: Title lines read from the top of each page (short ones, before any running text), at most this many
#: characters of them.
PAGE_TITLE_LINES = 3
PAGE_TITLE_CHARS = 160
#: A heading's title is at most this long; a capitals line at most HEADING_LINE_CHARS.
TITLE_CHARS = 80
HEADING_LINE_CHARS = 90
_CHECK_EVERY = 4096
#: Documents read as prose under headings; a code symbol's class, a log record's level, a JSON key path or
#: a sheet name (the other readers' `section`) are not titles, and were not measured as such.
PROSE_TYPES = frozenset({"text", "markdown", "pdf", "html"})

#: An enumerator and the title after it, up to the first sentence end: `11.1    Term. The term ...`,
#: `ARTICLE 7 PAYMENTS`, `Section 2.3 Performance by Affiliates.`, `IV. Fees`. Each part is bounded, so
#: a match costs at most a few hundred steps whatever the line.
_NUMBERED = re.compile(
    r"[ \t]{0,8}(?:(?P<word>(?i:article|section|part|chapter|schedule|exhibit|appendix|annex))[ \t]+"
    r"(?P<label>[\dIVXLC]{1,6}(?:\.\d{1,3}){0,3}|[A-Z])[.:]?|(?P<number>\d{1,3}(?:\.\d{1,3}){0,4})\.?"
    r"|(?P<roman>[IVXLC]{1,6})\.)[ \t]+(?P<title>[A-Z][^\n.;:!?]{0,80})"
)


#: Where a clause numbered `8.1` (two numbers or more) begins inside a long line, after a sentence end.
_INLINE = re.compile(r"[.!?][ \t]+(?=\d{1,3}(?:\.\d{1,3}){1,4}\.?[ \t]+[A-Z])")
#: Whether headings are also looked for inside long lines (False: only where a line begins).
INLINE_HEADINGS = True
#: An unnumbered capitals line found more often than this is a running header or footer, not a heading
#: (0: keep every title).
REPEATED_TITLES = 2


def passage_titles(parsed: ParsedArtifact) -> list[str]:
    """Per passage, the titles it falls under (page title, then sections outermost first); '' if none."""
    cached = parsed.locator_state.get(_STATE_KEY)
    if isinstance(cached, list):
        return cached
    if parsed.type not in PROSE_TYPES:
        titles = [""] * len(parsed.passages)
    elif parsed.lines.page_count:
        titles = _page_titles(parsed)
    elif any(p.section for p in parsed.passages):
        titles = [p.section for p in parsed.passages]
    else:
        titles = _heading_titles(parsed)
    parsed.locator_state[_STATE_KEY] = titles
    return titles


def heading_vocabulary(parsed: ParsedArtifact) -> frozenset[str]:
    """The terms the document's own headings use (those in at most `HEADING_WORD_SHARE` of its distinct
    headings); empty for a paged document, whose titles are each page's first lines (running headers, the
    company's name, column heads: measured, they lowered FinanceBench's page hit 60.8 -> 49.0%)."""
    cached = parsed.locator_state.get(_VOCABULARY_KEY)
    if isinstance(cached, frozenset):
        return cached
    vocabulary: frozenset[str] = frozenset()
    if not parsed.lines.page_count:
        distinct = {t for t in passage_titles(parsed) if t}
        met = Counter(word for title in distinct for word in set(terms(title)))
        vocabulary = frozenset(w for w, n in met.items() if n <= HEADING_WORD_SHARE * max(1, len(distinct)))
    parsed.locator_state[_VOCABULARY_KEY] = vocabulary
    return vocabulary


#: Artifact types whose text is written to be read in order: prose, when no structure says otherwise.
_PROSE_TYPES = frozenset({"text", "markdown", "html"})


def plain_prose(parsed: ParsedArtifact) -> bool:
    """Text without the two structures BM25 is given here (a page's place, a heading vocabulary): where the
    words of a question asked in other words are all BM25 has, and a dense half adds meaning. A fusion with a
    dense ranking dilutes both structures (contracts 56.0 -> 45.1%, FinanceBench pages 72.5 -> 56.9%)."""
    return parsed.type in _PROSE_TYPES and not parsed.lines.page_count and not heading_vocabulary(parsed)


def _page_titles(parsed: ParsedArtifact) -> list[str]:
    lines, text = parsed.lines, parsed.artifact.text
    by_page: dict[int | None, str] = {}
    out = []
    for passage in parsed.passages:
        page = lines.page_of(passage.start)
        if page not in by_page:
            start, end = lines.page_span(page) if page else (0, 0)
            head = text[start : min(end, start + 4 * PAGE_TITLE_CHARS)]
            kept: list[str] = []
            for line in (line.strip() for line in head.split("\n")):
                if len(line) > TITLE_CHARS or len(kept) == PAGE_TITLE_LINES:
                    break  # running text, not a title
                if line:
                    kept.append(line)
            by_page[page] = " ".join(kept)[:PAGE_TITLE_CHARS]
        out.append(by_page[page])
    return out


def _heading_titles(parsed: ParsedArtifact) -> list[str]:
    """Plain text: the heading stack at the start of each passage."""
    text, lines = parsed.artifact.text, parsed.lines
    headings: list[tuple[int, int, str, bool]] = []  # (offset, level, title, numbered)
    for number in range(1, lines.line_count + 1):
        if number % _CHECK_EVERY == 0:
            checkpoint()
        start, end = lines.starts[number - 1], lines.line_end(number)
        found = _heading(text[start : min(end, start + HEADING_LINE_CHARS * 4)])
        if found is not None:
            headings.append((start, *found))
        if INLINE_HEADINGS and end - start > HEADING_LINE_CHARS:
            # A long line may hold several clauses, each after a sentence end: `... days.   8.1 New Products.`
            for seen, match in enumerate(_INLINE.finditer(text, start, end), 1):
                if seen % _CHECK_EVERY == 0:
                    checkpoint()
                found = _heading(text[match.end() : min(end, match.end() + HEADING_LINE_CHARS * 4)])
                if found is not None:
                    headings.append((match.end(), *found))
    if REPEATED_TITLES:
        # A capitals line met more than REPEATED_TITLES times is a running header or footer (`Source: ACME
        # CORP., S-1` on every page), not a heading: kept, it would end every section at every page.
        met = Counter(title for _, _, title, numbered in headings if not numbered)
        headings = [h for h in headings if h[3] or met[h[2]] <= REPEATED_TITLES]
    out: list[str] = []
    stack: dict[int, str] = {}
    k = 0
    for passage in parsed.passages:
        while k < len(headings) and headings[k][0] <= passage.start:
            _, level, title, _ = headings[k]
            for deeper in [lv for lv in stack if lv >= level]:
                del stack[deeper]
            stack[level] = title
            k += 1
        out.append(" ".join(stack[lv] for lv in sorted(stack)))
    return out


def heading_of(line: str) -> tuple[int, str] | None:
    """(level, title) when the line begins with a heading, else None: a numbered title (level = how many
    numbers it has; an `ARTICLE` or roman numeral is 1), or a short line in capitals (level 1)."""
    found = _heading(line)
    return None if found is None else (found[0], found[1])


def _heading(line: str) -> tuple[int, str, bool] | None:
    """heading_of, and whether the heading is numbered."""
    stripped = line.strip()
    if not stripped:
        return None
    found = _NUMBERED.match(line)
    if found is not None:
        title = found["title"].strip()
        if not _is_title(title):
            return None  # `3 The Company shall ...`: a numbered sentence, not a heading
        if found["number"] is not None:
            level = found["number"].count(".") + 1
        elif found["label"] is not None:
            level = found["label"].count(".") + 1
        else:
            level = 1
        return level, title[:TITLE_CHARS], True
    if len(stripped) <= HEADING_LINE_CHARS:
        letters = [c for c in stripped if c.isalpha()]
        if len(letters) >= 4 and sum(c.isupper() for c in letters) >= 0.8 * len(letters):
            return 1, stripped.rstrip(".:")[:TITLE_CHARS], False
    return None


def _is_title(title: str) -> bool:
    """A heading's title: a few words, most of them capitalised (`TERM AND TERMINATION`, `Term`)."""
    words = title.split()
    if not words or len(words) > 10:
        return False
    capitalised = sum(1 for w in words if w[:1].isupper() or not w[:1].isalpha())
    return capitalised >= max(1, len(words) // 2)
