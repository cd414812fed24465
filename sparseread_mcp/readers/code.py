"""Source code: tree-sitter symbols as the outline, symbol-sized passages, and a lossy compact view.

Each line belongs to the innermost symbol that contains it, so a method is one passage, its class's
header and fields another, and module-level code is grouped between them. Names, signatures and
docstrings are indexed as keywords so that goal-driven location finds the right symbol. Languages
without a grammar wheel fall back to the text reader.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from ..deadline import TimedOut, checkpoint
from ..errors import MissingDependency, UnsupportedArtifact
from ..files.artifacts import Artifact
from ..files.lines import LineIndex
from ..select.configuration import Configuration
from ..vocabulary import Action
from .base import OutlineEntry, ParsedArtifact, Passage
from .code_languages import BY_SUFFIX, LanguageSpec

if TYPE_CHECKING:
    from tree_sitter import Language, Node, Parser, Tree

_FUNCTION_VALUES = frozenset({"arrow_function", "function_expression", "function", "generator_function"})
_NEEDS_BODY = frozenset({"struct_specifier", "enum_specifier", "union_specifier", "class_specifier"})
_NAME_NODES = frozenset(
    {"identifier", "field_identifier", "qualified_identifier", "destructor_name", "operator_name", "type_identifier"}
)
_SIGNATURE_CHARS = 200
_NAME_CHARS = 200
_READ_BYTES = 64 * 1024
#: Progress callbacks between deadline checks (tree-sitter calls back about every 0.1 ms).
_CHECK_EVERY = 64
#: Definitions nested deeper than this are not outlined as symbols of their own.
MAX_SYMBOL_DEPTH = 32
_TINY_CHARS = 80


@dataclass(frozen=True, slots=True)
class _Symbol:
    name: str
    level: int
    first_line: int  # 1-based, inclusive
    last_line: int
    signature: str
    doc: str


class CodeReader:
    name = "code"
    types = frozenset(spec.name for spec in BY_SUFFIX.values())
    actions: frozenset[Action] = frozenset({"scout", "focus", "collect", "refine", "verify", "check"})
    binary = False
    #: How it can answer (method, exposure form); a preview lists them.
    configurations: tuple[Configuration, ...] = (
        Configuration("bm25+symbols", "snippets"),
        Configuration("symbol", "snippets"),
        Configuration("any", "full_view"),
        Configuration("any", "compact"),
    )

    def accepts(self, path: Path) -> bool:
        return path.suffix.lower() in BY_SUFFIX

    def parse(self, artifact: Artifact, *, passage_chars: int) -> ParsedArtifact:
        spec = BY_SUFFIX[Path(artifact.path).suffix.lower()]
        from tree_sitter import Parser

        source = artifact.text.encode("utf-8")
        tree = parse_source(Parser(_language(spec)), source, label=artifact.path)
        index = LineIndex(artifact.text)
        symbols: list[_Symbol] = []
        comment_rows: set[int] = set()
        _walk(tree.root_node, source, spec, symbols, comment_rows, index)
        passages = _passages(index, symbols, passage_chars)
        outline = tuple(
            OutlineEntry(
                title=s.name,
                anchor=s.name,
                first_line=s.first_line,
                last_line=s.last_line,
                level=s.level,
                signature=s.signature,
            )
            for s in symbols
        )
        return ParsedArtifact(
            artifact=artifact,
            type=spec.name,
            lines=index,
            passages=passages,
            outline=outline,
            compact_text=_compact(index, comment_rows),
        )


def parse_source(parser: Parser, source: bytes, *, label: str) -> Tree:
    """Parse through callbacks: tree-sitter holds the GIL through a plain `parse` (1 MB of garbage took
    2.3 s, every other session waiting), and takes it back for each progress callback, which also stops
    the parse once the call's deadline passed (as TimedOut)."""
    view = memoryview(source)
    calls = 0

    def read(offset: int, _point: object) -> bytes:
        return bytes(view[offset : offset + _READ_BYTES])

    def stop(_offset: int, _has_error: bool) -> bool:
        nonlocal calls
        calls += 1
        if calls % _CHECK_EVERY:
            return False
        try:
            checkpoint()
        except TimedOut:
            return True
        return False

    try:
        return parser.parse(read, progress_callback=stop)
    except ValueError:  # "Parsing failed": stopped above, or tree-sitter gave up
        parser.reset()  # a halted parser would resume this parse on its next call
        checkpoint()
        raise UnsupportedArtifact(f"{label} could not be parsed as code; read it with a line anchor") from None


