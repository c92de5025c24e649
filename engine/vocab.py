"""The project's literal vocabularies, declared once: profile models, the matrix, the adapters, the host facts,
the install plans and the CLI all import them from here (`ascendctl_engine.vocab`; `engine/` is the lower layer,
so the control plane asks it, never the other way round)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, get_args

Backend = Literal["npu", "cuda", "cpu"]
HardwareFamily = Literal["a2", "a3", "300i-duo", "950"]
HARDWARE_FAMILIES: tuple[HardwareFamily, ...] = get_args(HardwareFamily)  # table columns keep this order
GraphMode = Literal["auto", "eager", "piecewise", "full", "full-decode-only", "full-and-piecewise"]
Task = Literal["generate", "embed", "rerank"]
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


def either(names: Sequence[str]) -> str:
    """`a2, a3, 300i-duo or 950`: a vocabulary spelled out for a message."""
    return ", ".join(names[:-1]) + f" or {names[-1]}" if len(names) > 1 else "".join(names)
