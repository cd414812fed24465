"""Fuzzed YAML and TOML structure (random nesting, anchors and aliases, weird keys, broken text) read by
preview and a goal-driven read: always an answer or a typed error, within the call's limit.

`SPARSEREAD_FUZZ_EXAMPLES` scales the examples (CI sets it higher).
"""

from __future__ import annotations

import hashlib
import json
import os

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scratch import scratch_dir

from sparseread_mcp import Intent, ReadEngine, ReadRequest, Settings
from sparseread_mcp.deadline import deadline
from sparseread_mcp.errors import SparsereadError

EXAMPLES = int(os.environ.get("SPARSEREAD_FUZZ_EXAMPLES", "60"))
CALL_SECONDS = 5.0
_ROOT = scratch_dir("sparseread-structure-")
_ENGINE = ReadEngine(Settings(roots=(_ROOT,)))

#: Text without lone surrogates, which no UTF-8 file can hold.
chars = st.characters(exclude_categories=["Cs"])
weird_key = st.one_of(
    st.sampled_from(
        ["a", "k", "a.b", "with space", "x-y", "ünï", "0", "true", "null", "&a", "*a", "#", "[x]", "k" * 300]
    ),
    st.text(chars, min_size=1, max_size=12),
)
scalar = st.one_of(st.integers(), st.floats(allow_nan=False), st.booleans(), st.none(), st.text(chars, max_size=20))
tree = st.recursive(
    scalar,
    lambda inner: st.one_of(st.lists(inner, max_size=5), st.dictionaries(weird_key, inner, max_size=5)),
    max_leaves=40,
)


def _quote(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)  # a JSON string is a YAML and (nearly always) a TOML string


@st.composite
def alias_yaml(draw: st.DrawFn) -> str:
    """Chains of anchors and aliases like a billion laughs, with random fan-out and depth."""
    fan = draw(st.integers(1, 6))  # now and then past the node budget: refused, the same way every time
    depth = draw(st.integers(1, 10))
    lines = [f"a0: &a0 [{', '.join([_quote(draw(st.text(chars, max_size=5)))] * fan)}]"]
    for i in range(1, depth):
        refs = [f"*a{draw(st.integers(0, i - 1))}" for _ in range(fan)]
        lines.append(
            f"a{i}: &a{i} "
            + (
                f"[{', '.join(refs)}]"
                if draw(st.booleans())
                else "{" + ", ".join(f"k{j}: {r}" for j, r in enumerate(refs)) + "}"
            )
        )
    if draw(st.booleans()):
        lines.append(f"{_quote(draw(weird_key))}: *a{depth - 1}")
    return "\n".join(lines) + "\n"


@st.composite
def nested_yaml(draw: st.DrawFn) -> str:
    depth = draw(st.integers(1, 400))
    opener, closer = draw(st.sampled_from([("[", "]"), ("{a: ", "}")]))
    return "k: " + opener * depth + "1" + closer * depth + "\n"


yaml_text = st.one_of(
    tree.map(lambda value: json.dumps(value, ensure_ascii=False)),  # JSON is YAML
    alias_yaml(),
    nested_yaml(),
    st.text(alphabet="ab:-&*[]{}?|>#'\"\n !%", max_size=200),
)


def _toml_value(value: object, depth: int = 0) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value) if not isinstance(value, float) or value == value else "nan"
    if value is None or isinstance(value, str):
        return _quote(value or "")
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v, depth + 1) for v in value) + "]"
    assert isinstance(value, dict)
    return "{" + ", ".join(f"{_quote(k)} = {_toml_value(v, depth + 1)}" for k, v in value.items()) + "}"


@st.composite
def toml_text(draw: st.DrawFn) -> str:
    """Mostly valid TOML (names made unique), now and then a broken line."""
    lines = []
    kinds = ["table", "array", "key", "key", "dotted", "deep", "inline", "raw", "blank"]
    for i in range(draw(st.integers(1, 6))):
        kind = draw(st.sampled_from(kinds))
        key = _quote(f"{draw(weird_key)}{i}")
        if kind == "table":
            parts = draw(st.lists(st.sampled_from(["a", "b", key]), min_size=1, max_size=8))
            lines.append(f"[t{i}.{'.'.join(parts)}]")
        elif kind == "array":
            lines.append(f"[[{key}]]")
        elif kind == "key":
            lines.append(f"{key} = {_toml_value(draw(tree))}")
        elif kind == "dotted":
            lines.append(f"d{i}." + ".".join(["a"] * draw(st.integers(1, 300))) + " = 1")
        elif kind == "deep":
            depth = draw(st.integers(1, 300))
            lines.append(f"{key} = " + "[" * depth + "]" * depth)
        elif kind == "inline":
            depth = draw(st.integers(1, 300))
            lines.append(f"{key} = " + "{a = " * depth + "1" + "}" * depth)
        elif kind == "raw":
            lines.append(draw(st.text(alphabet="ab=[]{}.\"' #\t,", max_size=60)))
        else:
            lines.append(" " * draw(st.integers(0, 3000)))
    return "\n".join(lines) + "\n"


def _read_both(name: str, text: str) -> None:
    path = _ROOT / f"{hashlib.sha256(text.encode()).hexdigest()[:16]}{name}"
    path.write_text(text)
    for call in (
        lambda: _ENGINE.preview("fuzz", path.name),
        lambda: _ENGINE.read("fuzz", ReadRequest(target=path.name, intent=Intent(goal="where is a"))),
    ):
        try:
            with deadline(CALL_SECONDS):
                call()
        except SparsereadError as exc:
            assert str(exc) and "Traceback" not in str(exc) and len(str(exc)) < 1000, str(exc)


_SETTINGS = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@_SETTINGS
@given(text=yaml_text)
def test_fuzzed_yaml_structure_ends_in_an_answer_or_a_typed_error(text: str) -> None:
    _read_both(".yaml", text)


@_SETTINGS
@given(text=toml_text())
def test_fuzzed_toml_structure_ends_in_an_answer_or_a_typed_error(text: str) -> None:
    _read_both(".toml", text)
