"""Key-path nodes with their exact source spans, for JSON, YAML and TOML.

Each node is a value in the document: its path (`$.a.b[0]`), its JSON type, its size (keys or items)
and the character span of its text in the original file, so that a key-path anchor always names
verbatim text.

Every file may be hostile, so a document may produce only so many nodes and so many key-path
characters (`_Collector`): a YAML alias repeats its anchor's whole value, and nine nested aliases in
432 bytes once expanded to a billion nodes and 10 GB. Past the budget the file is refused with
`OverLimit` (its card is still given) rather than shown with some aliases left unexpanded: a partial
outline would present missing values as absent, and key-path anchors through aliases keep working for
every file that fits. The walks are loops with an explicit stack, never recursion, and checkpoint the
call's deadline.
"""

from __future__ import annotations

import hashlib
import json
import re
from functools import cache
from typing import TYPE_CHECKING, NamedTuple

from ..deadline import checkpoint
from ..errors import OverLimit, UnsupportedArtifact

if TYPE_CHECKING:
    import yaml

_NUMBER_OR_LITERAL = json.JSONDecoder()
#: Deeper documents are refused: no real configuration or API dump nests this far.
MAX_DEPTH = 200
_SIMPLE_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")
#: Nodes a document may produce: its own (JSON and YAML need two characters a value) and this many more,
#: which only YAML aliases can add.
NODE_ALLOWANCE = 100_000
#: Key-path characters over all nodes: paths repeat their parents' keys, so deep nesting under long keys
#: grows them faster than the text; this many per character of the document, and the allowance.
PATH_CHARS_PER_CHAR = 32
PATH_CHARS_ALLOWANCE = 10_000_000
#: Keys longer than this are shortened in key paths (with a hash, so paths stay distinct).
MAX_KEY_CHARS = 200
_CHECK_EVERY = 4096


class Node(NamedTuple):
    """One value of the document and its span. A named tuple, not a dataclass: a parse of tens of
    thousands of them crosses from a worker process, and tuples pickle and rebuild several times faster."""

    path: str
    kind: str  # object, array, string, number, boolean, null
    start: int
    end: int
    size: int = 0  # keys of an object, items of an array
    depth: int = 0


class _Collector:
    """The nodes of one document, refused with OverLimit past the node or key-path budget."""

    def __init__(self, text: str, label: str) -> None:
        self.nodes: list[Node] = []
        self._label = label
        self._max_nodes = NODE_ALLOWANCE + len(text) // 2
        self._max_chars = PATH_CHARS_ALLOWANCE + PATH_CHARS_PER_CHAR * len(text)
        self._chars = 0

    def add(self, node: Node) -> int:
        """Append a node; its index in `nodes`."""
        self._chars += len(node.path)
        if len(self.nodes) >= self._max_nodes or self._chars > self._max_chars:
            raise OverLimit(
                f"{self._label} expands past {self._max_nodes:,} values or {self._max_chars:,} characters of key "
                "paths (a YAML alias repeats its anchor's whole value, nesting repeats its keys): refused; read "
                "it as text with line anchors (e.g. #L1-L80), or rename it to .txt"
            )
        if len(self.nodes) % _CHECK_EVERY == 0:
            checkpoint()
        self.nodes.append(node)
        return len(self.nodes) - 1


