"""Parser attacks: YAML alias bombs, deep TOML/YAML/JSON, 50,000 nested parentheses in code, key paths that
grow faster than the text. Each is answered with a typed error or a bounded answer, never a RecursionError
or an "internal error", within a bounded time and memory.

The attacks run in one child process with an address-space limit and a timeout (a runaway parse in pure
Python cannot be stopped from this process, and a 10 GB one would hurt the machine); the child reports
each outcome and its peak memory, and each attack is one test here.
"""

from __future__ import annotations

import json
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest

HANG_GUARD = 240
#: The child's address space: the package with its imports reserves about 300 MB.
ADDRESS_SPACE = 2 * 1024**3
#: Peak resident memory the whole child may reach, every attack included.
PEAK_MB = 700


def yaml_bomb(levels: int = 9) -> str:
    lines = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for i in range(1, levels):
        lines.append(f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]")
    return "\n".join(lines) + "\n"


def _nested_json(levels: int, key_chars: int, leaves: int) -> str:
    key = "k" * key_chars
    return "{" + f'"{key}": {{' * levels + '"x": [' + ",".join(["1"] * leaves) + "]" + "}" * levels + "}"


#: name -> (file name, content, what must happen: "typed" (a SparsereadError) or "answered")
ATTACKS: dict[str, tuple[str, str, str]] = {
    "yaml billion laughs": ("bomb.yaml", yaml_bomb(), "typed"),
    "yaml alias bomb under a long key": (
        "longkey.yaml",
        f"base: &b [{', '.join(['1'] * 500)}]\n? "
        + "k" * 5000
        + "\n:\n"
        + "".join(f"  c{i}: *b\n" for i in range(300)),
        "typed",
    ),
    "yaml recursive alias": ("loop.yaml", "a: &a [1, *a]\n", "typed"),
    "yaml deep flow": ("deep.yaml", "a: " + "[" * 50_000 + "]" * 50_000 + "\n", "typed"),
    "json deep": ("deep.json", "[" * 50_000 + "]" * 50_000, "typed"),
    "json key paths past the budget": ("paths.json", _nested_json(150, 190, 60_000), "typed"),
    "toml deep arrays": ("arrays.toml", "a = " + "[" * 50_000 + "]" * 50_000 + "\n", "typed"),
    "toml deep inline tables": ("inline.toml", "a = " + "{b = " * 20_000 + "1" + "}" * 20_000 + "\n", "typed"),
    "toml dotted key of 50,000 parts": ("dotted.toml", "a" + ".a" * 50_000 + " = 1\n", "typed"),
    "toml table of 50,000 parts": ("table.toml", "[" + ".".join(["a"] * 50_000) + "]\nx = 1\n", "typed"),
    # 4,000 blanks took 16 s in the cubic key pattern; 20,000 would take hours.
    "toml line of 20,000 blanks": ("blanks.toml", "title = 'x'\n" + " " * 20_000 + "\nkey = 'MARKER'\n", "answered"),
    # Every piece of text joined all earlier pieces of its block again: 200,000 `<` took 60 s.
    "html 400,000 `<`": ("angles.html", "<" * 400_000, "answered"),
    "html 100,000 inline tags": ("inline.html", "<p>" + "<b>x</b> " * 100_000 + "</p>", "answered"),
    "html 50,000 nested elements": ("nested.html", "<div>" * 50_000 + "MARKER" + "</div>" * 50_000, "answered"),
    "python 50,000 nested parentheses": ("parens.py", "x = " + "(" * 50_000 + "1" + ")" * 50_000 + "\n", "answered"),
    "javascript 50,000 nested arrays": ("arrays.js", "let x = " + "[" * 50_000 + "]" * 50_000 + ";\n", "answered"),
    "c 50,000 nested parentheses": (
        "parens.c",
        "int f() { return " + "(" * 50_000 + "1" + ")" * 50_000 + "; }\n",
        "answered",
    ),
    "python 95 nested functions": (
        "nested.py",
        "".join("    " * i + f"def f{i}():\n" for i in range(95)) + "    " * 95 + "return 'MARKER'\n",
        "answered",
    ),
}

_CHILD = """
import json, resource, sys
from pathlib import Path
from sparseread_mcp import Intent, ReadEngine, ReadRequest, Settings
from sparseread_mcp.deadline import deadline
from sparseread_mcp.errors import SparsereadError

resource.setrlimit(resource.RLIMIT_AS, (int(sys.argv[2]), int(sys.argv[2])))
root = Path(sys.argv[1])
engine = ReadEngine(Settings(roots=(root,)))
for name in json.loads(sys.argv[3]):
    outcomes = []
    for call in (
        lambda: engine.preview("s", name),
        lambda: engine.read("s", ReadRequest(target=name, intent=Intent(goal="where is the MARKER value"))),
    ):
        try:
            with deadline(30):
                answer = call()
            outcomes.append("answered " + str(len(answer.model_dump_json())))
        except SparsereadError as exc:
            outcomes.append("typed " + str(exc)[:300])
        except BaseException as exc:
            outcomes.append("untyped " + type(exc).__name__ + " " + str(exc)[:200])
    print(json.dumps({"file": name, "outcomes": outcomes}), flush=True)
# VmHWM is this process's own peak; ru_maxrss would carry the parent's (pytest's) peak across exec.
peak_kb = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM:"))
print(json.dumps({"peak_mb": peak_kb // 1024}), flush=True)
"""


