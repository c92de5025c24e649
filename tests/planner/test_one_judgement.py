"""One judgement of what a release reads, wherever a profile writes it (issue: "One check for one thing").

An `--additional-config` key and a vLLM / vllm-ascend variable are judged against the release's tables by one
function (`ascendctl_engine.adapters.acceptance`): written in `engine.additional_config`, raw in `engine.extra_args`
(JSON or dotted), in a node's `extra_args` or `env`, in `runtime.env` / `runtime.secrets`, in a prefill/decode role's
`engine` block or by `--set`, a key or variable the release ignores gives the same finding id and the same words,
prefixed with where it was written. The release diff names the keys that become ignored. The shape rules use the
published shapes when config.json is not on disk: an exact id refuses, a name match warns.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ascendctl.cli import app
from ascendctl.core.findings import Finding
from ascendctl.plan.planner import plan_profile
from ascendctl.plan.release_diff import against_release
from ascendctl.plan.types import Plan
from ascendctl.schema.loader import load_profile
from ascendctl_engine.adapters.acceptance import acceptance_for
from ascendctl_engine.adapters.vllm_envs import vllm_env_table

REPO = Path(__file__).resolve().parents[2]
QWEN32 = REPO / "profiles" / "qwen3-32b-w8a8-a2.yaml"  # v0.23.0, vllm-ascend/Qwen3-32B-W8A8, TP4
DEEPSEEK = REPO / "profiles" / "deepseek-r1-w8a8-2node-a2.yaml"  # two nodes
GLM_PD = REPO / "profiles" / "glm-5-2-pd-a3.yaml"  # prefill/decode
FLASHCOMM_KEY = '{"enable_flashcomm1": true}'
runner = CliRunner()


def planned(path: Path, *overrides: str, release: str | None = None) -> Plan:
    return plan_profile(load_profile(path, list(overrides)), release=release)


def notable(plan: Plan, prefix: str) -> list[Finding]:
    return [f for f in plan.deployment.findings if f.id.startswith(prefix) and f.status in ("warn", "fail")]


def reason(finding: Finding) -> str:
    """The finding's words after `<where it was written>: ` (and an instance prefix on a PD plan)."""
    return (
        finding.message.split(": ", 2)[-1]
        if finding.message.startswith("decode")
        else finding.message.split(": ", 1)[1]
    )


def nodes_with(second: dict[str, object]) -> str:
    return "network.nodes=" + json.dumps([{"address": "192.0.2.10"}, {"address": "192.0.2.11", **second}])


# ------------------------------------------------------------------------------------ config keys, every place
KEY_PLACES = {
    "engine.additional_config": (QWEN32, [f"engine.additional_config={FLASHCOMM_KEY}"]),
    "engine.extra_args": (QWEN32, ["engine.extra_args=" + json.dumps(["--additional-config", FLASHCOMM_KEY])]),
    "engine.extra_args (dotted)": (QWEN32, ['engine.extra_args=["--additional-config.enable_flashcomm1=true"]']),
    "engine.extra_args (=JSON)": (
        QWEN32,
        ["engine.extra_args=" + json.dumps([f"--additional-config={FLASHCOMM_KEY}"])],
    ),
    "network.nodes[1].extra_args": (DEEPSEEK, [nodes_with({"extra_args": ["--additional-config", FLASHCOMM_KEY]})]),
}


@pytest.mark.parametrize("place", list(KEY_PLACES))
def test_a_key_the_release_ignores_warns_the_same_wherever_written(place: str) -> None:
    path, overrides = KEY_PLACES[place]
    plan = planned(path, "release=v0.19.1rc1", *overrides)
    found = notable(plan, "plan.unread")
    assert [f.id for f in found] == ["plan.unread.keys"], place
    origin = place.split(" ")[0]
    assert found[0].message.startswith(f"{origin}: "), found[0].message
    assert reason(found[0]) == (
        "vllm-ascend v0.19.1rc1 does not read `--additional-config` key `enable_flashcomm1`: it is ignored "
        "(engine/ascendctl_engine/data/ascend_keys/v0.19.1rc1.json); read by v0.20.2rc1 … v0.25.1rc1 (8 tags)"
    )
    assert not plan.blocking


def test_the_same_key_at_a_release_that_reads_it_passes() -> None:
    for place in KEY_PLACES:
        path, overrides = KEY_PLACES[place]
        plan = planned(path, "release=v0.23.0", *overrides)
        assert not notable(plan, "plan.unread"), place
        reads = [v for i in plan.instances for v in i.reads if v.name == "enable_flashcomm1"]
        assert reads and {v.status for v in reads} == {"read"}, place


@pytest.mark.parametrize("release", ["v0.13.0", "v0.19.1rc1", "v0.23.0", "v0.25.1rc1"])
def test_a_made_up_key_warns_at_every_release(release: str) -> None:
    raw = "engine.extra_args=" + json.dumps(["--additional-config", '{"made_up_key_x": 1, "eplb_config": {}}'])
    plan = planned(QWEN32, f"release={release}", raw)
    found = notable(plan, "plan.unread.keys")
    assert len(found) == 1 and "`made_up_key_x`" in found[0].message
    assert "no vllm-ascend release reads it" in found[0].message