def child_path(parent: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{parent}[{key}]"
    if len(key) > MAX_KEY_CHARS:
        key = f"{key[: MAX_KEY_CHARS - 20]}…{hashlib.sha256(key.encode('utf-8', 'replace')).hexdigest()[:12]}"
    return f"{parent}.{key}" if _SIMPLE_KEY.match(key) else f"{parent}[{json.dumps(key)}]"


def json_nodes(text: str, *, label: str) -> list[Node]:
    """Every value of a JSON document with its span (pre-order)."""
    nodes = _Collector(text, label)
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
    return nodes.nodes


def _skip(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in " \t\r\n":
        pos += 1
    return pos


def _value(text: str, pos: int, path: str, depth: int, out: _Collector) -> int:
    if depth > MAX_DEPTH:
        raise RecursionError  # refused above with a clear message, long before Python's own limit
    char = text[pos]
    if char == "{":
        return _container(text, pos, path, depth, out, closing="}", keyed=True)
    if char == "[":
        return _container(text, pos, path, depth, out, closing="]", keyed=False)
    value, end = _NUMBER_OR_LITERAL.raw_decode(text, pos)
    out.add(Node(path=path, kind=_kind(value), start=pos, end=end, depth=depth))
    return end


def _container(text: str, pos: int, path: str, depth: int, out: _Collector, *, closing: str, keyed: bool) -> int:
    slot = out.add(Node(path=path, kind="object", start=pos, end=pos, depth=depth))  # placeholder, fixed below
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
    out.nodes[slot] = Node(
        path=path,
        kind="object" if keyed else "array",
        start=out.nodes[slot].start,
        end=pos + 1,
        size=count,
        depth=depth,
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
    """Every value of the first YAML document, spans from PyYAML's composer marks; aliases expanded
    under the document's node budget."""
    try:
        import yaml
    except ImportError as exc:  # pragma: no cover - PyYAML is a core dependency
        from ..errors import MissingDependency

        raise MissingDependency("reading YAML needs PyYAML: pip install pyyaml") from exc
    try:
        root = yaml.compose(text, Loader=_deadline_loader())  # aliases stay shared nodes: no expansion yet
    except yaml.YAMLError as exc:
        raise UnsupportedArtifact(f"{label} is not valid YAML ({str(exc)[:300]}); read it as text") from exc
    except RecursionError:
        raise UnsupportedArtifact(
            f"{label} nests too deeply to outline; rename it to .txt to read it as text"
        ) from None
    out = _Collector(text, label)
    if root is not None:
        _yaml_walk(root, text, label, out)
    return out.nodes


@cache
def _deadline_loader() -> type[yaml.SafeLoader]:
    """PyYAML's SafeLoader, checking the call's deadline as it composes (a large file takes it minutes)."""
    import yaml

    class DeadlineLoader(yaml.SafeLoader):
        composed = 0

        def compose_node(self, parent: yaml.Node | None, index: int) -> yaml.Node | None:
            self.composed += 1
            if self.composed % _CHECK_EVERY == 0:
                checkpoint()
            return super().compose_node(parent, index)

    return DeadlineLoader


def _yaml_walk(root: yaml.Node, text: str, label: str, out: _Collector) -> None:
    """Pre-order, with an explicit stack: an alias is its anchor's node object again, so a node can be
    reached many times (each time counted) and a recursive alias forms a cycle (stopped by MAX_DEPTH)."""
    import yaml

    spans: dict[int, tuple[int, int]] = {}  # per node object: an alias reached 100k times is trimmed once
    keys: dict[int, str] = {}
    stack: list[tuple[yaml.Node, str, int]] = [(root, "$", 0)]
    while stack:
        node, path, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise UnsupportedArtifact(
                f"{label} nests deeper than {MAX_DEPTH} levels (or an alias contains itself); rename it to .txt "
                "to read it as text"
            )
        start, end = spans.get(id(node)) or spans.setdefault(id(node), _yaml_span(node, text))
        if isinstance(node, yaml.MappingNode):
            out.add(Node(path=path, kind="object", start=start, end=end, size=len(node.value), depth=depth))
            for key, value in reversed(node.value):
                name = keys.get(id(key)) or keys.setdefault(id(key), _yaml_key(key, text))
                stack.append((value, child_path(path, name), depth + 1))
        elif isinstance(node, yaml.SequenceNode):
            out.add(Node(path=path, kind="array", start=start, end=end, size=len(node.value), depth=depth))
            for i in range(len(node.value) - 1, -1, -1):
                stack.append((node.value[i], child_path(path, i), depth + 1))
        else:
            kind = {"int": "number", "float": "number", "bool": "boolean", "null": "null"}.get(
                str(node.tag).rsplit(":", 1)[-1], "string"
            )
            out.add(Node(path=path, kind=kind, start=start, end=end, depth=depth))


def _yaml_span(node: yaml.Node, text: str) -> tuple[int, int]:
    start, end = node.start_mark.index, node.end_mark.index
    while end > start and text[end - 1] in " \t\r\n":
        end -= 1  # block collections end at the next token; the value's text ends before the gap
    return start, end


def _yaml_key(key: yaml.Node, text: str) -> str:
    """A mapping key as a path step: a scalar's value; a collection key (`? [a, b]`) by its source text."""
    import yaml

    if isinstance(key, yaml.ScalarNode):
        return str(key.value)
    return text[key.start_mark.index : min(key.end_mark.index, key.start_mark.index + MAX_KEY_CHARS + 1)]


#: The name is stripped in Python: `\s*([^\]]+?)\s*` let three runs share the blanks, cubic on a long run.
_TOML_HEADER = re.compile(r"^\s*(\[\[?)([^\]]*)\]\]?\s*(#.*)?$")
_TOML_KEY_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.\"' -")


#: Dots in a line's key part past which a file is refused before tomllib reads it (a 50,000-part dotted
#: key took tomllib 40 s); generous, as dots in a multi-line string's lines are counted too.
_TOML_MAX_DOTS = 5 * MAX_DEPTH


def _toml_key_part(line: str) -> str:
    """The part of a line that can hold key parts: a header's name, or what precedes `=`."""
    stripped = line.lstrip()
    return stripped.partition("]")[0] if stripped.startswith("[") else line.partition("=")[0]


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

    lines = text.split("\n")
    too_deep = f"{label} nests deeper than {MAX_DEPTH} levels; rename it to .txt to read it as text"
    if any(_toml_key_part(line).count(".") > _TOML_MAX_DOTS for line in lines):
        raise UnsupportedArtifact(too_deep)  # before tomllib, which is quadratic in a key's parts
    try:
        data = tomllib.loads(text)
    except ValueError as exc:  # TOMLDecodeError, or an integer past int()'s 4,300-digit limit
        raise UnsupportedArtifact(f"{label} is not valid TOML ({str(exc)[:300]}); read it as text") from exc
    except RecursionError:  # tomllib recurses into nested arrays and inline tables
        raise UnsupportedArtifact(too_deep) from None
    out = _Collector(text, label)
    out.add(Node(path="$", kind="object", start=0, end=len(text.rstrip()), size=len(data), depth=0))
    nodes = out.nodes
    table = "$"
    array_counts: dict[str, int] = {}
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
            table_node = out.add(
                Node(path=table, kind="object", start=start, end=start + len(line), depth=table.count("."))
            )
        elif (key := _toml_key(line)) is not None and not line.lstrip().startswith("#"):
            value_lines = _toml_value_lines(lines, i, line.partition("=")[2].lstrip())
            end = offset + sum(len(lines[k]) + 1 for k in range(i, i + value_lines)) - 1
            path = table
            for part in key.split("."):
                path = child_path(path, part.strip().strip("\"'"))
            out.add(Node(path=path, kind="value", start=start, end=end, depth=path.count(".")))
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
