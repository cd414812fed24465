"""A directory index kept as flat rows: a rebuild that reuses rows answers as one built from scratch,
the index in memory is what the next build reuses, and saved rows that do not fit together are refused."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from counted_reads import count_reads

from sparseread_mcp.config import Settings
from sparseread_mcp.directory import fileindex
from sparseread_mcp.directory.fileindex import FileIndex, Known, load_saved
from sparseread_mcp.engine import ReadEngine, ReadRequest
from sparseread_mcp.models import Intent

QUERIES = (["rotat", "quaternion"], ["ccode", "sinc"], ["valu", "helper"], ["=rotate_quaternion"], ["unrelat"])


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "printer.py").write_text(
        "def ccode(expr):\n    return CodePrinter().doprint(expr)\n\nclass CodePrinter:\n    pass\n"
    )
    (root / "pkg" / "functions.py").write_text("def sinc(x):\n    return x\n\n\ndef Sinc(x):\n    return x\n")
    (root / "pkg" / "util.py").write_text("def helper(value):\n    return value + 1\n" * 3)
    for n in range(8):
        (root / "pkg" / f"other{n}.py").write_text(f"def unrelated_{n}(a):\n    return a * {n}\n")
    return root


def _engine(root: Path, cache: Path, **extra: object) -> ReadEngine:
    return ReadEngine(Settings(roots=(root,), cache_dir=cache, **extra))  # type: ignore[arg-type]


def _build(engine: ReadEngine, known: Known | None = None) -> FileIndex:
    inventory = engine.inventory(".")
    return FileIndex.build(engine.roots.resolve("."), inventory.files, known)


def _same(one: FileIndex, other: FileIndex) -> None:
    assert [f.path for f in one.files] == [f.path for f in other.files]
    for query in QUERIES:
        assert np.allclose(one.bm25(query), other.bm25(query)), query
        assert one.document_frequency(query[0]) == other.document_frequency(query[0])
    for name in ("ccode", "sinc", "Sinc", "SINC", "CodePrinter", "codeprinter", "rotate_quaternion", "unrelated_5"):
        assert one.defined(name) == other.defined(name), name
        assert one.defined_any_case(name) == other.defined_any_case(name), name


def test_a_rebuild_that_reuses_rows_answers_as_one_built_from_scratch(repo: Path, tmp_path: Path) -> None:
    engine = _engine(repo, tmp_path / "cache")
    before = _build(engine)
    changed = repo / "pkg" / "other3.py"
    changed.write_text("def rotate_quaternion(q):\n    return q\n")
    os.utime(changed, ns=(1, 1))
    (repo / "pkg" / "other5.py").unlink()  # its words (unrelated_5) leave with it
    (repo / "pkg" / "quaternions.py").write_text("def rotate(q):\n    return q  # rotate a quaternion\n")
    reused = _build(engine, Known.of(before))
    scratch = _build(engine)
    _same(reused, scratch)
    assert "=unrelated_5" not in reused.vocab and "=unrelated_5" in before.vocab
    assert before.bm25(["rotat"]).max() == 0  # the earlier index is left as it was
    rows = reused.rows()  # what is saved: each file's own terms
    row = [f.path for f in reused.files].index("pkg/other3.py")
    mine = {rows.words[t] for t in rows.term_ids[rows.ptr[row] : rows.ptr[row + 1]]}
    assert "=rotate_quaternion" in mine and "=unrelated_3" not in mine


def test_a_change_in_the_same_session_rereads_one_file_and_reuses_the_index_in_memory(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine = _engine(repo, tmp_path / "cache")
    engine.read("s", ReadRequest(target=".", intent=Intent(goal="ccode output")))
    store = engine.repo_indexes
    assert store is not None
    loads = store.loads
    changed = repo / "pkg" / "other3.py"
    changed.write_text("def rotate_quaternion(q):\n    return q\n")
    os.utime(changed, ns=(1, 1))
    reads = count_reads(engine, monkeypatch)
    pack = engine.read("s2", ReadRequest(target=".", intent=Intent(goal="rotate_quaternion is slow")))
    assert reads == ["pkg/other3.py"]
    assert store.loads == loads  # the index in memory was reused, not the stored one read back
    assert pack.result is not None and pack.result.rows and pack.result.rows[0][0] == "pkg/other3.py"


def test_an_index_too_large_for_the_cache_is_read_back_each_call_and_answers_the_same(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine = _engine(repo, tmp_path / "cache")
    monkeypatch.setattr(fileindex.FileIndex, "approx_bytes", property(lambda self: 10**12))
    goal = Intent(goal="ccode of an expression")
    first = engine.read("s", ReadRequest(target=".", intent=goal))
    store = engine.repo_indexes
    assert store is not None
    loads = store.loads
    second = engine.read("s2", ReadRequest(target=".", intent=goal))
    assert store.loads == loads + 1 and store.saves == 1  # read back, nothing changed, nothing saved again
    assert [i.pointer for i in first.items] == [i.pointer for i in second.items]


def test_a_new_session_on_a_stored_index_reads_its_rows_once(repo: Path, tmp_path: Path) -> None:
    """Before: a new process read the whole stored index twice, once for the file types its walk needs and
    once for the rows (0.5 s each at 28,000 files). The files are saved alone too, and the walk reads them."""
    cache = tmp_path / "cache"
    goal = Intent(goal="ccode of an expression")
    first = _engine(repo, cache).read("s", ReadRequest(target=".", intent=goal))
    fresh = _engine(repo, cache)
    second = fresh.read("s", ReadRequest(target=".", intent=goal))
    store = fresh.repo_indexes
    assert store is not None and store.loads == 1 and store.saves == 0
    assert [i.pointer for i in first.items] == [i.pointer for i in second.items]


def test_an_index_saved_before_the_files_had_a_member_of_their_own_still_loads(repo: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    goal = Intent(goal="ccode of an expression")
    first = _engine(repo, cache).read("s", ReadRequest(target=".", intent=goal))
    (path,) = (cache / "repoindex").glob("*.npz")
    with np.load(path, allow_pickle=False) as stored:
        arrays = {key: stored[key] for key in stored.files if key != "files"}
    buffer = io.BytesIO()
    np.savez_compressed(buffer, **arrays)
    path.write_bytes(buffer.getvalue())
    fresh = _engine(repo, cache)
    second = fresh.read("s", ReadRequest(target=".", intent=goal))
    assert fresh.repo_indexes is not None and fresh.repo_indexes.saves == 0  # its rows were reused
    assert [i.pointer for i in first.items] == [i.pointer for i in second.items]


def _resave(path: Path, **changes: Any) -> None:
    with np.load(path, allow_pickle=False) as stored:
        arrays = {key: stored[key] for key in stored.files}
    arrays.update(changes)
    buffer = io.BytesIO()
    np.savez_compressed(buffer, **arrays)
    path.write_bytes(buffer.getvalue())


@pytest.mark.parametrize("damage", ["term id past the vocabulary", "offsets past the entries", "offsets backwards"])
def test_saved_rows_that_do_not_fit_together_are_refused_and_rebuilt(repo: Path, tmp_path: Path, damage: str) -> None:
    cache = tmp_path / "cache"
    _engine(repo, cache).read("s", ReadRequest(target=".", intent=Intent(goal="ccode")))
    (path,) = (cache / "repoindex").glob("*.npz")
    known = load_saved(path)
    assert known is not None and known.saved is not None
    rows = known.saved
    if damage == "term id past the vocabulary":
        _resave(path, term_ids=np.full_like(rows.term_ids, len(rows.words) + 5))
    elif damage == "offsets past the entries":
        _resave(path, indptr=rows.ptr * 3)
    else:
        _resave(path, indptr=rows.ptr[::-1].copy())
    assert load_saved(path) is None
    pack = _engine(repo, cache).read("s", ReadRequest(target=".", intent=Intent(goal="ccode(x) is wrong")))
    assert pack.result is not None and pack.result.rows and pack.result.rows[0][0] == "pkg/printer.py"
    header = json.loads(bytes(np.load(path, allow_pickle=False)["header"]).decode())
    assert len(header["files"]) == 11  # rebuilt and saved whole again
