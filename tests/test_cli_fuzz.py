"""No traceback on any input: mutate one value of a curated profile to anything YAML can say and run the
everyday commands on it. Each must answer with exit 0, 1 or 2 — never 3 (internal error) — and never print a
traceback. Bounded example counts keep CI time small; the loader's own property test feeds it far more."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from ascendctl.cli import app

ROOT = Path(__file__).resolve().parents[1]
SOURCES = [ROOT / "profiles" / "cpu-demo.yaml", ROOT / "profiles" / "deepseek-r1-w8a8-2node-a2.yaml"]
BASES = [yaml.safe_load(p.read_text()) for p in SOURCES]
HOST = ROOT / "tests" / "fixtures" / "hosts" / "a2-910b3x8"
runner = CliRunner()

SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=30),
    st.sampled_from(["0.0.0.0", "::", "-x", "$(id)", "%n", "a\nb", "prepared:none", "latest-stable", "v0.7.1rc1"]),
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=6,
)


def leaves(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    if isinstance(node, dict):
        return [p for k, v in node.items() for p in leaves(v, (*prefix, k))] + [(*prefix, "__new__")]
    if isinstance(node, list):
        return [p for i, v in enumerate(node) for p in leaves(v, (*prefix, i))]
    return [prefix]


def mutate(doc: Any, path: tuple[Any, ...], value: Any) -> Any:
    import copy

    out = copy.deepcopy(doc)
    node = out
    for part in path[:-1]:
        node = node[part]
    node["unknown_key" if path[-1] == "__new__" else path[-1]] = value
    return out


@st.composite
def mutated(draw: st.DrawFn) -> str:
    base = draw(st.sampled_from(BASES))
    path = draw(st.sampled_from(leaves(base)))
    return yaml.safe_dump(mutate(base, path, draw(VALUES)), allow_unicode=True)


def answered(result: Any) -> None:
    assert result.exit_code in (0, 1, 2), (result.exit_code, result.output[-2000:])
    assert "Traceback" not in result.output


# CI runs 60 examples; ASCENDCTL_FUZZ_EXAMPLES=1000 for a longer hunt on a developer machine.
EXAMPLES = int(os.environ.get("ASCENDCTL_FUZZ_EXAMPLES", "60"))


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=mutated())
def test_everyday_commands_answer_every_profile(tmp_path_factory: Any, text: str) -> None:
    path = tmp_path_factory.mktemp("fuzz") / "p.yaml"
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    for argv in (
        ["validate", str(path)],
        ["plan", str(path), "--json"],
        ["serve", str(path), "--dry-run", "--json"],
        ["render", str(path), "--target", "script"],
        ["render", str(path), "--target", "k8s"],
        ["check", str(path), "--root", str(HOST), "--json"],
    ):
        answered(runner.invoke(app, argv, catch_exceptions=True))
