"""Hardware families: lookup by id or alias, by SOC_VERSION or npu-smi name, by the phrases upstream documents use,
and support per release."""

from __future__ import annotations

import re

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


# How upstream documents name the hardware: a model-table tab or hardware cell, a tutorial's "Atlas 800I A2";
# matched on the lower-cased text.
_HARDWARE_WORDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (r"300i", ("300i-duo",)),
    # From v0.24.0rc1 the 310P tab is "Atlas inference products": that tag's installation guide builds it with
    # `SOC_VERSION=ascend310p1`, image suffix `-310p` (v0.24.0rc1:docs/source/installation.md:236,256)
    (r"atlas inference products", ("300i-duo",)),
    (r"310p", ("300i-duo",)),  # the SoC of the 300I Duo cards (tutorials say `310P`)
    (r"950", ("950",)),
    (r"\ba2\s*/\s*a3\b", ("a2", "a3")),
    (r"\ba3\b", ("a3",)),
    (r"\ba2\b", ("a2",)),
)
# What a document naming no hardware covers: tables without a hardware tab or column (and tutorials or notes that
# name none) predate 300I Duo / 950 support.
UNSTATED_HARDWARE = ("a2", "a3")


def phrase_hardware(text: str) -> tuple[str, ...]:
    """The hardware families a phrase names (`Atlas 800I A2`, `Atlas 300I Duo`, `A2/A3`); empty when none."""
    text = text.lower()
    found: list[str] = []
    for pattern, families in _HARDWARE_WORDS:
        if re.search(pattern, text):
            found += [f for f in families if f not in found]
            text = re.sub(pattern, " ", text)
    return tuple(found)
