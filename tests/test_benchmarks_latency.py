"""The latency benchmark script's own logic (the timings themselves are not asserted)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parent.parent


def load_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("latency", REPO / "benchmarks" / "latency.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_commands_table_has_the_required_rows() -> None:
    labels = [label for label, _ in load_script().COMMANDS]
    for needed in ("ascendctl --help", "ascendctl validate profiles/*.yaml", "ascendctl schema"):
        assert needed in labels


def test_globs_expand_relative_to_repo() -> None:
    latency = load_script()
    expanded = latency.expand(["validate", "profiles/*.yaml"])
    assert expanded[0] == "validate"
    assert expanded[1:] == sorted(str(p.relative_to(REPO)) for p in (REPO / "profiles").glob("*.yaml"))
    assert latency.expand(["nothing/*.none"]) == ["nothing/*.none"]


def test_registered_commands_read_from_help() -> None:
    script = Path(sys.executable).with_name("ascendctl")
    if not script.exists():
        pytest.skip("the console script is not installed next to this interpreter")
    names = load_script().registered_commands(script)
    assert {"validate", "schema"} <= names
    assert not any(name.startswith("-") for name in names)
