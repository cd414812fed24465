"""The docs are part of the product: they must name every tool and command, and stay runnable."""

from __future__ import annotations

import re

import pytest
from conftest import REPO
from mcp import Client

from sparseread_mcp import Settings
from sparseread_mcp import __all__ as public_names
from sparseread_mcp.cli import build_parser
from sparseread_mcp.server import create_server

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
