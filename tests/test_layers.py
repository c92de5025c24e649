"""The package layering (ascendctl/__init__.py): the import-linter contracts of pyproject.toml hold, no two modules
import each other (directly or round a longer loop), and no module below the CLI defers an import into a function.

Imports under `if TYPE_CHECKING:` count as imports for the first two (a type a module names is a dependency all the
same) and are module level for the third. The CLI (`ascendctl/cli/`) is the one place imports are deferred, to keep
start-up fast; `ascendctl_engine/inenv/` holds scripts run by an engine environment's interpreter, which import that
environment's packages where they need them.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path

import grimp

REPO = Path(__file__).resolve().parent.parent
PACKAGES = ("ascendctl", "ascendctl_engine")
# (root, parts below it whose modules may import inside functions)
SOURCES = ((REPO / "ascendctl", ("cli",)), (REPO / "engine" / "ascendctl_engine", ("inenv",)))


def test_the_import_contracts_hold() -> None:
    # import-linter's console script, next to this interpreter (the project venv); its click command otherwise
    lint = Path(sys.executable).with_name("lint-imports")
    runner = "from importlinter.cli import lint_imports_command; lint_imports_command()"
    command = [str(lint)] if lint.exists() else [sys.executable, "-c", runner]
    proc = subprocess.run(
        [*command, "--no-cache", str(REPO / "pyproject.toml")],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "0 broken" in proc.stdout, proc.stdout


def _cycles(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (or a module importing itself), each as one
    loop through it: Tarjan's algorithm, iterative (the graph is a few hundred modules deep at most)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            for nxt in edges:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
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
                    if len(component) > 1 or node in graph[node]:
                        found.append(_loop(graph, set(component)))
    return found


def _loop(graph: Mapping[str, set[str]], component: set[str]) -> list[str]:
    """One import loop inside a strongly connected component, as `a → b → … → a` (a shortest one from its first
    module, by breadth-first search)."""
    start = min(component)
    parents: dict[str, str] = {}
    queue = [start]
    while queue:
        node = queue.pop(0)
        for nxt in sorted(graph[node] & component):
            if nxt == start:
                path = [node]
                while path[-1] != start:
                    path.append(parents[path[-1]])
                return [*reversed(path), start]
            if nxt not in parents:
                parents[nxt] = node
                queue.append(nxt)
    return sorted(component)  # pragma: no cover - a component always holds a loop


def test_no_module_imports_itself_round_a_loop() -> None:
    built = grimp.build_graph(*PACKAGES, cache_dir=None)
    graph = {m: built.find_modules_directly_imported_by(m) for m in built.modules}
    loops = _cycles(graph)
    assert loops == [], "import cycles:\n" + "\n".join(" → ".join(loop) for loop in loops)


def test_the_cycle_finder_reports_a_loop() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set(), "e": {"e"}}
    assert sorted(_cycles(graph)) == [["a", "b", "c", "a"], ["e", "e"]]


def _local_imports(tree: ast.AST) -> Iterator[ast.stmt]:
    """`import` / `from … import` statements inside a function or method body (a lambda cannot hold one), each once."""
    seen: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for inner in ast.walk(node):
                if isinstance(inner, (ast.Import, ast.ImportFrom)) and id(inner) not in seen:
                    seen.add(id(inner))
                    yield inner


def test_imports_are_at_module_level_below_the_cli() -> None:
    found: set[str] = set()
    for root, exempt in SOURCES:
        for path in sorted(root.rglob("*.py")):
            if path.relative_to(root).parts[0] in exempt:
                continue
            tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
            found |= {f"{path.relative_to(REPO)}:{node.lineno}: {ast.unparse(node)}" for node in _local_imports(tree)}
    assert not found, "imports inside functions (move them to module level):\n" + "\n".join(sorted(found))


def test_the_local_import_finder_sees_methods_and_nested_functions() -> None:
    source = "import os\nclass A:\n    def f(self):\n        def g():\n            import re\n        from x import y\n"
    assert sorted(node.lineno for node in _local_imports(ast.parse(source))) == [5, 6]
