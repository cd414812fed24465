"""Reading a code repository: files ranked by what code has, symbol bodies, and the index kept on disk."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from counted_reads import count_reads

from sparseread_mcp.config import Settings
from sparseread_mcp.directory import fileindex, filenames, filerank
from sparseread_mcp.directory.filerank import goal_cues
from sparseread_mcp.engine import ReadEngine, ReadRequest
from sparseread_mcp.models import Intent

PRINTER = '''"""Printers."""


def ccode(expr, assign_to=None):
    """C code for an expression."""
    printer = CodePrinter()
    return printer.doprint(expr, assign_to)


class CodePrinter:
    def doprint(self, expr, assign_to):
        return str(expr)
'''


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "src" / "pkg").mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "docs").mkdir()
    (root / "src" / "pkg" / "printer.py").write_text(PRINTER)
    (root / "src" / "pkg" / "functions.py").write_text("def sinc(x):\n    return x\n\n\ndef cos(x):\n    return x\n")
    (root / "src" / "pkg" / "util.py").write_text("def helper(value):\n    return value + 1\n\n" * 3)
    # Tests and docs repeat the goal's words many times: passage BM25 alone would rank them first.
    (root / "tests" / "test_printer.py").write_text(
        "".join(f"def test_ccode_sinc_{n}():\n    assert ccode(sinc(x)) == 'sinc ccode'\n\n" for n in range(30))
    )
    (root / "docs" / "printing.md").write_text("# ccode\n\nccode prints sinc. ccode sinc ccode sinc.\n" * 20)
    for n in range(12):
        (root / "src" / "pkg" / f"other{n}.py").write_text(f"def unrelated_{n}(a):\n    return a * {n}\n")
    return root


def _engine(root: Path, cache: Path, **extra: object) -> ReadEngine:
    return ReadEngine(Settings(roots=(root,), cache_dir=cache, **extra))  # type: ignore[arg-type]


def test_the_file_that_defines_the_named_function_ranks_above_tests_and_docs_that_repeat_it(
    repo: Path, tmp_path: Path
) -> None:
    engine = _engine(repo, tmp_path / "cache")
    pack = engine.read("s", ReadRequest(target=".", intent=Intent(goal="ccode(sinc(x)) prints the wrong C code")))
    assert pack.result is not None and pack.result.rows
    top, why = pack.result.rows[0]
    assert top == "src/pkg/printer.py" and "defines ccode L4" in str(why)
    ranked = [row[0] for row in pack.result.rows]
    assert ranked.index("src/pkg/functions.py") < ranked.index("tests/test_printer.py")
    first = pack.items[0]
    assert first.pointer.startswith("src/pkg/printer.py@") and first.text.startswith("def ccode(")
    assert first.lines == (4, 7)  # the function's body, whole, not the file


def test_a_project_whose_built_docs_outnumber_its_sources_is_still_read_as_code(tmp_path: Path) -> None:
    """1,000 pages of built documentation beside 120 modules (scikit-learn 0.20's sdist has that shape): the
    goal's function is found by the code ranking, its defining module first, not by words in the pages."""
    root = tmp_path / "project"
    (root / "pkg").mkdir(parents=True)
    (root / "docs" / "_build").mkdir(parents=True)
    for n in range(120):
        (root / "pkg" / f"module{n}.py").write_text(f"def helper{n}(values):\n    return sorted(values)\n")
    (root / "pkg" / "label.py").write_text("def transform(labels):\n    return [str(x) for x in labels]\n")
    for n in range(1_000):
        (root / "docs" / "_build" / f"page{n}.html").write_text(
            f"<p>Page {n}: the transform of labels, see the label encoder and its transform of empty lists.</p>"
        )
    engine = _engine(root, tmp_path / "cache")
    pack = engine.read("s", ReadRequest(target=".", intent=Intent(goal="transform(labels) fails for empty lists")))
    assert pack.result is not None and pack.result.rows, "no ranked-file table: the tree was not read as code"
    assert pack.result.rows[0][0] == "pkg/label.py"
    assert "defines transform" in str(pack.result.rows[0][1])


def test_a_traceback_line_names_the_file_and_its_function(repo: Path, tmp_path: Path) -> None:
    goal = 'Traceback:\n  File "/usr/lib/python3/site-packages/pkg/util.py", line 2, in helper\nTypeError'
    assert goal_cues(goal).lines == {"/usr/lib/python3/site-packages/pkg/util.py": 2}
    pack = _engine(repo, tmp_path / "cache").read("s", ReadRequest(target=".", intent=Intent(goal=goal)))
    assert pack.result is not None and pack.result.rows
    assert pack.result.rows[0][0] == "src/pkg/util.py" and "path" in str(pack.result.rows[0][1])
    assert pack.items[0].pointer.startswith("src/pkg/util.py@") and "def helper" in pack.items[0].text


def test_refine_continues_down_the_ranking_without_resending(repo: Path, tmp_path: Path) -> None:
    engine = _engine(repo, tmp_path / "cache")
    intent = Intent(goal="ccode(sinc(x)) prints the wrong C code")
    first = engine.read("s", ReadRequest(target=".", intent=intent, budget_tokens=600))
    assert first.cursor is not None and first.result is not None
    second = engine.read("s", ReadRequest(target=".", cursor=first.cursor, budget_tokens=600))
    assert second.items and second.result is None  # the ranking table is not sent again
    assert not {i.pointer for i in first.items} & {i.pointer for i in second.items}


def test_a_new_session_starts_from_the_stored_index_and_rereads_only_a_changed_file(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "cache"
    _engine(repo, cache).read("s", ReadRequest(target=".", intent=Intent(goal="ccode output")))
    assert list((cache / "repoindex").glob("*.npz"))
    changed = repo / "src" / "pkg" / "other3.py"
    changed.write_text("def rotate_quaternion(q):\n    return q\n")
    os.utime(changed, ns=(1, 1))  # a different mtime whatever the clock's resolution
    engine = _engine(repo, cache)  # a new session: nothing in memory
    reads = count_reads(engine, monkeypatch)
    pack = engine.read("s", ReadRequest(target=".", intent=Intent(goal="rotate_quaternion is slow")))
    assert reads == ["src/pkg/other3.py"]
    assert pack.result is not None and pack.result.rows and pack.result.rows[0][0] == "src/pkg/other3.py"
    assert "def rotate_quaternion" in pack.items[0].text


def test_a_damaged_stored_index_is_rebuilt_not_trusted(repo: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    _engine(repo, cache).read("s", ReadRequest(target=".", intent=Intent(goal="ccode")))
    for stored in (cache / "repoindex").glob("*.npz"):
        stored.write_bytes(b"PK\x03\x04 not a real archive")
    pack = _engine(repo, cache).read("s", ReadRequest(target=".", intent=Intent(goal="ccode(x) is wrong")))
    assert pack.result is not None and pack.result.rows and pack.result.rows[0][0] == "src/pkg/printer.py"


def test_stored_indexes_past_the_limit_are_pruned_oldest_first(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from sparseread_mcp.directory import repoindex

    monkeypatch.setattr(repoindex, "MAX_STORED", 2)
    cache = tmp_path / "cache"
    for n in range(4):
        folder = tmp_path / f"r{n}"
        folder.mkdir()
        (folder / "a.py").write_text(f"def f{n}():\n    return {n}\n")
        _engine(folder, cache).read("s", ReadRequest(target=".", intent=Intent(goal=f"f{n}")))
        for stored in (cache / "repoindex").glob("*.npz"):  # older ones look older, whatever the clock
            os.utime(stored, (os.stat(stored).st_mtime - 10,) * 2)
    assert len(list((cache / "repoindex").glob("*.npz"))) == 2


def test_no_index_is_kept_when_the_cache_directory_is_inside_a_root(repo: Path) -> None:
    engine = _engine(repo, repo / ".cache-inside")
    assert engine.repo_indexes is None
    engine.read("s", ReadRequest(target=".", intent=Intent(goal="ccode")))
    assert not (repo / ".cache-inside").exists()


def test_goal_cues_tell_code_names_from_words() -> None:
    cues = goal_cues("Blueprint names: `add_url_rule` fails, flask.blueprints.Blueprint() and --collect-only")
    assert cues.names["add_url_rule"] and cues.names["--collect-only"] and cues.names["Blueprint"]
    assert cues.names["names"] is False and cues.names["flask"] is False  # a package, not what is called
    assert "flask/blueprints/Blueprint.py" in cues.paths and "Blueprint" in cues.title


def _vendored_repo(root: Path) -> Path:
    """A project with a copy of another project inside its package (the requests/urllib3 shape)."""
    (root / "client" / "packages" / "netlib" / "util").mkdir(parents=True)
    (root / "client" / "__init__.py").write_text('__version__ = "2.0"\n')  # the project's own release
    (root / "client" / "packages" / "__init__.py").write_text("")
    copy = root / "client" / "packages" / "netlib"
    (copy / "__init__.py").write_text('__author__ = "someone else"\n__version__ = "1.10"\n')
    (copy / "util" / "__init__.py").write_text("")  # a sub-package of the copy, no release of its own
    for n in range(6):
        (copy / f"pool{n}.py").write_text(
            "class ReadTimeoutError(Exception):\n    pass\n\n\n"
            + "def urlopen(retries):\n    raise ReadTimeoutError('read timeout')\n" * 3
        )
    (root / "client" / "adapters.py").write_text(
        "from .packages.netlib.pool0 import ReadTimeoutError\n\n\n"
        "def send(request):\n    try:\n        return request()\n    except ReadTimeoutError:\n        raise\n"
    )
    (root / "client" / "sessions.py").write_text("def get(url):\n    return url\n")
    return root


def test_a_vendored_copy_is_found_by_structure_and_collapsed_to_one_row(tmp_path: Path) -> None:
    root = _vendored_repo(tmp_path / "repo")
    engine = _engine(root, tmp_path / "cache")
    index = engine.file_index(engine.inventory("."))
    assert index.vendored_roots == ("client/packages/netlib",)  # not client/ (no parent package), not util/
    pack = engine.read("s", ReadRequest(target=".", intent=Intent(goal="ReadTimeoutError from urlopen leaks")))
    assert pack.result is not None and pack.result.rows
    rows = [str(row[0]) for row in pack.result.rows]
    copies = [r for r in rows if r.startswith("client/packages/netlib/")]
    assert len(copies) == 1, rows  # six matching copies, one row
    assert "vendored copy client/packages/netlib/" in str(pack.result.rows[rows.index(copies[0])][1])
    assert rows.index("client/adapters.py") < rows.index(copies[0])


def test_a_licence_file_marks_a_nested_package_as_vendored_but_a_top_package_never(tmp_path: Path) -> None:
    paths = [
        "app/__init__.py",
        "app/LICENSE",
        "app/_vendor/__init__.py",
        "app/_vendor/six/__init__.py",
        "app/_vendor/six/LICENSE.txt",
        "app/_vendor/six/moves.py",
        "app/core/__init__.py",
        "app/core/io.py",
    ]
    assert fileindex.vendored_roots(paths, set()) == ("app/_vendor/six",)
    assert set(fileindex.vendored_roots(paths, {"app/core/__init__.py"})) == {"app/_vendor/six", "app/core"}


def test_fusion_modes_add_the_signals_as_documented() -> None:
    values = {name: np.zeros(3) for name in filerank.SIGNALS}
    values["bm25"] = np.array([4.0, 2.0, 0.0])
    values["define"] = np.array([0.0, 3.0, 1.0])
    normalized = filerank.fuse(values, filerank.Weights(bm25=1.0))
    assert normalized.tolist() == pytest.approx([1.0, 0.5 + 1.0, 1 / 3])
    weighted = filerank.fuse(values, filerank.Weights(fusion="weighted", bm25=1.0, define=2.0))
    assert weighted.tolist() == pytest.approx([1.0, 0.5 + 6.0, 2.0])
    rrf = filerank.fuse(values, filerank.Weights(fusion="rrf", bm25=1.0, rrf_k=1.0))
    assert rrf.tolist() == pytest.approx([1 / 2, 1 / 3 + 1 / 2, 1 / 3])
    assert filerank.Weights().scaled("define", 2.0).define == 2.0


def test_the_goal_title_is_a_signal_of_its_own() -> None:
    cues = goal_cues("Module imported twice under import-mode\n\npip list:\naiohttp 3.6\nalabaster 0.7")
    assert {"module", "import", "twice"} <= set(cues.title_terms)
    assert not {"aiohttp", "alabaster"} & set(cues.title_terms)


def test_tests_name_the_sources_they_test() -> None:
    paths = [
        "src/pkg/_code/source.py",
        "src/pkg/assertion/rewrite.py",
        "src/pkg/codec.py",
        "testing/code/test_source.py",
        "testing/test_assertrewrite.py",
        "tests/codec_test.py",
        "testing/conftest.py",
        "testing/test_unrelated.py",
    ]
    assert filenames.subjects(paths) == {3: [0], 4: [1], 5: [2]}


def test_a_source_whose_tests_match_the_goal_ranks_above_one_that_only_shares_a_word(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    (root / "src" / "lib").mkdir(parents=True)
    (root / "testing").mkdir()
    # The fix belongs in statement.py: the words are in its tests, not in its own text.
    (root / "src" / "lib" / "statement.py").write_text("def get_range(node):\n    return node.lineno, node.end\n")
    (root / "testing" / "test_statement.py").write_text(
        "def test_decorator_lines_are_not_printed_with_the_failing_assert():\n"
        "    assert decorator_lines(printed_assert()) == []  # extra decorator line printed after a failing assert\n"
    )
    (root / "src" / "lib" / "printer.py").write_text("def show(text):\n    return text  # printed\n")
    for n in range(6):
        (root / "src" / "lib" / f"other{n}.py").write_text(f"def other{n}(a):\n    return a\n")
    goal = "An extra decorator line is printed after a failing assert"
    pack = _engine(root, tmp_path / "cache").read("s", ReadRequest(target=".", intent=Intent(goal=goal)))
    assert pack.result is not None and pack.result.rows
    rows = [str(r[0]) for r in pack.result.rows]
    assert rows[0] == "src/lib/statement.py", rows
    assert "tested by testing/test_statement.py" in str(pack.result.rows[0][1])
    assert rows.index("src/lib/statement.py") < rows.index("testing/test_statement.py")
