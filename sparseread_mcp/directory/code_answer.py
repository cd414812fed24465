"""A code directory's answer: the ranked files with why, then the best symbols' bodies, then pointers.

Files come from filerank (paths, module names, defined names, BM25 per file). Within each of the top
files the file's own reader (tree-sitter for code) gives its symbols; a symbol scores by the goal
names it is called, a traceback line inside it, and its best BM25 passage. Bodies go out whole when
function-sized, else the best passage inside them. The queue interleaves files by rank, so the top
file's bodies come first and `refine` continues down the ranking without resending anything.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..deadline import checkpoint
from ..errors import SparsereadError
from ..evidence import Candidate, Hit, item_for
from ..locate.base import Query
from ..models import Intent, OpResult
from ..protocol.intents import query_for
from ..readers.base import OutlineEntry, ParsedArtifact
from .filerank import DEFAULT_WEIGHTS, Cues, RankedFile, Weights, goal_cues, query_terms_of, rank_top

if TYPE_CHECKING:
    from .collection import Inventory
    from .context import DirectoryContext
    from .fileindex import FileIndex

#: A directory is read as code when at least this share of its indexed files are source files, or when it
#: holds at least CODE_FILES of them whatever else it holds: a project's built documentation, notebooks or
#: data can outnumber its sources (scikit-learn 0.20's sdist: 1,300 sources among 8,400 files) without
#: making it less a code tree (bench/results/issue33_repos.md, session 31).
CODE_SHARE = 0.2
CODE_FILES = 100
#: Files whose symbols are opened and queued; the ranking table lists more.
TOP_FILES = 8
TABLE_ROWS = 10
SYMBOLS_PER_FILE = 2
#: A symbol longer than this goes out as its best passage, not whole.
MAX_BODY_LINES = 80
#: How far a file's second symbol falls behind the next file's first in the queue.
SYMBOL_STEP = 1.5
NAME_BONUS = 2.0
TRACEBACK_BONUS = 3.0
#: How files are ranked (the benchmark swaps it to score weights chosen on other repositories).
RANKING: Weights = DEFAULT_WEIGHTS


def ranked_code(
    engine: DirectoryContext, inventory: Inventory, intent: Intent, index: FileIndex
) -> tuple[list[Hit], OpResult]:
    goal = intent.goal or " ".join(s.question for s in intent.slots or [])
    needles = [str(n) for n in intent.needles or []]
    cues = goal_cues(goal, needles)
    query = query_for(intent)
    terms = [*query.terms, *query_terms_of(" ".join(needles))]
    ranked, total = rank_top(index, cues, terms, RANKING, limit=max(TOP_FILES, TABLE_ROWS))
    prefix = f"{inventory.root_path}/" if inventory.root_path else ""
    queued: list[tuple[float, Hit]] = []
    for rank, found in enumerate(ranked[:TOP_FILES]):
        checkpoint()
        try:
            parsed = engine.open(prefix + found.path)
        except SparsereadError:
            continue  # unreadable or unsupported files are skipped, not fatal
        for step, candidate in enumerate(_best_symbols(engine, parsed, found, cues, query)):
            hit = Hit(item=item_for(parsed, candidate), start=candidate.start, end=candidate.end, path=found.path)
            queued.append((rank + SYMBOL_STEP * step, hit))
    queued.sort(key=lambda pair: pair[0])
    result = OpResult(
        value=total,
        scanned=f"{len(index.files)} files under {inventory.root_path or '.'}",
        columns=["path", "why"],
        rows=[[prefix + r.path, r.why] for r in ranked[:TABLE_ROWS]],
        row_count=total,
        rows_scanned=len(index.files),
        query=", ".join(cues.top(8)) or None,
        capped=total > TABLE_ROWS,
        left_out=pending_note(index) if index.pending else None,
        provenance=[
            "files ranked by names they define, paths and module names the goal gives, and BM25 per file; "
            "tests, non-source files and vendored copies weigh less; items: the top files' best symbols"
        ],
    )
    return [hit for _, hit in queued], result


def pending_note(index: FileIndex) -> str:
    """What a partial index says it left out, and how the next call covers it."""
    total = len(index.files) + index.pending
    return (
        f"{index.pending:,} of {total:,} files not indexed yet: the first search of a large tree indexes what "
        "fits in half the call's time limit (paths that hold the goal's words first) and ranks those; each "
        "next call on this folder indexes more, and the stored index is kept for new sessions"
    )


def _best_symbols(
    engine: DirectoryContext, parsed: ParsedArtifact, found: RankedFile, cues: Cues, query: Query
) -> list[Candidate]:
    """The file's best symbol-sized spans: whole bodies when short, else their best passage."""
    passages = engine.locator.rank(parsed, query)
    entries = [e for e in parsed.outline if e.last_line >= e.first_line]
    scores: dict[int, float] = {}
    best_passage: dict[int, tuple[int, float]] = {}
    for passage_index, score in passages:
        line = parsed.lines.line_of(parsed.passages[passage_index].start)
        owner = _innermost(entries, line)
        key = -1 - passage_index if owner is None else owner
        if score > scores.get(key, 0.0):
            scores[key] = score
        if owner is not None and score > best_passage.get(owner, (0, 0.0))[1]:
            best_passage[owner] = (passage_index, score)
    names = {name.casefold() for name in cues.names}
    for number, entry in enumerate(entries):
        short = entry.title.rsplit(".", 1)[-1].casefold()
        bonus = NAME_BONUS if short in names else 0.0
        if found.line is not None and entry.first_line <= found.line <= entry.last_line:
            bonus += TRACEBACK_BONUS
        if bonus:
            scores[number] = scores.get(number, 0.0) + bonus
    chosen: list[Candidate] = []
    covered: list[tuple[int, int]] = []
    for key, score in sorted(scores.items(), key=lambda pair: (-pair[1], pair[0])):
        span = _span(parsed, entries, key, best_passage)
        if span is None or any(a <= span[0] and span[1] <= b for a, b in covered):
            continue
        covered.append(span)
        chosen.append(Candidate(start=span[0], end=span[1], score=score))
        if len(chosen) >= SYMBOLS_PER_FILE:
            break
    return chosen


def _innermost(entries: list[OutlineEntry], line: int) -> int | None:
    best: int | None = None
    for number, entry in enumerate(entries):
        if entry.first_line <= line <= entry.last_line and (
            best is None or entry.last_line - entry.first_line < entries[best].last_line - entries[best].first_line
        ):
            best = number
    return best


def _span(
    parsed: ParsedArtifact, entries: list[OutlineEntry], key: int, best_passage: dict[int, tuple[int, float]]
) -> tuple[int, int] | None:
    if key < 0:  # a passage outside every symbol
        passage = parsed.passages[-1 - key]
        return passage.start, passage.end
    entry = entries[key]
    if entry.last_line - entry.first_line + 1 <= MAX_BODY_LINES:
        return parsed.lines.lines_span(entry.first_line, min(entry.last_line, parsed.lines.line_count))
    if key in best_passage:
        passage = parsed.passages[best_passage[key][0]]
        return passage.start, passage.end
    last = min(entry.first_line + MAX_BODY_LINES // 2, entry.last_line, parsed.lines.line_count)
    return parsed.lines.lines_span(entry.first_line, last)
