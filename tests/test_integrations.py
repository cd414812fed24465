"""Every shipped client configuration parses, and the command it names starts the server."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import anyio
import pytest
from conftest import REPO
from mcp import Client, StdioServerParameters
from test_mcp_transports import installed_command

from sparseread_mcp import Settings

pytestmark = pytest.mark.anyio
CONFIGS = REPO / "integrations"


def stdio_entries() -> list[tuple[str, str, list[str]]]:
    """(file, command, args) for every stdio server entry of every shipped configuration."""
    entries = []
    for path in sorted(CONFIGS.iterdir()):
        data = tomllib.loads(path.read_text()) if path.suffix == ".toml" else json.loads(path.read_text())
        servers = data.get("mcpServers") or data.get("mcp_servers") or data.get("mcp", {}).get("servers") or data["mcp"]
        for server in servers.values():
            if "url" in server:
                continue
            command = server["command"]
            if isinstance(command, list):
                entries.append((path.name, command[0], command[1:]))
            else:
                entries.append((path.name, command, list(server.get("args", []))))
    return entries


def test_every_configuration_names_the_server() -> None:
    entries = stdio_entries()
    assert {name for name, _, _ in entries} == {p.name for p in CONFIGS.iterdir() if p.name != "http.mcp.json"}
    for _, command, args in entries:
        assert command == "uvx" and args[0] == "sparseread-mcp" and "--root" in args
    http = json.loads((CONFIGS / "http.mcp.json").read_text())["mcpServers"]["sparseread"]
    assert http["url"] == f"http://127.0.0.1:{Settings().port}/mcp"


async def test_the_named_command_starts_the_server(tmp_path: Path) -> None:
    # uvx resolves `sparseread-mcp` from PyPI; offline, the installed script is the same entry point.
    for name, _, args in stdio_entries():
        argv = [tmp_path.as_posix() if a in (".", "/path/to/your/files") else a for a in args[1:]]
        params = StdioServerParameters(command=installed_command(), args=argv)
        with anyio.fail_after(60):
            async with Client(params) as client:
                tools = {t.name for t in (await client.list_tools()).tools}
        assert {"sro_preview", "sro_read", "sro_card", "sro_compact"} <= tools, name
