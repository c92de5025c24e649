"""Plan rules for start-up failures the engine reports late (issue 17): ModelSlim weights without the flag, a
misnamed ModelSlim description, heads that do not split over TP, an unbounded long default context, and
`--additional-config` keys vllm-ascend refuses outside a PD decode node. Inputs: a profile YAML and a model
directory built from the reduced config.json fixtures (ascendctl/facts/data/model_configs/)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from ascendctl.core.findings import Finding
from ascendctl.facts.model_inspect import parse_model_config, read_config_dir
from ascendctl.plan.planner import UnsupportedPlan, plan_profile, require_startable
from ascendctl.schema.loader import load_profile
from ascendctl_engine.adapters.eras import REGISTRY, era_for_release, in_range
from ascendctl_engine.versions import parse

FIXTURES = Path(__file__).resolve().parents[1] / "ascendctl" / "facts" / "data" / "model_configs"
# what msModelSlim writes next to the weights: the quant type per weight ("FLOAT" = left unquantized)
DESCRIPTION = {
    "model_quant_type": "W8A8_DYNAMIC",
    "model.embed_tokens.weight": "FLOAT",
    "model.layers.0.self_attn.q_proj.weight": "W8A8_DYNAMIC",
    "model.layers.0.self_attn.k_proj.weight": "W8A8_DYNAMIC",
    "model.layers.0.self_attn.v_proj.weight": "W8A8_DYNAMIC",
    "model.layers.0.self_attn.o_proj.weight": "W8A8_DYNAMIC",
    "lm_head.weight": "FLOAT",
}
KV_CONSUMER = json.dumps({"kv_connector": "MooncakeConnectorV1", "kv_role": "kv_consumer"})


def model_dir(tmp_path: Path, fixture: str, *, description: str | None = None, **overrides: Any) -> Path:
    directory = tmp_path / fixture
    directory.mkdir()
    config = json.loads((FIXTURES / f"{fixture}.json").read_text())
    (directory / "config.json").write_text(json.dumps({**config, **overrides}))
    if description:
        (directory / description).write_text(json.dumps(DESCRIPTION))
    return directory


def write_profile(tmp_path: Path, body: dict[str, Any], *, release: str = "v0.23.0") -> Path:
    doc = {
        "apiVersion": "ascendctl/v1",
        "kind": "Profile",
        "metadata": {"name": "t"},
        "target": {"backend": "npu", "hardware": "a3", "devices_per_node": 16},
        "release": release,
        **body,
    }
    path = tmp_path / "profile.yaml"
    path.write_text(json.dumps(doc))  # JSON is YAML
    return path


def found(path: Path) -> dict[str, Finding]:
    plan = plan_profile(load_profile(path))
    return {f.id: f for f in plan.deployment.findings}


def status(f: Finding) -> str:
    return "info" if f.undecided else f.status


# ---- plan.quant.modelslim-unset ---------------------------------------------------------------------------


@pytest.mark.parametrize("release", ["v0.13.0", "v0.16.0rc1"])
def test_modelslim_weights_without_the_flag_fail_where_the_release_does_not_detect_them(
    tmp_path: Path, release: str
) -> None:
    weights = model_dir(tmp_path, "qwen3-8b", description="quant_model_description.json")
    path = write_profile(tmp_path, {"model": {"source": str(weights), "max_model_len": 8192}}, release=release)
    rule = found(path)["plan.quant.modelslim-unset"]
    assert rule.status == "fail" and rule.severity == "error"
    assert "KeyError: '…layers.0.self_attn.q_proj.weight'" in rule.message
    assert rule.fix and "model.quantization: auto" in rule.fix
    with pytest.raises(UnsupportedPlan, match=re.escape("[plan.quant.modelslim-unset]")):
        require_startable(plan_profile(load_profile(path)))
    # the fix works: `auto` reads the description and plans the flag
    fixed = write_profile(
        tmp_path, {"model": {"source": str(weights), "max_model_len": 8192, "quantization": "auto"}}, release=release
    )
    plan = plan_profile(load_profile(fixed))
    assert "--quantization" in plan.commands[0].argv
    assert not any(f.id == "plan.quant.modelslim-unset" and f.notable for f in plan.deployment.findings)


def test_modelslim_weights_without_the_flag_only_warn_where_the_release_detects_them(tmp_path: Path) -> None:
    weights = model_dir(tmp_path, "qwen3-8b", description="quant_model_description.json")
    path = write_profile(tmp_path, {"model": {"source": str(weights), "max_model_len": 8192}}, release="v0.23.0")
    rule = found(path)["plan.quant.modelslim-unset"]
    assert rule.status == "warn" and "detects them" in rule.message
    plan_profile(load_profile(path))  # not a broken constraint


def test_float_weights_and_hub_ids(tmp_path: Path) -> None:
    floats = model_dir(tmp_path, "qwen3-8b")
    path = write_profile(tmp_path, {"model": {"source": str(floats), "max_model_len": 8192}}, release="v0.13.0")
    assert found(path)["plan.quant.modelslim-unset"].status == "pass"
    hub = write_profile(tmp_path, {"model": {"source": "Qwen/Qwen3-8B-w8a8", "max_model_len": 8192}}, release="v0.13.0")
    assert status(found(hub)["plan.quant.modelslim-unset"]) == "info"  # flag-required era, nothing to inspect
    detected = write_profile(tmp_path, {"model": {"source": "Qwen/Qwen3-8B-w8a8", "max_model_len": 8192}})
    assert found(detected)["plan.quant.modelslim-unset"].status == "skip"  # v0.23.0 detects it itself


def test_the_rule_asks_the_quantization_era() -> None:
    from ascendctl_engine.adapters import quantization_rule

    # the era traits the rule reads, verified against vllm-ascend: maybe_auto_detect_quantization is called from
    # v0.15.0rc1:vllm_ascend/platform.py:178 and v0.17.0rc1:vllm_ascend/platform.py:184, not at v0.16.0rc1
    assert not quantization_rule("npu", "0.13.0", "v0.13.0").auto_detect
    assert quantization_rule("npu", "0.15.0", "v0.15.0rc1").auto_detect
    assert not quantization_rule("npu", "0.16.0", "v0.16.0rc1").auto_detect
    assert quantization_rule("npu", "0.17.0", "v0.17.0rc1").auto_detect


# ---- plan.quant.description-name --------------------------------------------------------------------------


def test_old_modelslim_description_name(tmp_path: Path) -> None:
    weights = model_dir(tmp_path, "qwen3-8b", description="quant_model_description_w8a8_dynamic.json")
    cfg, error = read_config_dir(weights)
    assert error is None and cfg is not None
    assert cfg.quant_description_files == ("quant_model_description_w8a8_dynamic.json",) and not cfg.modelslim
    path = write_profile(
        tmp_path, {"model": {"source": str(weights), "max_model_len": 8192, "quantization": "w8a8_dynamic"}}
    )
    rule = found(path)["plan.quant.description-name"]
    assert rule.status == "fail" and "ModelSlim Quantization Config Not Found" in rule.message
    assert rule.fix == (
        f"rename or copy quant_model_description_w8a8_dynamic.json to {weights}/quant_model_description.json "
        "(older msModelSlim put the quant type in the name)"
    )
    (weights / "quant_model_description.json").write_text(json.dumps(DESCRIPTION))  # the fix
    assert found(path)["plan.quant.description-name"].status == "pass"


def test_the_description_name_does_not_matter_where_config_json_carries_it(tmp_path: Path) -> None:
    # v0.8.4rc2 reads no description file (get_config_filenames returns []); its tutorial shows the old name
    weights = model_dir(tmp_path, "qwen3-8b", description="quant_model_description_w8a8_dynamic.json")
    path = write_profile(
        tmp_path, {"model": {"source": str(weights), "max_model_len": 8192, "quantization": "w8a8_dynamic"}},
        release="v0.8.4rc2",
    )  # fmt: skip
    assert found(path)["plan.quant.description-name"].status == "skip"
    assert era_for_release("quant-description", "npu", "0.8.4", "v0.8.4rc2").traits["filename"] is None  # type: ignore[union-attr]
    assert (
        era_for_release("quant-description", "npu", "0.8.5", "v0.8.5rc1").traits["filename"]  # type: ignore[union-attr]
        == "quant_model_description.json"
    )


# ---- plan.tp.heads-divisible ------------------------------------------------------------------------------


def test_attention_heads_that_do_not_split(tmp_path: Path) -> None:
    qwen25 = model_dir(tmp_path, "qwen2.5-7b")  # 28 heads, 4 KV heads
    path = write_profile(
        tmp_path, {"model": {"source": str(qwen25), "max_model_len": 8192}, "engine": {"parallel": {"tensor": 8}}}
    )
    rule = found(path)["plan.tp.heads-divisible"]
    assert rule.status == "fail"
    assert "Total number of attention heads (28) must be divisible by tensor parallel size (8)." in rule.message
    assert rule.fix == "set engine.parallel.tensor to one of 1, 2, 4 (sizes up to 16 that split the heads)"


def test_kv_heads_that_do_not_split(tmp_path: Path) -> None:
    minimax = model_dir(tmp_path, "minimax-m2")  # 48 heads, 8 KV heads
    six = write_profile(
        tmp_path, {"model": {"source": str(minimax), "max_model_len": 8192}, "engine": {"parallel": {"tensor": 6}}}
    )
    rule = found(six)["plan.tp.heads-divisible"]
    assert rule.status == "fail" and "8 is not divisible by 6" in rule.message
    assert rule.fix and "1, 2, 4, 8, 16" in rule.fix  # 3, 6 and 12 split the 48 heads but not the 8 KV heads
    sixteen = write_profile(
        tmp_path, {"model": {"source": str(minimax), "max_model_len": 8192}, "engine": {"parallel": {"tensor": 16}}}
    )
    assert found(sixteen)["plan.tp.heads-divisible"].status == "pass"  # 16 ≥ 8 KV heads: each replicated twice


def test_mla_models_split_the_attention_heads_only(tmp_path: Path) -> None:
    kimi = model_dir(tmp_path, "kimi-k2", num_key_value_heads=3)  # MLA: the KV heads are not split
    path = write_profile(
        tmp_path,
        {"model": {"source": str(kimi), "max_model_len": 8192}, "engine": {"parallel": {"tensor": 16}}},
    )
    assert found(path)["plan.tp.heads-divisible"].status == "pass"
    hub = write_profile(tmp_path, {"model": {"source": "Qwen/Qwen3-4B"}, "engine": {"parallel": {"tensor": 4}}})
    assert status(found(hub)["plan.tp.heads-divisible"]) == "info"  # no config.json, no published shapes
    published = write_profile(tmp_path, {"model": {"source": "Qwen/Qwen3-8B"}, "engine": {"parallel": {"tensor": 4}}})
    decided = found(published)["plan.tp.heads-divisible"]
    assert decided.status == "pass" and "published shapes of Qwen/Qwen3-8B (the model's id)" in decided.message


# ---- plan.model.max-model-len-unset -----------------------------------------------------------------------


def test_long_default_context_unset(tmp_path: Path) -> None:
    qwen3 = model_dir(tmp_path, "qwen3-8b")  # max_position_embeddings 40960
    path = write_profile(tmp_path, {"model": {"source": str(qwen3)}})
    rule = found(path)["plan.model.max-model-len-unset"]
    assert rule.status == "warn" and "40960 tokens" in rule.message
    assert "larger than the available KV cache memory" in rule.message
    assert rule.fix and rule.fix.startswith("set model.max_model_len")
    bounded = write_profile(tmp_path, {"model": {"source": str(qwen3), "max_model_len": 16384}})
    assert found(bounded)["plan.model.max-model-len-unset"].status == "skip"


def test_yarn_scaling_counts(tmp_path: Path) -> None:
    # Qwen2.5's README adds YaRN for 128k: vLLM then serves original_max_position_embeddings × factor
    yarn = {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}
    qwen25 = model_dir(tmp_path, "qwen2.5-7b", rope_scaling=yarn)
    path = write_profile(tmp_path, {"model": {"source": str(qwen25)}})
    rule = found(path)["plan.model.max-model-len-unset"]
    assert rule.status == "warn" and "131072 tokens" in rule.message and "yarn factor 4" in rule.message


def test_derived_max_model_len() -> None:
    base = {"max_position_embeddings": 8192}
    assert parse_model_config(base).derived_max_model_len == 8192
    linear = parse_model_config({**base, "rope_scaling": {"type": "linear", "factor": 2.0}})
    assert linear.derived_max_model_len == 16384
    llama3 = parse_model_config({**base, "rope_scaling": {"rope_type": "llama3", "factor": 8.0}})
    assert llama3.derived_max_model_len == 8192  # llama3 / longrope already count the scaling
    v5 = parse_model_config({**base, "rope_parameters": {"rope_type": "yarn", "factor": 4.0}})
    assert v5.derived_max_model_len == 32768  # transformers v5 spelling; no original length: the max is scaled
    assert parse_model_config({}).derived_max_model_len is None


def test_short_default_context_passes(tmp_path: Path) -> None:
    short = model_dir(tmp_path, "qwen3-8b", max_position_embeddings=8192)
    path = write_profile(tmp_path, {"model": {"source": str(short)}})
    assert found(path)["plan.model.max-model-len-unset"].status == "pass"


# ---- plan.ascend.*-pd-decode ------------------------------------------------------------------------------


def test_kv_nz_outside_a_pd_decode_node(tmp_path: Path) -> None:
    v3 = model_dir(tmp_path, "deepseek-v3")
    body: dict[str, Any] = {
        "model": {"source": str(v3), "max_model_len": 8192},
        "engine": {"parallel": {"tensor": 16}, "additional_config": {"enable_kv_nz": True}},
    }
    rule = found(write_profile(tmp_path, body))["plan.ascend.kv-nz-pd-decode"]
    assert rule.status == "fail" and "only be used in D node" in rule.message and "PD-mixed" in rule.message
    body["engine"]["extra_args"] = ["--kv-transfer-config", KV_CONSUMER]
    assert found(write_profile(tmp_path, body))["plan.ascend.kv-nz-pd-decode"].status == "pass"
    # v0.12.0rc1 has no such check (the key is not read there)
    del body["engine"]["extra_args"]
    assert found(write_profile(tmp_path, body, release="v0.12.0rc1"))["plan.ascend.kv-nz-pd-decode"].status == "skip"


def test_kv_nz_on_a_model_without_mla(tmp_path: Path) -> None:
    qwen3 = model_dir(tmp_path, "qwen3-8b")
    body = {
        "model": {"source": str(qwen3), "max_model_len": 8192},
        "engine": {"parallel": {"tensor": 2}, "additional_config": {"enable_kv_nz": True}},
    }
    rule = found(write_profile(tmp_path, body))["plan.ascend.kv-nz-pd-decode"]
    assert rule.status == "fail" and "enable_kv_nz is only supported for mla currently." in rule.message


def test_recompute_scheduler_on_a_mixed_node(tmp_path: Path) -> None:
    body = {
        "model": {"source": "Qwen/Qwen3-8B", "max_model_len": 8192},
        "engine": {"parallel": {"tensor": 2}, "ascend": {"recompute_scheduler": True}},
    }
    rule = found(write_profile(tmp_path, body))["plan.ascend.recompute-scheduler-pd-decode"]
    assert rule.status == "fail" and "not supported in PD-mixed mode" in rule.message
    assert "engine.ascend.recompute_scheduler" in rule.message
    # v0.18.0rc1 still takes it on a mixed node (the check arrives in v0.18.0)
    earlier = found(write_profile(tmp_path, body, release="v0.18.0rc1"))
    assert earlier["plan.ascend.recompute-scheduler-pd-decode"].status == "skip"
    raw = {
        "model": {"source": "Qwen/Qwen3-8B", "max_model_len": 8192},
        "engine": {"parallel": {"tensor": 2}, "additional_config": {"recompute_scheduler_enable": True}},
    }
    assert found(write_profile(tmp_path, raw))["plan.ascend.recompute-scheduler-pd-decode"].status == "fail"


def test_oproj_tensor_parallel_outside_a_pd_decode_node(tmp_path: Path) -> None:
    body = {
        "model": {"source": "deepseek-ai/DeepSeek-V3", "max_model_len": 8192},
        "engine": {
            "parallel": {"tensor": 1, "data": 16, "expert": True},
            "additional_config": {"finegrained_tp_config": {"oproj_tensor_parallel_size": 8}},
        },
    }
    rule = found(write_profile(tmp_path, body))["plan.ascend.oproj-tp-pd-decode"]
    assert rule.status == "fail" and "finegrained_tp_config.oproj_tensor_parallel_size" in rule.message
    with pytest.raises(UnsupportedPlan, match=re.escape("[plan.ascend.oproj-tp-pd-decode]")):
        require_startable(plan_profile(load_profile(write_profile(tmp_path, body))))


# ---- the new data topics cover every release -----------------------------------------------------------------


@pytest.mark.parametrize("topic", ["quant-description", "pd-decode-only"])
def test_one_era_per_release(topic: str) -> None:
    repo = Path(__file__).resolve().parents[1]
    tags = [p.stem for p in (repo / "engine" / "ascendctl_engine" / "data" / "ascend_keys").glob("v*.json")]
    assert tags
    eras = [e for e in REGISTRY if e.topic == topic]
    for tag in tags:
        assert sum(in_range(e.spec, parse(tag)) for e in eras) == 1, (topic, tag)
