"""Quantization types: lookup, where each runs (hardware × release) and how it is switched on (launch rules)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ascendctl.core.errors import UserInputError
from ascendctl.facts.matrix.names import _did_you_mean, _suggest
from ascendctl.facts.matrix.schema import (
    QuantizationType,
    QuantSupport,
    Release,
    SupportMatrix,
    in_range,
)


def quantization_by_id(matrix: SupportMatrix, quant: str) -> QuantizationType:
    """A quantization type by id (`w8a8_dynamic`, `W8A8_DYNAMIC` and `w8a8-dynamic` all work)."""
    key = quant.strip().lower()
    for q in matrix.quantizations:
        if key in (q.id, q.id.replace("_", "-"), (q.modelslim_type or "").lower()):
            return q
    ids = [q.id for q in matrix.quantizations]
    raise UserInputError(
        f"unknown quantization {quant!r}{_suggest(_did_you_mean(quant, ids))} (known: {', '.join(ids)})"
    )


def quantization_support(matrix: SupportMatrix, release: Release, hardware: str, quant: str) -> QuantSupport | None:
    """The support entry that lets `quant` run on (release, hardware), or None."""
    qt = quantization_by_id(matrix, quant)
    for s in qt.support:
        if hardware in s.hardware and release.backend == "npu" and in_range(s.releases, release.version):
            return s
    return None


@dataclass(frozen=True)
class QuantLaunch:
    """How to switch a quantization on for one release (the adapters' quantization era decides)."""

    method: str  # the `--quantization` method (`ascend`, `compressed-tensors`, `fp8`) or `none`
    flag_required: bool  # whether `--quantization <method>` must be on the command line
    auto_detect: bool  # whether the engine detects the method from the model directory
    argv: tuple[str, ...]  # what the plan adds to `vllm serve` (the flag when planned, plus extra args)
    packages: Mapping[str, str]  # extra packages the method needs (e.g. mindie_turbo in the v0.7.3 era)
    rule: str  # the era that decided (empty for float weights)
    reference: str  # its source


def quantization_launch(matrix: SupportMatrix, release: Release, quant: str) -> QuantLaunch:
    """How `quant` is launched on `release`: the answer of the adapters' quantization era for that release, so
    `--explain`, the docs and `plan` never disagree.

    `none` → no flag. `auto` cannot be decided here (the model directory decides). Methods vLLM reads from
    config.json (`compressed-tensors`, `fp8`) need no flag anywhere. ModelSlim (`ascend`) weights: the era's
    `flag` trait — `required`, `optional` (planned explicitly, detected anyway), `none`, or `unavailable`.
    """
    from ascendctl_engine.adapters import quantization_argv, quantization_rule

    qt = quantization_by_id(matrix, quant)
    if qt.method in ("none", "auto"):
        return QuantLaunch(qt.method, False, qt.method == "auto", (), {}, "", qt.source)
    rule = quantization_rule(release.backend, release.vllm, release.vllm_ascend)
    argv, cannot = quantization_argv(release.backend, release.vllm, release.vllm_ascend, qt.id, qt.method)
    if qt.method != "ascend":
        return QuantLaunch(qt.method, False, True, argv, {}, rule.era, rule.source)
    if rule.flag == "unavailable" or cannot:
        why = "; ".join(cannot) or f"{rule.era}: {rule.source}"
        raise UserInputError(f"{release.version} has no way to load {qt.id} weights ({why})")
    return QuantLaunch(
        qt.method, rule.flag == "required", rule.auto_detect, argv, dict(rule.packages), rule.era, rule.source
    )


def quantization_flag_required(matrix: SupportMatrix, release: Release, quant: str) -> bool:
    """Whether `--quantization <method>` must be passed for `quant` on `release`."""
    return quantization_launch(matrix, release, quant).flag_required
