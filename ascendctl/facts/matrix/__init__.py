"""Queries over the support matrix: pure functions that take the matrix as their first argument.

`load_matrix()` is the one I/O boundary (package data, read once per process and cached); everything else
is pure and works on any `SupportMatrix` (tests build broken or tiny ones). Entry points other modules use:

- `release_for_pin(matrix, backend, pin)` → the `Release` row a profile's `release:` names;
- `explain(matrix, model=…, hardware=…, release=…, quant=…)` → a `Verdict` (supported + reasons + references);
- `quantization_launch(matrix, release, quant)` / `quantization_flag_required(…)` → how to switch a quant on;
- `lookup_model`, `hardware_by_id`, `compatible_releases`, `classify_host` (for `matrix --here`).

Versions are compared with `packaging.version` (`v0.13.0rc1` and `0.13.0rc1` are the same release).
Unknown names raise `UserInputError` with did-you-mean suggestions.

Modules (import from this package; the layout below is not a contract):

- `load`: package data → `SupportMatrix` (YAML or its stamped JSON mirror);
- `names`: name normalisation, did-you-mean, lenient version parsing;
- `release_pins`: release order, pins, compatible rows; `hardware`, `models`, `quantization`, `features`:
  lookups and support per release of each kind of row;
- `filters`: the filters of `ascendctl matrix [VIEW]`; `views`: its `--json` shapes;
- `verdicts` + `explainer`: `--explain`; `host_fit`: `--here`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ascendctl.facts.matrix.explainer import explain
    from ascendctl.facts.matrix.features import constraint_hits, feature_status
    from ascendctl.facts.matrix.filters import filter_hardware, filter_models, filter_quantizations, filter_releases
    from ascendctl.facts.matrix.hardware import (
        hardware_by_id,
        hardware_for_npu_name,
        hardware_for_soc_version,
        hardware_supported,
    )
    from ascendctl.facts.matrix.host_match import Fit, HostReport, RowFit, classify_host
    from ascendctl.facts.matrix.load import (
        MATRIX_JSON,
        MATRIX_YAML,
        load_matrix,
        matrix_from_data,
        matrix_from_texts,
        matrix_json_text,
    )
    from ascendctl.facts.matrix.model_families import find_models, lookup_model, model_support
    from ascendctl.facts.matrix.quantization import (
        QuantLaunch,
        quantization_by_id,
        quantization_flag_required,
        quantization_launch,
        quantization_support,
    )
    from ascendctl.facts.matrix.release_pins import (
        LATEST,
        LATEST_STABLE,
        compatible_releases,
        latest_stable,
        release_for_pin,
        releases,
    )
    from ascendctl.facts.matrix.verdicts import Level, Reason, Verdict
    from ascendctl.facts.matrix.views import hardware_json, model_json, quantization_json, release_json
    from ascendctl_engine.vocab import Backend

# Each name is imported from its module on first use (PEP 562), so a command pays only for the queries it runs:
# `plan` never imports `host_fit` (and with it the host-facts models) unless it plans against host facts, and
# `matrix --json` does not import the explainer.
_LAZY: dict[str, str] = {
    "explain": "ascendctl.facts.matrix.explainer",
    "constraint_hits": "ascendctl.facts.matrix.features",
    "feature_status": "ascendctl.facts.matrix.features",
    "filter_hardware": "ascendctl.facts.matrix.filters",
    "filter_models": "ascendctl.facts.matrix.filters",
    "filter_quantizations": "ascendctl.facts.matrix.filters",
    "filter_releases": "ascendctl.facts.matrix.filters",
    "hardware_by_id": "ascendctl.facts.matrix.hardware",
    "hardware_for_npu_name": "ascendctl.facts.matrix.hardware",
    "hardware_for_soc_version": "ascendctl.facts.matrix.hardware",
    "hardware_supported": "ascendctl.facts.matrix.hardware",
    "Fit": "ascendctl.facts.matrix.host_match",
    "HostReport": "ascendctl.facts.matrix.host_match",
    "RowFit": "ascendctl.facts.matrix.host_match",
    "classify_host": "ascendctl.facts.matrix.host_match",
    "MATRIX_JSON": "ascendctl.facts.matrix.load",
    "MATRIX_YAML": "ascendctl.facts.matrix.load",
    "load_matrix": "ascendctl.facts.matrix.load",
    "matrix_from_data": "ascendctl.facts.matrix.load",
    "matrix_from_texts": "ascendctl.facts.matrix.load",
    "matrix_json_text": "ascendctl.facts.matrix.load",
    "find_models": "ascendctl.facts.matrix.model_families",
    "lookup_model": "ascendctl.facts.matrix.model_families",
    "model_support": "ascendctl.facts.matrix.model_families",
    "QuantLaunch": "ascendctl.facts.matrix.quantization",
    "quantization_by_id": "ascendctl.facts.matrix.quantization",
    "quantization_flag_required": "ascendctl.facts.matrix.quantization",
    "quantization_launch": "ascendctl.facts.matrix.quantization",
    "quantization_support": "ascendctl.facts.matrix.quantization",
    "LATEST": "ascendctl.facts.matrix.release_pins",
    "LATEST_STABLE": "ascendctl.facts.matrix.release_pins",
    "compatible_releases": "ascendctl.facts.matrix.release_pins",
    "latest_stable": "ascendctl.facts.matrix.release_pins",
    "release_for_pin": "ascendctl.facts.matrix.release_pins",
    "releases": "ascendctl.facts.matrix.release_pins",
    "Level": "ascendctl.facts.matrix.verdicts",
    "Reason": "ascendctl.facts.matrix.verdicts",
    "Verdict": "ascendctl.facts.matrix.verdicts",
    "hardware_json": "ascendctl.facts.matrix.views",
    "model_json": "ascendctl.facts.matrix.views",
    "quantization_json": "ascendctl.facts.matrix.views",
    "release_json": "ascendctl.facts.matrix.views",
    "Backend": "ascendctl_engine.vocab",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


__all__ = [
    "LATEST",
    "LATEST_STABLE",
    "MATRIX_JSON",
    "MATRIX_YAML",
    "Backend",
    "Fit",
    "HostReport",
    "Level",
    "QuantLaunch",
    "Reason",
    "RowFit",
    "Verdict",
    "classify_host",
    "compatible_releases",
    "constraint_hits",
    "explain",
    "feature_status",
    "filter_hardware",
    "filter_models",
    "filter_quantizations",
    "filter_releases",
    "find_models",
    "hardware_by_id",
    "hardware_for_npu_name",
    "hardware_for_soc_version",
    "hardware_json",
    "hardware_supported",
    "latest_stable",
    "load_matrix",
    "lookup_model",
    "matrix_from_data",
    "matrix_from_texts",
    "matrix_json_text",
    "model_json",
    "model_support",
    "quantization_by_id",
    "quantization_flag_required",
    "quantization_json",
    "quantization_launch",
    "quantization_support",
    "release_for_pin",
    "release_json",
    "releases",
]
