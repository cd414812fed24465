"""Tool arguments are validated with one-line messages naming the field and what is allowed (never pydantic's
report and its URL); internal failures answer with an id only."""

from __future__ import annotations

import logging
import re
from pathlib import Path

import pytest
from mcp import Client

from sparseread_mcp import ReadEngine, ReadRequest, Settings
from sparseread_mcp.serve.server import create_server


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "notes.md").write_text("# Notes\n\nThe ARGS-MARK paragraph.\n\nAnother paragraph.\n")
    return tmp_path


BAD_ARGUMENTS = [
    ({"target": "notes.md", "intent": {"needles": [""]}}, "intent.needles[0]", "must not be empty"),
    ({"target": "notes.md", "budget_tokens": 10}, "budget_tokens", "use 200..22500"),
    ({"target": "notes.md", "budget_tokens": 10**6}, "budget_tokens", "use 200..22500"),
    ({"target": "notes.md", "action": "delete"}, "action", "'focus', 'collect', 'refine'"),
    ({"target": "notes.md", "view": "everything"}, "view", "'snippets', 'card', 'outline'"),
    ({"target": "notes.md", "intent": {"want": "all"}}, "intent.want", "'fact', 'list'"),
    ({"target": "notes.md", "intent": {"goal": "x", "bogus": 1}}, "'bogus'", "use goal, slots, needles"),
    ({"target": "notes.md", "intent": "find the marker"}, "intent", 'e.g. {"goal"'),
    ({"target": "notes.md", "intent": {"slots": [{"id": "", "question": "q"}]}}, "intent.slots[0].id", "empty"),
    ({"target": "notes.md", "intent": {"goal": "x" * 9000}}, "intent.goal", "at most 8000 characters"),
    ({}, "target", "required"),
]


@pytest.mark.anyio
@pytest.mark.parametrize(("arguments", "field", "allowed"), BAD_ARGUMENTS)
async def test_a_bad_argument_is_one_line_naming_its_field_and_what_is_allowed(
    root: Path, arguments: dict[str, object], field: str, allowed: str
) -> None:
    async with Client(create_server(Settings(roots=(root,)))) as client:
        result = await client.call_tool("sro_read", arguments)
    message = result.content[0].text  # type: ignore[union-attr]
    assert result.is_error and field in message and allowed in message, message
    assert "\n" not in message and "pydantic" not in message and "http" not in message, message
    assert "internal error" not in message and "Traceback" not in message


@pytest.mark.anyio
async def test_an_intent_that_asks_nothing_is_answered_not_crashed(root: Path) -> None:
    """An empty goal (or only `want`) once built a slot with an empty question: an internal error."""
    async with Client(create_server(Settings(roots=(root,)))) as client:
        for arguments in (
            {"target": "notes.md#L3", "action": "refine", "intent": {"goal": ""}},
            {"target": "notes.md#L3", "action": "refine", "intent": {"want": "list"}},
            {"target": "notes.md", "action": "collect", "intent": {"goal": ""}},
        ):
            result = await client.call_tool("sro_read", arguments)
            text = result.content[0].text  # type: ignore[union-attr]
            assert "internal error" not in text, (arguments, text)


@pytest.mark.anyio
async def test_an_internal_failure_is_answered_with_an_error_id_and_logged_with_its_detail(
    root: Path, caplog: pytest.LogCaptureFixture
) -> None:
    engine = ReadEngine(Settings(roots=(root,)))

    def broken(session_key: str, request: ReadRequest) -> None:
        raise RuntimeError("disk gremlin at /very/private/path")

    engine.read = broken  # type: ignore[assignment,method-assign]
    with caplog.at_level(logging.ERROR, logger="sparseread_mcp.serve.server"):
        async with Client(create_server(engine.settings, engine=engine)) as client:
            result = await client.call_tool("sro_read", {"target": "notes.md"})
    message = result.content[0].text  # type: ignore[union-attr]
    found = re.search(r"internal error \(id ([0-9a-f]{8})\)", message)
    assert result.is_error and found, message
    assert "/very/private/path" not in message and "Traceback" not in message
    logged = [r for r in caplog.records if found.group(1) in r.getMessage()]
    assert logged and logged[0].exc_info is not None  # the detail is in the server log, under the same id


def test_a_directory_walk_past_its_file_limit_says_it_was_cut(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for i in range(80):
        (tmp_path / f"f{i:03d}.txt").write_text(f"file {i}\n")
    engine = ReadEngine(Settings(roots=(tmp_path,), inventory_max_files=25))
    preview = engine.preview("s", ".")
    assert preview.signals["truncated"] == "yes" and preview.signals["skipped"] == 55


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("tool", "arguments", "unknown", "meant"),
    [
        ("sro_read", {"target": "notes.md", "budget": 4000}, "budget", "budget_tokens"),
        ("sro_preview", {"path": "notes.md", "goal": "x"}, "goal", None),
        ("sro_card", {"traces": True}, "traces", "trace"),
        ("sro_compact", {"messages": [], "tua": 0.5}, "tua", "tau"),
    ],
)
async def test_an_unknown_argument_is_refused_with_the_valid_names(
    root: Path, tool: str, arguments: dict[str, object], unknown: str, meant: str | None
) -> None:
    """A model wrote `budget` for `budget_tokens`: accepted and ignored, it read with the default budget."""
    async with Client(create_server(Settings(roots=(root,)))) as client:
        listed = {t.name: t for t in (await client.list_tools()).tools}
        result = await client.call_tool(tool, arguments)
    message = result.content[0].text  # type: ignore[union-attr]
    assert result.is_error, message
    assert f"no argument {unknown!r}" in message, message
    valid = sorted(listed[tool].input_schema["properties"])
    assert f"use only {', '.join(valid)}" in message, message
    assert (f"did you mean {meant}?" in message) if meant else ("did you mean" not in message), message
    assert listed[tool].input_schema["additionalProperties"] is False


@pytest.mark.anyio
async def test_an_unknown_argument_of_attacker_size_gets_a_bounded_answer(root: Path) -> None:
    async with Client(create_server(Settings(roots=(root,)))) as client:
        result = await client.call_tool("sro_read", {"target": "notes.md", **{f"k{i}" * 5000: i for i in range(50)}})
    message = result.content[0].text  # type: ignore[union-attr]
    assert result.is_error and "and 45 more" in message and len(message) <= 500, message
