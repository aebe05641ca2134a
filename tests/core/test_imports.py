"""The package's import graph has no cycle, and no module is over 500 lines.

The graph is built from the source (AST), not by importing: every ``import`` counts, including the ones inside
functions (a function-level import hides a cycle from the interpreter, not from a reader). Imports under
``if TYPE_CHECKING:`` are skipped: they never run. ``from pkg import name`` is an edge to ``pkg.name`` when that is a
module, else to ``pkg`` itself.
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "halluscope"  # read, never imported
MAX_LINES = 500


def _modules() -> dict[str, tuple[Path, str]]:
    """Dotted module name -> (path, source) for every .py file of the package."""
    out = {}
    for path in sorted(SRC.rglob("*.py")):
        parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = (path, path.read_text(encoding="utf-8"))
    return out


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.AST):
    """Every Import/ImportFrom node, skipping ``if TYPE_CHECKING:`` bodies."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            stack.extend(node.orelse)
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        stack.extend(ast.iter_child_nodes(node))


def _resolve(name: str, mods: dict) -> str | None:
    """The longest known module that ``name`` is or lies inside."""
    while name:
        if name in mods:
            return name
        name = name.rpartition(".")[0]
    return None


def import_graph() -> dict[str, set[str]]:
    mods = _modules()
    graph: dict[str, set[str]] = {m: set() for m in mods}
    for mod, (path, source) in mods.items():
        package = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
        for node in _imports(ast.parse(source, str(path))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")
                    anchor = anchor[: len(anchor) - (node.level - 1)]
                    base = ".".join(anchor + ([base] if base else []))
                for alias in node.names:
                    sub = f"{base}.{alias.name}"
                    targets.append(sub if sub in mods else base)
            for target in targets:
                hit = _resolve(target, mods)
                if hit and hit != mod:
                    graph[mod].add(hit)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """For each module on a cycle, the shortest cycle through it (as a path a -> ... -> a), without repeats."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    comps: list[set[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, it = work[-1]
            child = next(it, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = set()
                while True:
                    top = stack.pop()
                    on_stack.discard(top)
                    comp.add(top)
                    if top == node:
                        break
                if len(comp) > 1:
                    comps.append(comp)
    out: list[list[str]] = []
    for comp in comps:
        for start in sorted(comp):
            cycle = _shortest_cycle(graph, comp, start)
            low_at = cycle.index(min(cycle[:-1]))
            canon = cycle[low_at:-1] + cycle[:low_at] + [cycle[low_at]]
            if canon not in out:
                out.append(canon)
    return out


def _shortest_cycle(graph: dict[str, set[str]], comp: set[str], start: str) -> list[str]:
    """The shortest path start -> ... -> start inside one strongly connected component (BFS)."""
    prev: dict[str, str | None] = {start: None}
    frontier = [start]
    while frontier:
        nxt = []
        for node in frontier:
            for child in sorted(graph[node] & comp):
                if child == start:
                    path = [node]
                    while prev[path[-1]] is not None:
                        path.append(prev[path[-1]])  # type: ignore[arg-type]
                    return path[::-1] + [start]
                if child not in prev:
                    prev[child] = node
                    nxt.append(child)
        frontier = nxt
    raise AssertionError(f"{start} is on no cycle of its component")


def test_cycle_finder_finds_a_planted_cycle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set(), "e": {"e"}}
    assert cycles(graph) == [["a", "b", "c", "a"]]
    assert cycles({"a": {"b", "c"}, "b": {"a"}, "c": {"a"}}) == [["a", "b", "a"], ["a", "c", "a"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_the_graph_sees_function_level_imports():
    graph = import_graph()
    assert "halluscope.core.store" in graph["halluscope.core.stages"]
    assert all(n.startswith("halluscope") for deps in graph.values() for n in deps)


def test_no_import_cycle():
    found = cycles(import_graph())
    assert not found, "import cycles:\n" + "\n".join("  " + " -> ".join(c) for c in found)


def test_no_module_over_500_lines():
    sizes = {m: len(source.splitlines()) for m, (_, source) in _modules().items()}
    big = {m: n for m, n in sizes.items() if n > MAX_LINES}
    assert not big, "modules over %d lines: %s" % (MAX_LINES, big)
