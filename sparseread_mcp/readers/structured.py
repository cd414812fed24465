"""JSON, YAML and TOML: a key-path outline, key-path anchors (`cfg.json#$.a.b[0]`) and array filters.

Each value of the document has a node with its exact span, so an item's text is always the verbatim
source of the value its key path names. Passages are the largest values that fit a passage, with
their key path indexed as keywords. `intent.query` filters an array by a field:
`$.items[?status=error]` (also `!=`, `<`, `>`, `~` for contains) or lists `$.items[*]`.
"""

from __future__ import annotations

import json
import re
from bisect import bisect_left
from dataclasses import dataclass
from pathlib import Path

from ..errors import AnchorError, IntentError
from ..files.anchors import Anchor
from ..files.artifacts import Artifact
from ..files.lines import LineIndex
from ..models import OpResult
from ..select.configuration import Configuration
from ..vocabulary import Action
from .base import LineAnchors, OutlineEntry, ParsedArtifact, Passage
from .structured_nodes import Node, json_nodes, toml_nodes, yaml_nodes

PARSERS = {".json": json_nodes, ".geojson": json_nodes, ".yaml": yaml_nodes, ".yml": yaml_nodes, ".toml": toml_nodes}
_OUTLINE_DEPTH = 3
_OUTLINE_ENTRIES = 300
MAX_RESULT_CHARS = 50_000
_LATER_ELEMENT = re.compile(r"\[(?!0\])\d+\]")  # any index but [0]
_PATH_WORDS = re.compile(r"[A-Za-z0-9_]+")


class KeyPathAnchors(LineAnchors):
    records = True

    def __init__(self, nodes: list[Node]) -> None:
        self._by_span = {(n.start, n.end): n for n in reversed(nodes)}  # outermost wins on equal spans
        self._by_path = {n.path: n for n in nodes}

    def anchor_for(self, parsed: ParsedArtifact, start: int, end: int) -> Anchor:
        node = self._by_span.get((start, end))
        if node is None:
            return super().anchor_for(parsed, start, end)
        return Anchor(kind="keypath", name=node.path)

    def span_of(self, parsed: ParsedArtifact, anchor: Anchor) -> tuple[int, int]:
        if anchor.kind != "keypath":
            return super().span_of(parsed, anchor)
        node = self._by_path.get(anchor.name or "")
        if node is None:
            near = sorted(p for p in self._by_path if p.count(".") + p.count("[") <= 1)[:15]
            raise AnchorError(f"no key path {anchor.name!r} in {parsed.artifact.path}; top level: {', '.join(near)}")
        return node.start, node.end


class StructuredReader:
    name = "structured"
    types = frozenset({"json", "yaml", "toml"})
    actions: frozenset[Action] = frozenset({"scout", "focus", "collect", "refine", "verify", "check"})
    binary = False
    #: How it can answer (method, exposure form); a preview lists them.
    configurations: tuple[Configuration, ...] = (
        Configuration("bm25+key_paths", "values"),
        Configuration("key_path", "snippets"),
        Configuration("array_filter", "result"),
        Configuration("any", "full_view"),
    )

    def accepts(self, path: Path) -> bool:
        return path.suffix.lower() in PARSERS

    def parse(self, artifact: Artifact, *, passage_chars: int) -> ParsedArtifact:
        suffix = Path(artifact.path).suffix.lower()
        nodes = PARSERS[suffix](artifact.text, label=artifact.path)
        index = LineIndex(artifact.text)
        kind = {".yml": "yaml", ".geojson": "json"}.get(suffix, suffix.lstrip("."))
        return ParsedArtifact(
            artifact=artifact,
            type=kind,
            lines=index,
            passages=_passages(nodes, 2 * passage_chars),
            outline=_outline(nodes, index, artifact.text),
            anchors=KeyPathAnchors(nodes),
            queries=ArrayFilter(artifact.text, nodes) if kind == "json" else None,
        )


def _passages(nodes: list[Node], limit: int) -> tuple[Passage, ...]:
    """The largest values that fit `limit` characters (a value too large alone still gets one)."""
    by_path = {n.path: n for n in nodes}
    chosen: list[Node] = []
    for node in nodes:
        parent = _parent(node.path)
        parent_node = by_path.get(parent) if parent else None
        fits = node.end - node.start <= limit
        parent_fits = parent_node is not None and parent_node.end - parent_node.start <= limit
        if (fits and not parent_fits) or (not fits and node.kind not in ("object", "array")):
            chosen.append(node)
    chosen.sort(key=lambda n: n.start)
    return tuple(
        Passage(
            index=i,
            start=n.start,
            end=n.end,
            kind="code",
            section=n.path,
            keywords=" ".join(_PATH_WORDS.findall(n.path)),
        )
        for i, n in enumerate(chosen)
    )


def _parent(path: str) -> str | None:
    if path == "$":
        return None
    cut = max(path.rfind("."), path.rfind("["))
    return path[:cut] if cut > 0 else "$"