def test_a_prefill_decode_role_block_is_judged_like_the_profile() -> None:
    plan = planned(GLM_PD, 'disaggregation.decode.engine.additional_config={"made_up_key_x": 1}')
    found = notable(plan, "plan.unread.keys")
    assert len(found) == 1
    assert found[0].message.startswith("decode"), found[0].message  # only the decode instances pass it
    assert "engine.additional_config: vllm-ascend" in found[0].message and "`made_up_key_x`" in found[0].message


def test_a_typed_field_records_its_key_under_its_own_name() -> None:
    plan = planned(QWEN32, "engine.ascend.flashcomm1=true")
    reads = {(v.name, v.origin): v.status for i in plan.instances for v in i.reads if v.kind == "key"}
    assert reads[("enable_flashcomm1", "engine.ascend.flashcomm1")] == "read"


def test_a_key_the_release_rejects_stays_an_engine_start_refusal_wherever_written() -> None:
    # v0.23.0's EplbConfig raises on a key it does not know ("Config has no attribute ...")
    bad = '{"eplb_config": {"load_collection_phase": 1}}'
    for override in (
        f"engine.additional_config={bad}",
        "engine.extra_args=" + json.dumps(["--additional-config", bad]),
    ):
        plan = planned(QWEN32, override)
        assert [f.id for f in plan.blocking] == ["plan.rejected.keys"], override
        assert "eplb_config.load_collection_phase" in plan.blocking[0].message


# ------------------------------------------------------------------------------------ variables, every place
ENV_PLACES = {
    "runtime.env": (QWEN32, ['runtime.env={"VLLM_ASCEND_ENABLE_FLASHCOMM": "1"}']),
    "runtime.secrets": (QWEN32, ['runtime.secrets={"VLLM_ASCEND_ENABLE_FLASHCOMM": {"env": "X"}}']),
    "network.nodes[1].env": (DEEPSEEK, [nodes_with({"env": {"VLLM_ASCEND_ENABLE_FLASHCOMM": "1"}})]),
}


@pytest.mark.parametrize("place", list(ENV_PLACES))
def test_a_variable_the_release_ignores_warns_the_same_wherever_written(place: str) -> None:
    path, overrides = ENV_PLACES[place]
    plan = planned(path, "release=v0.23.0", *overrides)
    found = notable(plan, "plan.unread")
    assert [f.id for f in found] == ["plan.unread.env"], place
    assert found[0].message.startswith(f"{place}: ")
    assert reason(found[0]).startswith(
        "vllm-ascend v0.23.0 does not read `VLLM_ASCEND_ENABLE_FLASHCOMM` "
        "(engine/ascendctl_engine/data/ascend_keys/v0.23.0.json; defined by "
    )
    # vLLM 0.23.0 checks VLLM_* names: it logs the unknown one and starts
    assert "Unknown vLLM environment variable detected" in found[0].message
    assert not plan.blocking


def test_vllm_variables_are_judged_against_the_pinned_vllm() -> None:
    # VLLM_USE_V1 is read up to vLLM 0.11.0 (V0 removed in 0.13): the v0.11.0 release reads it, v0.23.0 does not
    old = planned(QWEN32, "release=v0.11.0", 'runtime.env={"VLLM_USE_V1": "1"}', "engine.graph.mode=eager")
    assert not [f for f in notable(old, "plan.unread.env") if "VLLM_USE_V1" in f.message]
    new = planned(QWEN32, 'runtime.env={"VLLM_USE_V1": "1", "VLLM_USE_MODELSCOPE": "True"}')
    found = notable(new, "plan.unread.env")
    assert len(found) == 1 and "vLLM 0.23.0 does not read `VLLM_USE_V1`" in found[0].message
    assert "read by vllm-0.7.1 … vllm-0.11.0" in found[0].message


def test_fail_on_environ_validation_makes_an_unknown_variable_refuse_the_start() -> None:
    plan = planned(
        QWEN32, 'runtime.env={"VLLM_NOT_A_THING": "1"}', 'engine.extra_args=["--fail-on-environ-validation"]'
    )
    assert [f.id for f in plan.blocking] == ["plan.rejected.env"]
    assert "Unknown vLLM environment variable detected: VLLM_NOT_A_THING" in plan.blocking[0].message
    allowed = plan_profile(
        load_profile(
            QWEN32, ['runtime.env={"VLLM_NOT_A_THING": "1"}', 'engine.extra_args=["--fail-on-environ-validation"]']
        ),
        allow=["plan.rejected.env"],
    )
    assert [f.id for f in allowed.blocking] == ["plan.rejected.env"]  # never allowable: vLLM raises at start
    # without the switch the same variable only warns
    assert not planned(QWEN32, 'runtime.env={"VLLM_NOT_A_THING": "1"}').blocking


