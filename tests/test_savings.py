"""What a session saved: per-call records, one full read per artifact version, `trace`, `bench`, the card."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import FIXTURES
from docs import long_markdown
from flow import answer_record
from mcp import Client

from sparseread_mcp import Intent, ReadEngine, ReadRequest, Settings
from sparseread_mcp.commands.savings import bar, build_trace, render_trace
from sparseread_mcp.progressbar import ProgressBar
from sparseread_mcp.serve.server import create_server


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sparseread_mcp", *args], cwd=cwd, capture_output=True, text=True, timeout=120
    )


def test_each_artifact_version_is_counted_once_however_many_calls_touch_it(tmp_path: Path) -> None:
    (tmp_path / "manual.md").write_text(long_markdown())
    (tmp_path / "contract.md").write_text((FIXTURES / "contract.md").read_text())
    engine = ReadEngine(Settings(roots=(tmp_path,)))
    preview = engine.preview("s", "manual.md")
    packs = [
        engine.read("s", ReadRequest(target="manual.md", intent=Intent(goal=goal)))
        for goal in ("glacier", "invoice", "turbine")  # three objectives: three episodes, one artifact
    ]
    packs.append(engine.read("s", ReadRequest(target="manual.md", action="refine")))
    small = engine.read("s", ReadRequest(target="contract.md", intent=Intent(goal="renewal")))
    trace = build_trace(engine.sessions.get("s"))

    manual = next(a for a in trace.artifacts if a.path == "manual.md")
    assert manual.calls == 5 and manual.versions == 1
    assert manual.full_view_tokens == preview.full_view_tokens  # L once, not once per episode or call
    assert manual.exposure_tokens == preview.tokens + sum(p.tokens for p in packs)
    assert manual.saved_tokens == manual.full_view_tokens - manual.exposure_tokens > 0
    contract = next(a for a in trace.artifacts if a.path == "contract.md")
    # A small file read whole costs its full view plus the response frame: a negative saving, not hidden.
    assert contract.exposure_tokens == small.tokens and contract.saved_tokens < 0
    assert trace.counterfactual_tokens == manual.full_view_tokens + contract.full_view_tokens
    assert trace.saved_tokens == trace.counterfactual_tokens - trace.exposure_tokens

    # A changed file is a new version: a full reader would read it again, so it counts again.
    (tmp_path / "manual.md").write_text(long_markdown(sections=70))
    again = engine.read("s", ReadRequest(target="manual.md", intent=Intent(goal="glacier")))
    changed = next(a for a in build_trace(engine.sessions.get("s")).artifacts if a.path == "manual.md")
    assert changed.versions == 2
    assert changed.full_view_tokens == preview.full_view_tokens + again.exposure.full_view_tokens


def test_a_gate_fallback_is_counted(tmp_path: Path) -> None:
    text = "\n\n".join(f"Ledger entry {i}: the ledger balance moved by {i * 7} units on day {i}." for i in range(60))
    (tmp_path / "short.md").write_text(text)
    engine = ReadEngine(Settings(roots=(tmp_path,), native_fit_tokens=0))
    decisions = [engine.read("s", ReadRequest(target="short.md", intent=Intent(goal="ledger balance"))).gate.decision]
    while decisions[-1] == "sparse" and len(decisions) < 60:
        decisions.append(engine.read("s", ReadRequest(target="short.md", action="refine")).gate.decision)
    assert decisions[-1] == "fallback"
    trace = build_trace(engine.sessions.get("s"))
    assert trace.fallbacks == 1 and trace.artifacts[0].fallbacks == 1
    assert "1 fallback" in render_trace(trace)


def test_calls_survive_a_restart_in_the_sqlite_store(tmp_path: Path) -> None:
    (tmp_path / "manual.md").write_text(long_markdown())
    settings = Settings(roots=(tmp_path,), store=tmp_path / "sessions.db")
    first = ReadEngine(settings)
    first.preview("s", "manual.md")
    first.read("s", ReadRequest(target="manual.md", intent=Intent(goal="glacier")))
    before = build_trace(first.sessions.get("s"))

    restarted = ReadEngine(settings)
    assert restarted.sessions.keys() == ["s"]
    after = build_trace(restarted.sessions.get("s"))
    assert after.model_dump(exclude={"median_ms", "recent"}) == before.model_dump(exclude={"median_ms", "recent"})
    assert [c.tool for c in after.recent] == ["preview", "read"]


@pytest.mark.anyio
async def test_the_card_says_what_this_session_saved(tmp_path: Path) -> None:
    (tmp_path / "manual.md").write_text(long_markdown())
    async with Client(create_server(Settings(roots=(tmp_path,)))) as client:
        read = await client.call_tool("sro_read", {"target": "manual.md", "intent": {"goal": "glacier"}})
        plain = await client.call_tool("sro_card", {})
        traced = await client.call_tool("sro_card", {"trace": True})
    assert answer_record(read) is not None and answer_record(plain) is not None
    assert "trace" not in answer_record(plain)  # off unless asked: the card stays small
    trace = answer_record(traced)["trace"]  # type: ignore[index]
    [manual] = trace["artifacts"]
    assert manual["exposure_tokens"] == answer_record(read)["tokens"]
    assert manual["full_view_tokens"] == answer_record(read)["exposure"]["L_tokens"]
    # The earlier card is overhead: it counts against the saving, with no artifact to its name.
    assert trace["overhead_tokens"] == answer_record(plain)["tokens"]
    assert trace["saved_tokens"] == manual["full_view_tokens"] - manual["exposure_tokens"] - trace["overhead_tokens"]


def test_trace_reads_a_past_servers_store(tmp_path: Path) -> None:
    (tmp_path / "manual.md").write_text(long_markdown())
    read = cli("--store", "s.db", "read", "manual.md", "--goal", "glacier", "--json", cwd=tmp_path)
    assert read.returncode == 0, read.stderr
    pack = json.loads(read.stdout)

    as_json = cli("trace", "--store", "s.db", "--json", cwd=tmp_path)
    assert as_json.returncode == 0, as_json.stderr
    [trace] = json.loads(as_json.stdout)
    assert trace["artifacts"][0]["exposure_tokens"] == pack["tokens"]
    assert trace["artifacts"][0]["full_view_tokens"] == pack["exposure"]["full_view_tokens"]

    human = cli("trace", "--store", "s.db", cwd=tmp_path)
    assert "manual.md" in human.stdout and "saved" in human.stdout
    assert any(cell in human.stdout for cell in "▏▎▍▌▋▊▉█")  # the bar: a small exposure is a part cell

    missing = cli("trace", cwd=tmp_path)
    assert missing.returncode == 2 and "pass --store FILE" in missing.stderr and "trace=true" in missing.stderr


def test_trace_refuses_a_store_that_does_not_exist_and_creates_none(tmp_path: Path) -> None:
    """A misspelt --store once became a new, empty database and the answer "no recorded calls"."""
    (tmp_path / "manual.md").write_text(long_markdown())
    assert cli("--store", "s.db", "read", "manual.md", "--goal", "glacier", cwd=tmp_path).returncode == 0
    typo = cli("trace", "--store", "s.bd", cwd=tmp_path)
    assert typo.returncode == 2 and typo.stderr.startswith("error: no session store at s.bd"), typo.stderr
    assert not (tmp_path / "s.bd").exists()
    assert cli("trace", "--store", "s.db", cwd=tmp_path).returncode == 0


def test_bench_reports_exposure_against_one_full_read(tmp_path: Path) -> None:
    (tmp_path / "manual.md").write_text(long_markdown())
    (tmp_path / "contract.md").write_text((FIXTURES / "contract.md").read_text())
    result = cli("bench", ".", "--repeat", "2", "--json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""  # no progress bar: not a terminal, and --json
    report = json.loads(result.stdout)
    files = {f["path"]: f for f in report["files"]}
    assert list(files) == ["manual.md", "contract.md"]  # largest first
    manual, contract = files["manual.md"], files["contract.md"]
    assert manual["route"] == "sparse" and len(manual["goals"]) == 3
    assert manual["saved_tokens"] == manual["full_view_tokens"] - manual["exposure_tokens"] > 0
    assert manual["read_cold_ms"] > 0 and manual["read_warm_ms"] > 0
    assert contract["route"] == "native" and contract["read_cold_ms"] is None
    assert report["saved_tokens"] == report["full_view_tokens"] - report["exposure_tokens"]

    table = cli("bench", "manual.md", "--goal", "glacier", cwd=tmp_path)
    assert table.returncode == 0, table.stderr
    assert "goals: glacier" in table.stdout and "tokens exposed vs" in table.stdout


def test_bench_counts_a_saving_only_where_the_evidence_was_delivered(tmp_path: Path) -> None:
    """bench once said "saved 54%" for a question whose answer was never delivered."""
    (tmp_path / "manual.md").write_text(long_markdown())
    (tmp_path / "contract.md").write_text((FIXTURES / "contract.md").read_text())
    asked = ("--goal", "glacier", "--goal", "zebra unicorn quasar")
    result = cli("bench", ".", *asked, "--repeat", "1", "--json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    files = {f["path"]: f for f in report["files"]}
    manual, contract = files["manual.md"], files["contract.md"]
    assert manual["undelivered"] == ["zebra unicorn quasar"] and not manual["counted"]
    assert manual["saved_tokens"] > 0  # what the file alone would claim, not counted
    assert contract["counted"]  # read whole by its preview
    assert report["not_counted"] == ["manual.md"]
    assert report["full_view_tokens"] == contract["full_view_tokens"]
    assert report["saved_tokens"] == contract["full_view_tokens"] - contract["exposure_tokens"]
    table = cli("bench", "manual.md", *asked, "--repeat", "1", cwd=tmp_path).stdout
    assert "not counted: no evidence delivered for zebra unicorn quasar" in table
    row = next(line for line in table.splitlines() if line.startswith("manual.md"))
    assert "%" not in row and f"{manual['saved_tokens']:,}" not in row, table
    assert "nothing saved is counted" in table, table

    delivered = json.loads(
        cli("bench", "manual.md", "--goal", "glacier", "--repeat", "1", "--json", cwd=tmp_path).stdout
    )
    assert delivered["not_counted"] == [] and delivered["saved_tokens"] == delivered["files"][0]["saved_tokens"] > 0


def test_the_progress_bar_draws_only_when_enabled() -> None:
    shown, hidden = io.StringIO(), io.StringIO()
    with ProgressBar(4, "bench", stream=shown, enabled=True) as progress:
        progress.advance("a.md")
        progress.advance("b.md", steps=3)
    with ProgressBar(4, "bench", stream=hidden) as quiet:  # StringIO is not a terminal
        quiet.advance("a.md")
    assert "bench [" + "█" * 24 + "] 4/4 b.md" in shown.getvalue()
    assert shown.getvalue().endswith("\r\033[K")  # erased when done: stderr is left clean
    assert hidden.getvalue() == ""


def test_bars_scale_with_eighths_and_mark_overflow() -> None:
    assert bar(0.5, 8) == "████    "
    assert bar(1 / 16, 8) == "▌       "
    assert bar(2.5, 8) == "███████▶"
