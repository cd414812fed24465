"""A tree too large to index within a call's time share (issue #33): the first search answers from what it
indexed, the paths that hold the goal's words first, and says how many files are not indexed yet; each
next call indexes more, until the index covers the tree and is kept in memory. Through the MCP client."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from flow import answer_record
from mcp import Client

from sparseread_mcp import Settings
from sparseread_mcp.directory import fileindex, indexes
from sparseread_mcp.serve.server import create_server


def tree(root: Path) -> Path:
    for n in range(40):
        folder = root / "src" / f"pkg{n // 10}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"mod{n}.py").write_text(f"def helper_{n}(value):\n    return value + {n}\n")
    # Last in walk order, but its path holds the goal's words: indexed first.
    (root / "zz" / "redirects").mkdir(parents=True)
    (root / "zz" / "redirects" / "follow.py").write_text(
        "def follow_redirects(response, limit):\n    return response.next(limit)  # follow redirects\n"
    )
    return root


async def focus(client: Client, goal: str) -> dict[str, Any]:
    result = await client.call_tool("sro_read", {"target": ".", "intent": {"goal": goal}})
    assert not result.is_error, result
    body: Any = answer_record(result)
    return dict(body["result"])


@pytest.mark.anyio
async def test_a_first_search_past_its_time_share_answers_from_a_partial_index_and_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Every call gets no time to read files: it reads one chunk of 10, then stops (the main process
    # decides this, so patching here reaches it).
    monkeypatch.setattr(indexes, "INDEX_SHARE", 0.0)
    monkeypatch.setattr(indexes, "CALL_SHARE", 0.0)
    monkeypatch.setattr(fileindex, "CHUNK_FILES", 10)
    server = create_server(Settings(roots=(tree(tmp_path / "repo"),), cache_dir=tmp_path / "cache"))
    with anyio.fail_after(120):
        async with Client(server) as client:
            first = await focus(client, "where are redirects followed")
            second = await focus(client, "how is a helper value computed")
            rest = [await focus(client, f"helper number {n}") for n in range(3)]
    assert first["rows"][0][0] == "zz/redirects/follow.py", first["rows"]
    assert first["left_out"].startswith("31 of 41 files not indexed yet"), first
    assert "each next call on this folder indexes more" in first["left_out"]
    assert second["left_out"].startswith("21 of 41 files not indexed yet"), second
    assert rest[0]["left_out"].startswith("11 of 41"), rest[0]
    assert rest[1]["left_out"].startswith("1 of 41"), rest[1]
    assert rest[2].get("left_out") is None and rest[2]["rows_scanned"] == 41, rest[2]  # covered at last


def test_a_library_caller_without_a_time_limit_indexes_the_whole_tree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sparseread_mcp import Intent, ReadEngine, ReadRequest

    monkeypatch.setattr(indexes, "INDEX_SHARE", 0.0)
    monkeypatch.setattr(fileindex, "CHUNK_FILES", 10)
    reader = ReadEngine(Settings(roots=(tree(tmp_path / "repo"),), cache_dir=tmp_path / "cache"))
    pack = reader.read("s", ReadRequest(target=".", intent=Intent(goal="where are redirects followed")))
    assert pack.result is not None and pack.result.left_out is None and pack.result.rows_scanned == 41
