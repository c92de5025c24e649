"""JSON shapes of `ascendctl matrix … --json` (documented in docs/matrix.md, pinned by tests)."""

from __future__ import annotations

from typing import Any

from ascendctl.facts.matrix.model_families import model_support
from ascendctl.facts.matrix.schema import Hardware, ModelFamily, QuantizationType, Release, SupportMatrix
from ascendctl_engine.vocab import HARDWARE_FAMILIES


def release_json(release: Release) -> dict[str, Any]:
    """One release row as `ascendctl matrix releases --json` prints it.

    Contract keys (always present): vllm_ascend (tag, null for cpu/cuda rows), vllm, python (PEP 440
    specifier), cann, torch, torch_npu, triton_ascend, date (ISO date or null), images (family → image),
    status (final | rc). Also: version (the row's pin), backend, package, cann_alt, mooncake, mooncake_image,
    mindie_turbo, transformers, base_image, disagreements, known_issues, notes, sources (field → `tag:path:line`
    or the decision that overrides it), source.
    """
    r = release
    return {
        "vllm_ascend": r.vllm_ascend,
        "version": r.version,
        "backend": r.backend,
        "package": r.package,
        "status": r.status,
        "date": r.date.isoformat() if r.date else None,
        "vllm": r.vllm,
        "python": r.python,
        "cann": r.cann,
        "cann_alt": r.cann_alt,
        "torch": r.torch,
        "torch_npu": r.torch_npu,
        "triton_ascend": r.triton_ascend,
        "mooncake": r.mooncake,
        "mooncake_image": r.mooncake_image,
        "mindie_turbo": r.mindie_turbo,
        "transformers": r.transformers,
        "base_image": r.base_image,
        "images": dict(r.images),
        "disagreements": [d.model_dump() for d in r.disagreements],
        "known_issues": [i.model_dump() for i in r.known_issues],
        "notes": [n.model_dump() for n in r.notes],
        "sources": dict(r.sources),
        "source": r.source,
    }


def model_json(family: ModelFamily) -> dict[str, Any]:
    """One model family (`ascendctl matrix models --json`): the data as written, plus `status` per hardware."""
    out = family.model_dump(mode="json")
    out["status"] = {h: (row.status if (row := model_support(family, h)) else None) for h in HARDWARE_FAMILIES}
    return out


def hardware_json(hardware: Hardware) -> dict[str, Any]:
    """One hardware family (`ascendctl matrix hardware --json`)."""
    return hardware.model_dump(mode="json")


def quantization_json(matrix: SupportMatrix, quant: QuantizationType) -> dict[str, Any]:
    """One quantization type with how its method is switched on per era (`ascendctl matrix quantizations --json`):
    `launch` lists the adapters' quantization eras (`era`, `releases`, `flag`, `auto_detect`, `packages`, `source`)."""
    out = quant.model_dump(mode="json")
    out["launch"] = launch_eras(quant.method)
    return out


def launch_eras(method: str) -> list[dict[str, Any]]:
    """How a quantization method is switched on, era by era: the adapters' quantization eras (ModelSlim `ascend`
    weights follow each era's `flag` trait; config.json methods need no flag in any era)."""
    from ascendctl_engine.adapters.eras import eras_of

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
    from packaging.specifiers import SpecifierSet

    from ascendctl_engine.versions import parse

    lows = [parse(c.version) for c in SpecifierSet(era.spec) if c.operator in (">=", ">")]
    return (1, max(lows)) if lows else (0, era.name)  # unbounded eras first, by name
