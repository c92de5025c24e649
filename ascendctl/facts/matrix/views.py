"""JSON shapes of `ascendctl matrix … --json` (documented in docs/matrix.md, pinned by tests); the quantizations
view, which lists the era adapters' quantization eras, is `launch.quantization_json`."""

from __future__ import annotations

from typing import Any

from ascendctl.facts.matrix.model_families import model_support
from ascendctl.facts.matrix.schema import Hardware, ModelFamily, Release, as_data
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
        "disagreements": [as_data(d) for d in r.disagreements],
        "known_issues": [as_data(i) for i in r.known_issues],
        "notes": [as_data(n) for n in r.notes],
        "sources": dict(r.sources),
        "source": r.source,
    }


def model_json(family: ModelFamily) -> dict[str, Any]:
    """One model family (`ascendctl matrix models --json`): the data as written, plus `status` per hardware."""
    out: dict[str, Any] = as_data(family)
    out["status"] = {h: (row.status if (row := model_support(family, h)) else None) for h in HARDWARE_FAMILIES}
    return out


def hardware_json(hardware: Hardware) -> dict[str, Any]:
    """One hardware family (`ascendctl matrix hardware --json`)."""
    out: dict[str, Any] = as_data(hardware)
    return out
