"""Line ranges of files over the parse limit: lines and hash from one streamed pass over one descriptor."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from sparseread_mcp.errors import BudgetTooSmall
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
            streamed = large.stream_range(location, first, last)
            assert streamed.lines == lines[first - 1 : last]
            assert streamed.fingerprint == hashlib.sha256(data).hexdigest() and streamed.size == len(data)
    assert large.stream_range(location, 5, 6).lines == ["epsilon"]  # past the end: fewer lines, caller refuses


def test_a_range_past_the_streaming_limit_names_the_sub_ranges_that_fit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(large, "_MAX_RANGE_BYTES", 100)
    (tmp_path / "big.log").write_text("".join(f"line {n:02d} " + "x" * 20 + "\n" for n in range(1, 21)))
    location = Roots((tmp_path,)).resolve("big.log")
    with pytest.raises(BudgetTooSmall) as refused:
        large.stream_range(location, 3, 12)
    said = str(refused.value)
    assert "big.log#L3-L5 first" in said and "big.log#L6-L12" in said  # 3 lines of 28 bytes fit in 100
    got = large.stream_range(location, 3, 5)  # what it said to read first is readable
    assert len(got.lines) == 3


def test_a_single_line_past_the_streaming_limit_says_how_to_read_it_otherwise(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(large, "_MAX_RANGE_BYTES", 100)
    (tmp_path / "big.log").write_text("short\n" + "y" * 500 + "\nshort\n")
    location = Roots((tmp_path,)).resolve("big.log")
    with pytest.raises(BudgetTooSmall, match=r"line 2 alone.*SPARSEREAD_MAX_PARSE_BYTES"):
        large.stream_range(location, 2, 3)
