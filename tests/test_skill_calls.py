"""Every call SKILL.md shows runs: each `sro_...(...)` written in its code spans is parsed as written and
sent through the official MCP client to a server over files with the names it uses. A call the skill
teaches that the server refuses would be a model's first failed call."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path
from typing import Any

import anyio
import pytest
from docs import long_markdown
from mcp import Client

from sparseread_mcp import Settings
from sparseread_mcp.serve.server import create_server

REPO = Path(__file__).resolve().parent.parent
SKILL = (REPO / "skills" / "sparseread" / "SKILL.md").read_text()
#: The first positional argument of each tool.
POSITIONAL = {"sro_read": "target", "sro_preview": "path", "sro_card": "path"}
#: Calls written with a placeholder for what the model holds (a pointer, its own history): not literal.
PLACEHOLDERS = {"sro_read(pointer)", "sro_compact(messages)"}


def skill_calls() -> list[str]:
    spans = re.findall(r"`([^`]*\bsro_\w+\([^`]*\))`", SKILL)
    return [c for c in dict.fromkeys(spans) if c not in PLACEHOLDERS]


def arguments_of(written: str) -> tuple[str, dict[str, Any]]:
    """The tool and its arguments, as the skill writes them (`...` stands for a goal in words)."""
    call = ast.parse(written, mode="eval").body
    assert isinstance(call, ast.Call) and isinstance(call.func, ast.Name), written
    name = call.func.id
    args: dict[str, Any] = {}
    for value in call.args:
        args[POSITIONAL[name]] = ast.literal_eval(value)
    for keyword in call.keywords:
        assert keyword.arg is not None, written
        args[keyword.arg] = ast.literal_eval(keyword.value)
    intent = args.get("intent")
    if isinstance(intent, dict) and intent.get("goal") is Ellipsis:
        args["intent"] = {**intent, "goal": "where are invoices checked"}
    return name, args


@pytest.fixture
def files(tmp_path: Path) -> Path:
    (tmp_path / "report.md").write_text(
        long_markdown()
        + "\n## Accounts\n\nCapital expenditure was $1.2 billion in 2023 (purchases of property and equipment).\n"
        "\nThe accounts are audited by Ledger & Lantern LLP, the auditor since 2019.\n"
    )
    rows = "\n".join(f"{k},{'north' if k % 2 else 'south'},{k * 10}" for k in range(50))
    (tmp_path / "sales.csv").write_text("id,region,amount\n" + rows + "\n")
    items = [{"name": f"job{k}", "status": "error" if k % 7 == 0 else "ok"} for k in range(40)]
    (tmp_path / "status.json").write_text(json.dumps({"items": items}))
    (tmp_path / "src").mkdir()
    for k in range(6):
        (tmp_path / "src" / f"module{k}.py").write_text(
            f'"""Module {k}."""\n\n\ndef check_invoice_{k}(invoice):\n    """Checks invoice {k}."""\n'
            f"    return invoice.total > {k}\n"
        )
    return tmp_path


def test_the_skill_shows_the_calls_it_teaches() -> None:
    names = {arguments_of(c)[0] for c in skill_calls()}
    assert {"sro_read", "sro_preview", "sro_card"} <= names
    actions = {arguments_of(c)[1].get("action") for c in skill_calls()}
    assert {"collect", "refine", "check", "verify"} <= actions


@pytest.mark.anyio
async def test_every_call_the_skill_shows_runs(files: Path) -> None:
    answered = []
    with anyio.fail_after(300):  # a hang guard only
        async with Client(create_server(Settings(roots=(files,)))) as client:
            for written in skill_calls():
                name, arguments = arguments_of(written)
                result = await client.call_tool(name, arguments)
                text = "".join(getattr(block, "text", "") for block in result.content)
                assert not result.is_error, f"{written} -> {text}"
                answered.append((written, text))
    by_call = dict(answered)
    check = next(t for c, t in by_call.items() if '"check"' in c)
    assert '"absent: arbitration, /non-?compete/"' in check, check
    collect = json.loads(next(t for c, t in by_call.items() if '"collect"' in c))
    # Both facts were in passages this session already received: named, and both slots found.
    assert {c["slot"]: c["status"] for c in collect["coverage"]} == {"capex": "found", "auditor": "found"}


@pytest.mark.anyio
async def test_the_compacted_result_the_skill_shows_is_what_sro_compact_returns(tmp_path: Path) -> None:
    """A model recognises a shortened result by the header SKILL.md shows: the header sro_compact writes for
    the call id the skill names, and the mark it writes for the lines left out."""
    shown = re.search(r"`(\[compacted: \w+\])`\s+for `(call_\w+)`", SKILL)
    assert shown is not None, "SKILL.md shows no compacted header with its call id"
    header, call_id = shown.groups()
    scanned = [
        f"scanning the next folder of sources, nothing about invoices in it, step {'i' * (k % 5)}" for k in range(40)
    ]
    listing = "\n".join([*scanned[:20], "src/module_7.py defines check_invoice", *scanned[20:]])
    messages = [
        {"role": "user", "content": "Find the module that checks invoices."},
        *_call_and_result(call_id, "grep", listing),
        *_call_and_result("call_Q2bX7pLm0aZ9wRt5Yc1uVd", "cat", "def check_invoice(invoice):\n    return True\n"),
        {"role": "assistant", "content": "One module defines it: reading it next."},
    ]
    with anyio.fail_after(120):  # a hang guard only
        async with Client(create_server(Settings(roots=(tmp_path,)))) as client:
            result = await client.call_tool("sro_compact", {"messages": messages, "caution": 0})
    assert not result.is_error, result.content
    assert result.structured_content is not None
    shortened = result.structured_content["messages"][2]["content"]
    assert shortened.split("\n")[0] == header
    assert "⋯" in shortened and "⋯" in SKILL  # the mark SKILL.md names for the lines left out
    assert "\nsrc/module_7.py defines check_invoice\n" in shortened  # a line with a path only it holds, verbatim


def _call_and_result(call_id: str, name: str, output: str) -> list[dict[str, Any]]:
    call = {"id": call_id, "type": "function", "function": {"name": name, "arguments": "{}"}}
    return [
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": call_id, "content": output},
    ]
