"""Ranking a code directory's files for a goal by what code has: paths, module names and definitions.

The goal's identifiers are read the way a developer reads an issue: names written like code
(`snake_case`, `camelCase`, `a.b`, `name()`, quoted) weigh more than plain words; paths and traceback
lines (`File "x/y.py", line 12`) name files outright; dotted module names name files by their path.
Each signal is computed on its own, per file, so one file's many passages cannot crowd out the others:
BM25 over the file's terms for the goal and for its first line (an issue's title), the paths and
module names the goal gives (whole, or heading or ending a module's name: `__repr__` and saferepr.py),
the names each file defines (weighted by how few files define them), its uses of the goal's code
names, and how well the tests of it match the goal (`test_x.py` or `testing/x/...` tests `x.py`: a
test that repeats the issue's words points at the source it tests). Each signal is divided by its best
source file's value and the signals are summed (see Weights); the text signals weigh twice a name
signal, and plain words count through BM25 only (as names they matched too much). A name whose file
the goal gives but the tree lacks is the reporter's own, read as a plain word. Tests, non-source files
and vendored copies (found by structure, see fileindex.vendored_roots) rank below sources that match
as well, and a vendored tree shows as one row. Every score says why. Path rules live in filenames.py.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field, replace
from pathlib import PurePosixPath
from typing import Literal

import numpy as np

from ..deadline import checkpoint
from ..locate.terms import terms
from .fileindex import FileIndex, code_like
from .filenames import ModuleParts, files_named, is_source, is_test, named, stems, subjects

#: Goal characters looked at (a pasted log beyond this adds noise, not names).
MAX_GOAL_CHARS = 20_000
MAX_IDENTIFIERS = 64
_PATH = re.compile(r"[\w.-]{0,100}(?:/[\w.-]{1,100}){0,20}\.[A-Za-z]{1,6}\b")
_TRACEBACK = re.compile(r'File "([^"\n]{1,400})", line (\d{1,9})')
_WORD = re.compile(r"--[a-z][a-z0-9-]{1,60}|[A-Za-z_][A-Za-z0-9_]{1,80}(?:\.[A-Za-z_][A-Za-z0-9_]{0,80}){0,8}")
_QUOTED = re.compile(r"[`'\"]([A-Za-z_][\w.]{1,120})(?:\(\))?[`'\"]")
MAX_USERS_SHOWN = 20
#: The per-file signals, each computed on its own (see signals()).
SIGNALS = ("bm25", "title", "path", "module", "define", "refs", "tested")
#: Signals of the goal's words (the others are of its names).
_TEXT = frozenset({"bm25", "title", "tested"})


@dataclass(frozen=True, slots=True, kw_only=True)
class Weights:
    """How the per-file signals become one ranking.

    `fusion` is how they add up: "normalized" divides each signal by its best file's value and sums
    them (every signal on one scale, so each weight means the same thing in any tree), "weighted" sums
    them raw but BM25's (the first ranking, whose weights are on each signal's own scale), and "rrf"
    sums 1 / (rrf_k + the file's rank in each signal). `code_name` / `plain_name` weigh a goal name
    written like code against a plain word, `title_factor` a name on the goal's first line, and
    `demoted` multiplies the score of tests, non-source files and vendored copies.

    The rules after those can be switched off to measure what each adds (bench/repo_loro.py):
    `scale_by_sources` divides each name signal (path, module, define, refs) by its best *undemoted*
    file's value (capped at 1), so a test or a doc that repeats a name most does not shrink every
    source's share (the text signals keep the best file's scale: a test's strong match is news); `word_uses` counts
    the uses of a code name not written like code (`getcwd`, `__repr__`) by the files whose words hold
    it; `module_part` weighs a code name that heads or ends a module's name (`__repr__` and
    `saferepr.py`) against a whole module name; `test_folders` lets a test whose own name names no
    source test the module its folder is named after (`testing/python/collect.py` tests `python.py`);
    `absent_files` reads a name whose file the goal gives but the tree lacks (the reporter's own
    `pos_only.py`) as a plain word, not as code of this tree."""

    fusion: Literal["normalized", "weighted", "rrf"] = "normalized"
    bm25: float = 2.0
    title: float = 2.0
    path: float = 1.0
    module: float = 1.0
    define: float = 1.0
    refs: float = 1.0
    tested: float = 1.0
    code_name: float = 1.0
    plain_name: float = 0.0
    title_factor: float = 1.5
    demoted: float = 0.35
    rrf_k: float = 60.0
    module_part: float = 1.0
    scale_by_sources: bool = True
    word_uses: bool = True
    test_folders: bool = True
    absent_files: bool = True
    foreign_attributes: bool = True

    def scaled(self, name: str, factor: float) -> Weights:
        """A copy with the weight `name` multiplied by `factor` (the benchmark's sensitivity check)."""
        return replace(self, **{name: getattr(self, name) * factor})


#: The first ranking's nine hand-set weights, kept to be measured beside the default.
WEIGHTED = Weights(
    fusion="weighted",
    bm25=3.0,
    title=0.0,
    path=8.0,
    module=4.0,
    define=2.0,
    refs=3.0,
    tested=0.0,
    code_name=1.5,
    plain_name=0.6,
    module_part=0.0,
    scale_by_sources=False,
    word_uses=False,
    test_folders=False,
    absent_files=False,
    foreign_attributes=False,
)
#: Chosen among a small grid (bench/repo_loro.py) on all development issues, by the rule that leaving
#: one repository out scores: the held-out figures there, not these weights' own, are what to expect.
DEFAULT_WEIGHTS = Weights()
#: The weights a sensitivity check scales.
TUNABLE = (*SIGNALS, "code_name", "plain_name", "title_factor", "demoted", "module_part")
#: The rules a default may switch off (see Weights), each measured without it.
RULES = ("scale_by_sources", "word_uses", "module_part", "test_folders", "absent_files", "foreign_attributes")


@dataclass(frozen=True, slots=True, kw_only=True)
class Cues:
    """What a goal names: files (paths, traceback lines), and identifiers (name -> written like code)."""

    paths: tuple[str, ...] = ()  # the files the goal writes, then the module paths of its dotted names
    written: int = 0  # how many of `paths` the goal writes as files (tracebacks, paths)
    lines: dict[str, int] = field(default_factory=dict)  # path -> a traceback's line
    names: dict[str, bool] = field(default_factory=dict)
    title: frozenset[str] = frozenset()  # names on the goal's first line (an issue's title)
    title_terms: tuple[str, ...] = ()  # BM25 terms of that line

    def top(self, count: int) -> list[str]:
        """The `count` strongest identifiers: code-like ones first, then the rest, each in goal order."""
        ordered = [n for n, code in self.names.items() if code] + [n for n, code in self.names.items() if not code]
        return ordered[:count]


def goal_cues(goal: str, needles: list[str] | None = None) -> Cues:
    text = goal[:MAX_GOAL_CHARS]
    lines: dict[str, int] = {}
    for match in _TRACEBACK.finditer(text):
        lines.setdefault(match.group(1).replace("\\", "/"), int(match.group(2)))
    paths = [p for p in dict.fromkeys(m.group(0) for m in _PATH.finditer(text)) if "/" in p or is_source(p)]
    names: dict[str, bool] = {}
    quoted = {m.group(1) for m in _QUOTED.finditer(text)}
    for needle in needles or []:
        if not (needle.startswith("/") and needle.endswith("/")):
            quoted.add(needle.strip())
    for match in _WORD.finditer(text + "\n" + "\n".join(quoted)):
        word = match.group(0).strip(".")
        after = text[match.end() : match.end() + 1]
        code = word in quoted or after == "(" or code_like(word)
        parts = word.split(".")
        # In a.b.c only the last part is what the code calls: a and b are packages or objects.
        found = [(word, code)] + ([(p, False) for p in parts[:-1]] + [(parts[-1], code)] if len(parts) > 1 else [])
        for part, flag in found:
            if len(part) < 3 or part.isdigit():
                continue
            names[part] = names.get(part, False) or flag
        if len(names) >= MAX_IDENTIFIERS * 4:
            break
    modules = [n.replace(".", "/") + ".py" for n in names if "." in n]  # a.b.c names a/b/c.py
    first = text.strip().split("\n", 1)[0]
    title = frozenset(n for n in names if n in first)
    return Cues(
        paths=tuple([*lines, *paths, *modules][:MAX_IDENTIFIERS]),
        written=min(len(lines) + len(paths), MAX_IDENTIFIERS),
        lines=lines,
        names=names,
        title=title,
        title_terms=tuple(terms(first)),
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class RankedFile:
    number: int  # the file's position in the index
    path: str
    score: float
    why: str
    symbols: tuple[tuple[str, int], ...]  # defined names the goal mentions, with their lines
    line: int | None = None  # a traceback's line in this file


@dataclass(slots=True)
class _Signals:
    values: dict[str, np.ndarray]
    reasons: list[list[str]]
    matched: list[list[tuple[str, int]]]
    subjects: dict[int, list[int]]  # test file -> the sources it tests


def rank_files(
    index: FileIndex,
    cues: Cues,
    query_terms: list[str] | tuple[str, ...],
    weights: Weights = DEFAULT_WEIGHTS,
) -> list[RankedFile]:
    """Files by score, best first; each with why it ranks. A vendored tree shows as its best file."""
    return rank_top(index, cues, query_terms, weights)[0]


def rank_top(
    index: FileIndex,
    cues: Cues,
    query_terms: list[str] | tuple[str, ...],
    weights: Weights = DEFAULT_WEIGHTS,
    limit: int | None = None,
) -> tuple[list[RankedFile], int]:
    """The best `limit` files of rank_files (all when None) and how many it ranks in all: only those
    shown are given their reasons (on a large tree, thousands of files match a word)."""
    if not index.files:
        return [], 0
    found = signals(index, cues, query_terms, weights)
    vendored = [index.vendored_root(n) for n in range(len(index.files))]
    demoted = np.array(
        [is_test(f.path) or not is_source(f.path) or vendored[n] is not None for n, f in enumerate(index.files)]
    )
    scores = fuse(found.values, weights, ~demoted if weights.scale_by_sources else None)
    scores[demoted] *= weights.demoted
    for test, tested in found.subjects.items():  # a test ranks right below the source it tests
        best = max(float(scores[n]) for n in tested)
        if 0 < best <= scores[test]:
            scores[test] = np.nextafter(best, 0.0)
    order = [int(i) for i in np.argsort(-scores, kind="stable") if scores[i] > 0]
    out: list[RankedFile] = []
    shown: dict[str, int] = {}
    total = 0
    for number in order:
        root = vendored[number]
        if root is not None:
            shown[root] = shown.get(root, 0) + 1
            if shown[root] > 1:
                continue  # one row per vendored tree: its copies must not crowd out the project's own files
            found.reasons[number].append(f"in the vendored copy {root}/")
        total += 1
        if limit is None or len(out) < limit:
            out.append(
                _ranked(index, number, float(scores[number]), found.reasons[number], found.matched[number], cues)
            )
    return out, total


def signals(index: FileIndex, cues: Cues, query_terms: list[str] | tuple[str, ...], weights: Weights) -> _Signals:
    """Each signal on its own, one value per file: BM25 of the goal and of its first line, paths the goal
    names, module names, defined names (rare ones count more), uses of code names, and the tests'
    BM25 for the sources they test."""
    count = len(index.files)
    found = _Signals(
        values={name: np.zeros(count, dtype=np.float64) for name in SIGNALS},
        reasons=[[] for _ in range(count)],
        matched=[[] for _ in range(count)],
        subjects={},
    )
    values, reasons = found.values, found.reasons
    values["bm25"] = index.bm25(query_terms)
    if cues.title_terms:
        values["title"] = index.bm25(cues.title_terms)
    paths = index.derived(("paths",), lambda: [f.path for f in index.files])
    found.subjects = index.derived(
        ("subjects", weights.test_folders), lambda: subjects(paths, folders=weights.test_folders)
    )
    for test, tested in found.subjects.items():
        for number in tested:  # a test that matches the goal points at the source it tests
            if values["bm25"][test] > values["tested"][number]:
                values["tested"][number] = values["bm25"][test]
                reasons[number] = [r for r in reasons[number] if not r.startswith("tested by ")]
                reasons[number].append(f"tested by {paths[test]}")
    absent: set[str] = set()  # the stems of files the goal gives that this tree lacks
    for number_of_cue, cue in enumerate(cues.paths):
        named_here = files_named(paths, cue)
        if not named_here and number_of_cue < cues.written:
            absent |= {PurePosixPath(cue).stem.casefold(), PurePosixPath(cue).name.casefold()}
        for number in named_here:
            values["path"][number] += 1.0
            reasons[number].append(f"path {cue[-60:]!r}")
    _name_signals(index, cues, weights, found, absent if weights.absent_files else set())
    return found


def _name_signals(index: FileIndex, cues: Cues, weights: Weights, found: _Signals, absent: set[str]) -> None:
    """The module, define and refs signals of the goal's names, added into `found`."""
    count = len(index.files)
    values, reasons, matched = found.values, found.reasons, found.matched
    # What the tree's file names say is worked out once per index (1.7 s a call at 28,000 files).
    paths = index.derived(("paths",), lambda: [f.path for f in index.files])
    modules_of = index.derived(("stems",), lambda: stems(paths))
    parts_of = index.derived(("stem parts",), lambda: ModuleParts(modules_of)) if weights.module_part else None
    scale = math.log(1 + count)
    seen: set[str] = set()
    if weights.foreign_attributes:  # `os.getcwd`: getcwd is os's, counted through os.getcwd's uses only
        absent = absent | {
            n.rsplit(".", 1)[-1].casefold()
            for n in cues.names
            if "." in n and n.split(".", 1)[0].casefold() not in modules_of
        }
    for name, written_as_code in list(cues.names.items())[:MAX_IDENTIFIERS]:
        checkpoint()
        code = written_as_code and name.casefold() not in absent
        # A plain word is worth what it is rare in this tree's text ("code" in a code base is not).
        rarity = _rarity(index, name, scale, code=code, words=weights.word_uses)
        weight = (
            (weights.code_name if code else weights.plain_name)
            * rarity
            * (weights.title_factor if name in cues.title else 1.0)
        )
        if weight <= 0:
            continue  # a name that counts for nothing is not given as a reason either
        folded = name.casefold()
        if folded not in seen:  # a module counts a name once, whatever its case
            seen.add(folded)
            modules, share, why = modules_of.get(folded, []), 1.0, f"module {name}"
            if not modules and code:  # `__repr__` and saferepr.py
                modules, share, why = (
                    parts_of.get(folded.strip("_")) if parts_of is not None else [],
                    weights.module_part,
                    f"module name holds {name}",
                )
            for number in modules:
                values["module"][number] += share * weight * math.log(1 + count / len(modules)) / scale
                reasons[number].append(why)
        defined = _definitions(index, name, exact=code)
        files = {number for number, _ in defined}
        for number, line in defined:
            if all(n != name for n, _ in matched[number]):
                values["define"][number] += weight * math.log(1 + count / len(files)) / scale
                matched[number].append((name, line))
        if code:
            users, uses = _uses(index, name, words=weights.word_uses)
            if len(users):
                strength = (1 + np.log(uses)) / (1 + np.log(uses)).max()
                values["refs"][users] += weight * math.log(1 + count / len(users)) / scale * strength
                if len(users) <= MAX_USERS_SHOWN:
                    for number in users.tolist():
                        reasons[number].append(f"uses {name}")


def fuse(values: dict[str, np.ndarray], weights: Weights, sources: np.ndarray | None = None) -> np.ndarray:
    """One score per file from the signals, as `weights.fusion` says (see Weights). With `sources` (a mask),
    "normalized" divides each name signal by its best value among those files, capped at 1."""
    total = np.zeros(len(next(iter(values.values()))), dtype=np.float64)
    for name in SIGNALS:
        weight, value = float(getattr(weights, name)), values[name]
        if not weight or not value.size or value.max() <= 0:
            continue
        if weights.fusion == "rrf":
            total += weight * np.where(value > 0, 1.0 / (weights.rrf_k + _ranks(value)), 0.0)
        elif weights.fusion == "normalized" or name in ("bm25", "title"):
            best = value.max()
            if sources is not None and name not in _TEXT and sources.any() and value[sources].max() > 0:
                best = value[sources].max()
            total += weight * np.minimum(value / best, 1.0)
        else:
            total += weight * value
    return total


def _ranks(value: np.ndarray) -> np.ndarray:
    """1 for the best value, ties sharing the better rank (only positive values matter)."""
    ordered = np.sort(-value)
    return np.searchsorted(ordered, -value, side="left").astype(np.float64) + 1.0


def _ranked(
    index: FileIndex, number: int, score: float, reasons: list[str], matched: list[tuple[str, int]], cues: Cues
) -> RankedFile:
    path = index.files[number].path
    defines = ", ".join(f"{name} L{line}" for name, line in matched[:6])
    why = "; ".join([*dict.fromkeys(reasons), *([f"defines {defines}"] if defines else [])]) or "terms of the goal"
    line = next((n for cue, n in cues.lines.items() if named(path, cue)), None)
    return RankedFile(number=number, path=path, score=round(score, 3), why=why, symbols=tuple(matched), line=line)


def _uses(index: FileIndex, name: str, *, words: bool) -> tuple[np.ndarray, np.ndarray]:
    """(files, counts) that use the code name `name`: written like code in them, else (with `words`) the
    files whose words hold it or, for `a.b`, its last part (`os.getcwd`, `__repr__`: code names that no
    file writes like code, as the index keeps only snake_case, camelCase and options whole)."""
    users, uses = index.references(name)
    if len(users) or not words:
        return users, uses
    parts = terms(name.rsplit(".", 1)[-1])
    return index.postings(parts[0]) if len(parts) == 1 and len(parts[0]) >= 3 else (users, uses)


def _rarity(index: FileIndex, name: str, scale: float, *, code: bool, words: bool) -> float:
    """How rare `name` is in this tree's files, 0..1: a code name by its uses, a word by its text."""
    if code:
        users = len(_uses(index, name, words=words)[0])
        if users:
            return math.log(1 + len(index.files) / users) / scale
    parts = terms(name)
    if not parts:
        return 0.0
    return min(math.log(1 + len(index.files) / max(1, index.document_frequency(p))) for p in parts) / scale


def _definitions(index: FileIndex, name: str, *, exact: bool) -> list[tuple[int, int]]:
    return index.defined(name) if exact else index.defined_any_case(name)


def query_terms_of(goal: str) -> list[str]:
    return terms(goal[:MAX_GOAL_CHARS])
