"""The files an engine sends to a worker to be read for its directory index, counted by path."""

from __future__ import annotations

from typing import Any

import pytest

from sparseread_mcp.directory import fileindex
from sparseread_mcp.engine import ReadEngine


def count_reads(engine: ReadEngine, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """A list that fills with the path of every file `engine` has read for an index from now on."""
    reads: list[str] = []
    original = engine.files.extract_features

    def counting(directory: Any, entries: list[fileindex.FileEntry], *, label: str) -> list[fileindex.FileFeatures]:
        reads.extend(entry.path for entry in entries)
        return original(directory, entries, label=label)

    monkeypatch.setattr(engine.files, "extract_features", counting)
    return reads
