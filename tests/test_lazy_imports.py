"""What the everyday commands import: each loads the code it runs and no other command's (the timings live in
`benchmarks/latency.py`; this pins the behaviour that keeps them low).

Below the CLI every import is at module level (tests/test_layers.py), so a module a command imports is loaded
whether or not the command's path reaches it. Where such a module is cheap to import and only its calls cost
(the upstream extracts, the vllm-ascend key tables), the pin is on those calls: `reads` counts the extracts and
key tables a command read.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parent.parent

_PROBE = textwrap.dedent(
    """
    import contextlib, io, json, sys
    from ascendctl.cli import main
    with contextlib.redirect_stdout(io.StringIO()):
        code = main(sys.argv[1:])
    upstream = sys.modules.get("ascendctl.facts.upstream")
    keys = sys.modules.get("ascendctl_engine.adapters.ascend_keys")
    reads = {
        "extracts": upstream.extract.cache_info().currsize if upstream else 0,
        "key_tables": keys.key_table.cache_info().currsize if keys else 0,
    }
    print(json.dumps({"code": code, "modules": sorted(sys.modules), "reads": reads}))
    """
)


def run_probe(*args: str, code: int = 0) -> dict[str, Any]:
    """What a real `ascendctl ARGS` process has imported (`modules`) and read (`reads`) when the command returns."""
    proc = subprocess.run(
        [sys.executable, "-c", _PROBE, *args], cwd=REPO, capture_output=True, text=True, check=True, timeout=60
    )
    result: dict[str, Any] = json.loads(proc.stdout.splitlines()[-1])
    assert result["code"] == code, proc.stderr
    return result


def imported_by(*args: str) -> set[str]:
    """The modules a real `ascendctl ARGS` process has imported when the command returns."""
    return set(run_probe(*args)["modules"])


def test_validate_loads_no_adapters_and_no_other_command() -> None:
    modules = imported_by("validate", "profiles/cpu-demo.yaml", "profiles/cuda-qwen3-8b.yaml")
    assert "ascendctl.schema.loader" in modules
    assert not {m for m in modules if m.startswith(("ascendctl_engine.adapters", "ascendctl.facts.matrix"))}
    assert (
        not {"ascendctl.cli.render", "ascendctl.cli.check", "ascendctl.cli.engine", "ascendctl.outputs.render"}
        & modules
    )


def test_validate_reads_the_typed_field_claims_without_the_adapters() -> None:
    # runtime.env is set: `profile.migration.typed-field` asks the claims table (`ascendctl_engine.typed_fields`,
    # plain data: it moved out of the adapters package), and nothing more.
    modules = imported_by("validate", "profiles/deepseek-r1-w8a8-2node-a2.yaml")
    assert "ascendctl_engine.typed_fields" in modules
    assert not {m for m in modules if m.startswith(("ascendctl_engine.adapters", "ascendctl.facts.matrix"))}
    assert (
        not {"ascendctl.plan.planner", "ascendctl.cli.render", "ascendctl.cli.check", "ascendctl.outputs.render"}
        & modules
    )


def test_matrix_json_loads_neither_the_planner_nor_the_explainer() -> None:
    result = run_probe("matrix", "releases", "--json")
    modules = set(result["modules"])
    assert {"ascendctl.facts.matrix.load", "ascendctl.facts.matrix.views"} <= modules
    unwanted = {
        "ascendctl.plan.planner",
        "ascendctl.facts.matrix.explainer",
        "ascendctl.facts.matrix.host_match",
        "ascendctl.facts.matrix.launch",
    }
    assert not unwanted & modules
    assert not {m for m in modules if m.startswith(("ascendctl_engine.adapters", "ascendctl_engine.host"))}
    assert result["reads"]["extracts"] == 0  # the stamped mirror: no upstream extract is read
    assert "rich" not in modules


@pytest.mark.parametrize(
    ("args", "absent"),
    [
        (("plan", "profiles/deepseek-r1-w8a8-2node-a2.yaml"), {"ascendctl_engine.install_plan"}),
        (("serve", "profiles/cpu-demo.yaml", "--dry-run"), {"ascendctl_engine.install_plan"}),
    ],
)
def test_plan_loads_no_host_probes_and_no_renderer(args: tuple[str, ...], absent: set[str]) -> None:
    result = run_probe(*args)
    modules = set(result["modules"])
    assert {"ascendctl.plan.planner", "ascendctl_engine.adapters.parser_snapshot"} <= modules
    assert not {
        m for m in modules if m.startswith(("ascendctl_engine.host", "ascendctl.outputs.render", "ascendctl.check"))
    }
    assert not {"ascendctl.facts.matrix.host_match", "ascendctl.facts.matrix.filters", "ascendctl.cli.facts"} & modules
    assert not absent & modules
    assert "importlib.resources" not in modules  # package data is found by `ascendctl_engine.package_data`
    if args[0] == "serve":  # a CPU plan reads no upstream extract and no vllm-ascend key table
        assert result["reads"] == {"extracts": 0, "key_tables": 0}


@pytest.mark.parametrize(
    "args",
    [
        ("validate", "profiles/cpu-demo.yaml"),
        ("matrix", "releases", "--json"),
        ("plan", "profiles/deepseek-r1-w8a8-2node-a2.yaml", "--json"),
        ("render", "profiles/qwen3-32b-w8a8-a2.yaml", "-t", "k8s"),
    ],
)
def test_option_values_need_no_pydantic_adapter(args: tuple[str, ...]) -> None:
    # ascendctl.cli.coercion: typer's per-parameter pydantic adapters are not built (nor their layer imported)
    modules = imported_by(*args)
    assert "ascendctl.cli.coercion" in modules
    assert not {"typer._adapters", "pydantic.type_adapter"} & modules


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (("validate", "profiles/cpu-demo.yaml"), 0),
        (("plan", "profiles/deepseek-r1-w8a8-2node-a2.yaml", "--json"), 0),
        (("serve", "profiles/cpu-demo.yaml", "--dry-run"), 0),
        (("check", "--root", "tests/fixtures/hosts/a2-910b3x8"), 1),
    ],
)
def test_validation_scans_no_installed_distributions(args: tuple[str, ...], code: int) -> None:
    # ascendctl.cli.pydantic_plugins: pydantic's plugin discovery (importlib.metadata and an entry-point scan of
    # every installed distribution) is not run; the commands still validate (they exit as they should).
    modules = set(run_probe(*args, code=code)["modules"])
    assert "ascendctl.cli.pydantic_plugins" in modules
    assert "importlib.metadata" not in modules


def test_the_matrix_package_loads_none_of_the_heavier_query_modules() -> None:
    # It re-exports the queries; the explainer, the launch answers, the filters and the host classification are
    # imported from their own modules by the callers that need them.
    code = "import json, sys, ascendctl.facts.matrix as m; print(json.dumps([sorted(sys.modules), m.__all__]))"
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    modules, names = json.loads(proc.stdout)
    heavier = {f"ascendctl.facts.matrix.{m}" for m in ("explainer", "launch", "filters", "host_match")}
    assert not heavier & set(modules)
    assert not {m for m in modules if m.startswith(("ascendctl_engine.adapters", "ascendctl_engine.host"))}
    assert set(names) <= set(dir(__import__("ascendctl.facts.matrix", fromlist=["_"])))


def test_check_without_a_profile_loads_neither_the_profile_loader_nor_the_planner() -> None:
    # The fixture host has problems: `check` exits 1.
    modules = set(run_probe("check", "--root", "tests/fixtures/hosts/a2-910b3x8", code=1)["modules"])
    assert "ascendctl.check.host_check" in modules
    assert not {"ascendctl.check.service", "ascendctl.schema.loader", "ascendctl.plan.planner"} & modules
    # Nor anything of the planning stack the host rules once reached through the facts they share with it: the
    # era adapters, the profile models, the plan and prefill/decode rules, the fabric probe.
    assert not {m for m in modules if m.startswith("ascendctl_engine.adapters")}
    planning = {
        "ascendctl_engine.sections.deployment",
        "ascendctl.schema.profile",
        "ascendctl.schema.instances",
        "ascendctl.plan.plan_rules",
        "ascendctl.plan.pd_rules",
        "ascendctl.check.fabric",
    }
    assert not planning & modules
    # Nor any pydantic model: the matrix is records, and the secret rules read plain names (secret_names), so a
    # host-only check loads none of pydantic's model machinery.
    assert not {"pydantic.main", "pydantic.fields", "ascendctl_engine.sections.secret_source"} & modules


def test_schema_prints_the_shipped_file_without_building_the_profile_models() -> None:
    modules = imported_by("schema")
    assert "ascendctl.schema.shipped_schema" in modules
    assert not {"ascendctl.schema.profile", "ascendctl_engine.sections.deployment", "pydantic.main"} & modules


def test_render_loads_only_the_renderer_of_its_target() -> None:
    # k8s builds YAML objects: neither jinja2 nor the template renderers are loaded.
    modules = imported_by("render", "profiles/qwen3-32b-w8a8-a2.yaml", "-t", "k8s")
    assert "ascendctl.outputs.render.kubernetes" in modules
    others = ("shell", "systemd", "compose", "kserve", "templating", "disaggregated")
    assert not {f"ascendctl.outputs.render.{m}" for m in others} & modules
    assert "jinja2" not in modules
    # a template target loads its renderer and jinja2, and still no other target's
    modules = imported_by("render", "profiles/qwen3-32b-w8a8-a2.yaml", "-t", "script")
    assert {"ascendctl.outputs.render.shell", "jinja2"} <= modules
    assert not {"ascendctl.outputs.render.kubernetes", "ascendctl.outputs.render.systemd"} & modules


def test_only_status_loads_the_prometheus_parser() -> None:
    assert not {m for m in imported_by("ps", "--json") if m.startswith(("prometheus_client", "ascendctl.run.status"))}
    modules = imported_by("status", "--json")  # no deployment here: it lists none, but has loaded its parser
    assert {"prometheus_client.parser", "ascendctl.run.metrics"} <= modules


def test_bench_compare_loads_matplotlib_only_to_plot(tmp_path: Path) -> None:
    point = {"label": "64:32:4", "metrics": {"ttft_ms": {"p50": 10.0}, "output_tok_s": 5.0}}
    doc = json.dumps({"schema": 1, "kind": "ascendctl-bench", "points": [point]})
    (tmp_path / "a.json").write_text(doc)
    runs = [str(tmp_path / "a.json")] * 2
    tables = imported_by("bench", "--compare", *runs)
    heavy = ("matplotlib", "ascendctl.plan.planner", "ascendctl.outputs.bench_plot")
    assert not {m for m in tables if m.startswith(heavy)}
    assert "matplotlib" in imported_by("bench", "--compare", *runs, "-o", str(tmp_path / "plots"))


def test_full_app_lists_every_command() -> None:
    from ascendctl import cli

    names = {c.name for c in cli.app.registered_commands} | {g.name for g in cli.app.registered_groups}
    assert names == set(cli.COMMANDS)
    assert cli.app is cli.full_app()


def test_only_the_console_script_tunes_the_collector(capsys: pytest.CaptureFixture[str]) -> None:
    import gc

    from ascendctl.cli import STARTUP_GC_THRESHOLD, main

    before = gc.get_freeze_count(), gc.get_threshold()
    assert main(["--version"]) == 0  # called with arguments (tests, embedding): the collector is left alone
    assert (gc.get_freeze_count(), gc.get_threshold()) == before
    assert capsys.readouterr().out.startswith("ascendctl ")
    code = "import gc, sys; sys.argv = ['ascendctl', '--version']; from ascendctl.cli import main; c = main(); "
    code += "print(c, gc.get_freeze_count() > 0, gc.get_threshold() == (%d, *gc.get_threshold()[1:]))"
    proc = subprocess.run(
        [sys.executable, "-c", code % STARTUP_GC_THRESHOLD], cwd=REPO, capture_output=True, text=True, check=True
    )
    assert proc.stdout.splitlines()[-1] == "0 True True"  # the console script: fewer start-up collections


def test_the_matrix_costs_no_pydantic_model_machinery() -> None:
    # The matrix's classes are records (ascendctl.facts.matrix.schema): reading the shipped matrix imports nothing of
    # pydantic beyond its lazy top level, so `matrix` does not load pydantic's model machinery at all.
    modules = imported_by("matrix", "releases", "--json")
    assert "ascendctl.facts.matrix.schema" in modules
    assert not {"pydantic.main", "pydantic.fields", "pydantic.type_adapter", "annotated_types"} & modules


def _typer_callbacks(target: Any) -> list[Any]:
    """The functions typer inspects for a registered command: the function itself, or every command and callback
    of a sub-app."""
    import typer

    if not isinstance(target, typer.Typer):
        return [target]
    found = [c.callback for c in target.registered_commands]
    found += [target.registered_callback.callback] if target.registered_callback else []
    for group in target.registered_groups:
        found += _typer_callbacks(group.typer_instance)
    return [f for f in found if f is not None]


def test_command_annotations_are_objects_not_text() -> None:
    # typer reads each command's parameters from its annotations at every start; a postponed annotation (text, from
    # `from __future__ import annotations`) is compiled and evaluated each time, 2-4 ms a command
    from ascendctl import cli

    functions = [cli._root] + [f for name in cli.COMMANDS for f in _typer_callbacks(cli.command_target(name))]
    assert len(functions) > len(cli.COMMANDS)  # the sub-apps' commands are included
    postponed = {
        f"{f.__module__}.{f.__qualname__}"
        for f in functions
        if any(isinstance(a, str) for a in f.__annotations__.values())
    }
    assert not postponed
