"""Lint rules that read the model's config.json, on crafted model directories."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ascendctl.model_config import parse_model_config, read_model_config
from ascendctl.planner import UnsupportedPlan, plan_profile
from ascendctl.profile_loader import load_profile

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
    plan = plan_profile(load_profile(path), allow_unsupported=True, **kw)
    return {f.rule: f.level for f in plan.deployment.lint}


def test_mla_heads_per_rank(tmp_path: Path) -> None:
    lite = model_dir(tmp_path, DEEPSEEK_V2_LITE)
    graph = profile(tmp_path, str(lite), "engine: {parallel: {tensor: 2}}\n")
    assert findings(graph)["mla-heads-per-rank"] == "error"
    with pytest.raises(UnsupportedPlan, match="heads per TP rank"):
        plan_profile(load_profile(graph))
    eager = profile(tmp_path, str(lite), "engine: {graph: {mode: eager}, parallel: {tensor: 2}}\n")
    assert "mla-heads-per-rank" not in findings(eager)


def test_mla_heads_ok_for_deepseek_v3_tp4(tmp_path: Path) -> None:
    v3 = model_dir(tmp_path, DEEPSEEK_V3)
    path = profile(tmp_path, str(v3), "engine: {parallel: {tensor: 4}}\n")
    plan = plan_profile(load_profile(path))
    assert plan.deployment.model.arch == "mla" and "config.json" in plan.deployment.model.traits_from
    assert "mla-heads-per-rank" not in {f.rule for f in plan.deployment.lint}


def test_experts_divisible_by_ep(tmp_path: Path) -> None:
    moe = model_dir(tmp_path, QWEN3_MOE)
    bad = profile(
        tmp_path,
        str(moe),
        "engine: {parallel: {tensor: 16, expert: true}, eplb: {mode: dynamic, redundant_experts: 5}}\n",
    )
    assert findings(bad)["experts-divisible-by-ep"] == "error"
    good = profile(
        tmp_path,
        str(moe),
        "engine: {parallel: {tensor: 16, expert: true}, eplb: {mode: dynamic, redundant_experts: 16}}\n",
    )
    assert "experts-divisible-by-ep" not in findings(good)


def test_eplb_with_few_experts_per_device(tmp_path: Path) -> None:
    moe = model_dir(tmp_path, QWEN3_MOE)  # 128 experts / 16 ranks = 8 per device
    path = profile(tmp_path, str(moe), "engine: {parallel: {tensor: 16, expert: true}, eplb: {mode: dynamic}}\n")
    assert findings(path)["eplb-experts-per-device"] == "warning"
    fewer_ranks = profile(tmp_path, str(moe), "engine: {parallel: {tensor: 4, expert: true}, eplb: {mode: dynamic}}\n")
    assert "eplb-experts-per-device" not in findings(fewer_ranks)


def test_low_bit_quantization_with_eplb(tmp_path: Path) -> None:
    path = profile(
        tmp_path,
        "Qwen/Qwen3-30B-A3B",
        "engine: {parallel: {tensor: 4, expert: true}, eplb: {mode: dynamic}}\n",
    )
    text = path.read_text().replace("model: {source:", "model: {quantization: w4a8_dynamic, source:")
    path.write_text(text)
    assert findings(path)["low-bit-quant-eplb"] == "error"


def test_300i_duo_dtype_and_length(tmp_path: Path) -> None:
    dense = model_dir(tmp_path, DENSE)
    unset = profile(tmp_path, str(dense), "", hardware="300i-duo", devices=1)
    found = findings(unset)
    assert found["310p-float16"] == "warning" and found["310p-max-model-len"] == "warning"
    long = profile(tmp_path, "Qwen/Qwen3-8B", "", hardware="300i-duo", devices=1)
    long.write_text(long.read_text().replace("model: {source:", "model: {max_model_len: 131072, source:"))
    assert findings(long)["310p-max-model-len"] == "warning"  # above the matrix's 20k for Qwen3-Dense on 300I Duo
    short = profile(tmp_path, "Qwen/Qwen3-8B", "", hardware="300i-duo", devices=1)
    short.write_text(short.read_text().replace("model: {source:", "model: {max_model_len: 8192, source:"))
    assert "310p-max-model-len" not in findings(short)


def test_full_graph_with_context_parallel(tmp_path: Path) -> None:
    path = profile(
        tmp_path,
        "Qwen/Qwen3-8B",
        "engine: {graph: {mode: full}, extra_args: ['--decode-context-parallel-size', '2']}\n",
    )
    assert findings(path)["full-graph-context-parallel"] == "warning"


def test_launch_blocking_with_graph_mode(tmp_path: Path) -> None:
    path = profile(tmp_path, "Qwen/Qwen3-8B", "runtime: {env: {ASCEND_LAUNCH_BLOCKING: '1'}}\n")
    assert findings(path)["launch-blocking-graph"] == "error"
    eager = profile(
        tmp_path, "Qwen/Qwen3-8B", "engine: {graph: {mode: eager}}\nruntime: {env: {ASCEND_LAUNCH_BLOCKING: '1'}}\n"
    )
    assert "launch-blocking-graph" not in findings(eager)


def test_hub_ids_skip_the_config_rules(tmp_path: Path) -> None:
    path = profile(tmp_path, "deepseek-ai/DeepSeek-V3", "engine: {parallel: {tensor: 4, expert: true}}\n")
    found = findings(path)
    assert found["mla-heads-per-rank"] == "info" and found["experts-divisible-by-ep"] == "info"


def test_model_not_in_the_matrix(tmp_path: Path) -> None:
    path = profile(tmp_path, "someorg/unknown-model-7b", "")
    assert findings(path)["model-in-matrix"] == "warning"


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
