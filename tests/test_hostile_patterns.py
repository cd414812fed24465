"""Our own patterns and line parsers stay linear on adversarial text (a TOML line of 4,000 blanks once took
52 s in a cubic key pattern).

Every compiled pattern at module level in the package (compaction has its own tests) and a few parsers
run on 200,000-character strings built to make backtracking engines explode. They run in one child
process under a timeout: `re` holds the GIL, so nothing in this process could stop a runaway match. The
child reports each pattern as it finishes; a pattern that was still running when the timeout killed the
child fails its test, with its name. There is no timing assertion beyond that guard.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from functools import cache

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sparseread_mcp
from sparseread_mcp.readers.structured import parse_filter
from sparseread_mcp.readers.structured_nodes import _toml_key

SIZE = 200_000
HANG_GUARD = 240
#: Patterns compiled inline in modules other engineers own; listed here so they are tested too.
INLINE = {"anchors.line_anchor": re.compile(r"L\d.*"), "protocol.actions.number": re.compile(r"\d[\d.]*")}


def adversarial(n: int = SIZE) -> dict[str, str]:
    """Strings that make nested, overlapping or lazy repeats backtrack (each about n characters)."""
    import random

    rng = random.Random(12)
    return {
        "blanks": " " * n,
        "tabs": "\t" * n,
        "letters": "a" * n,
        "letters then stop": "a" * n + "!",
        "capitals then lower": "A" * n + "a",
        "hyphenated": "a-" * (n // 2),
        "quotes": '"' * n,
        "single quotes": "'" * n,
        "digits with commas": "1," * (n // 2),
        "dotted digits": "1." * (n // 2) + "a",
        "digits then letter": "1" * n + "a",
        "hex run": "0" * n + "g",
        "slashes": "/a" * (n // 2) + "/",
        "heading then blanks": "# a" + " " * n + "b",
        "hashes": "#" * n + "x",
        "equals": "=" * n + "x",
        "dashes": "-" * n + "x",
        "key then blanks": "k" + " " * n,
        "assignment then blanks": "x =" + " " * n + "\x00",
        "open brackets": "[" + " " * n,
        "filter starts": "$" + "[? " * (n // 3),
        "filter operators": "$" + "[?a=" * (n // 4) + "x",
        "names": "Aa " * (n // 3) + "a",
        "sentence end": "." + '"' * n,
        "tags": "<a" * (n // 2),
        "sheet rows": "!R1" * (n // 3) + "x",
        "random": "".join(rng.choice("a A1 -\"'[]=#.,/0?$!R\t:") for _ in range(n)),
    }


def _collect() -> Iterator[tuple[str, re.Pattern[str] | re.Pattern[bytes]]]:
    for info in pkgutil.walk_packages(sparseread_mcp.__path__, "sparseread_mcp."):
        if info.name.startswith("sparseread_mcp.compaction") or info.name.endswith("__main__"):
            continue
        try:
            module = importlib.import_module(info.name)
        except ImportError:  # an optional extra that is not installed
            continue
        for name, value in vars(module).items():
            yield from _patterns_in(f"{info.name.removeprefix('sparseread_mcp.')}.{name}", value)
    yield from INLINE.items()


def _patterns_in(name: str, value: object) -> Iterator[tuple[str, re.Pattern[str] | re.Pattern[bytes]]]:
    if isinstance(value, re.Pattern):
        yield name, value
    elif isinstance(value, (tuple, list)):
        for i, item in enumerate(value):
            yield from _patterns_in(f"{name}[{i}]", item)
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _patterns_in(f"{name}[{key}]", item)


@cache
def our_patterns() -> dict[str, re.Pattern[str] | re.Pattern[bytes]]:
    return dict(_collect())


#: Line parsers that replaced patterns (and the tokenizer every query and passage goes through).
PARSERS: dict[str, Callable[[str], object]] = {
    "structured.parse_filter": parse_filter,
    "structured_nodes._toml_key": _toml_key,
}


def exercise(name: str, strings: dict[str, str]) -> None:
    """Run one pattern or parser over every adversarial string, the way the package can use it."""
    if name in PARSERS:
        for text in strings.values():
            PARSERS[name](text)
        return
    pattern = our_patterns()[name]
    for text in strings.values():
        subject: str | bytes = text.encode() if isinstance(pattern.pattern, bytes) else text
        for _ in pattern.finditer(subject):  # type: ignore[arg-type]
            pass  # finditer tries every start: the worst case of search, findall, sub and match


_CHILD = """
import sys
sys.path.insert(0, sys.argv[1])
import test_hostile_patterns as t
strings = t.adversarial()
for name in [*t.our_patterns(), *t.PARSERS]:
    t.exercise(name, strings)
    print(name, flush=True)
"""


@cache
def finished() -> tuple[frozenset[str], str]:
    """(names the child finished, its output when it did not finish them all)."""
    tests = str(__import__("pathlib").Path(__file__).parent)
    try:
        done = subprocess.run(
            [sys.executable, "-c", _CHILD, tests], capture_output=True, text=True, timeout=HANG_GUARD, check=False
        )
        out, err = done.stdout, done.stderr[-2000:]
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode() if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        err = f"killed after {HANG_GUARD} s"
    return frozenset(out.split()), err


def test_the_audit_finds_the_patterns_it_must_cover() -> None:
    names = set(our_patterns())
    for expected in ("readers.text._ATX", "readers.structured_nodes._TOML_HEADER", "locate.terms._WORD"):
        assert expected in names
    assert any(name.startswith("readers.log._MASKS") for name in names)
    assert any(name.startswith("locate.concepts.COMPILED") for name in names)
    assert not any("compaction" in name for name in names)


@pytest.mark.parametrize("name", [*our_patterns(), *PARSERS])
def test_our_patterns_are_linear_on_adversarial_text(name: str) -> None:
    names, detail = finished()
    assert name in names, f"{name} did not finish on adversarial text ({detail})"


_OLD_FILTER = re.compile(r"^(?P<path>\$.*?)\[(?:\?(?P<field>[^=!<>~]+?)\s*(?P<op>!=|=|<|>|~)\s*(?P<value>.*)|\*)\]$")


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="$.a b[]?*=!<>~0", max_size=24).map(lambda s: "$" + s))
def test_the_filter_parser_reads_what_the_pattern_it_replaced_read(query: str) -> None:
    old, new = _OLD_FILTER.match(query), parse_filter(query)
    if old is None or not query.endswith("]"):
        assert new is None
        return
    assert new is not None
    assert new.path == old.group("path")
    if old.group("field") is None:
        assert new.field is None
    else:
        assert new.field is not None and new.field.strip() == old.group("field").strip()
        assert (new.op, new.value.strip()) == (old.group("op"), old.group("value").strip())


_OLD_TOML_KEY = re.compile(r"^\s*([A-Za-z0-9_.\"' -]+?)\s*=\s*(.*)$")


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="ab .=\"' \t#-_[]", max_size=20))
def test_the_toml_key_split_reads_what_the_pattern_it_replaced_read(line: str) -> None:
    old = _OLD_TOML_KEY.match(line)
    # A blank key (invalid TOML, which is validated first) is no key now.
    assert _toml_key(line) == ((old.group(1).strip() or None) if old else None)
