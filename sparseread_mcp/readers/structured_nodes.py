"""Key-path nodes with their exact source spans, for JSON, YAML and TOML.

Each node is a value in the document: its path (`$.a.b[0]`), its JSON type, its size (keys or items)
and the character span of its text in the original file, so that a key-path anchor always names
verbatim text.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from ..errors import UnsupportedArtifact

_NUMBER_OR_LITERAL = json.JSONDecoder()
#: Deeper documents are refused: no real configuration or API dump nests this far.
MAX_DEPTH = 200
_SIMPLE_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")


@dataclass(frozen=True, slots=True, kw_only=True)
class Node:
    path: str
    kind: str  # object, array, string, number, boolean, null
    start: int
    end: int
    size: int = 0  # keys of an object, items of an array
    depth: int = 0


def child_path(parent: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{parent}[{key}]"
    return f"{parent}.{key}" if _SIMPLE_KEY.match(key) else f"{parent}[{json.dumps(key)}]"


def json_nodes(text: str, *, label: str) -> list[Node]:
    """Every value of a JSON document with its span (pre-order)."""
    nodes: list[Node] = []
    try:
        end = _value(text, _skip(text, 0), "$", 0, nodes)
    except (ValueError, IndexError) as exc:
        raise UnsupportedArtifact(f"{label} is not valid JSON ({exc}); read it as text with a line anchor") from exc
    except RecursionError:
        raise UnsupportedArtifact(
            f"{label} nests deeper than {MAX_DEPTH} levels; rename it to .txt to read it as text"
        ) from None
    if _skip(text, end) != len(text):
        raise UnsupportedArtifact(f"{label} has text after its JSON value at offset {end}; is it JSON Lines?")
    return nodes


def _skip(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in " \t\r\n":
        pos += 1
    return pos


def _value(text: str, pos: int, path: str, depth: int, out: list[Node]) -> int:
    if depth > MAX_DEPTH:
        raise RecursionError  # refused above with a clear message, long before Python's own limit
    char = text[pos]
    if char == "{":
        return _container(text, pos, path, depth, out, closing="}", keyed=True)
    if char == "[":
        return _container(text, pos, path, depth, out, closing="]", keyed=False)
    value, end = _NUMBER_OR_LITERAL.raw_decode(text, pos)
    out.append(Node(path=path, kind=_kind(value), start=pos, end=end, depth=depth))
    return end


def _container(text: str, pos: int, path: str, depth: int, out: list[Node], *, closing: str, keyed: bool) -> int:
    slot = len(out)
    out.append(Node(path=path, kind="object", start=pos, end=pos, depth=depth))  # placeholder, fixed below
    pos = _skip(text, pos + 1)
    count = 0
    while text[pos] != closing:
        if keyed:
            key, pos = _NUMBER_OR_LITERAL.raw_decode(text, pos)
            if not isinstance(key, str):
                raise ValueError(f"object key at offset {pos} is not a string")
            pos = _skip(text, pos)
            if text[pos] != ":":
                raise ValueError(f"expected ':' at offset {pos}")
            pos = _skip(text, pos + 1)
            pos = _value(text, pos, child_path(path, key), depth + 1, out)
        else:
            pos = _value(text, pos, child_path(path, count), depth + 1, out)
        count += 1
        pos = _skip(text, pos)
        if text[pos] == ",":
            pos = _skip(text, pos + 1)
        elif text[pos] != closing:
            raise ValueError(f"expected ',' or '{closing}' at offset {pos}")
    out[slot] = Node(
        path=path, kind="object" if keyed else "array", start=out[slot].start, end=pos + 1, size=count, depth=depth
    )
    return pos + 1


def _kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    return type(value).__name__


def yaml_nodes(text: str, *, label: str) -> list[Node]:
    """Every value of the first YAML document, spans from PyYAML's composer marks."""
    try:
        import yaml
    except ImportError as exc:  # pragma: no cover - PyYAML is a core dependency
        from ..errors import MissingDependency

        raise MissingDependency("reading YAML needs PyYAML: pip install pyyaml") from exc
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
        nodes: list[Node] = []
        if root is not None:
            _yaml_walk(root, "$", 0, nodes, text)
    except yaml.YAMLError as exc:
        raise UnsupportedArtifact(f"{label} is not valid YAML ({exc}); read it as text") from exc
    except RecursionError:
        raise UnsupportedArtifact(
            f"{label} nests too deeply to outline; rename it to .txt to read it as text"
        ) from None
    return nodes


