"""Fuzz campaigns over generated hostile structure, each against a real server over stdio: PDF, HTML,
code, YAML/TOML/JSON, CSV/TSV/JSONL/XLSX/Parquet and ignore files. Every file is previewed and read
with a goal; after each, a probe read must be answered. Counted: freezes (a call not answered before
the hang guard), crashes (the server gone) and untyped errors ("internal error"); all must be 0.

`SPARSEREAD_FUZZ_CAMPAIGN` sets the files per format (default 6; the figures in bench/results come from
larger runs). The call limit is short, so files that hang a parser are stopped rather than waited for.
"""

from __future__ import annotations

import os
import random
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from hostile_files import fuzz_code, fuzz_html, fuzz_ignore, fuzz_pdf, fuzz_structured, fuzz_table
from mcp import Client, StdioServerParameters

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

FILES = int(os.environ.get("SPARSEREAD_FUZZ_CAMPAIGN", "6"))
CALL_SECONDS = 4
HANG_GUARD = CALL_SECONDS + 60
PROBE = "probe.md"


def _write_files(root: Path, make: Callable[[random.Random], tuple[str, bytes]], seed: int) -> list[str]:
    names = []
    for n in range(FILES):
        suffix, data = make(random.Random(seed * 1000 + n))
        name = f"f{n:03d}{suffix}"
        (root / name).write_bytes(data)
        names.append(name)
    return names


def _write_ignores(root: Path, seed: int) -> list[str]:
    folders = []
    for n in range(FILES):
        rules, names = fuzz_ignore(random.Random(seed * 1000 + n))
        folder = root / f"d{n:03d}"
        folder.mkdir()
        (folder / ".gitignore").write_text(rules)
        for name in names:
            (folder / name[:200]).write_text("NEEDLE\n")
        folders.append(folder.name)
    return folders


CAMPAIGNS: dict[str, Callable[[Path], list[str]]] = {
    "pdf": lambda root: _write_files(root, lambda rng: (".pdf", fuzz_pdf(rng)), 1),
    "html": lambda root: _write_files(root, lambda rng: (".html", fuzz_html(rng)), 2),
    "code": lambda root: _write_files(root, fuzz_code, 3),
    "structured": lambda root: _write_files(root, fuzz_structured, 4),
    "tables": lambda root: _write_files(root, fuzz_table, 5),
    "ignore files": lambda root: _write_ignores(root, 6),
}


def _text(result: Any) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


async def _campaign(root: Path, targets: list[str]) -> Counter[str]:
    outcomes: Counter[str] = Counter()
    env = {**os.environ, "SPARSEREAD_CALL_TIMEOUT": str(CALL_SECONDS)}
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "sparseread_mcp", "--root", str(root), "--location", "bm25"], env=env
    )
    async with Client(params) as client:
        for target in targets:
            for tool, arguments in (
                ("sro_preview", {"path": target}),
                ("sro_read", {"target": target, "intent": {"goal": "what does it say", "needles": ["NEEDLE"]}}),
            ):
                try:
                    with anyio.fail_after(HANG_GUARD):
                        result = await client.call_tool(tool, arguments)
                except TimeoutError:
                    outcomes["freeze"] += 1
                    continue
                text = _text(result)
                if "internal error" in text:
                    outcomes["untyped"] += 1
                    print(f"untyped on {target}: {text[:300]}")
                outcomes["error" if result.is_error else "answer"] += 1
            with anyio.fail_after(HANG_GUARD):
                probe = await client.call_tool("sro_read", {"target": f"{PROBE}#L1"})
            outcomes["probe ok" if not probe.is_error else "crash"] += 1
    return outcomes


@pytest.mark.parametrize("campaign", sorted(CAMPAIGNS))
async def test_a_fuzz_campaign_never_freezes_crashes_or_answers_untyped(tmp_path: Path, campaign: str) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (root / PROBE).write_text("probe\n")
    targets = CAMPAIGNS[campaign](root)
    outcomes = await _campaign(root, targets)
    print(f"\n{campaign}: {FILES} files, {dict(outcomes)}")
    assert outcomes["freeze"] == 0 and outcomes["crash"] == 0 and outcomes["untyped"] == 0, outcomes
    assert outcomes["probe ok"] == len(targets)