@lru_cache(maxsize=32)
def _language(spec: LanguageSpec) -> Language:
    from tree_sitter import Language

    try:
        module = importlib.import_module(spec.module)
    except ImportError as exc:
        wheel = spec.module.replace("_", "-")
        raise MissingDependency(f"reading {spec.name} needs its grammar: pip install {wheel}") from exc
    return Language(getattr(module, spec.loader)())


def _text(node: Node | None) -> str:
    return node.text.decode("utf-8", "replace") if node is not None and node.text is not None else ""


def _name(node: Node) -> str | None:
    if node.type == "variable_declarator":
        value = node.child_by_field_name("value")
        if value is None or value.type not in _FUNCTION_VALUES:
            return None
    if node.type in _NEEDS_BODY and node.child_by_field_name("body") is None:
        return None  # `struct point p;` uses a type, it does not define one
    if node.type == "impl_item":
        return _text(node.child_by_field_name("type")) or None
    receiver = node.child_by_field_name("receiver") if node.type == "method_declaration" else None
    if receiver is not None and (field := node.child_by_field_name("name")) is not None:
        # Go methods read as Type.Method, like methods nested in a class elsewhere.
        owner = [w for w in _text(receiver).strip("()").replace("*", " ").split() if w[:1].isalpha()]
        return f"{owner[-1]}.{_text(field)}" if owner else _text(field)
    if (field := node.child_by_field_name("name")) is not None:
        return _text(field)
    declarator = node.child_by_field_name("declarator")
    while declarator is not None:  # C and C++: int *name(args) nests declarators
        if declarator.type in _NAME_NODES:
            return _text(declarator)
        declarator = declarator.child_by_field_name("declarator")
    return next((_text(c) for c in node.named_children if c.type in _NAME_NODES | {"constant", "name"}), None)


def _walk(
    root: Node,
    source: bytes,
    spec: LanguageSpec,
    out: list[_Symbol],
    comment_rows: set[int],
    index: LineIndex,
) -> None:
    """Symbols in pre-order, with a tree cursor: no recursion (50,000 nested parentheses overflowed it) and
    no list of a node's children (a minified file's one body held 600,000), only a scope per level.

    Definitions nested deeper than MAX_SYMBOL_DEPTH are no symbols of their own (their lines stay with the
    enclosing one): no real code nests so far, and each level would repeat the whole dotted name.
    """
    cursor = root.walk()
    if not cursor.goto_first_child():
        return
    scopes: list[tuple[str, ...]] = [()]  # the scope of the nodes at each level below the root
    visited = 0
    while True:
        visited += 1
        if visited % 4096 == 0:
            checkpoint()
        child = cursor.node
        inner_scope: tuple[str, ...] | None = None  # None: do not descend
        if child is not None and child.type in spec.comments:
            _note_comment(child, comment_rows, index)
        elif child is not None:
            inner_scope = scopes[-1]
            if child.type in spec.definitions and len(inner_scope) < MAX_SYMBOL_DEPTH and (name := _name(child)):
                inner_scope = (*inner_scope, " ".join(name.split())[:_NAME_CHARS])
                out.append(_symbol(child, source, inner_scope))
        if inner_scope is not None and cursor.goto_first_child():
            scopes.append(inner_scope)
            continue
        while not cursor.goto_next_sibling():
            if len(scopes) == 1:
                return
            cursor.goto_parent()
            scopes.pop()


def _symbol(node: Node, source: bytes, scope: tuple[str, ...]) -> _Symbol:
    first = node.start_point.row + 1
    parent = node.parent
    if parent is not None and parent.type == "decorated_definition":
        first = parent.start_point.row + 1  # decorators belong to the definition
    last = node.end_point.row + (0 if node.end_point.column == 0 and node.end_point.row > 0 else 1)
    return _Symbol(".".join(scope), len(scope), first, max(first, last), _signature(node, source), _doc(node))


