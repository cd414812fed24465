"""The wire says only what carries information (issue #17): no answer of any tool carries a null, empty or
default-valued field, nothing is said twice, the text and the structured copy are the same record, and the
tool schemas that sit in every prompt stay within 1,200 tokens."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from conftest import FIXTURES
from docs import long_markdown
from mcp import Client
from mcp.types import CallToolResult, TextContent

from sparseread_mcp import ReadEngine, Settings
from sparseread_mcp.models import (
    EpisodeRef,
    EvidenceItem,
    EvidencePack,
    Exposure,
    Gate,
    SlotCoverage,
    Verification,
)
from sparseread_mcp.serve.server import create_server
from sparseread_mcp.tokens import TokenCounter
from sparseread_mcp.wire import PROTOCOL, anchor_lines, gate_decision, record_of, wire_blocks, wire_dict, wire_json
from sparseread_mcp.wire_source import absolute

pytestmark = pytest.mark.anyio

#: Tool names, descriptions and input schemas together: what every prompt pays for the server.
SCHEMA_TOKENS = 1_200
#: Flags whose default the wire leaves out: an answer never states them at that value.
DEFAULT_FLAGS = {"generated": False, "truncated": False, "closed": False, "stale": False, "outline_complete": True}


def empties(value: object, path: str = "$") -> list[str]:
    """Where `value` holds a null, an empty string, list or object, or a flag at its default."""
    found: list[str] = []
    if isinstance(value, dict):
        if not value:
            found.append(path)
        for key, sub in value.items():
            if DEFAULT_FLAGS.get(key, object()) == sub and isinstance(sub, bool):
                found.append(f"{path}.{key}={sub}")
            found += empties(sub, f"{path}.{key}")
    elif isinstance(value, list):
        if not value:
            found.append(path)
        for n, sub in enumerate(value):
            found += empties(sub, f"{path}[{n}]")
    elif value is None or value == "":
        found.append(path)
    return found


def record(result: CallToolResult) -> dict[str, Any]:
    """The answer's record, checked to be the same as text and as structured copy."""
    assert not result.is_error, result.content
    blocks = [b.text for b in result.content if isinstance(b, TextContent)]
    assert blocks and len(blocks) == len(result.content)
    body = record_of(blocks)
    if len(blocks) == 1:
        assert json.loads(blocks[0]) == result.structured_content  # whichever a client gives its model: the same
        assert body == absolute(dict(result.structured_content))  # read back with its pointers whole
    elif "items" in body:  # items that span lines: each text a block of its own, in order, never escaped
        assert result.structured_content is None
        frame = json.loads(blocks[0])
        bare = [i for i in frame["items"] if "text" not in i]
        assert len(bare) == len(blocks) - 1 and all("\n" in text for text in blocks[1:])
        assert all("\n" not in i["text"] for i in frame["items"] if "text" in i)
    else:  # a native preview: its frame, then the file verbatim; no structured copy would escape it again
        assert len(blocks) == 2 and body["route"] == "native" and result.structured_content is None
        assert "content" not in json.loads(blocks[0]) and blocks[1] == body["content"]
        assert "route" not in json.loads(blocks[0])  # the file block says it
    return body


def project(tmp_path: Path) -> Path:
    root = tmp_path / "files"
    (root / "sub").mkdir(parents=True)
    (root / "manual.md").write_text(long_markdown())
    (root / "contract.md").write_text((FIXTURES / "contract.md").read_text())
    (root / "sub" / "rates.csv").write_text("region,rate\n" + "north,3.5\nsouth,4.25\n" * 40)
    (root / "sub" / "notes.txt").write_text("a small note about glaciers\n")
    return root


