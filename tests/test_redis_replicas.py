"""Two real HTTP replicas on one real Redis and one cache directory: a session started on replica A
continues on replica B with its evidence record, as behind a load balancer."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from docs import long_markdown
from flow import answer_record
from mcp import Client
from test_mcp_transports import running_http_server
from test_redis_store import running_redis

from sparseread_mcp.wire import anchor_lines

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


@pytest.fixture
def replicas(tmp_path: Path) -> Iterator[tuple[str, str, Path]]:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "manual.md").write_text(long_markdown())
    cache = tmp_path / "cache"
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
    with running_redis(tmp_path / "redis") as url:
        shared = ("--store", f"{url}?prefix=replicas:", "--cache-dir", str(cache))
        with (
            running_http_server(tmp_path / "docs", tmp_path / "a", *shared) as a,
            running_http_server(tmp_path / "docs", tmp_path / "b", *shared) as b,
        ):
            yield f"{a}/mcp", f"{b}/mcp", cache


async def call(client: Client, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, result.content
    assert answer_record(result) is not None
    return answer_record(result)


def entries(cache: Path) -> dict[Path, int]:
    """The index cache's entries and their inodes (a rewrite renames a new file into place)."""
    return {p: p.stat().st_ino for p in cache.glob("parsed/*/*.pickle")}


async def test_a_session_started_on_replica_a_continues_on_replica_b(replicas: tuple[str, str, Path]) -> None:
    url_a, url_b, cache = replicas
    goal = {"goal": "turbine harbor rates"}
    with anyio.fail_after(120):
        async with Client(url_a) as a, Client(url_b) as b:
            preview = await call(a, "sro_preview", {"path": "manual.md", "intent": goal})
            handle = preview["session"]
            parsed_once = entries(cache)
            focus = await call(a, "sro_read", {"target": "manual.md", "intent": goal, "session": handle})
            slots = {**goal, "slots": [{"id": "rate", "question": "which rate applies?", "aliases": ["rate10"]}]}
            collect = await call(
                a, "sro_read", {"target": "manual.md", "action": "collect", "intent": slots, "session": handle}
            )
            card_a = await call(a, "sro_card", {"session": handle})

            # The load balancer sends the next calls to replica B.
            card_b = await call(b, "sro_card", {"session": handle})
            refine = await call(b, "sro_read", {"target": "manual.md", "action": "refine", "session": handle})
            paged = await call(
                b, "sro_read", {"target": "manual.md", "view": "full", "budget_tokens": 1500, "session": handle}
            )
            # ... and back to A for the next page.
            nxt = await call(
                a,
                "sro_read",
                {"target": "manual.md", "cursor": paged["cursor"], "budget_tokens": 1500, "session": handle},
            )
            after_b = await call(a, "sro_card", {"session": handle})
            other = await call(b, "sro_card", {})

    assert handle.startswith("rs-") and preview["route"] == "sparse"
    assert card_b["session_intent"]["goal"] == goal["goal"]
    assert card_b["episodes"] == card_a["episodes"] and card_b["pointers"] == card_a["pointers"]
    sent_on_a = {i["pointer"] for i in [*focus["items"], *collect["items"]]}
    assert sent_on_a and sent_on_a <= set(card_b["pointers"])
    assert refine["items"] and not {i["pointer"] for i in refine["items"]} & sent_on_a  # never resent
    assert "episode" not in refine  # it goes on in an episode an earlier answer named
    # The ledger continues too: B adds its payload to what A had exposed in that episode.
    before = collect if "episode" not in collect else focus
    exposure = refine["exposure"]
    assert exposure["E"] == before["exposure"].get("E", 0) + exposure.get("chars", 0)
    assert paged["cursor"] and nxt["items"] and lines_of(nxt["items"][0])[0] > lines_of(paged["items"][-1])[1]
    assert {i["pointer"] for i in refine["items"]} <= set(after_b["pointers"])
    assert other["session"] != handle and "episodes" not in other  # none: left out
    # B parsed nothing itself: A's entry is the only one, never rewritten.
    assert len(parsed_once) == 1 and entries(cache) == parsed_once


def lines_of(item: dict[str, Any]) -> tuple[int, int]:
    """An item's line range: its `lines`, or (the wire leaves them out then) its pointer's `#L12-L18` anchor."""
    if "lines" in item:
        return int(item["lines"][0]), int(item["lines"][1])
    said = anchor_lines(item["pointer"].split("#", 1)[1])
    assert said, item["pointer"]
    return said
