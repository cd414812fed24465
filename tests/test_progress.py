"""MCP progress notifications while a call prepares a large artifact, as the official client receives them."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import anyio
import pytest
from docs import long_markdown
from mcp import Client, StdioServerParameters

from sparseread_mcp import Settings, progress
from sparseread_mcp.serve.server import create_server

pytestmark = pytest.mark.anyio
Seen = list[tuple[float, float | None, str | None]]


def recorder() -> tuple[Seen, object]:
    seen: Seen = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        seen.append((value, total, message))

    return seen, on_progress


def assert_well_formed(seen: Seen, what: str) -> None:
    values = [v for v, _, _ in seen]
    assert values == sorted(set(values)), "progress must strictly increase"
    assert values[0] == 0 and values[-1] == 100
    assert all(total == 100 for _, total, _ in seen)
    assert seen[0][2] is not None and seen[0][2].startswith(f"preparing {what}")
    assert seen[-1][2] is not None and seen[-1][2].endswith("ready")


def big_pdf(path: Path, pages: int) -> None:
    pymupdf = pytest.importorskip("pymupdf")
    document = pymupdf.open()
    for number in range(1, pages + 1):
        page = document.new_page()
        lines = [f"Page {number} line {i}: the turbine ledger entry PAGE{number}-MARK {i * number}." for i in range(45)]
        page.insert_text((36, 40), "\n".join(lines), fontsize=8)
    document.save(path)  # uncompressed content streams: a realistic size per page
    document.close()


async def test_a_big_pdf_reports_its_pages(tmp_path: Path) -> None:
    big_pdf(tmp_path / "report.pdf", pages=150)
    assert (tmp_path / "report.pdf").stat().st_size >= progress.LARGE_BINARY_BYTES
    seen, on_progress = recorder()
    async with Client(create_server(Settings(roots=(tmp_path,)))) as client:
        result = await client.call_tool("sro_preview", {"path": "report.pdf"}, progress_callback=on_progress)  # type: ignore[arg-type]
        assert not result.is_error
        again, on_again = recorder()
        await client.call_tool(
            "sro_read",
            {"target": "report.pdf", "intent": {"goal": "turbine"}},
            progress_callback=on_again,  # type: ignore[arg-type]
        )
    assert_well_formed(seen, "report.pdf")
    pages = [int(re.search(r"page (\d+) of 150", m).group(1)) for _, _, m in seen if m and ": page " in m]  # type: ignore[union-attr]
    assert 20 <= len(pages) <= 50, "a report every few pages: visible, never one per page"
    assert pages == sorted(pages) and pages[-1] >= 140
    assert again == []  # parsed once: a cached artifact has nothing to prepare


async def test_a_big_text_file_reports_start_and_end_and_small_files_stay_silent(tmp_path: Path) -> None:
    text = long_markdown(sections=800)
    (tmp_path / "big.md").write_text(text)
    (tmp_path / "small.md").write_text(long_markdown(sections=5))
    assert len(text.encode()) >= progress.LARGE_BYTES
    seen, on_big = recorder()
    silent, on_small = recorder()
    async with Client(create_server(Settings(roots=(tmp_path,)))) as client:
        await client.call_tool(
            "sro_read", {"target": "big.md", "intent": {"goal": "glacier"}}, progress_callback=on_big
        )  # type: ignore[arg-type]
        await client.call_tool(
            "sro_read", {"target": "small.md", "intent": {"goal": "glacier"}}, progress_callback=on_small
        )  # type: ignore[arg-type]
    assert_well_formed(seen, "big.md")
    assert silent == []


async def test_a_directory_index_reports_the_files_it_indexes(tmp_path: Path) -> None:
    for n in range(260):
        (tmp_path / f"note{n:03}.md").write_text(
            f"# Note {n}\n\nThe orchard entry NOTE{n}-MARK mentions lantern {n}.\n"
        )
    seen, on_progress = recorder()
    async with Client(create_server(Settings(roots=(tmp_path,)))) as client:
        result = await client.call_tool(
            "sro_read", {"target": ".", "intent": {"goal": "NOTE7-MARK lantern"}}, progress_callback=on_progress
        )  # type: ignore[arg-type]
    assert not result.is_error
    assert_well_formed(seen, "the index of ./ (260 files)")
    assert any(m and m.startswith("indexing note") for _, _, m in seen)


async def test_notifications_cross_the_stdio_wire(tmp_path: Path) -> None:
    (tmp_path / "big.md").write_text(long_markdown(sections=800))
    seen, on_progress = recorder()
    params = StdioServerParameters(command=sys.executable, args=["-m", "sparseread_mcp", "--root", str(tmp_path)])
    with anyio.fail_after(60):
        async with Client(params) as client:
            await client.call_tool("sro_preview", {"path": "big.md"}, progress_callback=on_progress)  # type: ignore[arg-type]
    assert_well_formed(seen, "big.md")


def test_reports_outside_a_tool_call_cost_nothing_and_send_nothing() -> None:
    progress.report(1, 2, "nobody listens")  # no sender installed: must not raise
    sent: list[tuple[float, float, str]] = []
    with progress.reporting(lambda v, t, m: sent.append((v, t, m))):
        with progress.preparing("x", large=True):
            for page in range(1000):
                progress.report(page, 1000, f"page {page}")
        with progress.preparing("cached", large=False):
            progress.report(1, 1, "not large: silent")
    assert sent[0] == (0.0, 100.0, "preparing x") and sent[-1] == (100.0, 100.0, "x ready")
    assert len(sent) <= 2 + 100 / progress.MIN_STEP