async def every_answer(client: Client) -> list[tuple[str, CallToolResult]]:
    """One answer of every tool and every action, in the shapes an agent meets."""
    calls: list[tuple[str, str, dict[str, Any]]] = [
        ("preview sparse", "sro_preview", {"path": "manual.md", "intent": {"goal": "glacier survey"}}),
        ("preview native", "sro_preview", {"path": "contract.md"}),
        (
            "verify held",
            "sro_read",
            {"target": "contract.md", "action": "verify", "intent": {"goal": "no such clause qqzx"}},
        ),
        ("preview folder", "sro_preview", {"path": "."}),
        ("scout", "sro_read", {"target": "manual.md", "action": "scout"}),
        ("focus", "sro_read", {"target": "manual.md", "intent": {"goal": "glacier survey"}}),
        (
            "collect",
            "sro_read",
            {
                "target": "manual.md",
                "action": "collect",
                "intent": {"slots": [{"id": "a", "question": "glacier"}, {"id": "b", "question": "zzz absent qqq"}]},
            },
        ),
        ("refine", "sro_read", {"target": "manual.md", "action": "refine"}),
        (
            "verify claim",
            "sro_read",
            {"target": "manual.md", "action": "verify", "intent": {"goal": "Unique marker SEC3-P1-MARK"}},
        ),
        ("no items", "sro_read", {"target": "manual.md", "intent": {"needles": ["qqzx-absent-7319"]}}),
        ("lines", "sro_read", {"target": "manual.md#L10-L14"}),
        ("outline", "sro_read", {"target": "manual.md", "view": "outline"}),
        ("full", "sro_read", {"target": "manual.md", "view": "full", "budget_tokens": 2000}),
        ("small file", "sro_read", {"target": "sub/notes.txt", "intent": {"goal": "glaciers"}}),
        (
            "table query",
            "sro_read",
            {"target": "sub/rates.csv", "intent": {"query": "SELECT region, sum(rate) FROM data GROUP BY region"}},
        ),
        ("folder", "sro_read", {"target": ".", "intent": {"goal": "glacier"}}),
        ("card", "sro_card", {}),
        ("card trace", "sro_card", {"trace": True}),
    ]
    answers = []
    focus_pointer = None
    for label, tool, args in calls:
        result = await client.call_tool(tool, args)
        answers.append((label, result))
        if label == "focus":
            focus_pointer = record(result)["items"][0]["pointer"]
    assert focus_pointer is not None
    answers.append(
        ("verify pointer", await client.call_tool("sro_read", {"target": focus_pointer, "action": "verify"}))
    )
    history = [{"role": "user", "content": "read the manual"}, {"role": "assistant", "content": ""}]
    answers.append(("compact", await client.call_tool("sro_compact", {"messages": history})))
    return answers


def _episode(fingerprint: str) -> EpisodeRef:
    """An episode about `a.md` at this version, as the engine makes it."""
    artifact = {"path": "a.md", "type": "markdown", "fingerprint": fingerprint}
    return EpisodeRef.model_validate({"id": "ep1", "artifact": artifact, "objective": "x"})


def _ledger(charged: int, charged_tokens: int, so_far: int) -> Exposure:
    """A ledger over a 90-character full view (20 tokens)."""
    return Exposure(
        payload_chars=charged,
        payload_tokens=charged_tokens,
        episode_chars=so_far,
        full_view_chars=90,
        full_view_tokens=20,
        remaining_chars=90 - so_far,
    )


async def test_no_answer_of_any_tool_carries_a_null_or_empty_field(tmp_path: Path) -> None:
    settings = Settings(roots=(project(tmp_path),))
    counter = TokenCounter(settings.tokenizer)
    async with Client(create_server(settings)) as client:
        answers = await every_answer(client)
    for label, result in answers:
        body = record(result)
        if label == "compact":
            body.pop("messages")  # the history comes back as given, empty strings and all
        assert not empties(body), f"{label}: {empties(body)}"
        if "tokens" in body:  # what an answer says it costs is what its text blocks cost
            blocks = [b.text for b in result.content if isinstance(b, TextContent)]
            assert body["tokens"] == sum(counter.count(b) for b in blocks), label