def _outline(nodes: list[Node], index: LineIndex, text: str) -> tuple[OutlineEntry, ...]:
    entries = []
    by_path = {n.path: n for n in reversed(nodes)}  # the first wins; a scan per array was quadratic
    for node in nodes:
        if node.depth > _OUTLINE_DEPTH or _LATER_ELEMENT.search(node.path):
            continue  # one example element per array keeps the outline short
        described = node.kind
        if node.kind == "object":
            described = f"object{{{node.size}}}"
        elif node.kind == "array":
            first = by_path.get(f"{node.path}[0]")
            described = f"array[{node.size}]" + (f" of {first.kind}" if first else "")
        entries.append(
            OutlineEntry(
                title=f"{node.path}: {described}",
                anchor=node.path,
                first_line=index.line_of(node.start),
                last_line=index.line_of(max(node.start, node.end - 1)),
                level=node.depth + 1,
            )
        )
        if len(entries) >= _OUTLINE_ENTRIES:
            break
    return tuple(entries)


class ArrayFilter:
    """`$.items[?field=value]` and `$.items[*]` over a JSON document: matching elements and their paths."""

    def __init__(self, text: str, nodes: list[Node]) -> None:
        self._text = text
        self._nodes = {n.path: n for n in nodes}

    def project(self, destination: Path, *, quota_bytes: int) -> OpResult:
        raise IntentError("view='projection' writes tables (CSV, TSV, JSONL, Parquet, XLSX); for JSON use intent.query")

    def run(self, query: str) -> OpResult:
        match = parse_filter(query.strip())
        if match is None:
            raise IntentError(
                "for JSON, intent.query filters an array: '$.items[?status=error]' (=, !=, <, >, ~ contains) "
                "or lists one: '$.items[*]'"
            )
        array = self._nodes.get(match.path)
        if array is None or array.kind != "array":
            raise IntentError(f"{match.path!r} is not an array in this document; see the outline")
        rows: list[list[str | int | float | bool | None]] = []
        size = 0
        capped = False
        for i in range(array.size):
            element = self._nodes[f"{array.path}[{i}]"]
            value = json.loads(self._text[element.start : element.end])
            if match.field is not None and not _matches(value, match.field.strip(), match.op, match.value.strip()):
                continue
            source = self._text[element.start : element.end]
            if size + len(source) > MAX_RESULT_CHARS:
                capped = True
                break
            size += len(source)
            rows.append([element.path, source])
        return OpResult(
            value=len(rows),
            scanned=f"{array.size} elements of {array.path}",
            columns=["path", "json"],
            rows=rows,
            row_count=len(rows),
            rows_scanned=array.size,
            query=query,
            capped=capped,
            provenance=[f"{array.path} scanned element by element"],
        )


def _matches(element: object, field: str, op: str, wanted: str) -> bool:
    if not isinstance(element, dict):
        return False
    value = element
    for part in field.lstrip("@.").split("."):
        if not isinstance(value, dict) or part not in value:
            return False
        value = value[part]
    target: object = wanted.strip("'\"")
    if op in ("<", ">"):
        try:
            number, limit = float(value), float(str(target))  # type: ignore[arg-type]
        except (TypeError, ValueError):
            return False
        return number < limit if op == "<" else number > limit
    text = value if isinstance(value, str) else json.dumps(value)
    if op == "~":
        return str(target).casefold() in text.casefold()
    return (text == target) == (op == "=")


@dataclass(frozen=True, slots=True)
class FilterQuery:
    """`$.path[?field op value]`, or `$.path[*]` (field None): every element."""

    path: str
    field: str | None = None
    op: str = ""
    value: str = ""


def parse_filter(query: str) -> FilterQuery | None:
    """The filter a query names, or None. The path is the shortest prefix that leaves a valid `[...]`.

    A parser rather than the pattern it replaces, whose lazy path and blank-sharing field backtracked in
    cubic time on `$[? [? [? ...`: one pass finds the operators, then each `[` is tried in O(1).
    """
    if not query.startswith("$") or not query.endswith("]") or "\n" in query:
        return None
    ops = [i for i, char in enumerate(query) if char in "=!<>~"]
    last = len(query) - 1  # the closing `]`
    start = query.find("[")
    while start >= 0:
        if start == last - 2 and query[start + 1] == "*":
            return FilterQuery(query[:start])
        if start + 1 < last and query[start + 1] == "?":
            k = bisect_left(ops, start + 2)
            cut = ops[k] if k < len(ops) and ops[k] < last else -1
            if cut > start + 2 and (query[cut] != "!" or query.startswith("!=", cut)):
                op = "!=" if query.startswith("!=", cut) else query[cut]
                return FilterQuery(query[:start], query[start + 2 : cut], op, query[cut + len(op) : last])
        start = query.find("[", start + 1)
    return None
