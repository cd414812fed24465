"""A focus shows every passage its budget plans, best first, through the official MCP client: a passage
that passes coverage's word test ranked above the one that answers does not hide it."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from flow import read
from mcp import Client

from sparseread_mcp import Settings
from sparseread_mcp.serve.server import create_server

WHO = {"goal": "who is the chief harbour pilot appointed"}
FILLER = "The council met on the river bank to discuss the harvest, the bridge and the winter market."
#: Every word of the question and a name: coverage's test calls it `found`, and it ranks first.
DECOY = "Jonas Berg asked the council who the chief harbour pilot is and how the chief harbour pilot is appointed."
#: Fewer of the question's words, ranked below the decoy and a passage that is not `found`.
ANSWER = "Marta Olsen of the northern quay holds the post this year: chief pilot."


def minutes(tmp_path: Path) -> Path:
    paragraphs = []
    for k in range(420):
        if k == 100:
            paragraphs.append(DECOY)
        elif k == 200:
            paragraphs.append("A harbour pilot was appointed to the committee on dues.")
        elif k == 300:
            paragraphs.append(ANSWER)
        else:
            paragraphs.append(f"{FILLER} Paragraph {k} of the minutes.")
    (tmp_path / "minutes.txt").write_text("\n\n".join(paragraphs) + "\n")
    return tmp_path


@pytest.mark.anyio
async def test_a_passage_coverage_calls_found_does_not_hide_the_one_that_answers_below_it(tmp_path: Path) -> None:
    root = minutes(tmp_path)
    with anyio.fail_after(120):  # a hang guard only
        async with Client(create_server(Settings(roots=(root,), location="bm25"))) as client:
            first = await read(client, target="minutes.txt", intent=WHO)
            assert [c["status"] for c in first["coverage"]] == ["found"]
            texts = [i["text"] for i in first["items"]]
            assert DECOY in texts[0]  # the wrong name ranks first and passes the word test
            assert any(ANSWER in text for text in texts[1:])  # the answer is still in the first read
            more = await read(client, target="minutes.txt", action="refine")
            assert more["items"] and not {i["pointer"] for i in more["items"]} & {i["pointer"] for i in first["items"]}
