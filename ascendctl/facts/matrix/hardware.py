"""Hardware families: lookup by id or alias, by SOC_VERSION or npu-smi name, and support per release."""

from __future__ import annotations

from ascendctl.core.errors import UserInputError
from ascendctl.facts.matrix.names import _did_you_mean, _norm, _suggest
from ascendctl.facts.matrix.schema import Hardware, Release, SupportMatrix, in_range


def hardware_by_id(matrix: SupportMatrix, hardware: str) -> Hardware:
    """A hardware family by id (`a2`, `a3`, `300i-duo`, `950`); a few spellings (`310p`, `A3`) are accepted."""
    key = _norm(hardware)
    aliases = {"310p": "300i-duo", "300i": "300i-duo", "atlas-300i-duo": "300i-duo", "a5": "950", "950dt": "950"}
    key = aliases.get(key, key)
    for h in matrix.hardware:
        if h.id == key:
            return h
    names = [h.id for h in matrix.hardware]
    raise UserInputError(
        f"unknown hardware {hardware!r}{_suggest(_did_you_mean(hardware, names))} (known: {', '.join(names)})"
    )


def hardware_supported(hardware: Hardware, release: Release) -> bool:
    """Whether a vllm-ascend release supports a hardware family (always False for cpu/cuda rows)."""
    return release.backend == "npu" and in_range(hardware.releases, release.version)


def hardware_for_soc_version(matrix: SupportMatrix, soc_version: str) -> Hardware | None:
    """The family a SOC_VERSION string (`ascend910b3`, `ascend910_9391`, `ascend950dt_9582`) belongs to."""
    s = soc_version.strip().lower()
    for h in matrix.hardware:
        if s in (v.lower() for v in h.soc_versions) or (h.soc_version_contains and h.soc_version_contains in s):
            return h
    return None


def hardware_for_npu_name(matrix: SupportMatrix, name: str) -> Hardware | None:
    """The family an `npu-smi info` device Name (`910B3`, `310P3`, `Ascend910`) belongs to."""
    n = name.strip().lower()
    for h in matrix.hardware:
        if n in (v.lower() for v in h.npu_smi_names):
            return h
    return None
