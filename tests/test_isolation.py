"""The attacks that froze, crashed or starved the server before parsing moved into worker processes,
each against a real HTTP server through the official MCP client, with fixtures generated here.

During each attack `/healthz` and a second session must answer (see attack.py); after it the server is
alive and the attack got an answer or a typed error. Nothing here asserts a duration: the call limit is
small so that the hostile work is stopped, and the hang guard only catches a server that froze.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import anyio
import pytest
from attack import hostile_server, typed, under_attack
from flow import answer_record
from hostile_files import (
    backtracking_gitignore,
    every_other_line_edited,
    fan_out_pdf,
    minified_js,
    page_tree_cycle_pdf,
    sparse_file,
)
from mcp import Client

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


@pytest.fixture(autouse=True)
def short_calls(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SPARSEREAD_CALL_TIMEOUT", "8")


def _preview(path: str) -> Any:
    async def attack(client: Client) -> Any:
        return await client.call_tool("sro_preview", {"path": path})

    return attack


async def test_a_backtracking_ignore_pattern_beside_a_long_name_leaves_the_folder_readable(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (root / ".gitignore").write_text(backtracking_gitignore(16))
    (root / ("a" * 119 + "b.txt")).write_text("kept\n")
    with hostile_server(root, tmp_path) as url:
        outcome = await under_attack(url, _preview("."))
    assert not outcome.result.is_error, outcome.text
    assert "a" * 119 + "b.txt" in outcome.text  # the rule matched nothing, so the file is listed


@pytest.mark.parametrize("hostile", ["fanout.pdf", "cycle.pdf"])
async def test_a_pdf_that_hangs_or_breaks_its_parser_costs_one_worker(tmp_path: Path, hostile: str) -> None:
    pytest.importorskip("pymupdf")
    root = tmp_path / "root"
    root.mkdir()
    (root / "fanout.pdf").write_bytes(fan_out_pdf(10, 8))
    (root / "cycle.pdf").write_bytes(page_tree_cycle_pdf())
    with hostile_server(root, tmp_path) as url:
        outcome = await under_attack(url, _preview(hostile))
    assert typed(outcome), outcome.text
    assert outcome.result.is_error, outcome.text  # neither file can be parsed
    assert hostile in outcome.text


async def test_a_huge_minified_script_under_a_small_memory_limit_costs_one_worker(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (root / "bundle.min.js").write_text(minified_js())
    with hostile_server(root, tmp_path, "--max-memory-mb", "512", "--worker-memory-mb", "96") as url:
        outcome = await under_attack(url, _preview("bundle.min.js"))
    assert typed(outcome), outcome.text


async def _edited(root: Path, url: str) -> str:
    """big.txt as first read (its revision), then rewritten with every other line edited."""
    before, after = every_other_line_edited()
    (root / "big.txt").write_text(before)
    async with Client(f"{url}/mcp") as client:
        first = await client.call_tool("sro_read", {"target": "big.txt#L1-L3"})
    assert not first.is_error
    (root / "big.txt").write_text(after)
    return "sha256:" + hashlib.sha256(before.encode()).hexdigest()[:12]


async def test_a_diff_of_a_file_with_every_other_line_edited_says_where_it_changed(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    with hostile_server(root, tmp_path) as url:
        rev = await _edited(root, url)

        async def since(client: Client) -> Any:
            return await client.call_tool("sro_read", {"target": "big.txt", "since": rev})

        async def verify(client: Client) -> Any:
            return await client.call_tool("sro_read", {"target": f"big.txt@{rev}#L1-L60000", "action": "verify"})

        changed = await under_attack(url, since)
        verified = await under_attack(url, verify)
    assert not changed.result.is_error, changed.text
    assert "lines differ" in changed.text and "L1" in changed.text  # where, not a character diff
    assert not verified.result.is_error, verified.text
    assert "changed" in verified.text and "lines differ" in verified.text


async def test_forty_diffs_at_once_leave_health_and_new_sessions_answered(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    with hostile_server(root, tmp_path) as url:
        rev = await _edited(root, url)

        async def forty(_: Client) -> list[Any]:
            results: list[Any] = []

            async def one() -> None:
                async with Client(f"{url}/mcp") as client:
                    results.append(await client.call_tool("sro_read", {"target": "big.txt", "since": rev}))

            async with anyio.create_task_group() as tasks:
                for _ in range(40):
                    tasks.start_soon(one)
            return results

        outcome = await under_attack(url, forty)
    results = outcome.result
    assert len(results) == 40
    assert all(not r.is_error or "internal error" not in r.content[0].text for r in results)


async def test_a_sparse_file_of_a_hundred_gigabytes_gets_a_card_and_a_typed_refusal(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    sparse_file(root / "holes.log")
    with hostile_server(root, tmp_path) as url:
        card = await under_attack(url, _preview("holes.log"))

        async def first_line(client: Client) -> Any:
            return await client.call_tool("sro_read", {"target": "holes.log#L1"})

        line = await under_attack(url, first_line)
    assert not card.result.is_error, card.text
    assert "sample" in card.text  # fingerprinted from a sample, within the call, and said so
    assert typed(line) and line.result.is_error and "line 1 alone" in line.text


async def test_a_worker_that_a_hostile_pdf_filled_is_not_reused_for_the_next_file(tmp_path: Path) -> None:
    """One worker only: the fan-out PDF leaves its parser's memory behind, so the next file, however small,
    must get a fresh worker, not that one (it answered a 40-byte file with "needs more than 1024 MiB")."""
    pytest.importorskip("pymupdf")
    root = tmp_path / "root"
    root.mkdir()
    (root / "fanout.pdf").write_bytes(fan_out_pdf(10, 8))
    with hostile_server(root, tmp_path, "--workers", "1") as url, anyio.fail_after(240):
        async with Client(f"{url}/mcp") as client:
            hostile = await client.call_tool("sro_preview", {"path": "fanout.pdf"})
            after = [await client.call_tool("sro_read", {"target": "probe.md#L3"}) for _ in range(3)]
    assert hostile.is_error
    assert all(not r.is_error and "PROBE-MARK-7" in str(answer_record(r)) for r in after), after