def _signature(node: Node, source: bytes) -> str:
    body = node.child_by_field_name("body")
    end = body.start_byte if body is not None else node.end_byte
    head = source[node.start_byte : end].decode("utf-8", "replace")
    if body is None:
        head = head.split("\n", 1)[0]
    head = " ".join(head.split()).rstrip("{:").strip()
    return head if len(head) <= _SIGNATURE_CHARS else head[: _SIGNATURE_CHARS - 1] + "…"


def _doc(node: Node) -> str:
    body = node.child_by_field_name("body")
    if body is not None and body.named_children:
        first = body.named_children[0]
        if first.type == "expression_statement" and first.named_children and first.named_children[0].type == "string":
            return _text(first).strip("\"' \n").split("\n", 1)[0]
    previous = node.prev_named_sibling
    if previous is not None and "comment" in previous.type and previous.end_point.row + 1 >= node.start_point.row:
        return _text(previous).lstrip("/#*! ").split("\n", 1)[0]
    return ""


def _note_comment(node: Node, rows: set[int], index: LineIndex) -> None:
    """Rows that hold nothing but this comment (the compact view drops them)."""
    first, last = node.start_point.row, node.end_point.row
    line = index.text[index.starts[first] : index.line_end(first + 1)]
    before = line.encode("utf-8")[: node.start_point.column].decode("utf-8", "replace")
    if before.strip():
        first += 1  # code precedes the comment on its first line: keep that line
    rows.update(range(first, last + 1))


def _passages(index: LineIndex, symbols: list[_Symbol], target: int) -> tuple[Passage, ...]:
    owner = [-1] * (index.line_count + 1)
    for number, symbol in enumerate(symbols):  # pre-order: inner symbols overwrite their parents
        for line in range(symbol.first_line, min(symbol.last_line, index.line_count) + 1):
            owner[line] = number
    spans: list[tuple[int, int, int]] = []
    line = 1
    while line <= index.line_count:
        start_line = line
        while line + 1 <= index.line_count and owner[line + 1] == owner[start_line]:
            line += 1
        spans.extend((s, e, owner[start_line]) for s, e in _chunk_lines(index, start_line, line, target))
        line += 1
    passages: list[Passage] = []
    for s, e, who in _merge_tiny(index, spans):
        owned = symbols[who] if who >= 0 else None
        keywords = f"{owned.name} {owned.signature} {owned.doc}" if owned else ""
        passages.append(
            Passage(
                index=len(passages),
                start=s,
                end=e,
                kind="symbol" if owned else "code",
                section=owned.name if owned else "",
                keywords=keywords,
            )
        )
    return tuple(passages)


def _merge_tiny(index: LineIndex, spans: list[tuple[int, int, int]]) -> list[tuple[int, int, int]]:
    """A stray comment or decorator line joins the passage right after it (only blank lines between)."""
    merged: list[tuple[int, int, int]] = []
    pending: int | None = None
    for i, (s, e, who) in enumerate(spans):
        start = pending if pending is not None else s
        pending = None
        following = spans[i + 1] if i + 1 < len(spans) else None
        if e - s < _TINY_CHARS and following is not None and not index.text[e : following[0]].strip():
            pending = start
            continue
        merged.append((start, e, who))
    return merged


def _chunk_lines(index: LineIndex, first: int, last: int, target: int) -> list[tuple[int, int]]:
    """Whole-line chunks of [first, last] without blank edges, cut at blank lines when over 2x target."""
    rows = [n for n in range(first, last + 1) if index.text[index.starts[n - 1] : index.line_end(n)].strip()]
    if not rows:
        return []
    chunks: list[tuple[int, int]] = []
    group = [rows[0]]
    for n in rows[1:]:
        size = index.line_end(n) - index.starts[group[0] - 1]
        gap = n - group[-1] > 1
        if size > 2 * target or (gap and size > target):
            chunks.append((index.starts[group[0] - 1], index.line_end(group[-1])))
            group = []
        group.append(n)
    chunks.append((index.starts[group[0] - 1], index.line_end(group[-1])))
    return chunks


def _compact(index: LineIndex, comment_rows: set[int]) -> str:
    kept = []
    for number in range(1, index.line_count + 1):
        line = index.text[index.starts[number - 1] : index.line_end(number)]
        if line.strip() and (number - 1) not in comment_rows:
            kept.append(line)
    return "\n".join(kept)
