"""Every shipped client configuration parses, and the exact command it names starts the server.

`integrations/` holds the published forms (`uvx sparseread-mcp`); `integrations/from-checkout/` the same
files with `uvx --from /path/to/sparseread-mcp`, which work before the package is published. The tests run
each command as written, through uvx, with only the placeholders filled in: the checkout is this one, the
files are a temporary folder, and the published name is found in the wheel built from this checkout
(`UV_FIND_LINKS`, as it would be found on PyPI).
"""

from __future__ import annotations

import json
import os
import shutil
import tomllib
from pathlib import Path

import anyio
import pytest
from conftest import FIXTURES, REPO
from mcp import Client, StdioServerParameters
from mcp.types import TextContent
from needs import missing

from sparseread_mcp import Settings
from sparseread_mcp.wire import record_of

pytestmark = pytest.mark.anyio
CONFIGS = REPO / "integrations"
FROM_CHECKOUT = CONFIGS / "from-checkout"
CHECKOUT_PLACEHOLDER = "/path/to/sparseread-mcp"
FILES_PLACEHOLDER = "/path/to/your/files"
TOOLS = {"sro_preview", "sro_read", "sro_card", "sro_compact"}


def config_files() -> list[Path]:
    return sorted(p for p in CONFIGS.rglob("*") if p.is_file())


def load(path: Path) -> dict[str, object]:
    return tomllib.loads(path.read_text()) if path.suffix == ".toml" else json.loads(path.read_text())


def stdio_entries() -> list[tuple[str, str, list[str]]]:
    """(file, command, args) for every stdio server entry of every shipped configuration."""
    entries = []
    for path in config_files():
        data = load(path)
        mcp = data.get("mcp", {})
        assert isinstance(mcp, dict)
        servers = data.get("mcpServers") or data.get("mcp_servers") or mcp.get("servers") or mcp
        assert isinstance(servers, dict)
        for server in servers.values():
            if "url" in server:
                continue
            name = path.relative_to(CONFIGS).as_posix()
            command = server["command"]
            if isinstance(command, list):
                entries.append((name, command[0], command[1:]))
            else:
                entries.append((name, command, list(server.get("args", []))))
    return entries


def test_every_configuration_names_the_server_published_and_from_a_checkout() -> None:
    entries = stdio_entries()
    published = {p.name for p in CONFIGS.iterdir() if p.is_file() and p.name != "http.mcp.json"}
    assert {name for name, _, _ in entries} == published | {f"from-checkout/{n}" for n in published}
    for name, command, args in entries:
        assert command == "uvx" and "--root" in args, name
        if name.startswith("from-checkout/"):
            assert args[:3] == ["--from", CHECKOUT_PLACEHOLDER, "sparseread-mcp"], name
        else:
            assert args[0] == "sparseread-mcp", name
    for name in published:  # the twin differs by the --from only
        twin = (FROM_CHECKOUT / name).read_text().replace(f'"--from", "{CHECKOUT_PLACEHOLDER}", ', "")
        assert twin.splitlines()[1:] == (CONFIGS / name).read_text().splitlines()[1:], name
    http = json.loads((CONFIGS / "http.mcp.json").read_text())["mcpServers"]["sparseread"]
    assert http["url"] == f"http://127.0.0.1:{Settings().port}/mcp"


def exact_commands(files: Path) -> dict[tuple[str, ...], list[str]]:
    """Each distinct command line the configurations name, placeholders filled, with the files naming it."""
    commands: dict[tuple[str, ...], list[str]] = {}
    for name, command, args in stdio_entries():
        filled = [str(REPO) if a == CHECKOUT_PLACEHOLDER else str(files) if a == FILES_PLACEHOLDER else a for a in args]
        commands.setdefault((command, *filled), []).append(name)
    return commands


async def test_the_exact_command_of_every_configuration_starts_the_server(tmp_path: Path, wheel: Path) -> None:
    uvx = shutil.which("uvx")
    if uvx is None:
        missing("uvx is not installed (pip install uv)")
    files = tmp_path / "files"
    files.mkdir()
    (files / "contract.md").write_text((FIXTURES / "contract.md").read_text())
    env = {**os.environ, "UV_FIND_LINKS": str(wheel.parent)}
    for (command, *args), names in exact_commands(files).items():
        # A relative root (".") is the client's working folder: the files.
        params = StdioServerParameters(command=command, args=args, cwd=files, env=env)
        with anyio.fail_after(240):  # a first uvx run builds its environment
            async with Client(params) as client:
                tools = {t.name for t in (await client.list_tools()).tools}
                preview = await client.call_tool("sro_preview", {"path": "contract.md"})
        assert tools >= TOOLS, names
        # A small file: its frame, then the whole file as a text block of its own.
        blocks = [b.text for b in preview.content if isinstance(b, TextContent)]
        assert "ZEBRA-RENEWAL-7731" in record_of(blocks)["content"], names
