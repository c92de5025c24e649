"""The strict base for everything a user writes, and the shared vocabulary of names."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict


class StrictModel(BaseModel):
    """User input: unknown keys are errors, objects are frozen, and values are never coerced across types
    (strict mode: the string "8" is not an int; an int is still accepted where a float is expected)."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, validate_default=True)


class LenientModel(BaseModel):
    """Data we did not write (captured host facts, tool output): extra keys are ignored."""

    model_config = ConfigDict(extra="ignore", frozen=True)


Backend = Literal["npu", "cuda", "cpu"]
HardwareFamily = Literal["a2", "a3", "300i-duo", "950"]
GraphMode = Literal["auto", "eager", "piecewise", "full", "full-decode-only", "full-and-piecewise"]
Task = Literal["generate", "embed", "rerank"]
DType = Literal["auto", "bfloat16", "float16", "float32"]
EplbMode = Literal["off", "static", "dynamic"]

# Quantization names as the support matrix knows them (lower-case forms of vllm-ascend's registered
# ModelSlim quant types, `vllm_ascend/quantization/methods/*.py`, plus the non-ModelSlim methods).
# `none` = float weights; `auto` = let the planner/engine detect it from the model directory.
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