async def test_an_item_says_its_anchor_and_lines_once_in_its_pointer(tmp_path: Path) -> None:
    settings = Settings(roots=(project(tmp_path),))
    async with Client(create_server(settings)) as client:
        preview = record(await client.call_tool("sro_preview", {"path": "manual.md", "intent": {"goal": "glacier"}}))
        focus = record(await client.call_tool("sro_read", {"target": "manual.md", "intent": {"goal": "glacier"}}))
    async with Client(create_server(settings)) as client:  # a new session: no goal to fill in
        nothing = record(await client.call_tool("sro_read", {"target": "manual.md", "intent": {"needles": ["qq-zz"]}}))
    assert "items" not in nothing and len(nothing["episode"]["artifact"]["fingerprint"]) == 12
    assert preview["protocol"] == PROTOCOL and preview["L"] == len(long_markdown())
    assert focus["items"]
    for item in focus["items"]:
        assert "anchor" not in item and "#L" in item["pointer"]
        assert "lines" not in item  # a line anchor says them
    # The slot's pointers are this answer's items, which name the slot themselves.
    assert [c["slot"] for c in focus["coverage"]] == ["goal"] and "pointers" not in focus["coverage"][0]
    # A one-slot answer whose every item serves that slot does not say it on each item.
    assert all("slots" not in item for item in focus["items"])
    assert set(focus["episode"]) == {"id"}  # the pointers name the file and its version; the goal is ours
    # An ordinary sparse batch: the decision is the default and its reason routine, so no gate is said.
    assert "gate" not in focus and gate_decision(focus) == "sparse"
    # No selection: reader and method are the server's business; the robust default's reliability is a hint.
    assert "selection" not in focus
    assert all("reliability" in hint for hint in focus.get("next", []) if "view='full'" in hint)
    exposure = focus["exposure"]
    assert set(exposure) == {"chars", "E", "L", "L_tokens"} and exposure["E"] == exposure["chars"]


def test_the_wire_keeps_what_differs_from_the_default_and_drops_what_repeats() -> None:
    pointer = "a.md@sha256:0123456789ab#L3-L4"
    earlier = "a.md@sha256:0123456789ab#L20"
    pack = EvidencePack(
        episode=_episode("f" * 64),
        action="collect",
        view="snippets",
        items=[
            EvidenceItem(
                pointer=pointer, anchor="L3-L4", lines=(3, 4), page=None, text="t", score=0.12345, slots=["a"]
            ),
            EvidenceItem(
                pointer="a.md@sha256:0123456789ab#p2",
                anchor="p2",
                lines=(9, 12),
                page=2,
                text="u",
                score=0.0,
                slots=["b"],
            ),
        ],
        coverage=[
            SlotCoverage(
                slot="a",
                status="found",
                pointers=[pointer, "a.md@sha256:0123456789ab#L1", "a.md@sha256:0123456789ab#p2"],
            ),
            SlotCoverage(slot="b", status="partial", pointers=["a.md@sha256:0123456789ab#p2", *[earlier] * 2]),
        ],
        unresolved=["b"],
        scope="s",
        exposure=_ledger(5, 2, 9),
        gate=Gate(decision="fallback", reason="the batch would pass L"),
        truncated=False,
        tokens=50,
    )
    wire = absolute(wire_dict(pack))  # pointers whole (protocol 6 says them once)
    assert absolute(json.loads(wire_json(pack))) == wire
    first, second = wire["items"]
    assert first == {"pointer": pointer, "text": "t", "slots": ["a"]}  # best first: no scores
    assert second == {
        "pointer": "a.md@sha256:0123456789ab#p2",
        "lines": [9, 12],
        "text": "u",
        "slots": ["b"],
    }  # a page anchor does not say the lines; it says the page
    unordered = pack.model_copy(update={"items": pack.items[::-1]})
    assert [i.get("score") for i in wire_dict(unordered)["items"]] == [None, 0.12]  # said: a zero score is not
    assert wire["coverage"] == [
        # an earlier item, and one here that does not name this slot
        {"slot": "a", "status": "found", "pointers": ["a.md@sha256:0123456789ab#L1", "a.md@sha256:0123456789ab#p2"]},
        {"slot": "b", "status": "partial", "pointers": [earlier]},  # named once
    ]
    assert "unresolved" not in wire  # the slots not found, as coverage says
    assert wire["gate"] == {"decision": "fallback", "reason": "the batch would pass L"}  # not routine: kept
    assert gate_decision(wire) == "fallback"
    assert wire["exposure"] == {"chars": 5, "E": 9}  # E counts an earlier answer's 4: that one said L
    assert "view" not in wire and "truncated" not in wire and "generated" not in wire
    odd = pack.model_copy(update={"unresolved": ["a", "b"]})  # not derivable: said
    assert wire_dict(odd)["unresolved"] == ["a", "b"]


