"""Failure modes, round two (issue 32, item 7): each caught before launch where the facts allow (a plan or host rule)
and diagnosed from the log otherwise, with its upstream source.

- W8A8 weights with float16 activations (`plan.quant.w8a8-float16`, `log.quant.w8a8-float16`);
- dynamic EPLB on a MoE type the release's EPLB does not register (`plan.eplb.model-registered`, era topic
  `eplb-models`, `log.eplb.model-unsupported`);
- remote-code files config.json's auto_map names but the model directory lacks (`plan.model.remote-code-files`,
  `log.model.remote-code-missing`);
- a default context far beyond what the KV cache holds on that hardware (`plan.model.max-model-len-unset`, now an
  error when the fit says one request cannot fit);
- graph-capture codes 207005 / 507015 and a small HCCL_BUFFSIZE in the log (`log.graph.*`, `log.hccl.*`);
- HDK minimums for CANN 8.1 and 8.3 (`cann_driver_minimums`).
Models are reduced config.json fixtures (ascendctl/facts/data/model_configs/) written into temporary directories.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from ascendctl.check import CheckContext, host_findings
from ascendctl.core.findings import RULES, Finding
from ascendctl.facts.matrix import load_matrix
from ascendctl.facts.model_inspect import read_config_dir, remote_code_files
from ascendctl.plan.planner import plan_profile
from ascendctl.schema.loader import load_profile
from ascendctl_engine.adapters.eras import era_for_release, eras_of
from ascendctl_engine.host import HostFacts
from ascendctl_engine.host.facts import CannInfo, DriverInfo
from ascendctl_engine.phases import catalog, diagnose
from tests.model_dirs import model_dir

AUTO_MAP = {
    "AutoConfig": "configuration_deepseek.DeepseekV3Config",
    "AutoModelForCausalLM": "modeling_deepseek.DeepseekV3ForCausalLM",
    "AutoTokenizer": ["deepseek-ai/DeepSeek-V3--tokenization_deepseek.Tok", None],  # another repo: not required
}


def findings(tmp_path: Path, model: dict[str, Any], *, release: str = "v0.23.0", **body: Any) -> dict[str, Finding]:
    doc = {
        "apiVersion": "ascendctl/v1",
        "kind": "Profile",
        "metadata": {"name": "t"},
        "target": {"backend": "npu", "hardware": body.pop("hardware", "a2"), "devices_per_node": 8},
        "release": release,
        "model": model,
        **body,
    }
    path = tmp_path / "profile.yaml"
    path.write_text(json.dumps(doc))
    return {f.id: f for f in plan_profile(load_profile(path)).deployment.findings}


# ---- W8A8 with float16 activations --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("dtype", "checkpoint", "status"),
    [("float16", "bfloat16", "fail"), ("bfloat16", "bfloat16", "pass"), ("auto", "float16", "fail")],
)
def test_w8a8_with_float16_activations(tmp_path: Path, dtype: str, checkpoint: str, status: str) -> None:
    weights = model_dir(tmp_path, "qwen3-8b", torch_dtype=checkpoint)
    model = {"source": str(weights), "quantization": "w8a8", "dtype": dtype, "max_model_len": 8192}
    rule = findings(tmp_path, model)["plan.quant.w8a8-float16"]
    assert rule.status == status, rule
    if status == "fail":
        assert rule.severity == "error" and "Tensor scale not implemented for DT_FLOAT16" in rule.message
        assert rule.fix == "set model.dtype: bfloat16"


def test_w8a8_float16_is_the_path_on_float16_only_hardware(tmp_path: Path) -> None:
    weights = model_dir(tmp_path, "qwen3-8b")
    model = {"source": str(weights), "quantization": "w8a8", "dtype": "float16", "max_model_len": 8192}
    rule = findings(tmp_path, model, hardware="300i-duo")["plan.quant.w8a8-float16"]
    assert rule.status == "skip" and "float16 only" in rule.message


# ---- dynamic EPLB on an unregistered MoE type ---------------------------------------------------------------------


def test_the_eplb_models_era_covers_every_npu_release() -> None:
    for row in load_matrix().releases:
        if row.backend == "npu":
            assert era_for_release("eplb-models", "npu", row.vllm, row.vllm_ascend) is not None, row.version
    assert {e.traits["config"] for e in eras_of("eplb-models")} == {None, "hf_config", "hf_text_config"}


def _eplb(tmp_path: Path, fixture: str, release: str) -> Finding:
    weights = model_dir(tmp_path, fixture)
    engine = {"parallel": {"tensor": 8, "expert": True}, "eplb": {"mode": "dynamic"}}
    found = findings(tmp_path, {"source": str(weights), "max_model_len": 8192}, release=release, engine=engine)
    return found["plan.eplb.model-registered"]


@pytest.mark.parametrize(
    ("fixture", "release", "status"),
    [
        ("qwen3-next", "v0.13.0", "fail"),  # qwen3_next: not in model_register's list
        ("qwen3-vl-30b-a3b", "v0.13.0", "fail"),  # hf_text_config: qwen3_vl_moe_text
        ("qwen3-30b-a3b", "v0.13.0", "pass"),  # qwen3_moe
        ("qwen3-next", "v0.23.0", "skip"),  # no model-type list from v0.15.0rc1
    ],
)
def test_dynamic_eplb_on_a_model_type_the_release_does_not_register(
    tmp_path: Path, fixture: str, release: str, status: str
) -> None:
    rule = _eplb(tmp_path, fixture, release)
    assert rule.status == status, rule
    if status == "fail":
        assert "NotImplementedError: EPLB is not supported." in rule.message
        assert "qwen3_moe, deepseek_v2, deepseek_v3" in rule.message and "vllm_ascend/eplb/utils.py" in rule.message


# ---- remote-code files named by auto_map ---------------------------------------------------------------------------


def test_auto_map_files_are_the_local_modules_only() -> None:
    assert remote_code_files(AUTO_MAP) == ("configuration_deepseek.py", "modeling_deepseek.py")
    assert remote_code_files({"A": "../../etc/passwd.X", "B": 5, "C": "nodot"}) == ()
    assert remote_code_files("configuration_x.Config") == ()


def test_a_quantized_directory_without_its_remote_code(tmp_path: Path) -> None:
    weights = model_dir(tmp_path, "deepseek-v3", auto_map=AUTO_MAP)
    model = {"source": str(weights), "trust_remote_code": True, "max_model_len": 8192}
    rule = findings(tmp_path, model)["plan.model.remote-code-files"]
    assert rule.status == "fail" and rule.severity == "error"
    assert "configuration_deepseek.py, modeling_deepseek.py" in rule.message
    assert "does not appear to have a file named configuration_deepseek.py" in rule.message
    for name in ("configuration_deepseek.py", "modeling_deepseek.py"):
        (weights / name).write_text("# remote code\n")
    assert findings(tmp_path, model)["plan.model.remote-code-files"].status == "pass"
    config, _ = read_config_dir(weights)
    assert config is not None and config.missing_remote_code == ()
    untrusted = findings(tmp_path, {**model, "trust_remote_code": False})["plan.model.remote-code-files"]
    assert untrusted.status == "skip"


# ---- a default context far beyond what start-up handles on that hardware -----------------------------------------


def test_a_default_context_the_kv_cache_cannot_hold_is_an_error(tmp_path: Path) -> None:
    huge = model_dir(tmp_path, "qwen3-8b", max_position_embeddings=10_000_000)
    rule = findings(tmp_path, {"source": str(huge)})["plan.model.max-model-len-unset"]
    assert rule.status == "fail" and rule.severity == "error", rule
    assert "10,000,000 tokens" in rule.message and "the fit estimates a KV cache of" in rule.message
    assert rule.fix and "tokens fit" in rule.fix
    usual = model_dir(tmp_path, "qwen3-8b")  # 40960: long, but the KV cache holds one request of it
    kept = findings(tmp_path, {"source": str(usual)})["plan.model.max-model-len-unset"]
    assert kept.status == "warn" and kept.severity == "warn"


# ---- log diagnoses -------------------------------------------------------------------------------------------------

NEW_DIAGNOSES = {
    "log.graph.capture-memory": "AclmdlRICaptureBegin(capture_stream_, capture_mode), error code is 207005",
    "log.graph.mte-out-of-range": "NPU function error: c10_npu::acl::AclmdlRICaptureEnd(x), error code is 507015",
    "log.hccl.buffsize-too-small": "HCCL_BUFFSIZE_EP is too SMALL, maxBs = 64, h = 6144, HCCL_BUFFSIZE=256MB.",
    "log.quant.w8a8-float16": "AclNN_Parameter_Error(EZ1001): Tensor scale not implemented for DT_FLOAT16,",
    "log.eplb.model-unsupported": "NotImplementedError: EPLB is not supported.",
    "log.model.remote-code-missing": "OSError: /m does not appear to have a file named modeling_kimi.py. Checkout",
}


@pytest.mark.parametrize(("key", "line"), NEW_DIAGNOSES.items(), ids=list(NEW_DIAGNOSES))
def test_each_failure_mode_is_diagnosed_first_by_its_own_entry(key: str, line: str) -> None:
    found = diagnose(["INFO starting", line])
    assert found and found[0].key == key, [d.key for d in found]
    entry = next(p for p in catalog() if p.key == key)
    assert "vllm-project/" in entry.source or ":vllm_ascend/" in entry.source or ":docs/" in entry.source


def test_every_new_rule_is_registered_with_an_upstream_source() -> None:
    for rule_id in ("plan.quant.w8a8-float16", "plan.eplb.model-registered", "plan.model.remote-code-files"):
        source = RULES[rule_id].source
        assert "vllm-project/" in source or ":vllm_ascend/" in source or ":docs/" in source, rule_id


# ---- HDK minimums for the older CANN lines -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("cann", "driver", "status"),
    [
        ("8.1.RC1", "23.0.3", "fail"),
        ("8.1.RC1", "24.1.0", "pass"),
        ("8.3.RC2", "24.1.rc3.7", "fail"),
        ("8.3.RC2", "25.0.rc1.1", "pass"),
        ("8.2.RC1", "23.0.3", "skip"),  # no upstream statement for the 8.2 line
    ],
)
def test_hdk_minimums_for_cann_8(cann: str, driver: str, status: str) -> None:
    facts = HostFacts(backend="npu", family="a2", driver=DriverInfo(True, driver), cann=CannInfo(version=cann))
    facts = replace(facts, npu_smi_found=True)
    result = next(f for f in host_findings(CheckContext(facts, load_matrix())) if f.id == "host.npu.driver-cann")
    assert result.status == status, result
