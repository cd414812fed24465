"""The roots hold under races: a file swapped for a symlink to outside is refused, never read, never cached."""

from __future__ import annotations

import hashlib
import os
import threading
from pathlib import Path

import anyio
import anyio.to_thread
import pytest
from flow import answer_record
from mcp import Client

from sparseread_mcp import Intent, OutsideRoots, ReadEngine, ReadRequest, Settings
from sparseread_mcp.directory.collection_read import read_directory
from sparseread_mcp.errors import ConfigError, SparsereadError
from sparseread_mcp.files.artifacts import load_artifact
from sparseread_mcp.files.indexcache import IndexCache
from sparseread_mcp.files.roots import Roots
from sparseread_mcp.files.safeopen import MAX_LINKS, open_beneath
from sparseread_mcp.serve.server import create_server

MARKER = "OUTSIDE-MARKER-7731"
INSIDE = "secret inside: the innocent victim file\n"


@pytest.fixture
def layout(tmp_path: Path) -> tuple[Path, Path]:
    root = tmp_path / "root"
    root.mkdir()
    (root / "victim.txt").write_text(INSIDE * 4)
    (root / "other.md").write_text("# Other\n\nnothing secret here\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text(f"secret {MARKER} outside the root\n" * 4)
    return root, outside


def swap_to_link(root: Path, outside: Path, name: str = "victim.txt") -> None:
    """Replace a file inside the root by a symlink to the outside file, atomically (as an attacker would)."""
    staging = root.parent / "staging"
    staging.mkdir(exist_ok=True)
    link = staging / "link"
    link.unlink(missing_ok=True)
    os.symlink(outside / "secret.txt", link)
    os.replace(link, root / name)


def swap_to_file(root: Path, name: str = "victim.txt") -> None:
    staging = root.parent / "staging"
    staging.mkdir(exist_ok=True)
    (staging / "file").write_text(INSIDE * 4)
    os.replace(staging / "file", root / name)


def test_a_file_swapped_after_the_check_is_refused_not_read(layout: tuple[Path, Path]) -> None:
    """The time-of-check/time-of-use window, made deterministic: resolve, swap, then read."""
    root, outside = layout
    engine = ReadEngine(Settings(roots=(root,)))
    location = engine.roots.resolve("victim.txt")
    swap_to_link(root, outside)
    with pytest.raises(OutsideRoots, match="outside the readable roots") as info:
        load_artifact(location)
    assert MARKER not in str(info.value)
    with pytest.raises(OutsideRoots):
        location.digest()  # large files' cards and ranges, binary cards


def test_a_folder_swapped_for_a_symlink_is_not_walked_through(layout: tuple[Path, Path]) -> None:
    root, outside = layout
    (root / "sub").mkdir()
    (root / "sub" / "secret.txt").write_text(INSIDE)
    engine = ReadEngine(Settings(roots=(root,)))
    location = engine.roots.resolve("sub/secret.txt")
    (root / "sub" / "secret.txt").unlink()
    (root / "sub").rmdir()
    os.symlink(outside, root / "sub")
    with pytest.raises(OutsideRoots):
        load_artifact(location)


def test_directory_search_never_reads_a_file_swapped_after_the_walk(layout: tuple[Path, Path]) -> None:
    root, outside = layout
    engine = ReadEngine(Settings(roots=(root,)))
    inventory = engine.inventory(".")
    assert "victim.txt" in {f.path for f in inventory.files}
    swap_to_link(root, outside)
    session = engine.sessions.get("s")
    pack = read_directory(engine, session, inventory, action="focus", intent=Intent(needles=["secret"]), budget=8000)
    assert MARKER not in pack.model_dump_json()


def test_the_marker_never_appears_during_or_after_a_swap_race(layout: tuple[Path, Path]) -> None:
    root, outside = layout
    engine = ReadEngine(Settings(roots=(root,), call_timeout_seconds=3))
    stop = threading.Event()
    swaps = 0

    def swapper() -> None:
        nonlocal swaps
        while not stop.is_set():
            swap_to_link(root, outside)
            swap_to_file(root)
            swaps += 1

    thread = threading.Thread(target=swapper, daemon=True)
    thread.start()
    answers: list[str] = []
    refused = 0

    def answer(n: int, kind: str) -> str:
        if kind == "preview":
            return engine.preview(f"p{n}", "victim.txt").model_dump_json()
        target = "victim.txt" if kind == "file" else "."
        request = ReadRequest(target=target, intent=Intent(needles=["secret"]))
        return engine.read(f"{kind}{n}", request).model_dump_json()

    try:
        for n in range(100):
            for kind in ("preview", "file", "directory"):
                try:
                    answers.append(answer(n, kind))
                except SparsereadError as exc:  # a typed refusal is a correct answer under a race
                    refused += 1
                    answers.append(str(exc))
    finally:
        stop.set()
        thread.join(timeout=30)
    assert not thread.is_alive()
    assert swaps > 0 and len(answers) == 300
    leaked = [a for a in answers if MARKER in a]
    assert not leaked, f"{len(leaked)} of {len(answers)} answers leaked outside text ({refused} refused)"
    # After the race the innocent file is read again from the cache or disk: inside text only, everywhere.
    swap_to_file(root)
    for session in ("after-1", "after-2"):
        pack = engine.read(session, ReadRequest(target="victim.txt", intent=Intent(needles=["secret"])))
        assert "innocent victim" in pack.model_dump_json() and MARKER not in pack.model_dump_json()
    search = engine.read("after-3", ReadRequest(target=".", intent=Intent(needles=["secret"])))
    assert MARKER not in search.model_dump_json()


def test_a_symlink_that_stays_inside_the_root_keeps_working(layout: tuple[Path, Path]) -> None:
    root, _ = layout
    (root / "docs").mkdir()
    (root / "docs" / "real.md").write_text("# Real\n\nINSIDE-LINK-TARGET text\n")
    os.symlink("docs/real.md", root / "relative_link.md")
    os.symlink(root / "docs" / "real.md", root / "absolute_link.md")
    os.symlink("../docs", root / "docs" / "loop_back")  # a folder link that climbs, still inside
    engine = ReadEngine(Settings(roots=(root,)))
    for path in ("relative_link.md", "absolute_link.md", "docs/loop_back/real.md"):
        pack = engine.read("s", ReadRequest(target=path, intent=Intent(needles=["INSIDE-LINK-TARGET"])))
        assert "INSIDE-LINK-TARGET" in pack.model_dump_json()
    # The walk lists an inside file symlink, and the search reads it through the link.
    assert "relative_link.md" in {f.path for f in engine.inventory(".").files}
    search = engine.read("d", ReadRequest(target=".", intent=Intent(needles=["INSIDE-LINK-TARGET"])))
    assert any(i.pointer.startswith("relative_link.md@") for i in search.items)
    # The descriptor walk itself follows inside links (what a swap back to a legitimate link meets).
    descriptor = open_beneath(root, "relative_link.md")
    assert os.read(descriptor, 6) == b"# Real"
    os.close(descriptor)


def test_a_symlink_pointing_outside_is_refused(layout: tuple[Path, Path]) -> None:
    root, outside = layout
    os.symlink(outside / "secret.txt", root / "out.txt")
    os.symlink("../outside/secret.txt", root / "climb.txt")
    engine = ReadEngine(Settings(roots=(root,)))
    for path in ("out.txt", "climb.txt"):
        with pytest.raises(OutsideRoots, match="outside the readable roots"):
            engine.read("s", ReadRequest(target=path))
        with pytest.raises(OutsideRoots, match="outside the readable roots"):
            open_beneath(root, path)
    assert not {"out.txt", "climb.txt"} & {f.path for f in engine.inventory(".").files}
    search = engine.read("d", ReadRequest(target=".", intent=Intent(needles=["secret"])))
    assert MARKER not in search.model_dump_json()


def test_a_symlink_loop_is_a_typed_error(layout: tuple[Path, Path]) -> None:
    root, _ = layout
    os.symlink("b", root / "a")
    os.symlink("a", root / "b")
    with pytest.raises(SparsereadError, match=f"more than {MAX_LINKS} symlinks"):
        open_beneath(root, "a")


def test_a_fifo_swapped_in_is_refused_without_blocking(layout: tuple[Path, Path]) -> None:
    root, _ = layout
    engine = ReadEngine(Settings(roots=(root,)))
    location = engine.roots.resolve("victim.txt")
    (root / "victim.txt").unlink()
    os.mkfifo(root / "victim.txt")
    with pytest.raises(SparsereadError, match="not a regular file"):
        load_artifact(location)


def test_directory_search_skips_files_over_the_size_cap_and_says_so(tmp_path: Path) -> None:
    (tmp_path / "small.txt").write_text("needle-small here\n")
    (tmp_path / "big.log").write_text("needle-big here\n" + "x" * 5000 + "\n")
    engine = ReadEngine(Settings(roots=(tmp_path,), search_max_file_bytes=2048))
    pack = engine.read("s", ReadRequest(target=".", intent=Intent(needles=["needle"])))
    assert [i.pointer.split("@")[0] for i in pack.items] == ["small.txt"]
    assert pack.result is not None and pack.result.left_out is not None
    assert "over 2,048 bytes (SPARSEREAD_SEARCH_MAX_FILE_BYTES" in pack.result.left_out
    assert "1 file: big.log" in pack.result.left_out


def test_a_very_deep_folder_chain_is_cut_not_a_crash(tmp_path: Path) -> None:
    deep = tmp_path
    for _ in range(300):  # past the recursion and descriptor budget a walk could afford per level
        deep = deep / "d"
    deep.mkdir(parents=True)
    (deep / "bottom.txt").write_text("BOTTOM\n")
    (tmp_path / "top.txt").write_text("TOP needle\n")
    engine = ReadEngine(Settings(roots=(tmp_path,)))
    inventory = engine.inventory(".")
    assert inventory.truncated and [f.path for f in inventory.files] == ["top.txt"]
    pack = engine.read("s", ReadRequest(target=".", intent=Intent(needles=["needle"])))
    assert pack.items and pack.items[0].pointer.startswith("top.txt@")


def test_through_the_mcp_client_no_answer_carries_outside_text_during_a_race(layout: tuple[Path, Path]) -> None:
    root, outside = layout
    stop = threading.Event()

    def swapper() -> None:
        while not stop.is_set():
            swap_to_link(root, outside)
            swap_to_file(root)

    texts: list[str] = []

    async def run() -> None:
        with anyio.fail_after(120):  # a hang guard only; each call has its own 3 s limit
            async with Client(create_server(Settings(roots=(root,), call_timeout_seconds=3))) as client:
                for _ in range(40):
                    for args in (
                        {"target": ".", "intent": {"needles": ["secret"]}},
                        {"target": "victim.txt", "intent": {"needles": ["secret"]}},
                    ):
                        result = await client.call_tool("sro_read", args)
                        texts.append(str(answer_record(result)) + str(result.content))
                stop.set()
                # The swapper finishes its last swap before the file is put back: two swaps at once could
                # leave the link in place for the read below.
                await anyio.to_thread.run_sync(thread.join)
                swap_to_file(root)
                after = await client.call_tool("sro_read", {"target": "victim.txt", "intent": {"needles": ["secret"]}})
                assert not after.is_error and answer_record(after) is not None
                # The session already holds this small file whole: it names the matches; its version is
                # the inside bytes, from whichever cache served it.
                inside = hashlib.sha256((INSIDE * 4).encode()).hexdigest()
                record = answer_record(after)
                named = [*record.get("already_delivered", []), *(i["pointer"] for i in record.get("items", []))]
                episode = record.get("episode", {})  # a later answer of an episode does not name it again
                # The episode names the version, unless the pointers already do (they carry 12 digits).
                versions = {episode["artifact"]["fingerprint"]} if "artifact" in episode else set()
                versions |= {p.split("@sha256:", 1)[1].split("#", 1)[0] for p in named}
                assert versions == {inside[:12]}
                texts.append(str(answer_record(after)))

    thread = threading.Thread(target=swapper, daemon=True)
    thread.start()
    try:
        anyio.run(run)
    finally:
        stop.set()
        thread.join(timeout=30)
    assert len(texts) == 81 and not [t for t in texts if MARKER in t]


def test_a_shared_parse_cache_inside_a_root_is_refused(tmp_path: Path) -> None:
    """Its entries are pickles: a file planted under a root must never be loaded as one."""
    roots = Roots((tmp_path,))
    with pytest.raises(ConfigError, match="SPARSEREAD_CACHE_DIR outside the roots"):
        IndexCache(tmp_path / "cache", roots=roots)
    IndexCache(tmp_path.parent / f"{tmp_path.name}-cache", roots=roots)  # beside the root is fine
