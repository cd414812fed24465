"""Readers that never finish, for tests of what a stuck parse costs. They run in worker processes (which
import this module by name: conftest puts this folder on their path), so they report through files, not
objects: `<file>.started` holds the worker's pid once the parse has begun."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path

from sparseread_mcp.files.artifacts import Artifact
from sparseread_mcp.readers.base import ParsedArtifact
from sparseread_mcp.select.configuration import Configuration
from sparseread_mcp.vocabulary import Action


@dataclass(frozen=True)
class EndlessReader:
    """Parses `.slow` files forever, as a native loop would: it never looks at any deadline."""

    name: str = "endless"
    types: frozenset[str] = frozenset({"text"})
    actions: frozenset[Action] = frozenset({"scout", "focus", "collect", "refine", "verify"})
    binary: bool = False
    configurations: tuple[Configuration, ...] = (Configuration("bm25", "snippets"),)

    def accepts(self, path: Path) -> bool:
        return path.suffix == ".slow"

    def parse(self, artifact: Artifact, *, passage_chars: int) -> ParsedArtifact:
        marker = artifact.location.absolute.with_suffix(".started")
        marker.write_text(str(os.getpid()))
        while True:
            time.sleep(0.01)


def started_pid(slow_file: Path) -> int | None:
    marker = slow_file.with_suffix(".started")
    text = marker.read_text() if marker.exists() else ""
    return int(text) if text.isdigit() else None


def process_exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def wait_forever(marker: str) -> None:
    """A task that never ends on its own: it writes its pid to `marker`, then waits."""
    Path(marker).write_text(str(os.getpid()))
    while True:
        time.sleep(0.01)


def note(path: str, text: str) -> str:
    """A task that appends `text` as a line of `path`: the file's lines are the order tasks ran in."""
    with open(path, "a") as out:
        out.write(text + "\n")
    return text


def crash() -> None:
    """A task whose process dies as a native crash would take it."""
    os.kill(os.getpid(), 11)


def echo(value: object) -> object:
    return value
