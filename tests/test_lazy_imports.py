"""What the everyday commands import: each loads the code it runs and no other command's (the timings live in
`benchmarks/latency.py`; this pins the behaviour that keeps them low)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import ascendctl.facts.matrix

REPO = Path(__file__).resolve().parent.parent

_PROBE = textwrap.dedent(
    """
    import contextlib, io, json, sys
    from ascendctl.cli import main
    with contextlib.redirect_stdout(io.StringIO()):
        code = main(sys.argv[1:])
    print(json.dumps({"code": code, "modules": sorted(sys.modules)}))
    """
)


def imported_by(*args: str) -> set[str]:
    """The modules a real `ascendctl ARGS` process has imported when the command returns."""
    proc = subprocess.run(
        [sys.executable, "-c", _PROBE, *args], cwd=REPO, capture_output=True, text=True, check=True, timeout=60
    )
    result = json.loads(proc.stdout.splitlines()[-1])
    assert result["code"] == 0, proc.stderr
    return set(result["modules"])


def test_validate_loads_no_adapters_and_no_other_command() -> None:
    modules = imported_by("validate", "profiles/cpu-demo.yaml", "profiles/cuda-qwen3-8b.yaml")
    assert "ascendctl.schema.loader" in modules
    assert not {m for m in modules if m.startswith(("ascendctl_engine.adapters", "ascendctl.facts.matrix"))}
    assert (
        not {"ascendctl.cli.render", "ascendctl.cli.check", "ascendctl.cli.engine", "ascendctl.outputs.render"}
        & modules
    )


def test_validate_loads_the_typed_field_claims_only_for_an_escape_hatch() -> None:
    # runtime.env is set: `profile.migration.typed-field` asks the adapters' claims, and nothing more.
    modules = imported_by("validate", "profiles/deepseek-r1-w8a8-2node-a2.yaml")
    assert "ascendctl_engine.adapters.typed_fields" in modules
    assert not {m for m in modules if m.startswith("ascendctl.facts.matrix")}
    assert (
        not {"ascendctl.plan.planner", "ascendctl.cli.render", "ascendctl.cli.check", "ascendctl.outputs.render"}
        & modules
    )


def test_matrix_json_loads_neither_the_planner_nor_the_explainer() -> None:
    modules = imported_by("matrix", "releases", "--json")
    assert {"ascendctl.facts.matrix.load", "ascendctl.facts.matrix.views"} <= modules
    unwanted = {
        "ascendctl.plan.planner",
        "ascendctl.facts.matrix.explainer",
        "ascendctl.facts.matrix.host_match",
        "ascendctl.facts.upstream",
    }
    assert not unwanted & modules
    assert "rich" not in modules


@pytest.mark.parametrize(
    ("args", "absent"),
    [
        (("plan", "profiles/deepseek-r1-w8a8-2node-a2.yaml"), {"ascendctl_engine.install_plan"}),
        (
            ("serve", "profiles/cpu-demo.yaml", "--dry-run"),
            {"ascendctl.facts.upstream", "ascendctl_engine.adapters.ascend_keys"},
        ),
    ],
)
def test_plan_loads_no_host_probes_and_no_renderer(args: tuple[str, ...], absent: set[str]) -> None:
    modules = imported_by(*args)
    assert {"ascendctl.plan.planner", "ascendctl_engine.adapters.parser_snapshot"} <= modules
    assert not {
        m for m in modules if m.startswith(("ascendctl_engine.host", "ascendctl.outputs.render", "ascendctl.check"))
    }
    assert not {"ascendctl.facts.matrix.host_match", "ascendctl.facts.matrix.filters", "ascendctl.cli.facts"} & modules
    assert not absent & modules


def test_matrix_package_names_resolve_to_their_modules() -> None:
    assert set(ascendctl.facts.matrix._LAZY) == set(ascendctl.facts.matrix.__all__)
    for name in ascendctl.facts.matrix.__all__:
        module = sys.modules.get(ascendctl.facts.matrix._LAZY[name]) or __import__(
            ascendctl.facts.matrix._LAZY[name], fromlist=["_"]
        )
        assert getattr(ascendctl.facts.matrix, name) is getattr(module, name)
    assert set(ascendctl.facts.matrix.__all__) <= set(dir(ascendctl.facts.matrix))
    with pytest.raises(AttributeError):
        ascendctl.facts.matrix.no_such_query  # noqa: B018


def test_full_app_lists_every_command() -> None:
    from ascendctl import cli

    names = {c.name for c in cli.app.registered_commands} | {g.name for g in cli.app.registered_groups}
    assert names == set(cli.COMMANDS)
    assert cli.app is cli.full_app()


def test_only_the_console_script_spares_the_exit_collections(capsys: pytest.CaptureFixture[str]) -> None:
    import gc

    from ascendctl.cli import main

    before = gc.get_freeze_count()
    assert main(["--version"]) == 0  # called with arguments (tests, embedding): the collector is left alone
    assert gc.get_freeze_count() == before
    assert capsys.readouterr().out.startswith("ascendctl ")
    code = "import gc, sys; sys.argv = ['ascendctl', '--version']; from ascendctl.cli import main; c = main(); "
    code += "print(c, gc.get_freeze_count() > 0)"
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    assert proc.stdout.splitlines()[-1] == "0 True"