@cache
def outcomes(root: str) -> tuple[dict[str, list[str]], int, str]:
    """(file -> outcomes of preview and read, peak MB, stderr) from one guarded child."""
    files = [name for name, _, _ in ATTACKS.values()]
    try:
        done = subprocess.run(
            [sys.executable, "-c", _CHILD, root, str(ADDRESS_SPACE), json.dumps(files)],
            capture_output=True,
            text=True,
            timeout=HANG_GUARD,
            check=False,
        )
        out, err = done.stdout, done.stderr[-3000:]
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode() if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        err = f"killed after {HANG_GUARD} s"
    by_file: dict[str, list[str]] = {}
    peak = -1
    for line in out.splitlines():
        record = json.loads(line)
        if "peak_mb" in record:
            peak = record["peak_mb"]
        else:
            by_file[record["file"]] = record["outcomes"]
    return by_file, peak, err


@pytest.fixture(scope="module")
def attacked(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, list[str]], int, str]:
    root = tmp_path_factory.mktemp("attacks")
    for name, content, _ in ATTACKS.values():
        (root / name).write_text(content)
    return outcomes(str(root))


@pytest.mark.parametrize("attack", list(ATTACKS))
def test_a_parser_attack_gets_a_typed_error_or_a_bounded_answer(
    attack: str, attacked: tuple[dict[str, list[str]], int, str]
) -> None:
    by_file, _, err = attacked
    name, _, expected = ATTACKS[attack]
    assert name in by_file, f"{attack}: the child did not finish it ({err})"
    preview, read = by_file[name]
    assert not any(o.startswith("untyped") for o in (preview, read)), (preview, read)
    if expected == "typed":
        assert read.startswith("typed"), read  # the preview may answer with the file's card instead
        assert "Traceback" not in read and len(read) < 400
    else:
        assert preview.startswith("answered") and read.startswith("answered"), (preview, read)


def test_the_alias_bomb_is_refused_for_its_expansion(attacked: tuple[dict[str, list[str]], int, str]) -> None:
    preview, read = attacked[0]["bomb.yaml"]
    assert "expands past" in read and "line anchors" in read
    assert preview.startswith("answered")  # a card that says why, instead of an error


def test_every_attack_together_stays_under_the_memory_bound(attacked: tuple[dict[str, list[str]], int, str]) -> None:
    _, peak, err = attacked
    assert 0 < peak < PEAK_MB, (peak, err)


def test_nested_definitions_deeper_than_the_bound_stay_with_their_parent(tmp_path: Path) -> None:
    from sparseread_mcp import ReadEngine, Settings
    from sparseread_mcp.readers.code import MAX_SYMBOL_DEPTH

    (tmp_path / "nested.py").write_text(ATTACKS["python 95 nested functions"][1])
    preview = ReadEngine(Settings(roots=(tmp_path,))).preview("s", "nested.py")
    assert max(entry.level for entry in preview.outline) <= MAX_SYMBOL_DEPTH


def _garbage_source(size: int = 200_000) -> bytes:
    import random

    rng = random.Random(3)
    return "".join(rng.choice("{}()[];,<>=+-*/'\"`\n abc123#") for _ in range(size)).encode()


@pytest.mark.parametrize("stopped", ["past the limit", "cancelled"])
def test_a_code_parse_stops_at_the_calls_limit_or_cancellation(stopped: str) -> None:
    """tree-sitter holds the GIL through a plain parse (1 MB of garbage: 2.3 s with every other session
    waiting); parsed through callbacks it yields between them and stops when the call ends."""
    import tree_sitter_javascript
    from tree_sitter import Language, Parser

    from sparseread_mcp.deadline import TimedOut, deadline
    from sparseread_mcp.readers.code import parse_source

    parser = Parser(Language(tree_sitter_javascript.language()))
    with deadline(0 if stopped == "past the limit" else 3600) as limit, pytest.raises(TimedOut):
        if stopped == "cancelled":
            limit.cancelled.set()
        parse_source(parser, _garbage_source(), label="garbage.js")
    with deadline(3600):
        assert parse_source(parser, b"let x = [1, 2];\n", label="fine.js").root_node.type == "program"


def test_composing_yaml_stops_at_the_calls_limit() -> None:
    """PyYAML is pure Python: a large file takes it minutes; composing checks the call's deadline."""
    import yaml

    from sparseread_mcp.deadline import TimedOut, deadline
    from sparseread_mcp.readers.structured_nodes import _deadline_loader

    big = "".join(f"- item {i}\n" for i in range(20_000))
    with deadline(0), pytest.raises(TimedOut):
        yaml.compose(big, Loader=_deadline_loader())
    with deadline(3600):
        node = yaml.compose("a: [1, 2]\n", Loader=_deadline_loader())
    assert isinstance(node, yaml.MappingNode)


@pytest.mark.parametrize("reader", ["text", "log"])
def test_segmenting_a_large_text_or_log_stops_at_the_calls_limit(reader: str) -> None:
    from sparseread_mcp.deadline import TimedOut, deadline
    from sparseread_mcp.files.lines import LineIndex
    from sparseread_mcp.readers import log, text

    index = LineIndex("".join(f"2024-01-01 12:00:00 INFO line {i}\n\n" for i in range(10_000)))
    segment = {"text": lambda: text._segment(index, markdown=True), "log": lambda: log._records(index)}[reader]
    with deadline(0), pytest.raises(TimedOut):
        segment()
    with deadline(3600):
        assert segment()