def test_a_one_slot_answer_names_its_slot_on_items_only_where_some_do_not_serve_it() -> None:
    pointers = [f"a.md@sha256:0123456789ab#L{n}" for n in (3, 9)]

    def pack(slots: list[list[str]]) -> EvidencePack:
        items = [
            EvidenceItem(pointer=p, anchor=p.split("#")[1], lines=None, page=None, text="t", score=0.0, slots=s)
            for p, s in zip(pointers, slots, strict=True)
        ]
        return EvidencePack(
            episode=_episode("f" * 64),
            action="focus",
            view="snippets",
            items=items,
            coverage=[SlotCoverage(slot="goal", status="partial", pointers=pointers)],
            unresolved=["goal"],
            scope="text reader; located with bm25",
            exposure=_ledger(5, 2, 5),
            gate=Gate(decision="sparse", reason="sparse read: 2 passage(s) within E <= L"),
            truncated=False,
            tokens=50,
        )

    every = wire_dict(pack([["goal"], ["goal"]]))
    assert all("slots" not in item for item in every["items"])  # the coverage entry says it once
    assert every["coverage"] == [{"slot": "goal", "status": "partial"}] and "scope" not in every
    some = wire_dict(pack([["goal"], []]))
    assert [item.get("slots") for item in some["items"]] == [["goal"], None]  # which item serves it: said
    assert some["coverage"] == [{"slot": "goal", "status": "partial"}]


async def test_tool_schemas_stay_within_their_token_budget(tmp_path: Path) -> None:
    async with Client(create_server(Settings(roots=(tmp_path,)))) as client:
        tools = (await client.list_tools()).tools
    shown = [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in tools]
    listed = [{k: t[k] for k in ("name", "description", "inputSchema")} for t in shown]
    text = json.dumps(listed, separators=(",", ":"))
    tokens = TokenCounter("o200k_base").count(text)
    assert tokens <= SCHEMA_TOKENS, f"tool names, descriptions and input schemas take {tokens} tokens"
    assert len(text) / 4 <= SCHEMA_TOKENS, f"... and {len(text) / 4:.0f} tokens counted as characters / 4"
    assert '"title"' not in json.dumps(listed)  # generated titles repeat the property names
    assert all(t.input_schema.get("additionalProperties") is False for t in tools)
    assert all(t.output_schema is None for t in tools)  # no client shows one to its model
    for tool in tools:
        assert tool.description and tool.description.count(". ") <= 2, tool.name  # a sentence or two