def test_the_vllm_table_knows_which_versions_check_names() -> None:
    assert vllm_env_table("vllm", "0.13.0") is not None
    assert vllm_env_table("vllm", "0.13.0").validate_environ is None  # type: ignore[union-attr]
    table = vllm_env_table("vllm", "0.23.0")
    assert table is not None and table.validate_environ is not None and "VLLM_USE_MODELSCOPE" in table.names
    assert vllm_env_table("vllm", "0.0.1") is None
    # a variable neither vLLM nor vllm-ascend reads by name is not judged (CANN, HCCL, the OS)
    assert acceptance_for("npu", "0.23.0", "v0.23.0").judge_env("HCCL_BUFFSIZE", "runtime.env") is None


# ------------------------------------------------------------------------------------ the release diff
@pytest.mark.parametrize(
    "override",
    [
        f"engine.additional_config={FLASHCOMM_KEY}",
        "engine.extra_args=" + json.dumps(["--additional-config", FLASHCOMM_KEY]),
    ],
)
def test_the_release_diff_names_a_key_that_becomes_ignored(override: str) -> None:
    d = against_release(load_profile(QWEN32, [override]), "v0.19.1rc1")
    origin = override.split("=", 1)[0]
    assert [(r.before.name, r.before.origin, r.before.status, r.after.status) for r in d.reads] == [
        ("enable_flashcomm1", origin, "read", "not-read")
    ]
    assert "vllm-ascend v0.19.1rc1 does not read" in d.reads[0].reason
    assert d.to_json()["reads"][0]["to"] == "not-read"
    assert [f.id for f in d.appeared] == ["plan.unread.keys"]
    result = runner.invoke(app, ["plan", str(QWEN32), "--against-release", "v0.19.1rc1", "--set", override])
    assert result.exit_code == 0, result.output
    assert "key enable_flashcomm1 [" + origin + "]: read → not-read" in result.output


def test_the_release_diff_says_when_the_reads_are_the_same() -> None:
    d = against_release(load_profile(QWEN32), "v0.23.0.post1")
    assert d.reads == ()
    result = runner.invoke(app, ["plan", str(QWEN32), "--against-release", "v0.23.0.post1"])
    assert "reads: both releases read the same config keys and variables" in result.output


# ------------------------------------------------------------------------------------ shapes without config.json
TP3 = ["engine.parallel.tensor=3", "target.devices_per_node=3", "target.visible_devices=[0,1,2]"]


@pytest.mark.parametrize("command", [["plan"], ["fit"], ["render", "-t", "k8s", "-o", "{tmp}"]])
def test_tp3_on_the_published_shapes_of_the_models_id_refuses(command: list[str], tmp_path: Path) -> None:
    argv = [c.replace("{tmp}", str(tmp_path / "out")) for c in command]
    sets = [x for s in TP3 for x in ("--set", s)]
    result = runner.invoke(app, [argv[0], str(QWEN32), *argv[1:], *sets])
    assert result.exit_code == 2, result.output
    assert "plan.tp.heads-divisible" in result.output
    assert "published shapes of Qwen/Qwen3-32B (the model's id)" in result.output
    assert not (tmp_path / "out").exists()


def test_tp3_with_config_refuses_and_a_name_match_warns() -> None:
    config = REPO / "ascendctl" / "facts" / "data" / "model_configs" / "qwen3-32b.json"
    given = plan_profile(load_profile(QWEN32, TP3), model_config=config)
    assert [f.id for f in given.blocking] == ["plan.tp.heads-divisible"]
    assert "published shapes" not in given.blocking[0].message
    local = planned(QWEN32, *TP3, "model.source=/models/qwen3-32b")
    assert not local.blocking
    (warned,) = notable(local, "plan.tp.heads-divisible")
    assert warned.status == "warn"
    assert "published shapes of Qwen/Qwen3-32B (a name match): /models/qwen3-32b may be a fine-tune" in warned.message


def test_shape_rules_pass_on_published_shapes_and_say_so() -> None:
    plan = planned(QWEN32)
    heads = next(f for f in plan.deployment.findings if f.id == "plan.tp.heads-divisible")
    assert heads.status == "pass" and "64 heads, 8 KV heads over TP 4" in heads.message
    assert "published shapes of Qwen/Qwen3-32B" in heads.message


def test_max_model_len_unset_is_decided_from_published_shapes() -> None:
    # Qwen3-235B-A22B: a 40,960-token default context, above the long-context mark
    plan = planned(
        REPO / "profiles" / "qwen3-235b-a22b-w8a8-a2.yaml", "model.max_model_len=null", "model.hf_overrides={}"
    )
    (found,) = [f for f in plan.deployment.findings if f.id == "plan.model.max-model-len-unset"]
    assert found.status == "warn" and "published shapes of Qwen/Qwen3-235B-A22B (the model's id)" in found.message
