"""The MCP Inspector's CLI (npm @modelcontextprotocol/inspector, `--cli` mode) drives our stdio server.

`.ci/run` installs it with npm into a temporary prefix and exports SPARSEREAD_INSPECTOR (its
`mcp-inspector` script); without it this test skips locally and fails under CI=true.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

from conftest import FIXTURES
from needs import missing
from test_mcp_transports import installed_command


def inspector() -> str:
    found = os.environ.get("SPARSEREAD_INSPECTOR") or shutil.which("mcp-inspector")
    if not found or not Path(found).exists():
        missing(
            "the MCP Inspector CLI is not installed: npm install @modelcontextprotocol/inspector, then set "
            "SPARSEREAD_INSPECTOR to its node_modules/.bin/mcp-inspector"
        )
    assert found is not None
    return found


def run_inspector(tmp_path: Path, *method: str) -> dict[str, object]:
    env = {**os.environ, "MCP_CATALOG_PATH": str(tmp_path / "catalog.json")}  # never the user's catalog
    command = [inspector(), "--cli", installed_command(), "--root", str(tmp_path), *method]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    result: dict[str, object] = json.loads(done.stdout)
    return result


def test_the_inspector_lists_the_tools_and_calls_sro_preview(tmp_path: Path) -> None:
    (tmp_path / "contract.md").write_text((FIXTURES / "contract.md").read_text())
    listed = run_inspector(tmp_path, "--method", "tools/list")
    names = {tool["name"] for tool in listed["tools"]}  # type: ignore[attr-defined]
    assert {"sro_preview", "sro_read", "sro_card", "sro_compact"} <= names

    called = run_inspector(
        tmp_path, "--method", "tools/call", "--tool-name", "sro_preview", "--tool-arg", "path=contract.md"
    )
    assert not called.get("isError")
    # A small file: a frame with its version (the path is the one the call named), then the whole file
    # verbatim in a text block of its own; no structured copy, which would carry the file escaped again.
    assert "structuredContent" not in called
    frame, whole = called["content"]  # type: ignore[misc]
    assert frame["type"] == whole["type"] == "text"
    assert len(json.loads(frame["text"])["fingerprint"]) == 12
    assert "ZEBRA-RENEWAL-7731" in whole["text"] and whole["text"] == (tmp_path / "contract.md").read_text()
