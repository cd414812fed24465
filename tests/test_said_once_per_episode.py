"""What an episode's answers would all repeat is said once: its id and the full view's length `L` (and
`L_tokens`) by the answer that opens the episode's ledger, no answer echoes the call's action, and a verdict that shows and charges nothing is the verdict and
what was searched. An agent pays for every token of a frame again on every later turn."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from docs import ledger_text
from flow import call, read
from mcp import Client

from sparseread_mcp import Settings
from sparseread_mcp.serve.server import create_server

GOAL = "Which harbour did the copper merchants use for the winter tariff?"


@pytest.mark.anyio
async def test_the_episode_and_its_full_views_length_are_said_by_the_answer_that_opens_the_ledger(tmp_path: Path) -> None:
    text = ledger_text()
    (tmp_path / "ledger.txt").write_text(text)
    with anyio.fail_after(120):  # a hang guard only
        async with Client(create_server(Settings(roots=(tmp_path,)))) as client:
            focus = await read(client, target="ledger.txt", intent={"goal": GOAL})
            refines = [await read(client, target="ledger.txt", action="refine") for _ in range(2)]
            page = await read(client, target="ledger.txt", intent={"goal": GOAL}, view="full")
            other = await read(client, target="ledger.txt", intent={"goal": "how many bushels did the council log"})
            card = await call(client, "sro_card", {})
    opened = focus["exposure"]
    assert opened["L"] == len(text) and opened["L_tokens"] > 0 and opened["E"] == opened["chars"]
    episode = focus["episode"]["id"]
    for later in (*refines, page):
        assert "episode" not in later and "action" not in later  # the agent's own call says which
        assert "L" not in later["exposure"] and "L_tokens" not in later["exposure"]
        assert later["exposure"]["E"] <= opened["L"]  # the agent holds L from the first answer
    assert refines[-1]["exposure"]["E"] == opened["chars"] + sum(r["exposure"].get("chars", 0) for r in refines)
    # A new episode opens its own ledger and says L again; the card states every episode's L.
    assert other["episode"]["id"] != episode and other["exposure"]["L"] == len(text)
    states = {state["id"]: state for state in card["episodes"]}
    assert states[episode]["L"] == len(text)
    assert states[episode]["E"] == refines[-1]["exposure"]["E"]  # the refines went on in the focus's episode


@pytest.mark.anyio
async def test_a_verdict_that_shows_nothing_is_the_verdict_and_what_was_searched(tmp_path: Path) -> None:
    (tmp_path / "ledger.txt").write_text(ledger_text())
    with anyio.fail_after(120):  # a hang guard only
        async with Client(create_server(Settings(roots=(tmp_path,)))) as client:
            verdict = await read(
                client,
                target="ledger.txt",
                action="verify",
                intent={"goal": "the zeppelin hangar burned during the regatta"},
            )
    assert verdict["verification"]["status"] == "not_found" and verdict["verification"]["reason"]
    assert "ledger" in verdict["scope"] or "passages" in verdict["scope"]  # what was searched
    # No episode (nothing was delivered in it), gate, ledger, echo or open slots: the verdict says them.
    assert set(verdict) == {"verification", "scope", "tokens"}