async def test_preview_validates_its_intent_like_read_does(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text(long_markdown())
    async with Client(create_server(Settings(roots=(tmp_path,)))) as client:
        bad = await client.call_tool("sro_preview", {"path": "a.md", "intent": {"goals": "x"}})
        wrong = await client.call_tool("sro_read", {"target": "a.md", "budget": 900})
    assert bad.is_error and "goals" in bad.content[0].text  # type: ignore[union-attr]
    assert wrong.is_error and "did you mean budget_tokens" in wrong.content[0].text  # type: ignore[union-attr]


def _wired_item(anchor: str, *, page: int | None = None, lines: tuple[int, int] | None = None) -> dict[str, object]:
    """One item of a PDF's focus answer, as the wire sends it."""
    evidence = EvidenceItem(
        pointer=f"r.pdf@sha256:0123456789ab#{anchor}", anchor=anchor, lines=lines, page=page, text="t", score=0.0
    )
    pack = EvidencePack(
        episode=_episode("f" * 64),
        action="focus",
        view="snippets",
        items=[evidence],
        coverage=[],
        unresolved=[],
        scope="s",
        exposure=_ledger(5, 2, 5),
        gate=Gate(decision="sparse", reason="sparse read: 1 passage(s) within E <= L"),
        truncated=False,
        tokens=50,
    )
    return dict(wire_dict(pack)["items"][0])


def test_an_item_says_its_page_only_where_its_pointer_does_not() -> None:
    def item(anchor: str, page: int) -> dict[str, object]:
        return _wired_item(anchor, page=page)

    assert "page" not in item("p17:L3-L9", 17) and "page" not in item("p17", 17)  # a PDF's anchor names it
    assert item("L1925-L1930", 35)["page"] == 35  # lines of a form-feed text: the page is news
    assert item("p1:L3-L9", 17)["page"] == 17  # not the page the anchor names (p1 is no prefix of p17)


def test_a_one_slot_answer_names_a_match_it_does_not_resend_once() -> None:
    sent = "a.md@sha256:0123456789ab#L1-L7"
    pack = EvidencePack(
        episode=_episode("0" * 64),
        action="focus",
        view="snippets",
        items=[],
        coverage=[SlotCoverage(slot="goal", status="partial", pointers=[sent])],
        unresolved=["goal"],
        scope="s",
        exposure=_ledger(0, 0, 0),
        gate=Gate(decision="native_fit", reason="already received"),
        already_delivered=[sent],
    )
    wire = wire_dict(pack)
    assert wire["already_delivered"] == [sent] and wire["coverage"] == [{"slot": "goal", "status": "partial"}]
    assert wire["episode"]["artifact"]["path"] == "a.md"  # no item names the file: the episode does
    two = pack.model_copy(update={"coverage": [*pack.coverage, SlotCoverage(slot="b", status="missing")]})
    assert absolute(wire_dict(two))["coverage"][0]["pointers"] == [sent]  # two slots: which one it supports is said


def test_a_one_slot_answer_does_not_list_its_own_items_again_under_the_slot() -> None:
    here, earlier = "a.md@sha256:0123456789ab#L3-L4", "a.md@sha256:0123456789ab#L20"
    pack = EvidencePack(
        episode=_episode("0" * 64),
        action="focus",
        view="snippets",
        items=[EvidenceItem(pointer=here, anchor="L3-L4", lines=(3, 4), page=None, text="t", score=0.5, slots=[])],
        coverage=[SlotCoverage(slot="goal", status="partial", pointers=[here, earlier])],
        unresolved=["goal"],
        scope="s",
        exposure=_ledger(1, 1, 1),
        gate=Gate(decision="sparse", reason="x"),
    )
    # The item is here, in the answer about the one slot there is; an earlier pointer is still named.
    assert absolute(wire_dict(pack))["coverage"] == [{"slot": "goal", "status": "partial", "pointers": [earlier]}]


def test_a_one_slot_answer_leaves_out_passages_its_window_shows_but_not_those_of_a_page() -> None:
    window, inside, beyond = (
        "a.md@sha256:0123456789ab#L10-L40",
        "a.md@sha256:0123456789ab#L12-L18",
        "a.md@sha256:0123456789ab#L41-L44",
    )
    other_file = "b.md@sha256:0123456789ab#L12-L18"
    item = EvidenceItem(
        pointer=window, anchor="L10-L40", lines=(10, 40), page=None, text="w" * 1_500, score=0.5, slots=[]
    )
    pack = EvidencePack(
        episode=_episode("0" * 64),
        action="focus",
        view="windows",
        items=[item],
        coverage=[SlotCoverage(slot="goal", status="found", pointers=[inside, beyond, other_file])],
        unresolved=[],
        scope="s",
        exposure=_ledger(1, 1, 1),
        gate=Gate(decision="sparse", reason="x"),
    )
    # The window shows L12-L18; lines past it, or of another file, are still named.
    assert absolute(wire_dict(pack))["coverage"] == [
        {"slot": "goal", "status": "found", "pointers": [beyond, other_file]}
    ]
    page = item.model_copy(update={"text": "w" * 30_000})  # a page of a full view: the pointer says where to look
    paged = pack.model_copy(update={"items": [page], "view": "full"})
    assert absolute(wire_dict(paged))["coverage"][0]["pointers"] == [inside, beyond, other_file]


def test_a_verdict_on_a_file_held_whole_says_its_pointer_once_and_no_zero_counts() -> None:
    where, other = "a.md@sha256:0123456789ab#L18", "a.md@sha256:0123456789ab#L20"
    pack = EvidencePack(
        episode=EpisodeRef.model_validate(
            {
                "id": "ep1",
                "artifact": {"path": "a.md", "type": "markdown", "fingerprint": "0123456789ab" + "0" * 52},
                "objective": "x",
            }
        ),
        action="verify",
        view="snippets",
        items=[],
        unresolved=[],
        verification=Verification(status="supported", reason="r", pointer=where),
        coverage=[SlotCoverage(slot="goal", status="found", pointers=[where])],
        scope="s",
        exposure=_ledger(0, 0, 0),
        gate=Gate(decision="native_fit", reason="held"),
        already_delivered=[where, other],
    )
    wire = wire_dict(pack)
    # Held whole: the answer is the verdict, its pointer the citation; the agent judges with the file.
    assert wire == {"verification": {"status": "supported", "pointer": where}}
    sparse = absolute(wire_dict(pack.model_copy(update={"gate": Gate(decision="sparse", reason="x")})))
    assert sparse["verification"] == {"status": "supported", "reason": "r", "pointer": where}
    assert sparse["already_delivered"] == [other]  # the verdict names `where`; `other` is news
    # Nothing shown, nothing charged: the verdict, what was searched, and the held passages to look at.
    assert set(sparse) == {"verification", "scope", "already_delivered"}
    charged = wire_dict(
        pack.model_copy(update={"exposure": _ledger(0, 0, 30), "gate": Gate(decision="sparse", reason="x")})
    )
    # The pointers name the file and its version; the id and L were said by the answer that opened the
    # episode's ledger (its E is beyond this answer's chars). A count that is news stays.
    assert "episode" not in charged and "action" not in charged
    assert charged["exposure"] == {"E": 30}


def test_a_small_file_comes_back_whole_with_a_minimal_frame(tmp_path: Path) -> None:
    text = "# Notes\n\nThe pump runs at 40 bar.\n\n## Later\n\nIt was replaced in 2019.\n"
    (tmp_path / "notes.md").write_text(text)
    engine = ReadEngine(Settings(roots=(tmp_path,)))
    preview = engine.preview("s", "notes.md", None, 2_000)
    wire = wire_dict(preview)
    assert wire["content"] == text and wire["route"] == "native"
    assert set(wire) == {"protocol", "artifact", "route", "content", "tokens"}  # the file says its size
    assert set(wire["artifact"]) == {"fingerprint"}  # what a pointer needs beside the agent's own path
    frame, whole = wire_blocks(preview)
    # The frame: the protocol, the version pointers carry, and what the answer costs; the file says the rest.
    assert whole == text and list(json.loads(frame)) == ["protocol", "fingerprint", "tokens"]
    assert record_of([frame, whole]) == wire  # what a client reads back is the whole record
    sent = engine.counter.count(frame) + engine.counter.count(whole)
    assert preview.tokens == sent and sent - engine.counter.count(text) <= 32, sent


async def test_a_small_file_costs_one_read_and_a_verdict_on_it_costs_its_pointer(tmp_path: Path) -> None:
    settings = Settings(roots=(project(tmp_path),))
    counter = TokenCounter(settings.tokenizer)
    text = (tmp_path / "files" / "contract.md").read_text()
    async with Client(create_server(settings)) as client:
        preview = await client.call_tool("sro_preview", {"path": "contract.md"})
        claim = {"target": "contract.md", "action": "verify", "intent": {"goal": "ninety (90) days"}}
        verdict = record(await client.call_tool("sro_read", claim))
    frame, whole = [b.text for b in preview.content if isinstance(b, TextContent)]
    assert whole == text  # verbatim: no JSON escaping, what one read of the file costs
    assert counter.count(frame) <= 24, frame
    fingerprint = json.loads(frame)["fingerprint"]
    assert set(verdict) == {"verification", "tokens"} and verdict["verification"]["status"] == "supported"
    pointer = verdict["verification"]["pointer"]
    assert pointer.startswith(f"contract.md@sha256:{fingerprint}#L")  # the citation, built as the skill says
    assert verdict["tokens"] - counter.count(pointer) <= 20


async def test_a_verify_of_passages_the_session_holds_sends_the_verdict_not_their_text(tmp_path: Path) -> None:
    (tmp_path / "manual.md").write_text(long_markdown())
    intent = {"goal": "which paragraph", "needles": ["SEC17-P1-MARK"]}
    async with Client(create_server(Settings(roots=(tmp_path,)))) as client:
        found = record(await client.call_tool("sro_read", {"target": "manual.md", "intent": intent}))
        held = next(i for i in found["items"] if "SEC17-P1-MARK" in i["text"])
        claim = {"goal": held["text"].split(". Unique")[0]}  # words the agent read, cited back
        verify = {"target": "manual.md", "action": "verify", "intent": claim}
        verdict = record(await client.call_tool("sro_read", verify))
    async with Client(create_server(Settings(roots=(tmp_path,)))) as client:  # a session that read nothing
        fresh = record(await client.call_tool("sro_read", verify))
    assert verdict["verification"]["status"] == "supported"
    assert "items" not in verdict  # its text is already in the agent's context: not sent or charged again
    # The verdict's pointer names where, inside the passage the agent holds, the claim stands: the passage
    # is not named again.
    cited = re.findall(r"L(\d+)", verdict["verification"]["pointer"].rsplit("#", 1)[1])
    holds = [int(n) for n in re.findall(r"L(\d+)", held["pointer"].rsplit("#", 1)[1])]
    assert held["pointer"].rsplit("#", 1)[0] == verdict["verification"]["pointer"].rsplit("#", 1)[0]
    assert all(holds[0] <= int(n) <= holds[-1] for n in cited), (verdict, held)
    assert set(verdict) == {"verification", "tokens"}
    assert verdict["tokens"] < fresh["tokens"] / 2
    # A session that never received the passage gets it with the verdict.
    assert fresh["verification"]["status"] == "supported" and any("SEC17-P1-MARK" in i["text"] for i in fresh["items"])


async def test_an_item_that_spans_lines_is_sent_verbatim_as_a_block_of_its_own(tmp_path: Path) -> None:
    """JSON escapes every line break and quote: a page of figures costs up to 40% more escaped. The text
    of an item that spans lines follows the frame as its own block, byte for byte, and nothing else."""
    rows = [f'  "{name}"  \t{n * 1_234:>12,}  \t({n * 17:,})' for n, name in enumerate(["Revenue", "Cost"] * 60)]
    text = "Statement of figures\n" + "\n".join(rows) + "\n"
    (tmp_path / "figures.txt").write_text(text)
    async with Client(create_server(Settings(roots=(tmp_path,)))) as client:
        result = await client.call_tool("sro_read", {"target": "figures.txt#L2-L41"})
    blocks = [b.text for b in result.content if isinstance(b, TextContent)]
    assert len(blocks) == 2 and result.structured_content is None  # a structured copy would escape it again
    frame = json.loads(blocks[0])
    assert [set(item) & {"text"} for item in frame["items"]] == [set()] and "#L2-L41" in frame["items"][0]["pointer"]
    assert blocks[1] == "\n".join(rows[:40])  # verbatim: the lines themselves
    assert record_of(blocks)["items"][0]["text"] == blocks[1]
    counter = TokenCounter()
    escaped = counter.count(json.dumps(record_of(blocks), separators=(",", ":"), ensure_ascii=False))
    sent = sum(counter.count(block) for block in blocks)
    assert sent < 0.85 * escaped, (sent, escaped)


def test_an_item_says_its_lines_only_where_its_anchor_does_not() -> None:
    """A PDF item's anchor (`p26:L224:C1-C163`) or a piece across lines (`L85:C60-L86:C103`) states its line
    range: `lines` beside it would be said twice on each of a spread's many items."""

    def item(anchor: str, lines: tuple[int, int]) -> dict[str, object]:
        return _wired_item(anchor, lines=lines)

    for anchor, lines in [
        ("p26:L224:C1-C163", (224, 224)),
        ("p1:L85:C60-L86:C103", (85, 86)),
        ("p61:L189-L197", (189, 197)),
        ("L85:C60-L86:C103", (85, 86)),
        ("L7:C3-C9", (7, 7)),
    ]:
        assert "lines" not in item(anchor, lines), anchor
        assert anchor_lines(anchor) == lines
    assert item("p26:L224:C1-C163", (224, 225))["lines"] == [224, 225]  # not what the anchor says: news
    assert item("p3", (9, 12))["lines"] == [9, 12] and anchor_lines("p3") is None  # a page says no lines
