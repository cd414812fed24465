"""The end-to-end reading flow a real agent runs, shared by the stdio, HTTP and in-memory tests."""

from __future__ import annotations

from typing import Any

from conftest import source_at
from mcp import Client
from mcp.types import TextContent

from sparseread_mcp.wire import gate_decision, record_of
from sparseread_mcp.wire_source import absolute


def answer_text(result: Any) -> str:
    """Every text block of a tool answer, joined: what a model reads (a frame, then texts sent as blocks)."""
    return "\n".join(b.text for b in result.content if isinstance(b, TextContent))


def answer_record(result: Any) -> dict[str, Any] | None:
    """The record a tool answer carries, its pointers whole (as an agent cites them: `source` + `#anchor`):
    its structured copy, or (texts sent as blocks of their own: a native preview, items that span lines) the
    record its text blocks make; None for an error."""
    if result.is_error:
        return None
    if result.structured_content is not None:
        return absolute(dict(result.structured_content))
    blocks = [b.text for b in result.content if isinstance(b, TextContent)]
    return record_of(blocks) if blocks else None


async def call(client: Client, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """Call a tool; over stateless HTTP, carry the reading session's handle from call to call."""
    handle = HANDLES.get(id(client))
    if handle is not None and "session" not in arguments and tool != "sro_compact":
        arguments = {**arguments, "session": handle}
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, result.content
    # One JSON record, with its structured copy; or a frame and texts as blocks of their own, with none.
    record = answer_record(result)
    assert record is not None
    if record.get("session"):
        HANDLES[id(client)] = record["session"]
    return record


HANDLES: dict[int, str] = {}


async def read(client: Client, **arguments: Any) -> dict[str, Any]:
    """One `sro_read` call's answer record (no session handle carried: for single-session clients)."""
    result = await client.call_tool("sro_read", arguments)
    record = answer_record(result)
    assert record is not None, result.content
    return record


def anchor_of(item: dict[str, Any]) -> str:
    """An item's anchor: the part of its pointer after `#` (the wire does not repeat it)."""
    return str(item["pointer"]).split("#", 1)[1]


def check_items(pack: dict[str, Any], source: str) -> None:
    for item in pack.get("items", []):
        assert "anchor" not in item
        assert source_at(source, anchor_of(item)) == item["text"], f"{anchor_of(item)} is not verbatim"


async def reading_flow(client: Client, path: str, source: str, question: str) -> None:
    tools = {t.name: t for t in (await client.list_tools()).tools}
    assert {"sro_preview", "sro_read", "sro_card"} <= set(tools)
    assert not any(t.output_schema for t in tools.values())  # answers are lean records, not schema-bound

    preview = await call(client, "sro_preview", {"path": path})
    assert preview["route"] == "sparse"
    assert preview["L"] == len(source)
    assert preview["outline"]

    focus = await call(client, "sro_read", {"target": path, "intent": {"goal": question}})
    assert gate_decision(focus) == "sparse" and "gate" not in focus and focus["items"]
    check_items(focus, source)
    episode = focus["episode"]["id"]
    ledger = [focus["exposure"].get("chars", 0)]

    slots = [
        {"id": "answer", "question": question},
        {"id": "revenue", "question": "total net revenue for the fiscal year", "aliases": ["net sales", "revenue"]},
    ]
    collect = await call(client, "sro_read", {"target": path, "action": "collect", "intent": {"slots": slots}})
    check_items(collect, source)
    assert [c["slot"] for c in collect["coverage"]] == ["answer", "revenue"]
    assert all(c["status"] in {"found", "partial", "missing"} for c in collect["coverage"])
    # `unresolved` is left out where it is just the slots coverage does not call found.
    unresolved = {c["slot"] for c in collect["coverage"] if c["status"] != "found"}
    assert set(collect.get("unresolved", unresolved)) == unresolved
    # The session goal fills the unsaid goal: the collect goes on in the focus's episode, which its answer
    # does not name again (the ledger below adds up across the episode).
    assert "episode" not in collect and episode
    ledger.append(collect["exposure"].get("chars", 0))

    delivered = {anchor_of(i) for p in (focus, collect) for i in p.get("items", [])}
    for _ in range(3):
        refine = await call(client, "sro_read", {"target": path, "action": "refine"})
        check_items(refine, source)
        fresh = {anchor_of(i) for i in refine.get("items", [])}
        assert not fresh & delivered, "refine sent an item twice"
        delivered |= fresh
        ledger.append(refine["exposure"].get("chars", 0))

    exposure = refine["exposure"]
    assert exposure["E"] == sum(ledger)
    assert "remaining_chars" not in exposure  # L - E, said once
    assert exposure["E"] <= focus["exposure"]["L"]  # L is said by the answer that opened the ledger
    assert "L" not in exposure and "L_tokens" not in exposure

    pointer = focus["items"][0]["pointer"]
    verified = await call(client, "sro_read", {"target": pointer, "action": "verify"})
    assert verified["verification"]["status"] == "ok"
    assert verified["items"][0]["text"] == focus["items"][0]["text"]
    claim = await call(client, "sro_read", {"target": path, "action": "verify", "intent": {"goal": question}})
    assert claim["verification"]["status"] in {"supported", "contradicted", "unverified", "not_found"}

    card = await call(client, "sro_card", {})
    # The claim is the focus's goal, so its verdict goes on in that episode (and does not name it again): its
    # closest places may be new to the episode (charged) or already held (named, not charged).
    assert "id" not in claim.get("episode", {})
    spent = claim.get("exposure", {}).get("E", exposure["E"])
    assert any(e["id"] == episode and e.get("E", 0) == spent for e in card["episodes"])

    escape = await client.call_tool("sro_read", {"target": "../../etc/passwd", **_handle(client)})
    assert escape.is_error and "outside the readable roots" in escape.content[0].text  # type: ignore[union-attr]


def _handle(client: Client) -> dict[str, str]:
    handle = HANDLES.get(id(client))
    return {"session": handle} if handle else {}


async def pages_of(client: Client, target: str, first: dict[str, Any]) -> list[dict[str, Any]]:
    """`first` and every page its cursor leads to, to the end of the full view (at most 80)."""
    pages = [first]
    while pages[-1].get("cursor") and len(pages) < 80:
        pages.append(await read(client, target=target, cursor=pages[-1]["cursor"]))
    assert not pages[-1].get("cursor"), "the full view ends"
    return pages


def whole_once(text: str, pages: list[dict[str, Any]]) -> bool:
    """Whether the pages' items name exactly their text and cover every character of `text` but blanks,
    none twice."""
    count = [0] * len(text)
    for item in (item for page in pages for item in page.get("items", [])):
        shown = source_at(text, anchor_of(item))
        if "text" in item and item["text"] != shown:
            return False
        start = text.find(shown)
        for i in range(start, start + len(shown)):
            count[i] += 1
    return all(n == 1 for n, ch in zip(count, text, strict=True) if not ch.isspace())
