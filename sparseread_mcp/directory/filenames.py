"""What a code tree's file names say: which files are sources or tests, which module a name is, which
source a test tests, and whether a path from a goal (maybe from another checkout) names a file here.

Only paths are read here, never contents: the ranking (filerank.py) weighs what these find.
"""

from __future__ import annotations

import bisect
import posixpath
import re

_SOURCE_SUFFIXES = frozenset({".py", ".js", ".ts", ".tsx", ".jsx", ".go", ".rs", ".java", ".c", ".h", ".cpp", ".rb"})
_TEST_AFFIX = re.compile(r"^tests?_|[_.](?:test|spec)$")
_TEST_PARTS = frozenset({"test", "tests", "testing", "spec", "specs", "__tests__"})
#: Pieces of module names as short as the shortest goal name looked up (goal_cues drops shorter ones).
MIN_PART = 3


def is_source(path: str) -> bool:
    # posixpath, not PurePosixPath: called for every file of a tree on every ranking.
    return posixpath.splitext(path)[1].lower() in _SOURCE_SUFFIXES


def is_test(path: str) -> bool:
    parts = path.lower().split("/")
    name = parts[-1]
    return (
        any(p in _TEST_PARTS for p in parts[:-1])
        or name.startswith("test_")
        or name.startswith("conftest.")
        or _stem(name).endswith(("_test", "_spec", ".test", ".spec"))
    )


def stems(paths: list[str]) -> dict[str, list[int]]:
    """Module names (a file's stem; a package's folder for __init__/index/mod files) -> files."""
    out: dict[str, list[int]] = {}
    for number, path in enumerate(paths):
        if not is_source(path):
            continue
        parts = path.split("/")
        stem = _stem(parts[-1]).casefold()
        if stem in ("__init__", "index", "mod") and len(parts) > 1:
            stem = parts[-2].casefold()
        out.setdefault(stem, []).append(number)
    return out


class ModuleParts:
    """The heads and tails of module names -> files: `saferepr` gives `safe` and `repr`, so a goal about
    `__repr__` finds the module whose name holds it. A piece is what is left of a name cut in two (each
    half at least MIN_PART long) once its underscores at either end are stripped.

    Looked up, never listed: every piece of every module of a 28,000-file tree took 2.6 s to list, on each
    new index (a new process, a changed tree), for the few names a goal holds. The modules are sorted by
    their names' heads and tails, and a lookup checks only those that begin or end with the piece."""

    def __init__(self, modules: dict[str, list[int]]) -> None:
        self._modules = list(modules.items())
        # A piece that heads a name heads it once its leading underscores are gone; one that tails it ends
        # it once its trailing underscores are gone (reversed, so both are prefix searches).
        self._heads = sorted((stem.lstrip("_"), n) for n, (stem, _) in enumerate(self._modules))
        self._tails = sorted((stem.rstrip("_")[::-1], n) for n, (stem, _) in enumerate(self._modules))

    def get(self, piece: str) -> list[int]:
        """The files of the modules whose name holds `piece` as a head or a tail, in order."""
        if len(piece) < MIN_PART or piece != piece.strip("_"):
            return []
        candidates = {n for _, n in _starting(self._heads, piece)} | {n for _, n in _starting(self._tails, piece[::-1])}
        files: set[int] = set()
        for n in candidates:
            stem, numbers = self._modules[n]
            if any(
                piece in (stem[:cut].strip("_"), stem[cut:].strip("_"))
                for cut in range(MIN_PART, len(stem) - MIN_PART + 1)
            ):
                files.update(numbers)
        return sorted(files)


def _starting(keyed: list[tuple[str, int]], prefix: str) -> list[tuple[str, int]]:
    """The entries of `keyed` (sorted) whose key starts with `prefix`."""
    first = bisect.bisect_left(keyed, (prefix, -1))
    last = first
    while last < len(keyed) and keyed[last][0].startswith(prefix):
        last += 1
    return keyed[first:last]


def subjects(paths: list[str], *, folders: bool = True) -> dict[int, list[int]]:
    """Test file -> the source files it tests, by name: `test_x.py`, `x_test.go`, `x.spec.ts` test `x.*`
    (failing an exact name, a source whose name ends or starts the test's, as `test_assertrewrite` and
    `rewrite`). With `folders`, a test whose own name names nothing (`testing/python/collect.py`) tests
    the module its folder is named after (`python.py`, or a package `_python/`)."""
    sources: dict[str, list[int]] = {}
    packages: dict[str, list[int]] = {}
    for number, path in enumerate(paths):
        if is_source(path) and not is_test(path):
            parts = path.split("/")
            stem = _stem(parts[-1])
            sources.setdefault(stem.casefold(), []).append(number)
            if stem == "__init__" and len(parts) > 1:
                packages.setdefault(parts[-2].casefold().strip("_"), []).append(number)
    out: dict[int, list[int]] = {}
    for number, path in enumerate(paths):
        if not (is_source(path) and is_test(path)):
            continue
        parts = path.split("/")
        stem = _stem(parts[-1]).casefold()
        subject = _TEST_AFFIX.sub("", stem)
        if subject != stem and len(subject) >= 3:
            # Looked up by the subject's own ends (a few dict lookups), never by scanning every source.
            ends = [subject[i:] for i in range(1, len(subject) - 3)] + [
                subject[:-i] for i in range(1, len(subject) - 3)
            ]
            found = sources.get(subject) or [n for end in ends for n in sources.get(end, ())]
        elif folders and len(parts) > 2:
            found = _folder_subject(parts[-2].casefold(), sources, packages)
        else:
            found = []
        if found:
            out[number] = found
    return out


def _stem(name: str) -> str:
    """A file name less its last suffix (as PurePosixPath.stem, without building a path per file)."""
    return posixpath.splitext(name)[0]


def _folder_subject(folder: str, sources: dict[str, list[int]], packages: dict[str, list[int]]) -> list[int]:
    subject = _TEST_AFFIX.sub("", folder).strip("_")
    if folder in _TEST_PARTS or subject in _TEST_PARTS or len(subject) < 3:
        return []
    return sources.get(subject) or sources.get("_" + subject) or packages.get(subject, [])


def files_named(paths: list[str], cue: str) -> list[int]:
    return [number for number, path in enumerate(paths) if named(path, cue)]


def named(path: str, cue: str) -> bool:
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
