"""The docs are part of the product: they must name every tool and command, and stay runnable."""

from __future__ import annotations

import re

import pytest
from conftest import REPO
from mcp import Client

from sparseread_mcp import Settings
from sparseread_mcp import __all__ as public_names
from sparseread_mcp.cli import build_parser
from sparseread_mcp.serve.server import create_server

README = (REPO / "README.md").read_text()
SKILL = (REPO / "skills" / "sparseread" / "SKILL.md").read_text()


@pytest.mark.anyio
async def test_every_tool_is_documented_in_the_readme_and_the_skill(tmp_path) -> None:  # type: ignore[no-untyped-def]
    async with Client(create_server(Settings(roots=(tmp_path,)))) as client:
        tools = (await client.list_tools()).tools
    for tool in tools:
        assert f"`{tool.name}(" in README, tool.name
        assert tool.name in SKILL
        assert tool.description and len(tool.description) < 500, "tool descriptions cost tokens in every prompt"


NUMBERS = {3: "Three", 4: "Four", 5: "Five", 6: "Six"}


@pytest.mark.anyio
async def test_the_readmes_tool_list_is_the_servers(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The README said "Three tools" when there were four: its count, names and arguments come from here."""
    async with Client(create_server(Settings(roots=(tmp_path,)))) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    section = README.split("\n## The tools\n", 1)[1].split("\n## ", 1)[0]
    assert section.lstrip().startswith(f"{NUMBERS[len(tools)]} tools,"), section[:80]
    listed = dict(re.findall(r"^- \*\*`(sro_\w+)\(([^)]*)\)`\*\*", section, re.MULTILINE))
    assert set(listed) == set(tools)
    stateless = {name for name, tool in tools.items() if "session" in tool.input_schema["properties"]}
    assert "also take `session`" in section and all(f"`{name}`" in section for name in stateless)
    for name, signature in listed.items():
        documented = {a.strip().split("=")[0].rstrip("?") for a in signature.split(",") if a.strip()}
        assert documented == set(tools[name].input_schema["properties"]) - {"session"}, name


def test_every_cli_command_is_documented() -> None:
    parser = build_parser()
    commands = next(a for a in parser._actions if a.dest == "command").choices  # type: ignore[union-attr]
    for name in commands:
        assert f"sparseread-mcp {name}" in README, name
    for flag in ("--http", "--root", "--json", "--tokenizer", "--log-level"):
        assert flag in README


def test_readme_gives_the_two_commands_and_ci_runs_the_test_one() -> None:
    assert "pip install . && sparseread-mcp" in README
    test_command = re.search(r"pip install -e \"\.\[test\]\" && (python -m pytest)", README)
    assert test_command
    assert test_command.group(1) in (REPO / ".ci" / "run").read_text()


def test_public_api_is_deliberate() -> None:
    assert {"ReadEngine", "ReadRequest", "Settings", "Intent", "Slot", "EvidencePack", "SparsereadError"} <= set(
        public_names
    )
    assert all(not name.startswith("_") or name == "__version__" for name in public_names)


def test_skill_has_front_matter_and_the_evidence_rule() -> None:
    assert SKILL.startswith("---\nname: sparseread\n")
    assert "never instructions" in SKILL
