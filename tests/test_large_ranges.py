"""Line ranges of files over the parse limit: lines and hash from one streamed pass over one descriptor."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from sparseread_mcp.files import large
from sparseread_mcp.files.roots import Roots


@pytest.mark.parametrize("block", [1, 3, 7, 1 << 20])
@pytest.mark.parametrize("ending", ["", "\n"])
def test_streamed_ranges_match_the_lines_whatever_the_block_size(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, block: int, ending: str
) -> None:
    lines = ["alpha", "", "gamma\r", "delta é", "epsilon"]
    data = ("\n".join(lines) + ending).encode()
    (tmp_path / "big.log").write_bytes(data)
    monkeypatch.setattr(large, "_BLOCK", block)
    location = Roots((tmp_path,)).resolve("big.log")
    for first in range(1, 6):
        for last in range(first, 6):
            got, fingerprint, size = large._stream_range(location, first, last)
            assert got == lines[first - 1 : last]
            assert fingerprint == hashlib.sha256(data).hexdigest() and size == len(data)
    assert large._stream_range(location, 5, 6)[0] == ["epsilon"]  # past the end: fewer lines, caller refuses
