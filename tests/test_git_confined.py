"""Git confined to the roots: no blob of a repository outside them is ever shown; `since` diffs the right file."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import anyio
import pytest
from flow import answer_record
from mcp import Client

from sparseread_mcp import Intent, ReadEngine, ReadRequest, Settings
from sparseread_mcp.errors import SparsereadError
from sparseread_mcp.serve.server import create_server

GIT = ["git", "-c", "user.email=test@example.org", "-c", "user.name=Test", "-c", "commit.gpgsign=false"]
MARKER = "OUTSIDE-BLOB-5519"
INSIDE = "# Notes\n\nshared first line\n"


def git(cwd: Path, *args: str) -> str:
    return subprocess.run([*GIT, "-C", str(cwd), *args], check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture
def outside_repo(tmp_path: Path) -> tuple[Path, str, str]:
    """A repository outside the root: its first commit holds the same notes.md as the root, its second
    commit holds the marker. Returns (repo, first commit, second commit)."""
    if subprocess.run(["git", "--version"], capture_output=True).returncode != 0:
        pytest.skip("git is not installed")
    repo = tmp_path / "outside"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / "notes.md").write_text(INSIDE)
    git(repo, "add", "notes.md")
    git(repo, "commit", "-q", "-m", "same as inside")
    first = git(repo, "rev-parse", "HEAD")
    (repo / "notes.md").write_text(f"# Notes\n\n{MARKER} private outside text\n")
    git(repo, "commit", "-q", "-am", "secret")
    second = git(repo, "rev-parse", "HEAD")
    git(repo, "checkout", "-q", first)  # HEAD holds the same bytes as the root's notes.md
    return repo, first, second


def root_with(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    root.mkdir()
    (root / "notes.md").write_text(INSIDE)
    return root


def answers(engine: ReadEngine, second: str) -> list[str]:
    """Every way a client can ask for a revision's text: a pointer, verify, and since."""
    out = []
    requests = [
        ReadRequest(target=f"notes.md@{second}#L1-L3"),
        ReadRequest(target=f"notes.md@{second}#L1-L3", action="verify"),
        ReadRequest(target="notes.md", intent=Intent(needles=["shared"]), since=second),
    ]
    for n, request in enumerate(requests):
        try:
            out.append(engine.read(f"s{n}", request).model_dump_json())
        except SparsereadError as exc:
            out.append(str(exc))
    return out


def test_a_git_file_pointing_outside_is_treated_as_untracked(
    tmp_path: Path, outside_repo: tuple[Path, str, str]
) -> None:
    repo, _, second = outside_repo
    root = root_with(tmp_path)
    (root / ".git").write_text(f"gitdir: {repo / '.git'}\n")
    engine = ReadEngine(Settings(roots=(root,)))
    for answer in answers(engine, second):
        assert MARKER not in answer
    pack = engine.read("s", ReadRequest(target="notes.md", intent=Intent(needles=["shared"])))
    assert pack.items and pack.items[0].pointer.startswith("notes.md@sha256:")  # not the outside commit


