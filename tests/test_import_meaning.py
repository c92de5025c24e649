"""`ascendctl import`: a switch is its meaning, and a local path keeps what its directory and flags say.

A vllm-ascend switch written in any spelling the script's release reads — a variable, an `--additional-config` key,
a key inside `--speculative-config` — imports as its typed field, its value read as the release's code reads it; a
value the field cannot express stays as written. The round trip compares meanings: a switch the plan spells another
way the release also reads is reproduced, and the report says how each side spells it. A local model path keeps the
ModelSlim type its description states (or `auto`), MoE from `--enable-expert-parallel`, and the fit's advice for a
path is `--config FILE`.
"""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from ascendctl.cli import app
from ascendctl.importer.run import import_scripts, report_lines
from ascendctl.importer.script import LaunchScript
from ascendctl.plan.planner import plan_profile

runner = CliRunner()
DSV3 = [
    "deepseek-ai/DeepSeek-V3",
    "--tensor-parallel-size",
    "16",
    "--enable-expert-parallel",
    "--max-model-len",
    "8192",
]


def script(argv: list[str], env: dict[str, str] | None = None) -> LaunchScript:
    return LaunchScript(path="node0.sh", env=env or {}, argv=tuple(argv), unresolved=(), line=1)


def imported(argv: list[str], env: dict[str, str] | None = None, release: str = "v0.25.1rc1"):  # type: ignore[no-untyped-def]
    return import_scripts([script(argv, env)], release=release, hardware="a3", read_config=lambda _s: None)


def test_switch_variables_import_as_their_fields_and_are_reproduced_by_meaning() -> None:
    # v0.25.1rc1 reads the variables as fallbacks of keys its code prefers: the plan spells the keys
    env = {"VLLM_ASCEND_ENABLE_FLASHCOMM1": "1", "VLLM_ASCEND_ENABLE_MLAPO": "1", "VLLM_ASCEND_BALANCE_SCHEDULING": "1"}
    result = imported(DSV3, env)
    ascend = result.document["engine"]["ascend"]
    assert ascend == {"flashcomm1": True, "mlapo": True, "balance_scheduling": True}
    assert result.reproduced and not result.hatches
    assert "runtime" not in result.document or "env" not in result.document["runtime"]
    lines = "\n".join(report_lines(result))
    assert (
        "env VLLM_ASCEND_ENABLE_FLASHCOMM1: respelled: on in both (spelled `--additional-config` key "
        "`enable_flashcomm1` by the plan, `VLLM_ASCEND_ENABLE_FLASHCOMM1` by the script, both read by v0.25.1rc1 "
        "(v0.25.1rc1:vllm_ascend/ascend_config.py:"
    ) in lines
    assert "v0.25.1rc1:vllm_ascend/envs.py:" in lines  # the variable's own reader, cited


def test_additional_config_switches_import_as_fields_and_the_rest_joins_the_plans_object() -> None:
    # v0.25.1rc1:tests/e2e/nightly/multi_node/internal_dp/config/Qwen3-235B-disagg-pd.yaml writes this object
    config = '{"enable_fused_mc2": 1, "enable_flashcomm1": true, "pa_shape_list": [1, 2], "made_up_key_x": 1}'
    result = imported([*DSV3, "--additional-config", config])
    assert result.document["engine"]["ascend"] == {"fused_mc2": True, "flashcomm1": True}  # `1`: int() in the code
    assert result.document["engine"]["additional_config"] == {"pa_shape_list": [1, 2]}
    assert result.hatches == ('engine.additional_config: {"pa_shape_list":[1,2]}',)
    assert result.reproduced
    # a key the release does not read is left out of the profile and reported as ignored, with the reader's words
    [ignored] = [d for d in result.nodes[0].differences if d.name == "--additional-config.made_up_key_x"]
    assert ignored.verdict == "ignored" and "v0.25.1rc1 does not read" in ignored.why


def test_a_key_the_release_does_not_read_is_left_out_and_reported() -> None:
    # v0.19.1rc1 reads FlashComm1 only as a variable: the key is no spelling of it there, and nothing reads it
    result = imported([*DSV3, "--additional-config", '{"enable_flashcomm1": true}'], release="v0.19.1rc1")
    assert "ascend" not in result.document["engine"] and "additional_config" not in result.document["engine"]
    [ignored] = [d for d in result.nodes[0].differences if d.name == "--additional-config.enable_flashcomm1"]
    assert ignored.verdict == "ignored" and "does not read" in ignored.why
    assert result.reproduced and not result.hatches


def test_a_value_the_field_cannot_express_stays_raw() -> None:
    # v0.23.0's fused MC2 variable is a mode: int(...) == 2 is `dispatch_gmm_combine_decode`, no on/off
    result = imported(DSV3, {"VLLM_ASCEND_ENABLE_FUSED_MC2": "2"}, release="v0.23.0")
    assert "ascend" not in result.document["engine"]
    assert result.document["runtime"]["env"] == {"VLLM_ASCEND_ENABLE_FUSED_MC2": "2"}


def test_the_drafters_eager_switch_inside_the_speculative_config_is_draft_eager() -> None:
    spec = '{"method": "deepseek_mtp", "num_speculative_tokens": 1, "enforce_eager": true}'
    result = imported([*DSV3, "--speculative-config", spec])
    assert result.document["engine"]["speculative"] == {"method": "deepseek_mtp", "num_tokens": 1, "draft_eager": True}
    assert not any("speculative" in h for h in result.hatches)


# ------------------------------------------------------------------------------------------------ a local path
DSV32 = [
    "--data-parallel-size", "2", "--tensor-parallel-size", "8", "--enable-expert-parallel", "--quantization",
    "ascend", "--max-model-len", "16384",
    "--speculative-config", '{"num_speculative_tokens": 1, "method": "deepseek_mtp"}',
]  # fmt: skip


def test_a_local_path_keeps_its_modelslim_type_and_moe(tmp_path: Path) -> None:
    model = tmp_path / "dsv32"
    model.mkdir()
    (model / "quant_model_description.json").write_text(json.dumps({"model_quant_type": "W8A8"}))
    result = imported([str(model), *DSV32])
    assert result.document["model"]["quantization"] == "w8a8"
    assert any("quant_model_description.json (model_quant_type)" in n for n in result.draft.notes)
    assert result.plan.deployment.model.arch == "moe"
    assert "engine.parallel.expert" in result.plan.deployment.model.traits_from
    assert "--quantization" in result.plan.commands[0].argv


def test_a_path_without_a_description_here_is_auto_and_the_fit_asks_for_its_config(tmp_path: Path) -> None:
    result = imported(["/data/models/dsv32", *DSV32])
    assert result.document["model"]["quantization"] == "auto"
    profile = tmp_path / "p.yaml"
    profile.write_text(result.yaml_text())
    fit = runner.invoke(app, ["fit", str(profile)])
    assert "give the model's config.json with `--config FILE`" in fit.output
    assert "ascendctl model config SOURCE" not in fit.output
    assert plan_profile(result.profile).deployment.model.arch == "moe"
