"""Partial answers say so: a directory count, listing or search that a cap, an ignore rule or a skipped
type cut says what was left out and how many, through the official MCP client."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from flow import answer_record
from mcp import Client

from sparseread_mcp import Settings
from sparseread_mcp.serve.server import create_server

FILE_CAP = 30


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every file holds one NEEDLE line: 5 at the top, 40 in src/ (the file cap cuts it), 6 in build/ and
    dist/ (vendored, not walked), 3 in logs/ and 2 *.tmp files (ignored), a PDF and a binary file."""
    root = tmp_path / "root"
    for folder, count in (("", 5), ("src", 40), ("build", 3), ("dist", 3), ("logs", 3)):
        (root / folder).mkdir(parents=True, exist_ok=True)
        for n in range(count):
            (root / folder / f"f{n:02d}.txt").write_text(f"line one\nNEEDLE in {folder or 'top'} {n}\n")
    for n in range(2):
        (root / f"scratch{n}.tmp").write_text("NEEDLE scratch\n")
    (root / ".gitignore").write_text("logs/\n*.tmp\n")
    (root / "report.pdf").write_bytes(b"%PDF-1.4 NEEDLE not searched\n")
    (root / "blob.bin").write_bytes(b"NEEDLE\x00\x01\x02" * 10)
    return root


def call(root: Path, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    async def run() -> dict[str, Any]:
        async with Client(create_server(Settings(roots=(root,), inventory_max_files=FILE_CAP))) as client:
            with anyio.fail_after(60):  # a hang guard only
                result = await client.call_tool(tool, arguments)
        assert not result.is_error and answer_record(result) is not None, result.content
        return answer_record(result)

    return anyio.run(run)


def test_a_folder_needle_count_cut_by_a_cap_says_so_and_what_was_not_searched(tree: Path) -> None:
    answer = call(tree, "sro_read", {"target": ".", "intent": {"needles": ["NEEDLE"]}})
    result = answer["result"]
    found = result["value"]
    assert found < 5 + 40  # the cap cut the count ...
    left_out = result["left_out"]  # ... and the answer says so: which cap, from where, and how many
    assert f"the count stopped at a cap: at least {found} matching lines" in left_out
    assert f"the {FILE_CAP}-file cap cut" in left_out and "src/ (" in left_out
    assert "build/" in left_out and "dist/" in left_out  # vendored folders, not walked
    assert "ignore rules dropped 1 folder: logs/" in left_out and "2 files: ./ (2)" in left_out
    assert "1 pdf" in left_out and "1 binary" in left_out  # types that are not searched


def test_a_folder_listing_cut_by_a_cap_says_what_was_left_out(tree: Path) -> None:
    preview = call(tree, "sro_preview", {"path": "."})
    left_out = preview["signals"]["left_out"]
    assert f"the {FILE_CAP}-file cap cut" in left_out and "src/ (" in left_out
    assert "logs/" in left_out and "build/" in left_out


def test_a_ranked_folder_read_says_what_the_walk_left_out(tree: Path) -> None:
    answer = call(tree, "sro_read", {"target": ".", "intent": {"goal": "where is the needle in src"}})
    assert f"the {FILE_CAP}-file cap cut" in answer["left_out"] and "logs/" in answer["left_out"]


def test_a_complete_count_says_nothing_was_left_out(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("NEEDLE\n")
    (tmp_path / "b.txt").write_text("NEEDLE\nNEEDLE\n")
    result = call(tmp_path, "sro_read", {"target": ".", "intent": {"needles": ["NEEDLE"]}})["result"]
    assert result["value"] == 3 and "left_out" not in result
