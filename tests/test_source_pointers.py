"""An answer names a file and version once (protocol 6): through the official MCP client, the pointers of
the file an answer quotes are `#anchor`s relative to its `source`, and `source` + anchor is a pointer that
dereferences to exactly the item's text; the answer is shorter for it, and a pointer to another file stays
whole."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from conftest import source_at
from flow import answer_record, read
from mcp import Client
from mcp.types import TextContent

from sparseread_mcp import Settings
from sparseread_mcp.serve.server import create_server
from sparseread_mcp.wire_source import absolute, relative_to_source, source_pointers

FILLER = "The council met on the river bank to discuss the harvest, the bridge and the winter market."


def minutes(tmp_path: Path) -> Path:
    """Long minutes whose tariff paragraphs are spread over filler: a focus quotes several of them."""
    paragraphs = [
        f"The copper tariff schedule {k} sets the harbour tariff at {k * 3} percent for copper."
        if k % 20 == 7
        else f"{FILLER} Paragraph {k} of the minutes."
        for k in range(160)
    ]
    (tmp_path / "minutes.txt").write_text("\n\n".join(paragraphs) + "\n")
    return tmp_path


async def raw_answer(client: Client, **arguments: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """The answer's JSON frame exactly as the model reads it, and its record read back (texts sent as
    blocks of their own put in, pointers whole)."""
    result = await client.call_tool("sro_read", arguments)
    record = answer_record(result)
    assert record is not None, result.content
    block = result.content[0]
    assert isinstance(block, TextContent)
    frame: dict[str, Any] = json.loads(block.text)
    return frame, record


@pytest.mark.anyio
async def test_source_plus_anchor_is_the_pointer_and_dereferences_verbatim(tmp_path: Path) -> None:
    root = minutes(tmp_path)
    text = (root / "minutes.txt").read_text()
    with anyio.fail_after(120):  # a hang guard only
        async with Client(create_server(Settings(roots=(root,)))) as client:
            frame, record = await raw_answer(client, target="minutes.txt", intent={"goal": "copper tariff schedule"})
            source = frame["source"]
            assert source.startswith("minutes.txt@sha256:") and "#" not in source
            said = [i["pointer"] for i in frame["items"]]
            assert len(said) >= 2 and all(p.startswith("#") for p in said)
            for relative, item in zip(said, record["items"], strict=True):
                whole = source + relative
                assert item["pointer"] == whole  # read back whole
                assert source_at(text, relative[1:]) == item["text"]  # an independent checker
                back = await read(client, target=whole)  # dereferencing the pointer an agent cites
                assert back["items"][0]["text"].strip() == item["text"].strip()
            _, verdict = await raw_answer(client, target=source + said[0], action="verify")
            assert verdict["verification"]["status"] == "ok"


@pytest.mark.anyio
async def test_relative_pointers_make_the_answer_shorter(tmp_path: Path) -> None:
    root = minutes(tmp_path)
    with anyio.fail_after(120):
        async with Client(create_server(Settings(roots=(root,)))) as client:
            frame, record = await raw_answer(client, target="minutes.txt", intent={"goal": "copper tariff schedule"})
    whole = absolute(frame)
    assert "source" not in whole and len(json.dumps(frame)) < len(json.dumps(whole))  # path@rev said once
    compact = json.dumps(frame, separators=(",", ":"))
    assert set(source_pointers(compact)) >= {i["pointer"] for i in record["items"]}  # what compaction sees


def test_a_pointer_of_another_file_or_a_single_pointer_stays_whole() -> None:
    a, b = "a.md@sha256:0123456789ab", "b.md@sha256:ba9876543210"
    record = {
        "episode": {"id": "ep1"},
        "items": [{"pointer": f"{a}#L1-L2", "text": "# a heading, not a pointer"}, {"pointer": f"{a}#L5"}],
        "already_delivered": [f"{b}#L3"],
    }
    said = relative_to_source(record)
    assert list(said)[:2] == ["episode", "source"] and said["source"] == a
    assert [i["pointer"] for i in said["items"]] == ["#L1-L2", "#L5"]
    assert said["items"][0]["text"] == "# a heading, not a pointer"  # text is never rewritten
    assert said["already_delivered"] == [f"{b}#L3"]  # another file: whole
    assert absolute(said) == record
    one = {"verification": {"status": "ok", "pointer": f"{a}#L1"}}
    assert relative_to_source(one) == one  # one pointer: `source` would cost what it saves
