"""The end-to-end reading flow a real agent runs, shared by the stdio, HTTP and in-memory tests."""

from __future__ import annotations

from typing import Any

from conftest import source_at
from mcp import Client


async def call(client: Client, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """Call a tool; over stateless HTTP, carry the reading session's handle from call to call."""
    handle = HANDLES.get(id(client))
    if handle is not None and "session" not in arguments and tool != "sro_compact":
        arguments = {**arguments, "session": handle}
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, result.content
    assert result.structured_content is not None
    if result.structured_content.get("session"):
        HANDLES[id(client)] = result.structured_content["session"]
    return result.structured_content


HANDLES: dict[int, str] = {}


def check_items(pack: dict[str, Any], source: str) -> None:
    for item in pack["items"]:
        assert source_at(source, item["anchor"]) == item["text"], f"{item['anchor']} is not verbatim"
        assert item["pointer"].endswith("#" + item["anchor"])


async def reading_flow(client: Client, path: str, source: str, question: str) -> None:
    tools = {t.name: t for t in (await client.list_tools()).tools}
    assert {"sro_preview", "sro_read", "sro_card"} <= set(tools)
    assert all(t.output_schema for t in tools.values())

    preview = await call(client, "sro_preview", {"path": path})
    assert preview["route"] == "sparse"
    assert preview["full_view_chars"] == len(source)
    assert preview["outline"]

    focus = await call(client, "sro_read", {"target": path, "intent": {"goal": question}})
    assert focus["gate"]["decision"] == "sparse" and focus["items"]
    check_items(focus, source)
    episode = focus["episode"]["id"]
    ledger = [focus["exposure"]["payload_chars"]]

    slots = [
        {"id": "answer", "question": question},
        {"id": "revenue", "question": "total net revenue for the fiscal year", "aliases": ["net sales", "revenue"]},
    ]
    collect = await call(client, "sro_read", {"target": path, "action": "collect", "intent": {"slots": slots}})
    check_items(collect, source)
    assert [c["slot"] for c in collect["coverage"]] == ["answer", "revenue"]
    assert all(c["status"] in {"found", "partial", "missing"} for c in collect["coverage"])
    assert set(collect["unresolved"]) == {c["slot"] for c in collect["coverage"] if c["status"] != "found"}
    assert collect["episode"]["id"] == episode  # the session goal fills the unsaid goal
    ledger.append(collect["exposure"]["payload_chars"])

    delivered = {i["anchor"] for p in (focus, collect) for i in p["items"]}
    for _ in range(3):
        refine = await call(client, "sro_read", {"target": path, "action": "refine"})
        check_items(refine, source)
        fresh = {i["anchor"] for i in refine["items"]}
        assert not fresh & delivered, "refine sent an item twice"
        delivered |= fresh
        ledger.append(refine["exposure"]["payload_chars"])

    exposure = refine["exposure"]
    assert exposure["episode_chars"] == sum(ledger)
    assert exposure["remaining_chars"] == exposure["full_view_chars"] - exposure["episode_chars"]
    assert exposure["episode_chars"] <= exposure["full_view_chars"]

    pointer = focus["items"][0]["pointer"]
    verified = await call(client, "sro_read", {"target": pointer, "action": "verify"})
    assert verified["verification"]["status"] == "ok"
    assert verified["items"][0]["text"] == focus["items"][0]["text"]
    claim = await call(client, "sro_read", {"target": path, "action": "verify", "intent": {"goal": question}})
    assert claim["verification"]["status"] in {"supported", "contradicted", "unverified", "not_found"}

    card = await call(client, "sro_card", {})
    assert any(e["id"] == episode and e["episode_chars"] == exposure["episode_chars"] for e in card["episodes"])

    escape = await client.call_tool("sro_read", {"target": "../../etc/passwd", **_handle(client)})
    assert escape.is_error and "outside the readable roots" in escape.content[0].text  # type: ignore[union-attr]


def _handle(client: Client) -> dict[str, str]:
    handle = HANDLES.get(id(client))
    return {"session": handle} if handle else {}
