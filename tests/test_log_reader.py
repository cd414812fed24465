"""Logs: records with continuation lines, level counts, signatures with counts, focus with context."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import source_at

from sparseread_mcp import Intent, ReadEngine, ReadRequest, Settings


def service_log() -> str:
    lines = []
    for i in range(400):
        second = f"{i % 60:02d}"
        minute = f"{i // 60:02d}"
        stamp = f"2026-11-29T10:{minute}:{second}.123Z"
        if i % 25 == 0:
            lines.append(f"{stamp} ERROR db: connection refused to 10.0.0.{i % 7}:5432 after {i} ms")
        elif i == 213:
            lines.append(f"{stamp} ERROR worker: job 77 crashed (MARKER-CRASH)")
            lines.append("Traceback (most recent call last):")
            lines.append('  File "/srv/app/jobs.py", line 41, in run')
            lines.append("ZeroDivisionError: division by zero")
        elif i % 10 == 0:
            lines.append(f"{stamp} WARN cache: eviction of {i * 3} keys took {i}ms")
        else:
            lines.append(f"{stamp} INFO http: GET /api/items/{i} 200 in {i % 13} ms")
    return "\n".join(lines) + "\n"


@pytest.fixture
def engine(tmp_path: Path) -> ReadEngine:
    (tmp_path / "service.log").write_text(service_log())
    (tmp_path / "console.txt").write_text(service_log())
    return ReadEngine(Settings(roots=(tmp_path,)))


def test_preview_counts_levels_and_gives_the_time_range(engine: ReadEngine) -> None:
    preview = engine.preview("s", "service.log", budget_tokens=6000)
    assert preview.artifact.type == "log"
    signals = preview.signals
    assert signals["level_error"] == 17 and signals["level_warning"] == 32
    assert signals["first_time"] == "2026-11-29T10:00:00.123Z"
    assert signals["last_time"] == "2026-11-29T10:06:39.123Z"
    top = preview.outline[0]
    assert top.title.startswith("×16 ERROR db: connection refused to <n>:<n> after <n> ms (first L1,")


def test_a_stack_trace_stays_with_its_record(engine: ReadEngine, tmp_path: Path) -> None:
    source = (tmp_path / "service.log").read_text()
    pack = engine.read("s", ReadRequest(target="service.log", intent=Intent(needles=["MARKER-CRASH"])))
    item = pack.items[0]
    assert "MARKER-CRASH" in item.text and "ZeroDivisionError" in item.text
    assert source_at(source, item.anchor) == item.text
    before, after = item.text.split("\n")[0], item.text.split("\n")[-1]
    assert "INFO" in before and "INFO" in after, "one record of context on each side"


def test_patterns_find_every_matching_record(engine: ReadEngine) -> None:
    pack = engine.read(
        "s", ReadRequest(target="service.log", intent=Intent(needles=["/eviction of \\d+ keys/"], want="list"))
    )
    assert pack.items and all("eviction of" in i.text for i in pack.items)


def test_text_files_that_look_like_logs_are_read_as_logs(engine: ReadEngine) -> None:
    assert engine.preview("s", "console.txt").artifact.type == "log"
