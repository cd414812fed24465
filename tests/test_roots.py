"""Nothing outside the roots is ever read or revealed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from sparseread_mcp import OutsideRoots, ReadEngine, ReadRequest, Settings
from sparseread_mcp.errors import IntentError, UnsupportedArtifact


@pytest.fixture
def layout(tmp_path: Path) -> tuple[Path, Path]:
    root = tmp_path / "data"
    sibling = tmp_path / "data2"
    root.mkdir()
    sibling.mkdir()
    (root / "inside.md").write_text("# Inside\n\nreadable text\n")
    (sibling / "secret.md").write_text("SIBLING-SECRET-4417\n")
    (tmp_path / "outside.md").write_text("OUTSIDE-SECRET-9921\n")
    return root, tmp_path


def escapes(root: Path, base: Path) -> list[str]:
    return [
        "../outside.md",
        "../data2/secret.md",
        "sub/../../outside.md",
        str(base / "outside.md"),
        str(base / "data2" / "secret.md"),
        "link_out.md",
        "linkdir/secret.md",
    ]


@pytest.fixture
def engine_with_links(layout: tuple[Path, Path]) -> tuple[ReadEngine, Path, Path]:
    root, base = layout
    os.symlink(base / "outside.md", root / "link_out.md")
    os.symlink(base / "data2", root / "linkdir")
    (root / "sub").mkdir()
    return ReadEngine(Settings(roots=(root,))), root, base


def test_every_escape_is_refused_before_reading(engine_with_links: tuple[ReadEngine, Path, Path]) -> None:
    engine, root, base = engine_with_links
    for path in escapes(root, base):
        with pytest.raises(OutsideRoots, match="outside the readable roots") as info:
            engine.read("s", ReadRequest(target=path, intent=None))
        assert "SECRET" not in str(info.value)
        with pytest.raises(OutsideRoots):
            engine.preview("s", path)


def test_sibling_prefix_is_not_inside(layout: tuple[Path, Path]) -> None:
    root, base = layout
    engine = ReadEngine(Settings(roots=(root,)))
    assert not engine.roots.contains(base / "data2" / "secret.md")
    assert engine.roots.contains(root / "inside.md")


def test_symlink_inside_the_root_is_allowed(layout: tuple[Path, Path]) -> None:
    root, _ = layout
    os.symlink(root / "inside.md", root / "alias.md")
    engine = ReadEngine(Settings(roots=(root,)))
    pack = engine.read("s", ReadRequest(target="alias.md", view="full"))
    assert pack.items[0].text.startswith("# Inside")
    assert pack.episode.artifact.path == "inside.md"  # relative to the root, resolved


def test_results_show_paths_relative_to_the_root(layout: tuple[Path, Path]) -> None:
    root, _ = layout
    engine = ReadEngine(Settings(roots=(root,)))
    pack = engine.read("s", ReadRequest(target=str(root / "inside.md"), view="full"))
    assert pack.episode.artifact.path == "inside.md"
    assert str(root) not in pack.model_dump_json()


def test_missing_file_and_directory_get_clear_errors(layout: tuple[Path, Path]) -> None:
    root, _ = layout
    (root / "folder").mkdir()
    engine = ReadEngine(Settings(roots=(root,)))
    with pytest.raises(UnsupportedArtifact, match="no such file"):
        engine.read("s", ReadRequest(target="nope.md"))
    with pytest.raises(IntentError, match="is a directory"):
        engine.read("s", ReadRequest(target="folder"))
