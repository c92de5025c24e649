"""One vocabulary: every literal set of `ascendctl_engine.vocab` is declared there only — no module restates one
(a second copy is how backend / family / graph-mode lists drifted apart before)."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import get_args

from ascendctl_engine import vocab

REPO = Path(__file__).resolve().parents[1]
VOCABULARIES = {
    name: frozenset(get_args(value))
    for name, value in vars(vocab).items()
    if not name.startswith("_") and get_args(value) and all(isinstance(a, str) for a in get_args(value))
}


def _literal_sets(tree: ast.AST) -> list[tuple[int, frozenset[str]]]:
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == "Literal":
            elts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            values = [e.value for e in elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
            if len(values) == len(elts) and len(values) > 1:
                out.append((node.lineno, frozenset(values)))
    return out


def test_the_vocabularies_are_declared_once() -> None:
    assert {"Backend", "HardwareFamily", "GraphMode", "Task", "EplbMode", "Role", "Quantization"} <= set(VOCABULARIES)
    restated = []
    for path in [*(REPO / "ascendctl").rglob("*.py"), *(REPO / "engine").rglob("*.py")]:
        if path.name == "vocab.py":
            continue
        for line, values in _literal_sets(ast.parse(path.read_text(encoding="utf-8"))):
            for name, known in VOCABULARIES.items():
                if values == known:
                    restated.append(f"{path.relative_to(REPO)}:{line} restates vocab.{name}")
    assert not restated, restated
