"""The file-ranking rules of issue #33, through the MCP client: a code name inside a module's name, a
test folder named after its module, code names that no file writes like code, the reporter's own files
and other modules' attributes read as words, and signals scaled by the best source rather than by a
test that repeats a name."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from flow import answer_record
from hypothesis import given
from hypothesis import strategies as st
from mcp import Client

from sparseread_mcp import Settings
from sparseread_mcp.directory.filenames import MIN_PART, ModuleParts, stems, subjects
from sparseread_mcp.serve.server import create_server

pytestmark = pytest.mark.anyio


def write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def unrelated(count: int) -> dict[str, str]:
    return {f"src/pkg/other{n}.py": f"def other_{n}(value):\n    return value * {n}\n" for n in range(count)}


async def ranking(root: Path, tmp_path: Path, goal: str) -> list[tuple[str, str]]:
    """(path, why) of the ranking table a directory focus returns."""
    server = create_server(Settings(roots=(root,), cache_dir=tmp_path / "cache"))
    with anyio.fail_after(120):
        async with Client(server) as client:
            result = await client.call_tool("sro_read", {"target": ".", "intent": {"goal": goal}})
    assert not result.is_error, result
    body: Any = answer_record(result)
    return [(str(path), str(why)) for path, why in body["result"]["rows"]]


async def test_a_code_name_inside_a_module_name_finds_that_module(tmp_path: Path) -> None:
    root = write(
        tmp_path / "repo",
        {
            "src/pkg/saferepr.py": "def saferepr(obj):\n    return object.__repr__(obj)\n",
            "src/pkg/reports.py": "class Report:\n    def __repr__(self):\n        return '<Report>'\n",
            "src/pkg/errors.py": "# an exception in the session\n",
            **unrelated(8),
        },
    )
    goal = "INTERNALERROR when exception in __repr__\n```python\nclass SomeClass:\n"
    goal += "    def __repr__(self):\n        raise\n```"
    rows = await ranking(root, tmp_path, goal)
    paths, why = [path for path, _ in rows], dict(rows)
    assert paths.index("src/pkg/saferepr.py") < paths.index("src/pkg/errors.py"), rows
    assert "module name holds __repr__" in why["src/pkg/saferepr.py"]


async def test_a_test_folder_named_after_a_module_points_at_that_module(tmp_path: Path) -> None:
    root = write(
        tmp_path / "repo",
        {
            "src/pkg/python.py": "def collect_module(path):\n    return load(path)\n",
            "src/pkg/printer.py": "def show(text):\n    return text  # handling\n",
            # The words are in the tests of python.py, kept in a folder named after it.
            "testing/python/collect.py": (
                "def test_skip_at_module_level_is_handled():\n"
                "    # skipping a whole module at module level must be handled before its import fails\n"
                "    assert module_level_skip_handled()\n"
            ),
            **unrelated(6),
        },
    )
    rows = await ranking(root, tmp_path, "Improve handling of skip at module level")
    assert rows[0][0] == "src/pkg/python.py", rows
    assert "tested by testing/python/collect.py" in rows[0][1]
    paths = [path for path, _ in rows]
    assert paths.index("src/pkg/python.py") < paths.index("testing/python/collect.py")


async def test_a_code_name_no_file_writes_like_code_still_counts_its_uses(tmp_path: Path) -> None:
    root = write(
        tmp_path / "repo",
        {
            "src/pkg/nodes.py": "import os\n\n\ndef location(node):\n    return os.path.relpath(node, os.getcwd())\n",
            "src/pkg/paths.py": "def wrong_path(path):\n    return path  # a path shown relative to a directory\n",
            **unrelated(6),
        },
    )
    goal = "Wrong path shown when a fixture changes directory\n```python\nold = os.getcwd()\nos.chdir(out)\n```"
    rows = await ranking(root, tmp_path, goal)
    why = dict(rows)
    assert "uses os.getcwd" in why["src/pkg/nodes.py"], rows


async def test_an_attribute_of_a_module_the_tree_lacks_is_not_this_trees_definition(tmp_path: Path) -> None:
    root = write(
        tmp_path / "repo",
        {
            # `os.chdir` in the goal is the standard library's; `monkeypatch.chdir` is this tree's.
            "src/pkg/pytester.py": "class Pytester:\n    def chdir(self):\n        return None\n",
            "src/pkg/monkeypatch.py": "class MonkeyPatch:\n    def setenv(self, name):\n        return name\n",
            **unrelated(6),
        },
    )
    rows = await ranking(root, tmp_path, "The directory is wrong after os.chdir(out) in a fixture")
    assert not any("defines chdir" in why for _, why in rows), rows
    rows = await ranking(root, tmp_path, "The directory is wrong after monkeypatch.chdir(out) in a fixture")
    assert "defines chdir" in dict(rows)["src/pkg/pytester.py"], rows


async def test_names_of_the_reporters_own_files_are_read_as_words_not_as_this_trees_code(tmp_path: Path) -> None:
    root = write(
        tmp_path / "repo",
        {
            "src/pkg/outcomes.py": "def skip(msg, allow_module_level=False):\n    raise Skipped(allow_module_level)\n",
            "src/pkg/python.py": "def import_module(self):\n    if exc.allow_module_level:\n        raise\n",
            # Uses a name that happens to be the reporter's file name, many times.
            "src/pkg/rewrite.py": "".join(f"pos_only = args.pos_only  # {n}\n" for n in range(20)),
            **unrelated(6),
        },
    )
    goal = (
        "Skip at module level\n`pos_only.py` uses new syntax:\n```python\n"
        "skip(msg='old', allow_module_level=True)\nfrom pos_only import *\n```"
    )
    rows = await ranking(root, tmp_path, goal)
    paths = [path for path, _ in rows]
    assert not any("uses pos_only" in why for _, why in rows), rows
    assert "src/pkg/rewrite.py" not in paths[:2], rows


async def test_a_test_that_repeats_an_option_does_not_outrank_the_source_that_defines_it(tmp_path: Path) -> None:
    root = write(
        tmp_path / "repo",
        {
            "src/pkg/main.py": 'def options(group):\n    group.addoption("--collectonly", "--collect-only")\n',
            "src/pkg/argparsing.py": "# the command line: each argument, its char\n",
            # Sixty uses of the option: scaled by this file's uses, main.py's one use would count for little.
            "testing/test_collection.py": "".join(
                f'def test_{n}(run):\n    run("--collect-only", "--collect-only")\n' for n in range(30)
            ),
            **unrelated(6),
        },
    )
    goal = "pytest --collect-only needs a one char shortcut command\nI run `--collect-only` very often"
    rows = await ranking(root, tmp_path, goal)
    paths = [path for path, _ in rows]
    assert paths.index("src/pkg/main.py") < paths.index("testing/test_collection.py"), rows
    assert "uses --collect-only" in dict(rows)["src/pkg/main.py"]


def test_path_rules_module_pieces_and_test_folders() -> None:
    paths = ["src/pkg/_io/saferepr.py", "src/pkg/python.py", "src/pkg/_code/__init__.py", "testing/python/collect.py"]
    paths += ["testing/code/test_excinfo.py", "testing/io/test_wcwidth.py", "testing/test_unrelated.py"]
    parts = ModuleParts(stems(paths))
    assert parts.get("repr") == [0] and parts.get("safe") == [0] and parts.get("python") == []
    found = subjects(paths)
    assert found[3] == [1]  # testing/python/collect.py tests python.py
    assert 4 not in found  # test_excinfo names no source; its folder `code` is not looked at then
    assert 3 not in subjects(paths, folders=False)


def _every_piece(modules: dict[str, list[int]]) -> dict[str, list[int]]:
    """Every head and tail of every module name, listed (what ModuleParts answers without listing them)."""
    out: dict[str, set[int]] = {}
    for stem, files in modules.items():
        for cut in range(MIN_PART, len(stem) - MIN_PART + 1):
            for piece in (stem[:cut].strip("_"), stem[cut:].strip("_")):
                if len(piece) >= MIN_PART:
                    out.setdefault(piece, set()).update(files)
    return {piece: sorted(files) for piece, files in out.items()}


@given(
    st.dictionaries(
        st.text(alphabet="ab_cr", min_size=1, max_size=12), st.lists(st.integers(0, 40), min_size=1, max_size=3)
    ),
    st.text(alphabet="ab_cr", max_size=8),
)
def test_a_module_name_piece_finds_the_modules_whose_names_hold_it(modules: dict[str, list[int]], other: str) -> None:
    listed = _every_piece(modules)
    parts = ModuleParts(modules)
    for piece in [*listed, other, other.strip("_")]:
        assert parts.get(piece) == listed.get(piece, []), piece
