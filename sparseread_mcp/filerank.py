"""Ranking a code directory's files for a goal by what code has: paths, module names and definitions.

The goal's identifiers are read the way a developer reads an issue: names written like code
(`snake_case`, `camelCase`, `a.b`, `name()`, quoted) weigh more than plain words; paths and traceback
lines (`File "x/y.py", line 12`) name files outright; dotted module names name files by their path.
A file scores by the names it defines (each weighted by how few files define it), by its path and
module name, and by BM25 over its terms, all per file, so one file's many passages cannot crowd out
the others. Tests and non-source files rank below sources that match as well. Every score says why.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import PurePosixPath

import numpy as np

from .fileindex import FileIndex, code_like
from .locate.terms import terms

#: Goal characters looked at (a pasted log beyond this adds noise, not names).
MAX_GOAL_CHARS = 20_000
MAX_IDENTIFIERS = 64
_PATH = re.compile(r"[\w.-]{0,100}(?:/[\w.-]{1,100}){0,20}\.[A-Za-z]{1,6}\b")
_TRACEBACK = re.compile(r'File "([^"\n]{1,400})", line (\d{1,9})')
_WORD = re.compile(r"--[a-z][a-z0-9-]{1,60}|[A-Za-z_][A-Za-z0-9_]{1,80}(?:\.[A-Za-z_][A-Za-z0-9_]{0,80}){0,8}")
_QUOTED = re.compile(r"[`'\"]([A-Za-z_][\w.]{1,120})(?:\(\))?[`'\"]")
_SOURCE_SUFFIXES = frozenset({".py", ".js", ".ts", ".tsx", ".jsx", ".go", ".rs", ".java", ".c", ".h", ".cpp", ".rb"})
_TEST_PARTS = frozenset({"test", "tests", "testing", "spec", "specs", "__tests__"})
# Weights: a traceback or quoted path names the file outright; a rare defined name nearly does.
PATH_WEIGHT = 8.0
MODULE_WEIGHT = 4.0
CODE_NAME = 1.5
PLAIN_NAME = 0.6
BM25_WEIGHT = 3.0
REF_WEIGHT = 3.0
TITLE_FACTOR = 1.5
MAX_USERS_SHOWN = 20
TEST_FACTOR = 0.35
NON_SOURCE_FACTOR = 0.35


@dataclass(frozen=True, slots=True, kw_only=True)
class Cues:
    """What a goal names: files (paths, traceback lines), and identifiers (name -> written like code)."""

    paths: tuple[str, ...] = ()
    lines: dict[str, int] = field(default_factory=dict)  # path -> a traceback's line
    names: dict[str, bool] = field(default_factory=dict)
    title: frozenset[str] = frozenset()  # names on the goal's first line (an issue's title)

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
    return Cues(paths=tuple([*lines, *paths, *modules][:MAX_IDENTIFIERS]), lines=lines, names=names, title=title)


def is_source(path: str) -> bool:
    return PurePosixPath(path).suffix.lower() in _SOURCE_SUFFIXES


def is_test(path: str) -> bool:
    parts = path.lower().split("/")
    name = parts[-1]
    return (
        any(p in _TEST_PARTS for p in parts[:-1])
        or name.startswith("test_")
        or name.startswith("conftest.")
        or PurePosixPath(name).stem.endswith(("_test", "_spec", ".test", ".spec"))
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class RankedFile:
    number: int  # the file's position in the index
    path: str
    score: float
    why: str
    symbols: tuple[tuple[str, int], ...]  # defined names the goal mentions, with their lines
    line: int | None = None  # a traceback's line in this file


def rank_files(index: FileIndex, cues: Cues, query_terms: list[str] | tuple[str, ...]) -> list[RankedFile]:
    """Files by score, best first; each with why it ranks."""
    count = len(index.files)
    if not count:
        return []
    scores = np.zeros(count, dtype=np.float64)
    reasons: list[list[str]] = [[] for _ in range(count)]
    matched: list[list[tuple[str, int]]] = [[] for _ in range(count)]
    bm25 = index.bm25(query_terms)
    if bm25.size and bm25.max() > 0:
        scores += BM25_WEIGHT * bm25 / bm25.max()
    paths = [f.path for f in index.files]
    for cue in cues.paths:
        for number in _files_named(paths, cue):
            scores[number] += PATH_WEIGHT
            reasons[number].append(f"path {cue[-60:]!r}")
    stems = _stems(paths)
    scale = math.log(1 + count)
    seen: set[str] = set()
    for name, code in list(cues.names.items())[:MAX_IDENTIFIERS]:
        # A plain word is worth what it is rare in this tree's text ("code" in a code base is not).
        rarity = _rarity(index, name, scale, code=code)
        weight = (CODE_NAME if code else PLAIN_NAME) * rarity * (TITLE_FACTOR if name in cues.title else 1.0)
        modules = stems.get(name.casefold(), []) if name.casefold() not in seen else []
        seen.add(name.casefold())
        for number in modules:
            scores[number] += MODULE_WEIGHT * weight * math.log(1 + count / len(modules)) / scale
            reasons[number].append(f"module {name}")
        defined = _definitions(index, name, exact=code)
        files = {number for number, _ in defined}
        for number, line in defined:
            if all(n != name for n, _ in matched[number]):
                scores[number] += 2 * weight * math.log(1 + count / len(files)) / scale
                matched[number].append((name, line))
        if code:
            users, uses = index.references(name)
            if len(users):
                strength = (1 + np.log(uses)) / (1 + np.log(uses)).max()
                scores[users] += REF_WEIGHT * weight * math.log(1 + count / len(users)) / scale * strength
                if len(users) <= MAX_USERS_SHOWN:
                    for number in users.tolist():
                        reasons[number].append(f"uses {name}")
    for number, path in enumerate(paths):
        if is_test(path):
            scores[number] *= TEST_FACTOR
        elif not is_source(path):
            scores[number] *= NON_SOURCE_FACTOR
    order = [int(i) for i in np.argsort(-scores, kind="stable") if scores[i] > 0]
    return [_ranked(index, number, float(scores[number]), reasons[number], matched[number], cues) for number in order]


def _ranked(
    index: FileIndex, number: int, score: float, reasons: list[str], matched: list[tuple[str, int]], cues: Cues
) -> RankedFile:
    path = index.files[number].path
    defines = ", ".join(f"{name} L{line}" for name, line in matched[:6])
    why = "; ".join([*dict.fromkeys(reasons), *([f"defines {defines}"] if defines else [])]) or "terms of the goal"
    line = next((n for cue, n in cues.lines.items() if _named(path, cue)), None)
    return RankedFile(number=number, path=path, score=round(score, 3), why=why, symbols=tuple(matched), line=line)


def _rarity(index: FileIndex, name: str, scale: float, *, code: bool) -> float:
    """How rare `name` is in this tree's files, 0..1: a code name by its uses, a word by its text."""
    if code:
        users = len(index.references(name)[0])
        if users:
            return math.log(1 + len(index.files) / users) / scale
    parts = terms(name)
    if not parts:
        return 0.0
    return min(math.log(1 + len(index.files) / max(1, index.document_frequency(p))) for p in parts) / scale


