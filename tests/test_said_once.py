"""An answer says nothing the agent already holds, through the official MCP client: a refine's coverage
names only the pointers no earlier answer of the episode named, and the note naming a continued goal is said
on the first call that continues it (the robust default's hint left out on `found`: test_robust_default.py).
A verify's place that overlaps a passage the agent read sends only its new part."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import anyio
import pytest
from flow import read
from mcp import Client

from sparseread_mcp import Settings
from sparseread_mcp.evidence import Candidate
from sparseread_mcp.protocol import actions
from sparseread_mcp.readers.base import ParsedArtifact
from sparseread_mcp.serve.server import create_server

FILLER = "The council met on the river bank to discuss the harvest, the bridge and the winter market."


def report(tmp_path: Path) -> Path:
    """A long report whose tariff paragraphs are spread over filler (many passages share the goal's words)."""
    paragraphs = []
    for k in range(160):
        if k % 20 == 7:
            paragraphs.append(f"The copper tariff schedule {k} sets the harbour tariff at {k * 3} percent for copper.")
        else:
            paragraphs.append(f"{FILLER} Paragraph {k} of the minutes.")
    paragraphs.append("The renewal term of the copper tariff agreement is one year, renewed in 2019.")
    (tmp_path / "report.txt").write_text("\n\n".join(paragraphs) + "\n")
    return tmp_path


def pointers_of(answer: dict[str, Any]) -> list[str]:
    return [p for c in answer.get("coverage", []) for p in c.get("pointers", [])]


@pytest.mark.anyio
async def test_refines_do_not_repeat_pointers_nor_the_continued_goal(tmp_path: Path) -> None:
    root = report(tmp_path)
    with anyio.fail_after(120):  # a hang guard only
        async with Client(create_server(Settings(roots=(root,)))) as client:
            first = await read(client, target="report.txt", intent={"goal": "what is the copper tariff schedule"})
            told = {i["pointer"] for i in first["items"]}
            refines = [await read(client, target="report.txt", action="refine") for _ in range(3)]
            assert "continuing your latest goal" in refines[0]["message"]
            assert all("message" not in r for r in refines[1:])  # said once, on the first refine
            for answer in refines:
                named = pointers_of(answer)
                assert not told & set(named), named  # no pointer an earlier answer named, again
                told |= set(named) | {i["pointer"] for i in answer.get("items", [])}
            card = (await client.call_tool("sro_card", {})).structured_content
            assert card is not None and set(card["coverage"][0]["pointers"]) <= told  # the card still lists them
            # A new goal, then a refine of it: the note names the goal it continues, once more.
            await read(client, target="report.txt", intent={"goal": "when is the renewal term"})
            again = await read(client, target="report.txt", action="refine")
            assert "when is the renewal term" in again["message"]


def test_a_verify_place_sends_only_what_the_agent_does_not_hold() -> None:
    text = "alpha line one\nbeta line two\ngamma line three\ndelta line four\n"
    parsed = cast(ParsedArtifact, SimpleNamespace(artifact=SimpleNamespace(text=text)))
    place = Candidate(start=0, end=text.index("delta") - 1, score=1.0, passage=0)  # alpha .. gamma
    held_head = [(0, text.index("gamma"))]  # the agent read alpha and beta
    (trimmed,) = actions.unheld(parsed, [place], lambda a, b: held_head)
    assert text[trimmed.start : trimmed.end] == "gamma line three"  # only the new part
    whole = [(0, len(text))]
    assert actions.unheld(parsed, [place], lambda a, b: whole) == [place]  # held whole: delivery names it
    middle = [(text.index("beta"), text.index("gamma"))]
    assert actions.unheld(parsed, [place], lambda a, b: middle) == [place]  # new at both ends: as it was
    assert actions.unheld(parsed, [place], lambda a, b: []) == [place]
