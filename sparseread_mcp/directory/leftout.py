"""What a directory answer did not cover, in one short line.

The walk records its cuts (`WalkCuts`: folders it did not enter, files it dropped, each with why); an
answer adds its own (types it does not search, files over its size cap) and `left_out_line` says them all
with counts, naming a few folders or files each: a count, a listing or a search that was cut says so.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from ..vocabulary import READ_TOOL

#: Why the walk left something out.
IGNORED = "ignored"
FILE_CAP = "file cap"
DEPTH_CAP = "depth cap"
UNREADABLE = "unreadable"
#: Collapsed folders that are version-control metadata or tool caches, not content: never worth a word.
_METADATA = frozenset(
    {".git/", ".hg/", ".svn/", "__pycache__/", ".mypy_cache/", ".pytest_cache/", ".ruff_cache/", ".idea/"}
)
#: Folders or files named per part of the line; the rest are counted.
_NAMED = 4
#: A named path longer than this is shown by its head and tail (a hostile name must not fill the line).
_PATH_CHARS = 60


@dataclass(slots=True)
class WalkCuts:
    """What a directory walk left out: folders not entered (by why) and files dropped per folder (by why)."""

    folders: dict[str, str] = field(default_factory=dict)  # "logs/" -> IGNORED | DEPTH_CAP
    files: Counter[tuple[str, str]] = field(default_factory=Counter)  # (why, "src/") -> files dropped there

    def folder(self, path: str, why: str) -> None:
        self.folders[path.rstrip("/") + "/"] = why

    def file(self, folder: str, why: str) -> None:
        self.files[(why, f"{folder}/" if folder else "./")] += 1

    def dropped(self, why: str) -> int:
        return sum(n for (reason, _), n in self.files.items() if reason == why)


@dataclass(frozen=True, slots=True, kw_only=True)
class Unsearched:
    """What an answer itself did not search: files by type, and files over its size cap."""

    types: Counter[str] = field(default_factory=Counter)
    too_large: tuple[str, ...] = ()
    size_cap: int = 0
    cap_setting: str = "SPARSEREAD_SEARCH_MAX_FILE_BYTES"


def walk_cut_by_cap(cuts: WalkCuts) -> bool:
    """Whether a cap (files or depth), not a rule, stopped the walk: a count over it is a lower bound."""
    return bool(cuts.dropped(FILE_CAP)) or DEPTH_CAP in cuts.folders.values()


def left_out_line(
    cuts: WalkCuts,
    collapsed: list[str],
    *,
    max_files: int,
    max_depth: int,
    unsearched: Unsearched | None = None,
    folder: str = "",
) -> str | None:
    """One line naming what the walk and the answer left out, with counts; None when nothing was. Paths
    are given as pointers give them: under `folder`, the directory read."""
    if folder:
        cuts = WalkCuts(
            folders={f"{folder}/{path}": why for path, why in cuts.folders.items()},
            files=Counter(
                {(why, f"{folder}/" if f == "./" else f"{folder}/{f}"): n for (why, f), n in cuts.files.items()}
            ),
        )
    vendored = [f"{folder}/{c}" if folder else c for c in collapsed if c.rsplit("/", 2)[-2] + "/" not in _METADATA]
    parts = [
        _files_part(cuts, FILE_CAP, f"the {max_files:,}-file cap cut"),
        _folders_part(cuts, DEPTH_CAP, f"the {max_depth}-level depth cap cut"),
        _ignored_part(cuts),
        _named("not walked (vendored or generated)", vendored, "folder"),
        _files_part(cuts, UNREADABLE, "unreadable or not regular"),
    ]
    if unsearched is not None:
        if unsearched.types:
            kinds = ", ".join(f"{n} {kind}" for kind, n in sorted(unsearched.types.items(), key=lambda p: -p[1]))
            parts.append(f"not searched by type: {kinds} ({READ_TOOL} each file alone)")
        if unsearched.too_large:
            what = f"over {unsearched.size_cap:,} bytes ({unsearched.cap_setting}; {READ_TOOL} each alone)"
            large = [f"{folder}/{f}" if folder else f for f in unsearched.too_large]
            parts.append(_named(what, large, "file"))
    line = "; ".join(p for p in parts if p)
    return line or None


def _files_part(cuts: WalkCuts, why: str, label: str) -> str:
    per_folder = sorted(((n, f) for (reason, f), n in cuts.files.items() if reason == why), reverse=True)
    if not per_folder:
        return ""
    total = sum(n for n, _ in per_folder)
    named = ", ".join(f"{_short(f)} ({n:,})" for n, f in per_folder[:_NAMED])
    more = f" +{len(per_folder) - _NAMED} folders" if len(per_folder) > _NAMED else ""
    return f"{label} {total:,} files: {named}{more}"


def _folders_part(cuts: WalkCuts, why: str, label: str) -> str:
    return _named(label, [f for f, reason in cuts.folders.items() if reason == why], "folder")


def _ignored_part(cuts: WalkCuts) -> str:
    folders = _folders_part(cuts, IGNORED, "ignore rules dropped")
    files = _files_part(cuts, IGNORED, "ignore rules dropped" if not folders else "and")
    return " ".join(p for p in (folders, files) if p)


def _named(label: str, names: list[str], noun: str) -> str:
    if not names:
        return ""
    more = f" +{len(names) - _NAMED} more" if len(names) > _NAMED else ""
    shown = ", ".join(_short(n) for n in names[:_NAMED])
    return f"{label} {len(names):,} {noun}{'s' if len(names) != 1 else ''}: {shown}{more}"


def _short(path: str) -> str:
    """A path at most _PATH_CHARS long: its head and its tail, the middle marked as cut."""
    if len(path) <= _PATH_CHARS:
        return path
    return f"{path[:16]}…{path[-(_PATH_CHARS - 17) :]}"