def _definitions(index: FileIndex, name: str, *, exact: bool) -> list[tuple[int, int]]:
    found = list(index.defines.get(name, ()))
    if not exact:
        for other in index.defines_folded.get(name.casefold(), ()):
            if other != name:
                found += index.defines[other]
    return found


def _stems(paths: list[str]) -> dict[str, list[int]]:
    """Module names (a file's stem; a package's folder for __init__/index/mod files) -> files."""
    out: dict[str, list[int]] = {}
    for number, path in enumerate(paths):
        pure = PurePosixPath(path)
        if not is_source(path):
            continue
        stem = pure.stem.casefold()
        if stem in ("__init__", "index", "mod") and len(pure.parts) > 1:
            stem = pure.parts[-2].casefold()
        out.setdefault(stem, []).append(number)
    return out


def _files_named(paths: list[str], cue: str) -> list[int]:
    return [number for number, path in enumerate(paths) if _named(path, cue)]


def _named(path: str, cue: str) -> bool:
    """True when `cue` (a path from the goal, maybe absolute or from another checkout) and `path` end
    alike: the whole of the shorter one, or at least their last two components."""
    ours, theirs = path.split("/"), cue.strip("/").split("/")
    if theirs and theirs[0] in (".", ".."):
        theirs = [t for t in theirs if t not in (".", "..")]
    if not theirs or not theirs[-1]:
        return False
    shared = 0
    for a, b in zip(reversed(ours), reversed(theirs), strict=False):
        if a != b:
            break
        shared += 1
    return shared == min(len(ours), len(theirs)) or shared >= 2


def query_terms_of(goal: str) -> list[str]:
    return terms(goal[:MAX_GOAL_CHARS])
