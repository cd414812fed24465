"""The layout the design promises (issue #19): no import circles, counting imports under TYPE_CHECKING and
inside functions, few top-level modules, and modules and functions of one job. Read from the source, so it
holds for every import path."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import sparseread_mcp

PACKAGE = Path(sparseread_mcp.__file__).parent
#: Top-level modules beside the subpackages (the façade, configuration, errors and shared values).
MAX_TOP_LEVEL = 20


def _modules() -> dict[str, Path]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


def _imported(name: str, path: Path, modules: dict[str, Path]) -> Iterator[str]:
    """Every module `name` imports, wherever the import statement stands."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names if alias.name in modules)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                source = ".".join([*base, *([node.module] if node.module else [])])
            else:
                source = node.module or ""
            for alias in node.names:  # `from X import y`: the module X.y when there is one, else X
                target = f"{source}.{alias.name}" if f"{source}.{alias.name}" in modules else source
                if target in modules and target != name:
                    yield target


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (iterative Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, successors = work[-1]
            advanced = False
            for successor in successors:
                if successor not in index:
                    index[successor] = low[successor] = len(index)
                    stack.append(successor)
                    on_stack.add(successor)
                    work.append((successor, iter(sorted(graph[successor]))))
                    advanced = True
                    break
                if successor in on_stack:
                    low[node] = min(low[node], index[successor])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    circles.append(sorted(component))
    return circles


def test_no_module_imports_itself_through_others() -> None:
    modules = _modules()
    graph = {name: set(_imported(name, path, modules)) for name, path in modules.items()}
    assert _circles(graph) == []


def test_the_circle_finder_finds_a_circle() -> None:
    # The check above must be able to fail: a circle through three modules is found, a chain is not.
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _circles({"a": {"b"}, "b": {"c"}, "c": set()}) == []


def test_few_modules_sit_beside_the_subpackages() -> None:
    top_level = sorted(p.stem for p in PACKAGE.glob("*.py") if p.stem not in ("__init__", "__main__"))
    assert len(top_level) <= MAX_TOP_LEVEL, top_level


#: Small modules with one job each, functions that fit on a screen (STYLE.md, issue #19).
MAX_MODULE_LINES = 450
MAX_FUNCTION_LINES = 80


def test_no_module_or_function_outgrows_one_job() -> None:
    long_modules, long_functions = [], []
    for name, path in sorted(_modules().items()):
        source = path.read_text(encoding="utf-8")
        if len(source.splitlines()) > MAX_MODULE_LINES:
            long_modules.append(name)
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > MAX_FUNCTION_LINES:
                    long_functions.append(f"{name}.{node.name} ({length} lines)")
    assert long_modules == [] and long_functions == []
