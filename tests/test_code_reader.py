"""Code: symbols from tree-sitter for every supported language, symbol targets, the compact view."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import FIXTURES, source_at

from sparseread_mcp import IntentError, ReadEngine, ReadRequest, Settings
from sparseread_mcp.models import Intent

CODE = FIXTURES / "code"

# (file, language, outline titles that must appear, symbol to read, marker inside it)
VECTORS = [
    (
        "store.py",
        "python",
        ["Store", "Store.__init__", "Store.size", "Store.load", "helper"],
        "Store.load",
        "LOAD-MARK-PY",
    ),
    ("store.js", "javascript", ["Store", "Store.load", "helper", "main"], "Store.load", "LOAD-MARK-JS"),
    ("store.ts", "typescript", ["Loader", "Store", "Store.load", "helper"], "Store.load", "LOAD-MARK-TS"),
    ("view.tsx", "tsx", ["Store", "Store.load", "helper"], "Store.load", "LOAD-MARK-TSX"),
    ("store.go", "go", ["Store", "Store.Load", "Helper"], "Store.Load", "LOAD-MARK-GO"),
    ("store.rs", "rust", ["Store", "Store.load", "helper"], "Store.load", "LOAD-MARK-RS"),
    ("Store.java", "java", ["Store", "Store.load"], "Store.load", "LOAD-MARK-JAVA"),
    ("store.c", "c", ["Store", "load", "helper"], "load", "LOAD-MARK-C"),
    ("store.cpp", "cpp", ["kv", "kv.Store", "kv.Store.load", "helper"], "kv.Store.load", "LOAD-MARK-CPP"),
    ("Store.cs", "c_sharp", ["Kv", "Kv.Store", "Kv.Store.Load"], "Kv.Store.Load", "LOAD-MARK-CS"),
    ("store.rb", "ruby", ["Kv", "Kv.Store", "Kv.Store.load", "helper"], "Kv.Store.load", "LOAD-MARK-RB"),
    ("store.php", "php", ["Store", "Store.load", "helper"], "Store.load", "LOAD-MARK-PHP"),
    ("store.sh", "bash", ["load", "helper"], "load", "LOAD-MARK-SH"),
]


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> ReadEngine:
    """The fixtures, padded with trailing comments so that a symbol is much smaller than the file."""
    root = tmp_path_factory.mktemp("code")
    for path in CODE.iterdir():
        mark = "#" if path.suffix in {".py", ".rb", ".sh"} else "//"
        padding = "".join(f"{mark} padding line {i} keeps this file above the native-fit size\n" for i in range(150))
        (root / path.name).write_text(path.read_text() + "\n" + padding)
    return ReadEngine(Settings(roots=(root,)))


@pytest.mark.parametrize(("name", "language", "titles", "symbol", "marker"), VECTORS)
def test_outline_symbol_read_and_compact_view(
    engine: ReadEngine, name: str, language: str, titles: list[str], symbol: str, marker: str
) -> None:
    source = (engine.roots.paths[0] / name).read_text()
    preview = engine.preview("s", name)
    assert preview.artifact.type == language
    outline = [o.title for o in preview.outline]
    assert set(titles) <= set(outline), outline
    assert all(o.signature for o in preview.outline)

    pack = engine.read("s", ReadRequest(target=f"{name}#{symbol}"))
    item = pack.items[0]
    assert marker in item.text
    assert source_at(source, item.anchor) == item.text
    entry = next(o for o in preview.outline if o.title == symbol)
    assert item.lines == entry.lines

    compact = engine.read("s", ReadRequest(target=name, view="compact", intent=Intent(goal="compact")))
    assert compact.result is not None and "lossy" in compact.result.scanned
    text = str(compact.result.value)
    assert marker in text and "COMMENT-MARK" not in text and "padding line" not in text and "\n\n" not in text
    assert compact.items == []


def test_goal_finds_the_symbol_by_name_signature_and_docstring(tmp_path: Path) -> None:
    functions = [
        f"def handler_{i}(request):\n    '''Serve route number {i}.'''\n    return render(request, 'page{i}.html')\n"
        for i in range(120)
    ]
    functions.insert(
        77,
        "def rotate_api_credentials(vault, ttl_days):\n"
        "    '''Rotate the API keys stored in the vault.'''\n"
        "    return vault.rotate(ttl=ttl_days)\n",
    )
    (tmp_path / "views.py").write_text("\n\n".join(functions))
    engine = ReadEngine(Settings(roots=(tmp_path,)))
    pack = engine.read("s", ReadRequest(target="views.py", intent=Intent(goal="where are credentials rotated?")))
    assert pack.gate.decision == "sparse"
    assert pack.items[0].text.startswith("def rotate_api_credentials")


def test_unqualified_symbol_names_resolve_when_unique(engine: ReadEngine) -> None:
    pack = engine.read("u", ReadRequest(target="store.py#load"))
    assert "LOAD-MARK-PY" in pack.items[0].text


def test_compact_view_is_refused_for_prose(tmp_path: Path) -> None:
    (tmp_path / "notes.md").write_text("# Notes\n\nSome text.\n")
    engine = ReadEngine(Settings(roots=(tmp_path,)))
    with pytest.raises(IntentError, match="source code only"):
        engine.read("s", ReadRequest(target="notes.md", view="compact"))


def test_unknown_languages_fall_back_to_text(tmp_path: Path) -> None:
    (tmp_path / "script.lua").write_text("-- lua\nfunction f()\n  return 'LUA-MARK'\nend\n")
    engine = ReadEngine(Settings(roots=(tmp_path,)))
    pack = engine.read("s", ReadRequest(target="script.lua", view="full"))
    assert pack.episode.artifact.type == "text" and "LUA-MARK" in pack.items[0].text


def flask_instances(swebench: Path) -> list[dict[str, object]]:
    rows = [json.loads(line) for line in (swebench / "questions.jsonl").read_text().splitlines()]
    return [row for row in rows if row["repo"] == "pallets/flask"]


def test_real_repository_snapshots_locate_the_gold_function(swebench: Path, tmp_path: Path) -> None:
    """On the flask snapshots of SWE-bench, the issue text finds the function the reference fix edits."""
    instances = flask_instances(swebench)
    assert instances
    for row in instances:
        functions = [f for f in row["gold_functions"] if f["start_line"]]  # type: ignore[attr-defined]
        if not functions:
            continue
        dest = tmp_path / str(row["instance_id"])
        subprocess.run(
            [sys.executable, str(swebench / "materialize_swebench.py"), str(row["instance_id"]), str(dest)],
            check=True,
            capture_output=True,
            timeout=120,
        )
        engine = ReadEngine(Settings(roots=(dest,)))
        path = functions[0]["path"]
        source = (dest / path).read_text()
        pack = engine.read("s", ReadRequest(target=path, intent=Intent(goal=str(row["question"]))))
        for item in pack.items:
            assert source_at(source, item.anchor) == item.text
        inside = [
            item for item in pack.items[:2] if any(f["start_line"] <= item.lines[0] <= f["end_line"] for f in functions)
        ]
        assert inside, f"{row['instance_id']}: no top item inside {[f['name'] for f in functions]}"
        symbol = engine.read("t", ReadRequest(target=f"{path}#{functions[0]['name']}"))
        assert symbol.items[0].lines[0] <= functions[0]["start_line"]
        assert symbol.items[0].lines[1] >= functions[0]["end_line"]
