"""`plan.recipe.*` advice: what upstream's closest verified launch sets that a profile does not (ascendctl.init.recipe).

Real launch data, real import, real planner; no host is read.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from ascendctl.check.report import CheckReport
from ascendctl.cli import build_app
from ascendctl.core.findings import Finding
from ascendctl.core.yamlio import YamlDocument
from ascendctl.facts.launches import launch_index
from ascendctl.importer.launch_scripts import launch_scripts
from ascendctl.importer.run import import_scripts
from ascendctl.init.recipe import recipe_advice
from ascendctl.plan.planner import plan_profile
from ascendctl.schema.loader import load_profile, validate_profile_document
from ascendctl_engine.host.facts import HostFacts

REPO = Path(__file__).resolve().parent.parent
QWEN3_32B = REPO / "profiles" / "qwen3-32b-w8a8-a2.yaml"
runner = CliRunner()
app = build_app()


def advice_of(path: Path, *sets: str) -> list[Finding]:
    profile = load_profile(path, list(sets))
    return [f for f in recipe_advice(profile, plan_profile(profile)) if f.advice]


def _argv(source: str) -> list[str]:
    tag, file, line = source.split(":")
    [launch] = [x for x in launch_index() if (x.tag, x.file, x.line) == (tag, file, int(line))]
    return list(launch_scripts(launch)[0].argv)


def test_the_hand_written_qwen3_32b_profile_hears_what_its_v0230_launch_sets() -> None:
    advice = advice_of(QWEN3_32B)
    sources = {f.source for f in advice}
    assert len(sources) == 1
    [source] = sources
    assert source.startswith("v0.23.0:tests/e2e/nightly/") and source.endswith(".yaml:60")
    argv = _argv(source)
    # the graph variant, not the eager one: the profile captures full-decode-only graphs
    assert "--enforce-eager" not in argv
    compilation = json.loads(argv[argv.index("--compilation-config") + 1])
    sizes = compilation["cudagraph_capture_sizes"]
    parser = argv[argv.index("--reasoning-parser") + 1]
    expected = {
        "plan.recipe.engine-memory-block-size": f"engine.memory.block_size: {argv[argv.index('--block-size') + 1]}",
        "plan.recipe.engine-graph-capture-sizes": f"engine.graph.capture_sizes: [{', '.join(map(str, sizes))}]",
        "plan.recipe.engine-ascend-weight-prefetch": "engine.ascend.weight_prefetch: true",
        "plan.recipe.serving-reasoning-parser": f"serving.reasoning_parser: {parser}",
    }
    assert {f.id: f.fix for f in advice} == expected
    for f in advice:
        assert (f.status, f.severity, f.clause) == ("advice", "info", None)
        assert "verified at v0.23.0" in f.message and str(f.fix) in f.message
    # what the profile already says (TP4, the batch-token limit, 0.9 of the memory) is no advice, nor the benchmark's
    # own condition (prefix caching off), nor a variable the tag does not read (VLLM_ASCEND_ENABLE_FLASHCOMM)
    assert "--no-enable-prefix-caching" in argv
    said = " ".join(f.fix or "" for f in advice)
    for quiet in ("tensor", "max_num_batched_tokens", "device_utilization", "prefix_caching", "FLASHCOMM"):
        assert quiet not in said


def test_a_setting_the_profile_says_otherwise_is_its_choice() -> None:
    ids = {f.id for f in advice_of(QWEN3_32B, "engine.memory.block_size=256")}
    assert "plan.recipe.engine-memory-block-size" not in ids and "plan.recipe.engine-graph-capture-sizes" in ids


def _single_node_launches(tag: str) -> list[Any]:
    seen: set[str] = set()
    out = []
    for launch in launch_index():
        if launch.tag != tag or launch.kind != "single-node" or "pd" in launch.features or launch.model in seen:
            continue
        seen.add(launch.model)
        out.append(launch)
    return out[:6]


@pytest.mark.parametrize("launch", _single_node_launches("v0.23.0"), ids=lambda launch: launch.case)
def test_a_profile_equal_to_its_launch_gets_no_advice(launch: Any) -> None:
    """Each launch imported as a profile (`ascendctl import`) hears nothing: it sets what its launch sets."""
    result = import_scripts(launch_scripts(launch), release=launch.tag, hardware=launch.hardware)
    profile = validate_profile_document(YamlDocument("<launch>", result.document))
    findings = recipe_advice(profile, plan_profile(profile))
    assert [f.id for f in findings if f.advice] == []
    [verdict] = findings
    assert verdict.status == "pass" and "sets what" in verdict.message


def test_no_advice_where_nothing_compares() -> None:
    cpu = recipe_advice(*_planned(REPO / "profiles" / "cpu-demo.yaml"))
    pd = recipe_advice(*_planned(REPO / "profiles" / "glm-5-2-pd-a3.yaml"))
    assert [(f.id, f.status) for f in cpu + pd] == [("plan.recipe", "skip"), ("plan.recipe", "skip")]
    assert "target.hardware" in cpu[0].message and "ascendctl import" in pd[0].message


def _planned(path: Path) -> tuple[Any, Any]:
    profile = load_profile(path, [])
    return profile, plan_profile(profile)


def test_plan_prints_advice_under_its_own_heading_and_json_carries_it() -> None:
    text = runner.invoke(app, ["plan", str(QWEN3_32B)])
    assert text.exit_code == 0, text.output
    head, _, advice = text.output.partition("\nadvice (never applied")
    assert "plan.recipe" not in head and "set by upstream's verified launch v0.23.0:" in advice
    assert "    engine.memory.block_size: 128  [plan.recipe.engine-memory-block-size]" in advice
    data = json.loads(runner.invoke(app, ["plan", str(QWEN3_32B), "--json"]).output)
    statuses = {f["id"]: f["status"] for f in data["findings"] if f["id"].startswith("plan.recipe")}
    assert set(statuses.values()) == {"advice"} and len(statuses) == 4


def test_advice_never_fails_a_strict_check() -> None:
    advice = advice_of(QWEN3_32B)
    report = CheckReport(HostFacts(backend="cpu"), tuple(advice), "cpu")
    assert report.ok(strict=True) and report.counts()["advice"] == len(advice) > 0


def test_check_profile_lists_advice_apart_from_its_results() -> None:
    shown = runner.invoke(app, ["check", str(QWEN3_32B)])
    results, _, advice = shown.output.partition("\nadvice (never applied")
    assert "plan.recipe" not in results and "[plan.recipe.engine-memory-block-size]" in advice
    data = json.loads(runner.invoke(app, ["check", str(QWEN3_32B), "--json"]).output)
    advised = [r for r in data["results"] if r["status"] == "advice"]
    assert len(advised) == data["summary"]["advice"] == 4
    assert all(r["fix"] and r["clause"] is None for r in advised)
