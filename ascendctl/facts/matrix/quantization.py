"""Quantization types: lookup and where each runs (hardware × release); how each is switched on is the era adapters'
answer (`launch.quantization_launch`)."""

from __future__ import annotations

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
