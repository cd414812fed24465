"""Coverage names only the passages that support a slot at least partly, through the official MCP client:
inside a page of a full view, a passage that shares one of the goal's words says nothing about where the
answer is, and each pointer costs the agent tokens on every answer."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from flow import read
from mcp import Client

from sparseread_mcp import Settings
from sparseread_mcp.serve.server import create_server

FILLER = "The council met on the river bank to discuss the harvest, the bridge and the winter market."
GOAL = {"goal": "what did the zeppelin observatory balloon quartermaster propose"}


def minutes(root: Path) -> Path:
    """Filler; the goal's rarest words together in one paragraph (partial support), one of them alone in
    a few others (far below partial)."""
    paragraphs = [f"{FILLER} Paragraph {k} was read." for k in range(300)]
    for k in range(12, 300, 25):
        paragraphs[k] = f"{FILLER} The quartermaster spoke at paragraph {k}."
    paragraphs[40] = "The zeppelin quartermaster arrived late at the meeting and left early."
    (root / "minutes.txt").write_text("\n\n".join(paragraphs) + "\n")
    return root


@pytest.mark.anyio
async def test_a_full_view_page_names_only_the_passages_that_support_the_slot(tmp_path: Path) -> None:
    root = minutes(tmp_path)
    text = (root / "minutes.txt").read_text()
    with anyio.fail_after(120):  # a hang guard only
        async with Client(create_server(Settings(roots=(root,)))) as client:
            page = await read(client, target="minutes.txt", intent=GOAL, view="full")
            (slot,) = page["coverage"]
            assert slot["status"] == "partial"
            lines = text.splitlines()
            for pointer in slot.get("pointers", []):
                span = [int(n) for n in pointer.split("#L", 1)[1].replace("L", "").split("-")]
                named = lines[span[0] - 1 : span[-1]]
                assert any("zeppelin" in line for line in named), pointer  # not one common word of the goal
            assert slot.get("pointers"), slot  # the partial passage is named
