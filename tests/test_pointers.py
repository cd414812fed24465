"""Evidence pointers across edits and commits, and `since` diffs."""

from __future__ import annotations

import random
import subprocess
from pathlib import Path

import pytest
from docs import long_markdown

from sparseread_mcp import Intent, IntentError, ReadEngine, ReadRequest, Settings

GIT = ["git", "-c", "user.email=test@example.org", "-c", "user.name=Test", "-c", "commit.gpgsign=false"]


def git(root: Path, *args: str) -> str:
    return subprocess.run([*GIT, "-C", str(root), *args], check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    if subprocess.run(["git", "--version"], capture_output=True).returncode != 0:
        pytest.skip("git is not installed")
    git(tmp_path, "init", "-q")
    (tmp_path / "manual.md").write_text(long_markdown())
    git(tmp_path, "add", "manual.md")
    git(tmp_path, "commit", "-q", "-m", "first")
    return tmp_path


def find(engine: ReadEngine, needle: str, session: str = "s") -> str:
    pack = engine.read(session, ReadRequest(target="manual.md", intent=Intent(needles=[needle])))
    return pack.items[0].pointer


def test_tracked_unmodified_files_are_cited_by_commit(repo: Path) -> None:
    head = git(repo, "rev-parse", "HEAD")
    engine = ReadEngine(Settings(roots=(repo,)))
    assert find(engine, "SEC12-P1-MARK").startswith(f"manual.md@{head}#")
    (repo / "manual.md").write_text((repo / "manual.md").read_text() + "\nmore\n")
    assert find(engine, "SEC12-P1-MARK", "t").startswith("manual.md@sha256:")


def test_a_commit_pointer_still_dereferences_after_the_working_copy_changed(repo: Path) -> None:
    engine = ReadEngine(Settings(roots=(repo,)))
    pointer = find(engine, "SEC20-P0-MARK")
    original = engine.read("d", ReadRequest(target=pointer)).items[0].text
    text = (repo / "manual.md").read_text()
    (repo / "manual.md").write_text(text.replace("SEC20-P0-MARK", "SEC20-P0-REWRITTEN"))
    fresh = ReadEngine(Settings(roots=(repo,)))  # a new server: nothing in memory, git only
    again = fresh.read("d", ReadRequest(target=pointer))
    assert again.items[0].text == original and "SEC20-P0-MARK" in again.items[0].text
    assert again.message and "as of" in again.message
    verdict = fresh.read("v", ReadRequest(target=pointer, action="verify")).verification
    assert verdict is not None and verdict.status == "changed" and "REWRITTEN" in (verdict.diff or "")


def test_verify_ok_moved_changed_gone_by_content_hash(tmp_path: Path) -> None:
    doc = tmp_path / "manual.md"
    text = long_markdown()
    doc.write_text(text)
    engine = ReadEngine(Settings(roots=(tmp_path,)))
    pointer = find(engine, "SEC33-P2-MARK")
    assert pointer.startswith("manual.md@sha256:")
    assert engine.read("v", ReadRequest(target=pointer, action="verify")).verification.status == "ok"  # type: ignore[union-attr]
    doc.write_text("# Inserted\n\nthree new lines above\n\n" + text)
    moved = engine.read("v", ReadRequest(target=pointer, action="verify")).verification
    assert moved is not None and moved.status == "moved"
    first = int((moved.new_anchor or "").lstrip("L").split("-")[0])
    old_first = int(pointer.split("#L")[1].split("-")[0])
    assert first == old_first + 4
    doc.write_text(text.replace("SEC33-P2-MARK", "SEC33-P2-EDITED"))
    changed = engine.read("v", ReadRequest(target=pointer, action="verify")).verification
    assert changed is not None and changed.status == "changed"
    assert "-" in (changed.diff or "") and "SEC33-P2-EDITED" in (changed.diff or "")
    doc.unlink()
    gone = engine.read("v", ReadRequest(target=pointer, action="verify")).verification
    assert gone is not None and gone.status == "gone"


def test_since_answers_with_a_diff_one_line_when_unchanged_or_the_view(tmp_path: Path) -> None:
    doc = tmp_path / "manual.md"
    text = long_markdown()
    doc.write_text(text)
    engine = ReadEngine(Settings(roots=(tmp_path,)))
    rev = find(engine, "SEC2-P0-MARK").split("@")[1].split("#")[0]
    same = engine.read("a", ReadRequest(target="manual.md", since=rev))
    assert same.message == f"unchanged since {rev}" and same.items == [] and same.tokens < 700
    doc.write_text(text.replace("SEC2-P0-MARK", "SEC2-P0-NEW"))
    diff = engine.read("b", ReadRequest(target="manual.md", since=rev))
    assert diff.result is not None
    body = str(diff.result.value)
    assert "-" in body and "+" in body and "SEC2-P0-NEW" in body and len(body) < 2000
    doc.write_text(long_markdown(seed=99))  # everything differs: the diff would cost more than the file
    view = engine.read("c", ReadRequest(target="manual.md", since=rev, intent=Intent(goal="turbine")))
    assert view.result is None and view.items and view.message and "larger than the file" in view.message
    with pytest.raises(IntentError, match="not a revision"):
        engine.read("d", ReadRequest(target="manual.md", since="sha256:000000000000"))


def test_since_a_commit_uses_git(repo: Path) -> None:
    head = git(repo, "rev-parse", "HEAD")
    text = (repo / "manual.md").read_text()
    (repo / "manual.md").write_text(text.replace("SEC5-P1-MARK", "SEC5-P1-CHANGED"))
    engine = ReadEngine(Settings(roots=(repo,)))
    pack = engine.read("s", ReadRequest(target="manual.md", since=head))
    assert pack.result is not None and "SEC5-P1-CHANGED" in str(pack.result.value)


def test_passages_cut_from_long_lines_are_cited_exactly(tmp_path: Path) -> None:
    # Markdown whose paragraphs are single lines of thousands of characters: a passage or a page may
    # start inside one line and end inside a later one. Every read answers (it raised AnchorError), and
    # every pointer reads back exactly the text it came with.
    rng = random.Random(3)
    words = ["turbine", "pressure", "valve", "rotor", "blade", "check"]
    words += ["lorem", "ipsum", "dolor", "amet.", "foo,", "bar;"]
    paragraphs = [f"## Part {i}\n\n" + " ".join(rng.choice(words) for _ in range(600)) for i in range(12)]
    (tmp_path / "long.md").write_text("\n\n".join(paragraphs) + "\n")
    engine = ReadEngine(Settings(roots=[tmp_path]))
    answered = 0
    for action in ("focus", "collect", "refine"):
        for view in (None, "snippets", "lines", "full"):
            intent = Intent(goal="rotor blade pressure check", needles=["valve"])
            request = ReadRequest(target="long.md", action=action, view=view, intent=intent, budget_tokens=800)
            pack = engine.read(f"s-{action}-{view}", request)
            for item in pack.items:
                back = engine.read("verifier", ReadRequest(target=item.pointer, budget_tokens=4000))
                assert [i.text for i in back.items] == [item.text], item.pointer
                answered += 1
    assert answered
