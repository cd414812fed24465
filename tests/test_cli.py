"""The command line, run as a person or a script would."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from conftest import FIXTURES
from docs import long_markdown


def run(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sparseread_mcp", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **env} if env else None,
    )


def test_preview_read_and_verify_from_the_shell(tmp_path: Path) -> None:
    (tmp_path / "manual.md").write_text(long_markdown())
    preview = run("preview", "manual.md", "--json", cwd=tmp_path)
    assert preview.returncode == 0, preview.stderr
    assert json.loads(preview.stdout)["route"] == "sparse"

    read = run("read", "manual.md", "--needle", "SEC9-P2-MARK", "--json", cwd=tmp_path)
    pack = json.loads(read.stdout)
    assert "SEC9-P2-MARK" in pack["items"][0]["text"]

    verify = run("verify", pack["items"][0]["pointer"], cwd=tmp_path)
    assert verify.returncode == 0 and "verify: ok" in verify.stdout


def test_full_view_is_printed_whole_across_pages(tmp_path: Path) -> None:
    text = long_markdown(sections=40)
    (tmp_path / "manual.md").write_text(text)
    result = run("read", "manual.md", "--view", "full", "--budget-tokens", "2000", "--json", cwd=tmp_path)
    decoder, pages, rest = json.JSONDecoder(), [], result.stdout.strip()
    while rest:
        page, end = decoder.raw_decode(rest)
        pages.append(page)
        rest = rest[end:].strip()
    assert len(pages) > 1
    assert "\n".join(p["items"][0]["text"] for p in pages) == text


def test_errors_are_one_line_without_a_traceback(tmp_path: Path) -> None:
    (tmp_path / "contract.md").write_text((FIXTURES / "contract.md").read_text())
    result = run("read", "../outside.md", "--goal", "x", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.startswith("error: path '../outside.md' resolves outside the readable roots")
    assert "Traceback" not in result.stderr


def test_a_reader_that_stops_early_ends_the_output_quietly(tmp_path: Path) -> None:
    """`sparseread-mcp read ... | head` ended in a BrokenPipeError traceback."""
    (tmp_path / "manual.md").write_text(long_markdown(sections=400))  # far more than a pipe holds
    process = subprocess.Popen(
        [sys.executable, "-m", "sparseread_mcp", "read", "manual.md", "--view", "full"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdout is not None and process.stderr is not None
    assert process.stdout.readline().startswith(b"gate: ")
    process.stdout.close()  # what `head -1` does
    with process.stderr:
        stderr = process.stderr.read().decode()
    assert process.wait(timeout=60) == 0, stderr
    assert stderr == ""


def test_doctor_reports_what_works(tmp_path: Path) -> None:
    result = run("doctor", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert any(line.startswith("ok  tokenizer: o200k_base") for line in lines)
    assert any(line.startswith("ok  code grammars: 13 of 13") for line in lines)
    assert any("roots" in line and str(tmp_path) in line for line in lines)


def test_calibrate_writes_a_table_from_any_folder_of_sets(tmp_path: Path) -> None:
    data = tmp_path / "data" / "notes"
    (data / "docs").mkdir(parents=True)
    text = long_markdown(sections=30)
    (data / "docs" / "guide.md").write_text(text)
    rows = []
    for number, word in enumerate(["glacier", "harbor", "lantern", "orchard", "meadow", "quarry"]):
        start = text.find(word)
        if start >= 0:
            rows.append(
                {
                    "qid": f"q{number}",
                    "doc_file": "docs/guide.md",
                    "question": f"where is the {word}",
                    "gold_spans_merged": [[start, start + len(word)]],
                }
            )
    (data / "questions.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    table = tmp_path / "table.json"
    cache = {"SPARSEREAD_CACHE_DIR": str(tmp_path / "cache")}  # embeddings stay in the test's folder
    done = run("calibrate", "--data", str(tmp_path / "data"), "--out", str(table), cwd=tmp_path, env=cache)
    assert done.returncode == 0, done.stderr
    written = json.loads(table.read_text())
    assert written["tau"] == 0.6 and written["groups"]
    (group,) = written["groups"]
    assert group.startswith("markdown|") and "bm25 x snippets" in written["groups"][group]
    assert "configurations ->" in done.stdout and "table written" in done.stdout
    # Semantic configurations that did not beat BM25 on the held-out half are withheld, and said so.
    for name, why in written["withheld"].items():
        assert name.split(" x ")[0] in ("dense", "hybrid") and f"withheld {name}: {why}" in done.stdout
        assert name not in written["groups"][group]
