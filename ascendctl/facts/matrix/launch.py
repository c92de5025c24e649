"""How matrix rows launch, as the era adapters say: a quantization on one release (`quantization_launch`), the
quantization eras (`launch_eras`, `quantization_json`) and a hardware family's traits (`hardware_traits`).

With the explainer (which asks the switches' eras), the one module of the matrix queries that imports the era
adapters (`ascendctl_engine.adapters`): the loader, the lookups, the filters and the `--json` views stay free of
them, so `matrix --json` does not load the era registry (a contract of pyproject.toml).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from packaging.specifiers import SpecifierSet

from ascendctl.core.errors import UserInputError
from ascendctl.facts.matrix.quantization import quantization_by_id
from ascendctl.facts.matrix.schema import Hardware, QuantizationType, Release, SupportMatrix, as_data
from ascendctl_engine.adapters import quantization_argv, quantization_rule
from ascendctl_engine.adapters.eras import eras_of
from ascendctl_engine.adapters.intent import HardwareTraits
from ascendctl_engine.records import record
from ascendctl_engine.versions import parse


@record
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


def hardware_traits(hw: Hardware) -> HardwareTraits:
    """The family's limits as the adapters read them (the matrix's hardware table is their one owner)."""
    lim = hw.limits
    return HardwareTraits(
        dtypes=tuple(lim.dtypes),
        npugraph_ex=lim.npugraph_ex,
        max_capture_sizes=lim.max_capture_sizes,
        graph_min_cann=lim.graph_min_cann,
        few_streams=lim.few_streams,
        hccl_aiv=lim.hccl_aiv,
        label=hw.name,
    )


def quantization_json(matrix: SupportMatrix, quant: QuantizationType) -> dict[str, Any]:
    """One quantization type with how its method is switched on per era (`ascendctl matrix quantizations --json`):
    `launch` lists the adapters' quantization eras (`era`, `releases`, `flag`, `auto_detect`, `packages`, `source`)."""
    out: dict[str, Any] = as_data(quant)
    out["launch"] = launch_eras(quant.method)
    return out


def launch_eras(method: str) -> list[dict[str, Any]]:
    """How a quantization method is switched on, era by era: the adapters' quantization eras (ModelSlim `ascend`
    weights follow each era's `flag` trait; config.json methods need no flag in any era)."""
    out = []
    for era in sorted(eras_of("quantization"), key=_era_start):
        flag = str(era.traits.get("flag", "none")) if method == "ascend" else "none"
        out.append(
            {
                "era": era.name,
                "backends": sorted(era.backends),
                "releases": era.spec or "all",
                "axis": era.axis,
                "flag": flag,
                "auto_detect": bool(era.traits.get("auto_detect", False)) if method == "ascend" else True,
                "packages": dict(era.traits.get("packages") or {}) if method == "ascend" else {},
                "source": era.source,
            }
        )
    return out


def _era_start(era: Any) -> tuple[int, Any]:
    """Oldest first: an era's lower bound (eras with none first)."""
    lows = [parse(c.version) for c in SpecifierSet(era.spec) if c.operator in (">=", ">")]
    return (1, max(lows)) if lows else (0, era.name)  # unbounded eras first, by name
