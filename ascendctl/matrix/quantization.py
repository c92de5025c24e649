"""Quantization types: lookup, where each runs (hardware × release) and how it is switched on (launch rules)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ascendctl.errors import UserInputError
from ascendctl.matrix.names import _did_you_mean, _suggest
from ascendctl.models.matrix import (
    QuantizationType,
    QuantLaunchRule,
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
    """How to switch a quantization on for one release."""

    method: str  # the `--quantization` method (`ascend`, `compressed-tensors`, `fp8`) or `none`
    flag_required: bool  # whether `--quantization <method>` must be on the command line
    auto_detect: bool  # whether the engine detects the method from the model directory
    argv: tuple[str, ...]  # what to add to `vllm serve` (the flag when required, plus extra args)
    packages: Mapping[str, str]  # extra packages the method needs (e.g. mindie_turbo in the v0.7.3 era)
    rule: str  # id of the matrix rule that decided (empty for float weights)
    reference: str  # its source


def quantization_launch(matrix: SupportMatrix, release: Release, quant: str) -> QuantLaunch:
    """How `quant` is launched on `release` (first `quantization_launch` rule whose range contains it).

    `none` → no flag. `auto` cannot be decided here (the model directory decides): resolve it first; it
    returns no flag. For cpu/cuda rows the method flag is never required (vLLM reads config.json).
    """
    qt = quantization_by_id(matrix, quant)
    if qt.method in ("none", "auto"):
        return QuantLaunch(qt.method, False, qt.method == "auto", (), {}, "", qt.source)
    extra = tuple(qt.extra_args)
    if release.backend != "npu":
        return QuantLaunch(qt.method, False, True, extra, {}, "", qt.source)
    for rule in matrix.quantization_launch:
        if rule.method == qt.method and in_range(rule.releases, release.version):
            argv = (("--quantization", qt.method) if rule.flag_required else ()) + extra
            return QuantLaunch(
                qt.method, rule.flag_required, rule.auto_detect, argv, dict(rule.packages), rule.id, rule.source
            )
    raise UserInputError(
        f"{release.version} has no way to load {qt.id} weights (no quantization launch rule covers it)"
    )


def quantization_flag_required(matrix: SupportMatrix, release: Release, quant: str) -> bool:
    """Whether `--quantization <method>` must be passed for `quant` on `release`."""
    return quantization_launch(matrix, release, quant).flag_required


def _launch_rules_for(matrix: SupportMatrix, qt: QuantizationType) -> list[QuantLaunchRule]:
    return [r for r in matrix.quantization_launch if r.method == qt.method]
