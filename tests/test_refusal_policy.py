"""The refusal policy (docs/refusal-policy.md): a plan refuses only with a clause — engine-start, placement,
known-failure — which the finding names; what the engine ignores or only a document claims warns with its source;
a launch upstream runs at that tag outranks a table. One test per clause and per re-classified class."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from ascendctl.cli import app
from ascendctl.core.findings import CLAUSES, Rule, problem, rules_of
from ascendctl.facts.matrix import load_matrix
from ascendctl.facts.matrix.explainer import explain
from ascendctl.plan import plan_rules  # noqa: F401 (registers the plan rules)
from ascendctl.plan.planner import plan_profile
from ascendctl.plan.types import Plan
from ascendctl.schema.loader import load_profile

REPO = Path(__file__).resolve().parents[1]
QWEN32 = REPO / "profiles" / "qwen3-32b-w8a8-a2.yaml"
KIMI = REPO / "profiles" / "kimi-k2-5-w4a8-eagle3-a3.yaml"
runner = CliRunner()


def write(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "p.yaml"
    path.write_text("apiVersion: ascendctl/v1\nkind: Profile\nmetadata: {name: p}\n" + body)
    return path


def findings(plan: Plan, prefix: str) -> list[object]:
    return [f for f in plan.deployment.findings if f.id.startswith(prefix)]


def test_a_failing_finding_needs_a_clause() -> None:
    rule = Rule("plan.t", "error", "t", "src", lambda c: problem("m"))
    assert (rule.evaluate(None).status, rule.evaluate(None).clause) == ("warn", None)  # no clause: it warns
    named = Rule("plan.t", "error", "t", "src", lambda c: problem("m", clause="placement"))
    assert (named.evaluate(None).status, named.evaluate(None).clause) == ("fail", "placement")
    declared = Rule("plan.t", "error", "t", "src", lambda c: problem("m"), clause="known-failure")
    assert declared.evaluate(None).clause == "known-failure"


def test_every_plan_error_rule_names_its_clause_or_its_constraints_do() -> None:
    per_constraint = {"plan.matrix", "plan.refused", "plan.plannable"}  # each constraint names its own
    for rule_id, rule in rules_of("plan").items():
        if rule.severity == "error" and rule_id not in per_constraint:
            assert rule.clause in CLAUSES, rule_id
        if rule.clause == "engine-start":
            assert not rule.allowable, rule_id


# ---------------------------------------------------------------------------------------------- engine-start
def test_engine_start_is_never_allowable(tmp_path: Path) -> None:
    sets = ["engine.parallel.tensor=3", "target.devices_per_node=3", "target.visible_devices=[0,1,2]"]
    plan = plan_profile(load_profile(QWEN32, sets), allow=["plan.tp.heads-divisible"])
    [heads] = [f for f in plan.blocking if f.id == "plan.tp.heads-divisible"]
    assert heads.clause == "engine-start"
    assert any("can never be accepted" in w for w in plan.warnings)


def test_full_decode_only_at_v0_9_0rc1_is_an_engine_start_refusal_that_is_never_emitted(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "model: {source: Qwen/Qwen3-8B, max_model_len: 4096}\ntarget: {backend: npu, hardware: a2}\n"
        "release: v0.9.0rc1\nengine: {graph: {mode: full-decode-only}}\n",
    )
    for allow in ((), ("plan.rejected.graph",), ("plan.refused.graph",)):
        plan = plan_profile(load_profile(path), allow=list(allow))
        [graph] = [f for f in plan.blocking if f.id == "plan.rejected.graph"]
        assert graph.clause == "engine-start"
        assert "vLLM 0.9.0's `--compilation-config` has no `cudagraph_mode` key" in graph.message
        assert "platform.py" not in graph.message  # the right reason: vLLM's parser, not the platform's downgrade
        assert not any("cudagraph_mode" in word for word in plan.commands[0].argv)
    legacy = plan_profile(load_profile(path), allow_unsupported=True)
    assert [f.id for f in legacy.blocking] == ["plan.rejected.graph"]


# ---------------------------------------------------------------------------------------------- placement
def test_placement_refuses_and_is_allowable(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "model: {source: Qwen/Qwen3-8B, max_model_len: 4096}\n"
        "target: {backend: npu, hardware: a2, devices_per_node: 16}\nrelease: v0.18.0\n"
        "engine: {parallel: {tensor: 16}}\n",
    )
    [devices] = [f for f in plan_profile(load_profile(path)).blocking if f.id == "plan.hardware.devices-per-node"]
    assert devices.clause == "placement"
    allowed = plan_profile(load_profile(path), allow=["plan.hardware.devices-per-node"])
    assert not allowed.blocking and allowed.allowed == ("plan.hardware.devices-per-node",)


# ---------------------------------------------------------------------------------------------- known-failure
def test_known_failure_refuses_on_its_issue_and_is_allowable() -> None:
    m = load_matrix()
    broken = explain(m, model="DeepSeek-R1", hardware="a2", release="v0.11.0rc2", features=["ray", "ep"])
    [ray] = broken.problems
    assert ray.clause == "known-failure" and "vllm-project/vllm-ascend#4123" in ray.reference
    # a table row that cites an issue refuses as a known failure too
    gemma = explain(m, model="Gemma-3", hardware="a2", release="v0.9.1")
    assert gemma.problems[0].clause == "known-failure" and "#496" in gemma.problems[0].message


# ---------------------------------------------------------------------------------------------- re-classified
def test_a_document_claim_warns_with_its_source() -> None:
    v = explain(load_matrix(), model="DeepSeek-R1", hardware="a3", release="v0.13.0", quant="w4a8_dynamic",
                features=["eplb"])  # fmt: skip
    assert v.supported
    [claim] = [r for r in v.warnings if "EPLB" in r.message]
    assert "a document's claim" in claim.message and claim.reference.startswith("main:docs/")


def test_the_w4a8_multimodal_launch_plans_with_a_warning_naming_both_sources() -> None:
    # the tutorial's and upstream CI's Kimi-K2.5 W4A8 on A3 at v0.25.1rc1: the feature matrix's claim warns
    plan = plan_profile(load_profile(KIMI, ["release=v0.25.1rc1"]))
    assert not plan.blocking
    [w4a8] = findings(plan, "plan.matrix.combination.quant-w4a8-dynamic-and-mm")
    assert w4a8.status == "warn"  # type: ignore[attr-defined]
    assert "verified at v0.25.1rc1:" in w4a8.message  # type: ignore[attr-defined]
    assert "main:docs/source/user_guide/support_matrix/feature_matrix.md" in w4a8.message  # type: ignore[attr-defined]


def test_what_the_engine_ignores_warns() -> None:
    plan = plan_profile(load_profile(QWEN32, ['runtime.env={"VLLM_ASCEND_ENABLE_TOPK_OPTIMIZE": "1"}']))
    assert not plan.blocking
    [unread] = findings(plan, "plan.unread.env")
    assert unread.status == "warn" and unread.clause is None  # type: ignore[attr-defined]


def test_json_findings_carry_their_clause(tmp_path: Path) -> None:
    # `check PROFILE --json` shows the failure with its clause; `plan --json` an accepted one, which keeps it
    sets = ["--set", "engine.parallel.tensor=3", "--set", "target.devices_per_node=3",
            "--set", "target.visible_devices=[0,1,2]"]  # fmt: skip
    checked = json.loads(runner.invoke(app, ["check", str(QWEN32), *sets, "--json"]).stdout)
    heads = next(r for r in checked["results"] if r["id"] == "plan.tp.heads-divisible")
    assert heads["clause"] == "engine-start" and heads["status"] == "fail"
    assert checked["schema"] == 3 and all("clause" in r for r in checked["results"])
    wide = ["--set", "target.devices_per_node=16", "--set", "engine.parallel.tensor=16",
            "--set", f"target.visible_devices={list(range(16))}"]  # fmt: skip
    planned = runner.invoke(app, ["plan", str(QWEN32), *wide, "--allow", "plan.hardware.devices-per-node", "--json"])
    data = json.loads(planned.stdout)
    devices = next(f for f in data["findings"] if f["id"] == "plan.hardware.devices-per-node")
    assert (devices["status"], devices["clause"]) == ("warn", "placement") and data["schema"] == 5
