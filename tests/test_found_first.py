"""A focus sends its passages up to the first that covers every slot (`found`) and one more, through the
official MCP client: the passages after those would be read for nothing when they answer, and a refine
sends them when they do not."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from flow import read
from mcp import Client

from sparseread_mcp import Settings
from sparseread_mcp.protocol import actions
from sparseread_mcp.serve.server import create_server

WHO = {"goal": "who is the chief harbour pilot appointed"}
FILLER = "The council met on the river bank to discuss the harvest, the bridge and the winter market."


def minutes(tmp_path: Path) -> Path:
    """Minutes where the chief harbour pilot is named once, among paragraphs with the same words and no name."""
    paragraphs = []
    for k in range(420):
        if k % 15 == 4:
            paragraphs.append(f"The harbour pilot of district {k} was appointed to the chief committee on dues.")
        elif k == 211:
            paragraphs.append("The chief harbour pilot appointed this year is Marta Olsen of the northern quay.")
        else:
            paragraphs.append(f"{FILLER} Paragraph {k} of the minutes.")
    (tmp_path / "minutes.txt").write_text("\n\n".join(paragraphs) + "\n")
    return tmp_path


@pytest.mark.anyio
async def test_a_focus_stops_at_the_passage_coverage_calls_found_and_a_refine_sends_the_others(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = minutes(tmp_path)
    with anyio.fail_after(120):  # a hang guard only
        async with Client(create_server(Settings(roots=(root,), location="bm25"))) as client:
            first = await read(client, target="minutes.txt", intent=WHO)
            assert [c["status"] for c in first["coverage"]] == ["found"]
            texts = [i["text"] for i in first["items"]]
            found = next(k for k, text in enumerate(texts) if "Marta Olsen" in text)
            assert len(texts) == found + 1 + actions.FOUND_AFTER  # the found passage, then FOUND_AFTER more
            more = await read(client, target="minutes.txt", action="refine")
            assert more["items"] and not {i["pointer"] for i in more["items"]} & {i["pointer"] for i in first["items"]}

    monkeypatch.setattr(actions, "FOUND_FIRST", False)  # switched off: the focus sends every planned passage
    with anyio.fail_after(120):
        async with Client(create_server(Settings(roots=(root,), location="bm25"))) as client:
            every = await read(client, target="minutes.txt", intent=WHO)
            assert len(every["items"]) > len(first["items"])
            sent = [i["pointer"] for i in first["items"]]
            assert [i["pointer"] for i in every["items"][: len(sent)]] == sent


@pytest.mark.anyio
async def test_when_the_next_passage_is_found_too_the_focus_sends_every_planned_passage(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two passages pass coverage's lexical test alike (two pilots named): the test cannot tell which one
    answers, so the focus does not cut after the first (`FOUND_TWICE_SENDS_ALL`)."""
    root = minutes(tmp_path)
    text = (root / "minutes.txt").read_text()
    (root / "minutes.txt").write_text(
        text.replace(
            f"{FILLER} Paragraph 300 of the minutes.",
            "The chief harbour pilot appointed last year was Jonas Berg of the southern quay.",
        )
    )

    async def focus_texts() -> list[str]:
        with anyio.fail_after(120):  # a hang guard only
            async with Client(create_server(Settings(roots=(root,), location="bm25"))) as client:
                answer = await read(client, target="minutes.txt", intent=WHO)
                return [i["text"] for i in answer["items"]]

    both = await focus_texts()
    assert any("Marta Olsen" in t for t in both) and any("Jonas Berg" in t for t in both)
    monkeypatch.setattr(actions, "FOUND_FIRST", False)
    assert both == await focus_texts()  # every planned passage, as with the cut off
    monkeypatch.setattr(actions, "FOUND_FIRST", True)
    monkeypatch.setattr(actions, "FOUND_TWICE_SENDS_ALL", False)
    cut = await focus_texts()
    assert len(cut) < len(both)  # without the rule: the found passage and FOUND_AFTER more
