"""build_scripts/ has no import cycles: no module imports, directly or through others, a
module that imports it back (imports inside functions count: they are how cycles hide;
those under ``if TYPE_CHECKING:`` do not: they never run).
A cycle makes a module's names depend on which side was imported first; the hooks' and the
benchmarks' state now travels as arguments and return values instead (issue 23)."""

from __future__ import annotations

import ast
from pathlib import Path

from helpers import ROOT

PACKAGE = "build_scripts"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted((ROOT / PACKAGE).rglob("*.py"))}


def _nodes(tree: ast.AST):
    """Every node of ``tree`` but those under ``if TYPE_CHECKING:``."""
    for node in ast.iter_child_nodes(tree):
        test = node.test if isinstance(node, ast.If) else None
        if isinstance(test, ast.Name | ast.Attribute) and "TYPE_CHECKING" in ast.unparse(test):
            yield from (n for child in node.orelse for n in [child, *_nodes(child)])
            continue
        yield node
        yield from _nodes(node)


def imports(name: str, path: Path, known: set[str]) -> set[str]:
    """The modules of ``known`` that the module ``name`` (file ``path``) imports."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in _nodes(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*up, base] if base else up)
            # `from pkg import mod` imports the module pkg.mod; `from mod import name`, mod
            targets = [
                f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names
            ]
        else:
            continue
        found |= {t for t in targets if t in known and t != name}
    return found


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle per strongly connected group of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    out = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                out.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def graph_of(found: dict[str, Path]) -> dict[str, set[str]]:
    known = set(found)
    return {name: imports(name, path, known) for name, path in found.items()}


def test_the_checker_finds_a_cycle_through_a_function_level_import(tmp_path):
    a = tmp_path / "a.py"
    b = tmp_path / "b.py"
    a.write_text("from . import b\n", "utf-8")
    b.write_text("def f():\n    from .a import x\n", "utf-8")
    graph = {"p.a": imports("p.a", a, {"p.a", "p.b"}), "p.b": imports("p.b", b, {"p.a", "p.b"})}
    assert cycles(graph) == [["p.a", "p.b"]]
    # an import for type annotations only is no cycle
    b.write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .a import x\n")
    assert imports("p.b", b, {"p.a", "p.b"}) == set()


def test_build_scripts_has_no_import_cycle():
    graph = graph_of(modules())
    # the ones issue 23 named, seen by the checker as edges one way only
    assert "build_scripts.hooks.home" in graph["build_scripts.hooks.numbers"]
    assert "build_scripts.bench.contract" in graph["build_scripts.bench.bench_engines"]
    assert cycles(graph) == []
