"""What an episode's answers would all repeat is said once: its id and the full view's length `L` (and
`L_tokens`) by the answer that opens the episode's ledger; no answer echoes the call's action; a one-slot
answer says `missing` by having no coverage; a verdict that shows and charges nothing is the verdict and
what was searched. An agent pays for every token of a frame again on every later turn."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from docs import LEDGER_GOAL as GOAL
from docs import ledger_text
from flow import call, read
from mcp import Client

from sparseread_mcp import Settings
from sparseread_mcp.serve.server import create_server


@pytest.mark.anyio
async def test_the_episode_and_the_full_views_length_are_said_by_the_answer_opening_the_ledger(tmp_path: Path) -> None:
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


@pytest.mark.anyio
async def test_a_goal_the_passages_miss_says_so_by_no_coverage_and_a_verdict_by_itself(tmp_path: Path) -> None:
    (tmp_path / "ledger.txt").write_text(ledger_text())
    slots = [
        {"id": "hangar", "question": "how many bushels did the council log for the zeppelin hangar"},
        {"id": "tariff", "question": "which harbour had the winter tariff"},
    ]
    with anyio.fail_after(120):  # a hang guard only
        async with Client(create_server(Settings(roots=(tmp_path,)))) as client:
            focus = await read(client, target="ledger.txt", intent={"goal": slots[0]["question"]})
            refine = await read(client, target="ledger.txt", action="refine")
            claim = {"goal": "the orchard council logged 7 bushels in the zeppelin hangar"}
            verdict = await read(client, target="ledger.txt", action="verify", intent=claim)
            collect = await read(client, target="ledger.txt", action="collect", intent={"slots": slots})
    # One slot whose rarest words no passage holds (the file never says "zeppelin" nor "hangar"): `missing` is
    # the one-slot default, said by no coverage at all
    # (and no `unresolved`), on the first answer and on every refine after it.
    for answer in (focus, refine):
        assert answer["items"] and "coverage" not in answer and "unresolved" not in answer
    # A verdict about the claim says how the claim stands: not its one slot again.
    assert verdict["verification"]["status"] == "unverified" and "unresolved" not in verdict
    # With two slots every slot is listed, a missing one too: which one is missing is the news.
    assert {c["slot"]: c["status"] for c in collect["coverage"]} == {"hangar": "missing", "tariff": "found"}