def _yaml_walk(node: object, path: str, depth: int, out: list[Node], text: str) -> None:
    import yaml

    start = node.start_mark.index  # type: ignore[attr-defined]
    end = node.end_mark.index  # type: ignore[attr-defined]
    while end > start and text[end - 1] in " \t\r\n":
        end -= 1  # block collections end at the next token; the value's text ends before the gap
    if isinstance(node, yaml.MappingNode):
        out.append(Node(path=path, kind="object", start=start, end=end, size=len(node.value), depth=depth))
        for key, value in node.value:
            _yaml_walk(value, child_path(path, str(key.value)), depth + 1, out, text)
    elif isinstance(node, yaml.SequenceNode):
        out.append(Node(path=path, kind="array", start=start, end=end, size=len(node.value), depth=depth))
        for i, value in enumerate(node.value):
            _yaml_walk(value, child_path(path, i), depth + 1, out, text)
    else:
        tag = str(node.tag)  # type: ignore[attr-defined]
        kind = {"int": "number", "float": "number", "bool": "boolean", "null": "null"}.get(
            tag.rsplit(":", 1)[-1], "string"
        )
        out.append(Node(path=path, kind=kind, start=start, end=end, depth=depth))


#: The name is stripped in Python: `\s*([^\]]+?)\s*` let three runs share the blanks, cubic on a long run.
_TOML_HEADER = re.compile(r"^\s*(\[\[?)([^\]]*)\]\]?\s*(#.*)?$")
_TOML_KEY_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.\"' -")


def _toml_key(line: str) -> str | None:
    r"""The key of a `key = value` line, or None. A split rather than a pattern: the pattern it replaces
    (`^\s*([...]+?)\s*=`) was cubic on a line of blanks (a 4,000-space line took 52 s)."""
    before, equals, _ = line.partition("=")
    key = before.strip()
    if not equals or not key or not _TOML_KEY_CHARS.issuperset(key):
        return None
    return key


def toml_nodes(text: str, *, label: str) -> list[Node]:
    """Tables and key assignments of a TOML file, by line (tomllib validates, lines give spans)."""
    import tomllib

    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise UnsupportedArtifact(f"{label} is not valid TOML ({exc}); read it as text") from exc
    nodes = [Node(path="$", kind="object", start=0, end=len(text.rstrip()), size=len(data), depth=0)]
    table = "$"
    array_counts: dict[str, int] = {}
    lines = text.split("\n")
    offset = 0
    table_node: int | None = None
    i = 0
    while i < len(lines):
        line = lines[i]
        start = offset
        header = _TOML_HEADER.match(line)
        if header and header.group(2).strip():
            keys = [k.strip().strip("\"'") for k in header.group(2).split(".")]
            table = "$"
            for key in keys:
                table = child_path(table, key)
            if header.group(1) == "[[":
                index = array_counts.get(table, 0)
                array_counts[table] = index + 1
                table = child_path(table, index)
            if table_node is not None:
                nodes[table_node] = _close(nodes[table_node], start - 1, text)
            table_node = len(nodes)
            nodes.append(Node(path=table, kind="object", start=start, end=start + len(line), depth=table.count(".")))
        elif (key := _toml_key(line)) is not None and not line.lstrip().startswith("#"):
            value_lines = _toml_value_lines(lines, i, line.partition("=")[2].lstrip())
            end = offset + sum(len(lines[k]) + 1 for k in range(i, i + value_lines)) - 1
            path = table
            for part in key.split("."):
                path = child_path(path, part.strip().strip("\"'"))
            nodes.append(Node(path=path, kind="value", start=start, end=end, depth=path.count(".")))
            for k in range(i, i + value_lines):
                offset += len(lines[k]) + 1
            i += value_lines
            continue
        offset += len(line) + 1
        i += 1
    if table_node is not None:
        nodes[table_node] = _close(nodes[table_node], len(text), text)
    return nodes


def _close(node: Node, end: int, text: str) -> Node:
    while end > node.start and (end > len(text) or text[end - 1] in " \t\r\n"):
        end -= 1
    return Node(
        path=node.path, kind=node.kind, start=node.start, end=max(end, node.start), size=node.size, depth=node.depth
    )


def _toml_value_lines(lines: list[str], first: int, value: str) -> int:
    """How many lines a value spans: multi-line strings and arrays continue until they close."""
    for quote in ('"""', "'''"):
        if value.lstrip().startswith(quote) and value.count(quote) == 1:
            for k in range(first + 1, len(lines)):
                if quote in lines[k]:
                    return k - first + 1
    depth = value.count("[") - value.count("]") + value.count("{") - value.count("}")
    k = first
    while depth > 0 and k + 1 < len(lines):
        k += 1
        depth += lines[k].count("[") - lines[k].count("]") + lines[k].count("{") - lines[k].count("}")
    return k - first + 1