def test_git_environment_variables_cannot_steer_git_outside(
    tmp_path: Path, outside_repo: tuple[Path, str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    repo, _, second = outside_repo
    root = root_with(tmp_path)
    monkeypatch.setenv("GIT_DIR", str(repo / ".git"))
    monkeypatch.setenv("GIT_WORK_TREE", str(root))
    engine = ReadEngine(Settings(roots=(root,)))
    for answer in answers(engine, second):
        assert MARKER not in answer
    pack = engine.read("s", ReadRequest(target="notes.md", intent=Intent(needles=["shared"])))
    assert pack.items[0].pointer.startswith("notes.md@sha256:")


def test_a_root_inside_a_larger_repository_is_untracked(tmp_path: Path, outside_repo: tuple[Path, str, str]) -> None:
    repo, _, second = outside_repo
    root = repo / "docs"  # the work tree (and .git) lie above the root
    root.mkdir()
    (root / "notes.md").write_text(INSIDE)
    git(repo, "add", "docs/notes.md")
    git(repo, "commit", "-q", "-m", "docs")
    engine = ReadEngine(Settings(roots=(root,)))
    for answer in answers(engine, second):
        assert MARKER not in answer
    pack = engine.read("s", ReadRequest(target="notes.md", intent=Intent(needles=["shared"])))
    assert pack.items[0].pointer.startswith("notes.md@sha256:")


def test_borrowed_objects_outside_the_roots_are_refused(tmp_path: Path, outside_repo: tuple[Path, str, str]) -> None:
    repo, _, second = outside_repo
    root = tmp_path / "root"
    git(tmp_path, "clone", "-q", "--shared", str(repo), str(root))  # objects/info/alternates -> outside
    engine = ReadEngine(Settings(roots=(root,)))
    for answer in answers(engine, second):
        assert MARKER not in answer
    pack = engine.read("s", ReadRequest(target="notes.md", intent=Intent(needles=["shared"])))
    assert pack.items[0].pointer.startswith("notes.md@sha256:")


def test_a_repository_inside_the_root_still_cites_commits(tmp_path: Path) -> None:
    if subprocess.run(["git", "--version"], capture_output=True).returncode != 0:
        pytest.skip("git is not installed")
    root = root_with(tmp_path)
    git(root, "init", "-q")
    git(root, "add", "notes.md")
    git(root, "commit", "-q", "-m", "inside")
    head = git(root, "rev-parse", "HEAD")
    engine = ReadEngine(Settings(roots=(root,)))
    pack = engine.read("s", ReadRequest(target="notes.md", intent=Intent(needles=["shared"])))
    assert pack.items[0].pointer.startswith(f"notes.md@{head}#")


def test_since_a_commit_diffs_the_file_asked_for_not_one_read_before(tmp_path: Path) -> None:
    if subprocess.run(["git", "--version"], capture_output=True).returncode != 0:
        pytest.skip("git is not installed")
    root = tmp_path / "repo"
    root.mkdir()
    (root / "a.md").write_text("# A\n\n" + "".join(f"alpha line {n} ALPHA-ONLY\n" for n in range(40)))
    (root / "b.md").write_text("# B\n\n" + "".join(f"beta line {n}\n" for n in range(40)))
    git(root, "init", "-q")
    git(root, "add", "a.md", "b.md")
    git(root, "commit", "-q", "-m", "both")
    head = git(root, "rev-parse", "HEAD")
    (root / "b.md").write_text((root / "b.md").read_text().replace("beta line 7\n", "beta line 7 EDITED\n"))
    engine = ReadEngine(Settings(roots=(root,)))
    engine.read("s", ReadRequest(target="a.md", intent=Intent(needles=["alpha"])))  # remembers a.md at HEAD
    pack = engine.read("s", ReadRequest(target="b.md", intent=Intent(needles=["beta"]), since=head))
    assert pack.result is not None
    diff = str(pack.result.value)
    assert "ALPHA-ONLY" not in pack.model_dump_json()
    assert "-beta line 7\n+beta line 7 EDITED" in diff


def test_a_git_file_planted_after_a_first_check_is_refused(tmp_path: Path, outside_repo: tuple[Path, str, str]) -> None:
    repo, _, second = outside_repo
    root = root_with(tmp_path)
    git(root, "init", "-q")
    git(root, "add", "notes.md")
    git(root, "commit", "-q", "-m", "inside")
    engine = ReadEngine(Settings(roots=(root,)))
    first = engine.read("s", ReadRequest(target="notes.md", intent=Intent(needles=["shared"])))
    assert "@sha256:" not in first.items[0].pointer  # an inside repository: checked and used
    shutil.rmtree(root / ".git")
    (root / ".git").write_text(f"gitdir: {repo / '.git'}\n")
    for answer in answers(engine, second):
        assert MARKER not in answer


def test_a_content_hash_of_another_file_never_answers_for_this_one(tmp_path: Path) -> None:
    """Remembered texts are keyed by path and revision: a.md's hash is not a version of b.md."""
    (tmp_path / "a.md").write_text("# A\n\nALPHA-ONLY text of a\n")
    (tmp_path / "b.md").write_text("# B\n\nbeta text of b\n")
    engine = ReadEngine(Settings(roots=(tmp_path,)))
    pointer = engine.read("s", ReadRequest(target="a.md", intent=Intent(needles=["alpha"]))).items[0].pointer
    rev = pointer.split("@")[1].split("#")[0]
    with pytest.raises(SparsereadError, match="not in git or in this server's memory"):
        engine.read("s", ReadRequest(target=f"b.md@{rev}#L1-L3"))
    try:
        pack = engine.read("s", ReadRequest(target="b.md", intent=Intent(needles=["beta"]), since=rev))
        assert "ALPHA-ONLY" not in pack.model_dump_json()
    except SparsereadError as exc:
        assert "ALPHA-ONLY" not in str(exc)


def answers_over_mcp(root: Path, target: str, second: str) -> list[tuple[bool, str]]:
    """(is_error, everything the client sees) for a plain read, a pointer to the outside commit, its verify,
    and `since` that commit, through the official MCP client."""
    calls = [
        {"target": target, "intent": {"needles": ["shared"]}},
        {"target": f"{target}@{second}#L1-L3"},
        {"target": f"{target}@{second}#L1-L3", "action": "verify"},
        {"target": target, "intent": {"needles": ["shared"]}, "since": second},
    ]

    async def run() -> list[tuple[bool, str]]:
        out = []
        async with Client(create_server(Settings(roots=(root,)))) as client:
            with anyio.fail_after(60):  # a hang guard only
                for arguments in calls:
                    result = await client.call_tool("sro_read", arguments)
                    out.append((result.is_error, f"{answer_record(result)} {result.content}"))
        return out

    return anyio.run(run)


def assert_read_without_git(seen: list[tuple[bool, str]], path: str) -> None:
    for _, text in seen:
        assert MARKER not in text
    plain, pointer = seen[0], seen[1]
    assert not plain[0] and f'"pointer":"{path}@sha256:' in plain[1].replace("\\", "")  # cited by content hash
    assert pointer[0] and "read without git" in pointer[1] and "sha256" in pointer[1]  # refused, and why


def committed_root(tmp_path: Path, name: str = "root") -> tuple[Path, str]:
    root = tmp_path / name
    root.mkdir()
    (root / "notes.md").write_text(INSIDE)
    git(root, "init", "-q")
    git(root, "add", "notes.md")
    git(root, "commit", "-q", "-m", "inside")
    return root, git(root, "rev-parse", "HEAD")


def test_a_quoted_alternates_line_never_lends_an_outside_blob(
    tmp_path: Path, outside_repo: tuple[Path, str, str]
) -> None:
    """git accepts a C-quoted path in alternates: a parser that does not unquote it finds it inside the root."""
    repo, _, second = outside_repo
    root, _ = committed_root(tmp_path)
    outside_objects = repo / ".git" / "objects"
    (root / ".git" / "objects" / "info" / "alternates").write_text(f'"{outside_objects}"\n')
    assert git(root, "cat-file", "-t", second) == "commit"  # git itself does borrow through the quoted line
    assert_read_without_git(answers_over_mcp(root, "notes.md", second), "notes.md")


def test_chained_alternates_through_a_second_repository_never_lend_an_outside_blob(
    tmp_path: Path, outside_repo: tuple[Path, str, str]
) -> None:
    """a/ borrows from b/ (inside the root), and b/ borrows from a repository outside it."""
    repo, _, second = outside_repo
    root = tmp_path / "root"
    root.mkdir()
    a, _ = committed_root(root, "a")
    b, _ = committed_root(root, "b")
    (b / ".git" / "objects" / "info" / "alternates").write_text(f"{repo / '.git' / 'objects'}\n")
    (a / ".git" / "objects" / "info" / "alternates").write_text("../../../b/.git/objects\n")
    assert git(a, "cat-file", "-t", second) == "commit"  # the chain reaches the outside objects
    assert_read_without_git(answers_over_mcp(root, "a/notes.md", second), "a/notes.md")


def test_a_pack_linked_from_outside_never_lends_an_outside_blob(
    tmp_path: Path, outside_repo: tuple[Path, str, str]
) -> None:
    """No alternates at all: the outside repository's pack is symlinked into the root's object store."""
    repo, _, second = outside_repo
    git(repo, "repack", "-q", "-a", "-d")
    root, _ = committed_root(tmp_path)
    for pack in (repo / ".git" / "objects" / "pack").iterdir():
        (root / ".git" / "objects" / "pack" / pack.name).symlink_to(pack)
    assert git(root, "cat-file", "-t", second) == "commit"
    assert_read_without_git(answers_over_mcp(root, "notes.md", second), "notes.md")


def test_an_empty_alternates_file_is_enough_to_read_without_git(tmp_path: Path) -> None:
    """Conservative: whatever an alternates file says (nothing here), the repository is not trusted to git."""
    if subprocess.run(["git", "--version"], capture_output=True).returncode != 0:
        pytest.skip("git is not installed")
    root, head = committed_root(tmp_path)
    (root / ".git" / "objects" / "info" / "alternates").write_text("")
    seen = answers_over_mcp(root, "notes.md", head)
    assert_read_without_git(seen, "notes.md")
