"""The plan.* rules (model config.json, matrix hardware limits), on crafted model directories."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ascendctl.facts.model_inspect import parse_model_config, read_model_config
from ascendctl.plan.planner import UnsupportedPlan, plan_profile, require_startable
from ascendctl.schema.loader import load_profile

DEEPSEEK_V2_LITE = {
    "architectures": ["DeepseekV2ForCausalLM"],
    "model_type": "deepseek_v2",
    "num_attention_heads": 16,
    "num_key_value_heads": 16,
    "kv_lora_rank": 512,
    "n_routed_experts": 64,
    "torch_dtype": "bfloat16",
}
DEEPSEEK_V3 = {**DEEPSEEK_V2_LITE, "model_type": "deepseek_v3", "num_attention_heads": 128, "n_routed_experts": 256}
QWEN3_MOE = {
    "architectures": ["Qwen3MoeForCausalLM"],
    "model_type": "qwen3_moe",
    "num_attention_heads": 32,
    "num_key_value_heads": 4,
    "num_experts": 128,
    "torch_dtype": "bfloat16",
}
DENSE = {
    "architectures": ["Qwen3ForCausalLM"],
    "model_type": "qwen3",
    "num_attention_heads": 32,
    "torch_dtype": "bfloat16",
}


def model_dir(tmp_path: Path, config: dict[str, Any], *, modelslim: bool = False) -> Path:
    directory = tmp_path / "model"
    directory.mkdir()
    (directory / "config.json").write_text(json.dumps(config))
    if modelslim:
        (directory / "quant_model_description.json").write_text("{}")
    return directory


def profile(tmp_path: Path, source: str, body: str, *, hardware: str = "a3", devices: int = 16) -> Path:
    path = tmp_path / "p.yaml"
    path.write_text(
        "apiVersion: ascendctl/v1\nkind: Profile\nmetadata: {name: t}\n"
        f"model: {{source: {json.dumps(source)}}}\n"
        f"target: {{backend: npu, hardware: {hardware}, devices_per_node: {devices}}}\n"
        f"release: v0.23.0\n{body}"
    )
    return path


def findings(path: Path, **kw: Any) -> dict[str, str]:
    """Rule id → `fail` / `warn` / `info` (applies, could not decide) for the rules that have something to say."""
    plan = plan_profile(load_profile(path), **kw)
    return {f.id: "info" if f.undecided else f.status for f in plan.deployment.findings if f.notable}


def test_mla_heads_per_rank(tmp_path: Path) -> None:
    lite = model_dir(tmp_path, DEEPSEEK_V2_LITE)
    graph = profile(tmp_path, str(lite), "engine: {parallel: {tensor: 2}}\n")
    # main's FAQ says so (a document's claim): a warning, never a refusal (upstream's CI runs Kimi-K2.5, 64 heads,
    # at TP 4 with FULL_DECODE_ONLY graphs)
    assert findings(graph)["plan.mla.heads-per-rank"] == "warn"
    require_startable(plan_profile(load_profile(graph)))
    eager = profile(tmp_path, str(lite), "engine: {graph: {mode: eager}, parallel: {tensor: 2}}\n")
    assert "plan.mla.heads-per-rank" not in findings(eager)


def test_mla_heads_ok_for_deepseek_v3_tp4(tmp_path: Path) -> None:
    v3 = model_dir(tmp_path, DEEPSEEK_V3)
    path = profile(tmp_path, str(v3), "engine: {parallel: {tensor: 4}}\n")
    plan = plan_profile(load_profile(path))
    assert plan.deployment.model.arch == "mla" and "config.json" in plan.deployment.model.traits_from
    [mla] = [f for f in plan.deployment.findings if f.id == "plan.mla.heads-per-rank"]
    assert mla.status == "pass" and "32 heads per rank" in mla.message


def test_experts_divisible_by_ep(tmp_path: Path) -> None:
    moe = model_dir(tmp_path, QWEN3_MOE)
    bad = profile(
        tmp_path,
        str(moe),
        "engine: {parallel: {tensor: 16, expert: true}, eplb: {mode: dynamic, redundant_experts: 5}}\n",
    )
    assert findings(bad)["plan.moe.experts-divisible"] == "warn"  # the EPLB guide's claim: a warning
    good = profile(
        tmp_path,
        str(moe),
        "engine: {parallel: {tensor: 16, expert: true}, eplb: {mode: dynamic, redundant_experts: 16}}\n",
    )
    assert "plan.moe.experts-divisible" not in findings(good)


def test_eplb_with_few_experts_per_device(tmp_path: Path) -> None:
    moe = model_dir(tmp_path, QWEN3_MOE)  # 128 experts / 16 ranks = 8 per device
    path = profile(tmp_path, str(moe), "engine: {parallel: {tensor: 16, expert: true}, eplb: {mode: dynamic}}\n")
    assert findings(path)["plan.eplb.experts-per-device"] == "warn"
    fewer_ranks = profile(tmp_path, str(moe), "engine: {parallel: {tensor: 4, expert: true}, eplb: {mode: dynamic}}\n")
    assert "plan.eplb.experts-per-device" not in findings(fewer_ranks)


def test_low_bit_quantization_with_eplb(tmp_path: Path) -> None:
    path = profile(
        tmp_path,
        "Qwen/Qwen3-30B-A3B",
        "engine: {parallel: {tensor: 4, expert: true}, eplb: {mode: dynamic}}\n",
    )
    text = path.read_text().replace("model: {source:", "model: {quantization: w4a8_dynamic, source:")
    path.write_text(text)
    # the matrix's feature constraints own this (W4A8 × EPLB ❌), whether or not the model is a known family
    plan = plan_profile(load_profile(path))
    # one finding per matrix constraint, its id the constraint's atoms: what `allow:` names to accept just it
    [w4a8] = [f for f in plan.deployment.findings if f.id == "plan.matrix.combination.quant-w4a8-dynamic-and-eplb"]
    # main's feature matrix claims it (a document): a warning with its source, never a refusal
    assert w4a8.status == "warn" and "W4A8 quantization does not work with EPLB" in w4a8.message
    unknown = profile(
        tmp_path, "someorg/unknown-moe", "engine: {parallel: {tensor: 4, expert: true}, eplb: {mode: dynamic}}\n"
    )
    unknown.write_text(unknown.read_text().replace("model: {source:", "model: {quantization: w4a8_dynamic, source:"))
    [claim] = [f for f in plan_profile(load_profile(unknown)).deployment.findings if "W4A8" in f.message]
    assert claim.status == "warn" and claim.clause is None  # no family either: the same claim, the same warning


def test_300i_duo_dtype_and_length(tmp_path: Path) -> None:
    dense = model_dir(tmp_path, DENSE)
    unset = profile(tmp_path, str(dense), "", hardware="300i-duo", devices=1)
    found = findings(unset)
    assert found["plan.hardware.checkpoint-dtype"] == "warn" and found["plan.hardware.max-model-len"] == "warn"
    long = profile(tmp_path, "Qwen/Qwen3-8B", "", hardware="300i-duo", devices=1)
    long.write_text(long.read_text().replace("model: {source:", "model: {max_model_len: 131072, source:"))
    assert findings(long)["plan.hardware.max-model-len"] == "warn"  # above the matrix's 20k for Qwen3-Dense on 300I Duo
    short = profile(tmp_path, "Qwen/Qwen3-8B", "", hardware="300i-duo", devices=1)
    short.write_text(short.read_text().replace("model: {source:", "model: {max_model_len: 8192, source:"))
    assert "plan.hardware.max-model-len" not in findings(short)


def test_full_graph_with_context_parallel(tmp_path: Path) -> None:
    path = profile(
        tmp_path,
        "Qwen/Qwen3-8B",
        "engine: {graph: {mode: full}, extra_args: ['--decode-context-parallel-size', '2']}\n",
    )
    assert findings(path)["plan.graph.full-with-context-parallel"] == "warn"


def test_launch_blocking_with_graph_mode(tmp_path: Path) -> None:
    path = profile(tmp_path, "Qwen/Qwen3-8B", "runtime: {env: {ASCEND_LAUNCH_BLOCKING: '1'}}\n")
    assert findings(path)["plan.graph.launch-blocking"] == "fail"
    eager = profile(
        tmp_path, "Qwen/Qwen3-8B", "engine: {graph: {mode: eager}}\nruntime: {env: {ASCEND_LAUNCH_BLOCKING: '1'}}\n"
    )
    assert "plan.graph.launch-blocking" not in findings(eager)


def test_hub_ids_skip_the_config_rules(tmp_path: Path) -> None:
    # no config.json on disk and no published shapes: the shape rules cannot decide
    path = profile(tmp_path, "deepseek-ai/DeepSeek-V2-Lite", "engine: {parallel: {tensor: 4, expert: true}}\n")
    assert findings(path)["plan.moe.experts-divisible"] == "info"


def test_hub_ids_with_published_shapes_decide_the_shape_rules(tmp_path: Path) -> None:
    # DeepSeek-V3's shapes are published (ascendctl/facts/data/model_configs): 128 heads / TP4, 256 experts / EP4
    path = profile(tmp_path, "deepseek-ai/DeepSeek-V3", "engine: {parallel: {tensor: 4, expert: true}}\n")
    plan = plan_profile(load_profile(path))
    status = {f.id: f.status for f in plan.deployment.findings}
    assert status["plan.mla.heads-per-rank"] == "pass" and status["plan.moe.experts-divisible"] == "pass"
    split = profile(tmp_path, "deepseek-ai/DeepSeek-V3", "engine: {parallel: {tensor: 3, expert: true}}\n")
    assert findings(split)["plan.mla.heads-per-rank"] == "warn"  # 128 heads / TP 3, on the model's own id (the FAQ)


def test_model_not_in_the_matrix(tmp_path: Path) -> None:
    path = profile(tmp_path, "someorg/unknown-model-7b", "")
    assert findings(path)["plan.model.in-matrix"] == "warn"


def test_modelslim_directory_resolves_quantization_auto(tmp_path: Path) -> None:
    directory = model_dir(tmp_path, DENSE, modelslim=True)
    path = profile(tmp_path, str(directory), "release: v0.13.0\n")
    path.write_text(
        path.read_text()
        .replace("release: v0.23.0\n", "")
        .replace("model: {source:", "model: {quantization: auto, source:")
    )
    plan = plan_profile(load_profile(path))
    assert "--quantization" in plan.commands[0].argv
    assert plan.deployment.settings["model.quant_method"].source.startswith("auto: quant_model_description.json")


def test_read_model_config(tmp_path: Path) -> None:
    assert read_model_config("Qwen/Qwen3-8B") is None
    assert read_model_config(str(tmp_path / "missing")) is None
    directory = model_dir(
        tmp_path, {"model_type": "qwen3_vl", "vision_config": {}, "text_config": {"num_attention_heads": 32}}
    )
    cfg = read_model_config(str(directory))
    assert cfg is not None and cfg.vision and cfg.num_attention_heads == 32 and not cfg.mla


def test_parse_model_config_fields() -> None:
    cfg = parse_model_config({**DEEPSEEK_V3, "quantization_config": {"quant_method": "fp8"}})
    assert cfg.mla and cfg.moe and cfg.num_experts == 256 and cfg.quant_method == "fp8"


def test_hardware_limits_come_from_the_matrix(tmp_path: Path) -> None:
    # 300I Duo runs float16 only (matrix hardware limits): bfloat16 is refused at plan time, pointing at model.dtype
    path = profile(tmp_path, "Qwen/Qwen3-8B", "", hardware="300i-duo", devices=1)
    path.write_text(
        path.read_text().replace("model: {source:", "model: {dtype: bfloat16, max_model_len: 4096, source:")
    )
    assert findings(path)["plan.hardware.dtype"] == "fail"
    with pytest.raises(UnsupportedPlan, match="runs float16 only, not bfloat16"):
        require_startable(plan_profile(load_profile(path)))
    # the adapters resolve `auto` to the family's dtype and the plan's settings say so
    auto = profile(tmp_path, "Qwen/Qwen3-8B", "", hardware="300i-duo", devices=1)
    plan = plan_profile(load_profile(auto))
    assert plan.deployment.settings["model.dtype"].value == "float16"
    assert "runs float16 only" in plan.deployment.settings["model.dtype"].source
    # the matrix's "A3 needs two devices" is a document's claim upstream's own CI runs against: a warning
    one = profile(tmp_path, "Qwen/Qwen3-8B", "", hardware="a3", devices=1)
    assert findings(one)["plan.hardware.min-devices"] == "warn"


def test_plan_rules_ask_limits_not_family_names() -> None:
    import ascendctl.plan.plan_rules as plan_rules

    source = Path(plan_rules.__file__).read_text()
    for family in ("300i-duo", '"a2"', '"a3"', '"950"'):
        assert family not in source
