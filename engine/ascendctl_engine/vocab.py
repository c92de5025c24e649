"""The project's literal vocabularies, declared once: profile models, the matrix, the adapters, the host facts,
the install plans and the CLI all import them from here (`ascendctl_engine.vocab`; `engine/` is the lower layer,
so the control plane asks it, never the other way round)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal, get_args

Backend = Literal["npu", "cuda", "cpu"]
HardwareFamily = Literal["a2", "a3", "300i-duo", "950"]
HARDWARE_FAMILIES: tuple[HardwareFamily, ...] = get_args(HardwareFamily)  # table columns keep this order

# SOC_VERSION spellings per family: vllm-ascend main (182b75ea):vllm_ascend/device/hardware.py. The one statement of
# them: the host reader (`ascendctl_engine.host.npu_smi`) classifies with it and the support matrix's hardware table
# is built from it (`ascendctl/facts/matrix/build.py`), so `check`, `matrix --here` and the docs agree on every
# spelling.
SOC_VERSIONS: Mapping[HardwareFamily, frozenset[str]] = {
    "a2": frozenset(
        {"910b", "ascend910b1", "ascend910b2", "ascend910b2c", "ascend910b3", "ascend910b4", "ascend910b4-1"}
    ),
    "a3": frozenset(
        {
            "910c",
            "ascend910_9391",
            "ascend910_9381",
            "ascend910_9372",
            "ascend910_9392",
            "ascend910_9382",
            "ascend910_9362",
        }
    ),
    "300i-duo": frozenset(
        {
            "310p",
            "ascend310p1",
            "ascend310p3",
            "ascend310p5",
            "ascend310p7",
            "ascend310p3vir01",
            "ascend310p3vir02",
            "ascend310p3vir04",
            "ascend310p3vir08",
        }
    ),
    "950": frozenset({"ascend950dt_9582"}),
}
# Families whose SOC_VERSION is open-ended: any spelling containing the text selects the family (950 variants).
SOC_VERSION_CONTAINS: Mapping[HardwareFamily, str] = {"950": "ascend950"}

# `auto`: the documented recommendation for model × hardware × release; `engine-default`: no graph flag at all
# (the engine decides, as a plain `vllm serve` would).
GraphMode = Literal["auto", "engine-default", "eager", "piecewise", "full", "full-decode-only", "full-and-piecewise"]
Task = Literal["generate", "embed", "rerank"]
# Why a failing finding refuses a plan (docs/refusal-policy.md): the engine would not start, it cannot be laid out
# on the hardware, or upstream evidence shows it failing at that tag.
Clause = Literal["engine-start", "placement", "known-failure"]
DType = Literal["auto", "bfloat16", "float16", "float32"]
EplbMode = Literal["off", "static", "dynamic"]
EplbImplementation = Literal["auto", "ascend", "upstream"]
Executor = Literal["mp", "ray"]
Role = Literal["head", "worker"]
# dense: plain transformer; moe: mixture of experts; mla: DeepSeek-class (multi-head latent attention + MoE)
ModelArch = Literal["dense", "moe", "mla"]

# Quantization names as the support matrix knows them (lower-case forms of vllm-ascend's registered
# ModelSlim quant types, plus the non-ModelSlim methods). `none` = float weights; `auto` = let the planner /
# engine detect it from the model directory.
Quantization = Literal[
    "none",
    "auto",
    "w8a8",
    "w8a8_dynamic",
    "w8a8_mix",
    "w8a16",
    "w4a8_dynamic",
    "w4a16",
    "w4a4",
    "w4a4_flatquant_dynamic",
    "w8a8s",
    "w8a8sc",
    "w8a8_mxfp8",
    "w4a4_mxfp4",
    "w4a8_mxfp",
    "w4a4_mxfp4_flatquant",
    "w4a16_mxfp4",
    "w8a8fp8_dynamic",
    "fp8",
    "compressed-tensors",
]


# Speculative decoding methods (`--speculative-config` `method`): every name some pinned vLLM's SpeculativeConfig
# accepts, except `custom_class` (a Python class path) and `extract_hidden_states` (a KV-connector hook, no drafting).
# `mtp` is the generic multi-token prediction of the target model itself; the `*_mtp` names are vLLM's
# model-specific spellings of it. Which release runs which name: `ascendctl_engine.adapters.speculative`.
SpeculativeMethod = Literal[
    "mtp",
    "ngram",
    "ngram_gpu",
    "suffix",
    "eagle",
    "eagle3",
    "medusa",
    "mlp_speculator",
    "draft_model",
    "dflash",
    "dspark",
    "deepseek_mtp",
    "mimo_mtp",
    "mimo_v2_mtp",
    "ernie_mtp",
    "qwen3_next_mtp",
    "qwen3_5_mtp",
    "qwen4_exp_mtp",
    "glm4_moe_mtp",
    "glm4_moe_lite_mtp",
    "glm_ocr_mtp",
    "glm5_next_mtp",
    "longcat_flash_mtp",
    "pangu_ultra_moe_mtp",
    "exaone_moe_mtp",
    "exaone4_5_mtp",
    "step3p5_mtp",
    "step5_mtp",
    "nemotron_h_mtp",
    "hy_v3_mtp",
    "hy_v4_mtp",
    "gemma4_mtp",
    "minimax_m3_mtp",
    "bailing_hybrid_mtp",
    "bailing_hybrid_v3_mtp",
    "dots3_note_mtp",
    "inkling_mtp",
    "kimi_k3_mtp",
]
# Methods whose proposer is a separate set of weights: they need `engine.speculative.model`.
SPECULATIVE_DRAFT_METHODS: tuple[SpeculativeMethod, ...] = (
    "eagle",
    "eagle3",
    "medusa",
    "mlp_speculator",
    "draft_model",
    "dflash",
)
# Methods whose drafter may ship inside the target checkpoint: `engine.speculative.model` is optional. Unset, vLLM
# reads the drafter from the target model (vLLM 0.25.1:vllm/config/speculative.py:672-678, 0.33.0:…:1269-1275 —
# DeepSeek-V4-Flash-DSpark keeps it under the target's `mtp.*` weights,
# v0.25.1rc1:vllm_ascend/models/deepseek_v4_dspark.py:5); set, a separate drafter such as
# deepseek-ai/dspark_qwen3_8b_block7 (vLLM 0.25.1:vllm/config/speculative.py:841-852;
# v0.25.1rc1:vllm_ascend/models/__init__.py:14 registers Qwen3DSparkModel).
SPECULATIVE_TARGET_DRAFT_METHODS: tuple[SpeculativeMethod, ...] = ("dspark",)
# Methods that draft without a neural drafter (prompt lookup, suffix trees): no draft model, TP or eager mode.
SPECULATIVE_MODEL_FREE: tuple[SpeculativeMethod, ...] = ("ngram", "ngram_gpu", "suffix")

# KV-cache dtypes (`engine.memory.kv_cache_dtype`): the union of `--kv-cache-dtype` choices over the pinned vLLM
# versions' parser snapshots, plus `int8`, vllm-ascend's own int8 (C8) KV cache. `auto` follows the model dtype.
KvCacheDtype = Literal[
    "auto",
    "bfloat16",
    "float16",
    "fp8",
    "fp8_e4m3",
    "fp8_e5m2",
    "fp8_inc",
    "fp8_ds_mla",
    "fp8_per_token_head",
    "int8_per_token_head",
    "int4_per_token_head",
    "nvfp4",
    "nvfp4_4over6",
    "nvfp4_ds_mla",
    "turboquant_k8v4",
    "turboquant_4bit_nc",
    "turboquant_k3v4_nc",
    "turboquant_3bit_nc",
    "ultraquant_4bit",
    "int8",
]


def either(names: Sequence[str]) -> str:
    """`a2, a3, 300i-duo or 950`: a vocabulary spelled out for a message."""
    return ", ".join(names[:-1]) + f" or {names[-1]}" if len(names) > 1 else "".join(names)


# Prefill/decode disaggregation: the KV connector families a profile names (`disaggregation.connector`). Each
# release spells them with the connector names it registers (adapters/kv_transfer.py): mooncake →
# MooncakeConnectorV1, mooncake-layerwise → MooncakeLayerwiseConnector, mooncake-hybrid → MooncakeHybridConnector,
# llmdatadist → LLMDataDistCMgrConnector (vllm-ascend); shared-storage → vLLM's own SharedStorageConnector /
# ExampleConnector (a connector through a shared directory, what runs on the CPU build).
KvConnectorKind = Literal["mooncake", "mooncake-layerwise", "mooncake-hybrid", "llmdatadist", "shared-storage"]
KV_CONNECTOR_KINDS: tuple[KvConnectorKind, ...] = get_args(KvConnectorKind)
# The two roles of a disaggregated deployment, in the order they are planned and placed on nodes.
PdRole = Literal["prefill", "decode"]
PD_ROLES: tuple[PdRole, ...] = get_args(PdRole)
RouterPolicy = Literal["round-robin"]
