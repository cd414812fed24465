"""The real clients load the shipped configurations and report the server connected.

Claude Code (`claude mcp list`), OpenCode (`opencode mcp list`) and OpenClaw (`openclaw mcp probe`), each
installed from npm, read the file shipped in `integrations/from-checkout/` (placeholders filled: this
checkout, a temporary folder of files) from a temporary home, so no user's configuration is read or
touched; no model and no API key are involved. `.ci/run` installs the clients and names them in
SPARSEREAD_CLAUDE, SPARSEREAD_OPENCODE and SPARSEREAD_OPENCLAW (with SPARSEREAD_OPENCLAW_NODE, a Node
new enough for it); elsewhere a client on PATH is used, and an absent one skips (fails under CI).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import FIXTURES, REPO
from needs import missing

FROM_CHECKOUT = REPO / "integrations" / "from-checkout"
ANSI = re.compile(r"\x1b\[[0-9;]*m")
#: Certificate settings a client must pass on where it filters the server's environment (OpenClaw does):
#: on a machine whose traffic to PyPI goes through its own certificate authority, uvx needs them.
CERTIFICATE_VARIABLES = ("SSL_CERT_FILE", "SSL_CERT_DIR")


def client(variable: str, name: str) -> str:
    found = os.environ.get(variable) or shutil.which(name)
    if not found:
        missing(f"{name} is not installed (npm; set {variable} to its path)")
    assert found is not None
    return found


def shipped(name: str, files: Path) -> str:
    """The shipped from-checkout configuration, with only its placeholders filled."""
    text = (FROM_CHECKOUT / name).read_text()
    return text.replace("/path/to/sparseread-mcp", str(REPO)).replace("/path/to/your/files", str(files))


@pytest.fixture
def project(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A folder of files to serve, and an environment whose home is a fresh temporary folder."""
    files = tmp_path / "project"
    files.mkdir()
    (files / "contract.md").write_text((FIXTURES / "contract.md").read_text())
    home = tmp_path / "home"
    home.mkdir()
    uvx = shutil.which("uvx")
    if uvx is None:
        missing("uvx is not installed (pip install uv)")
    assert uvx is not None
    path = os.pathsep.join([str(Path(uvx).parent), os.environ.get("PATH", "")])
    # uv keeps its cache where it was: a fresh home would rebuild every environment from PyPI.
    cache = subprocess.run([Path(uvx).with_name("uv"), "cache", "dir"], capture_output=True, text=True, timeout=30)
    env = {**os.environ, "HOME": str(home), "PATH": path}
    if cache.returncode == 0 and cache.stdout.strip():
        env["UV_CACHE_DIR"] = cache.stdout.strip()
    env.pop("XDG_CONFIG_HOME", None)
    env.pop("XDG_DATA_HOME", None)
    return files, env


def run(argv: list[str], *, cwd: Path, env: dict[str, str]) -> str:
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    return ANSI.sub("", done.stdout + done.stderr)


def test_claude_code_connects_from_the_shipped_mcp_json(project: tuple[Path, dict[str, str]]) -> None:
    claude = client("SPARSEREAD_CLAUDE", "claude")
    files, env = project
    (files / ".mcp.json").write_text(shipped("claude_code.mcp.json", files))
    # A project's .mcp.json servers wait for the user's approval; this is that approval, given once.
    state = {"projects": {str(files): {"hasTrustDialogAccepted": True, "enabledMcpjsonServers": ["sparseread"]}}}
    (Path(env["HOME"]) / ".claude.json").write_text(json.dumps(state))
    out = run([claude, "mcp", "list"], cwd=files, env=env)
    assert re.search(r"^sparseread: uvx --from \S+ sparseread-mcp --root \. - ✔ Connected$", out, re.M), out


def test_opencode_connects_from_the_shipped_opencode_json(project: tuple[Path, dict[str, str]]) -> None:
    opencode = client("SPARSEREAD_OPENCODE", "opencode")
    files, env = project
    (files / "opencode.json").write_text(shipped("opencode.json", files))
    out = run([opencode, "mcp", "list"], cwd=files, env=env)
    assert re.search(r"✓ sparseread\s+connected", out), out


def test_openclaw_connects_from_the_shipped_openclaw_json_and_lists_the_tools(
    project: tuple[Path, dict[str, str]],
) -> None:
    openclaw = client("SPARSEREAD_OPENCLAW", "openclaw")
    files, env = project
    config = json.loads(shipped("openclaw.json", files))
    passed = {k: os.environ[k] for k in CERTIFICATE_VARIABLES if k in os.environ}
    if passed:  # the machine's certificate settings, passed on; the command stays the shipped one
        config["mcp"]["servers"]["sparseread"]["env"] = passed
    (Path(env["HOME"]) / ".openclaw").mkdir()
    (Path(env["HOME"]) / ".openclaw" / "openclaw.json").write_text(json.dumps(config))
    node = os.environ.get("SPARSEREAD_OPENCLAW_NODE")
    out = run([*([node] if node else []), openclaw, "mcp", "probe"], cwd=files, env=env)
    assert re.search(r"^- sparseread: 4 tools\b", out, re.M), out
