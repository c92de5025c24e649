"""Queries over the support matrix: pure functions that take the matrix as their first argument.

`load_matrix()` is the one I/O boundary (package data, read once per process and cached); everything else
is pure and works on any `SupportMatrix` (tests build broken or tiny ones). Entry points other modules use:

- `release_for_pin(matrix, backend, pin)` → the `Release` row a profile's `release:` names;
- `explainer.explain(matrix, model=…, hardware=…, release=…, quant=…)` → a `Verdict` (supported + reasons +
  references);
- `launch.quantization_launch(matrix, release, quant)` / `quantization_flag_required(…)` → how to switch a quant on;
- `lookup_model`, `hardware_by_id`, `compatible_releases`, `host_match.classify_host` (for `matrix --here`).

Versions are compared with `packaging.version` (`v0.13.0rc1` and `0.13.0rc1` are the same release).
Unknown names raise `UserInputError` with did-you-mean suggestions.

Modules:

- `load`: package data → `SupportMatrix` (its stamped JSON mirror, or a fresh `build` of YAML and extracts);
- `names`: name normalisation, did-you-mean, lenient version parsing;
- `release_pins`: release order, pins, compatible rows; `hardware`, `model_families`, `quantization`, `features`:
  lookups and support per release of each kind of row; `model_tables`: a family's status in a release's own
  supported-models table (the upstream extracts);
- `row_fit`: does a release row fit a host's facts; `views`: the `--json` shapes of `ascendctl matrix [VIEW]`.

This package re-exports the queries of those modules. Four modules are imported from themselves, by the callers
that need them, because each loads more than the queries do: `explainer` (`explain`, `--explain`; it reads the
era adapters' switches), `launch` (how a quantization launches per release and era, a hardware family's traits:
the era adapters' answers), `filters` (the filters of `ascendctl matrix [VIEW]`) and `host_match`
(`classify_host`, `--here`: the host-facts reader).
"""

from __future__ import annotations

from ascendctl.facts.matrix.features import constraint_hits, feature_status
from ascendctl.facts.matrix.hardware import (
    hardware_by_id,
    hardware_for_npu_name,
    hardware_for_soc_version,
    hardware_supported,
)
from ascendctl.facts.matrix.load import (
    MATRIX_JSON,
    MATRIX_YAML,
    load_matrix,
    matrix_from_data,
    matrix_from_texts,
    matrix_json_text,
)
from ascendctl.facts.matrix.model_families import find_models, lookup_model, model_support
from ascendctl.facts.matrix.quantization import quantization_by_id, quantization_support
from ascendctl.facts.matrix.release_pins import (
    LATEST,
    LATEST_STABLE,
    compatible_releases,
    latest_stable,
    release_for_pin,
    releases,
)
from ascendctl.facts.matrix.row_fit import Fit, RowFit, fit_row
from ascendctl.facts.matrix.verdicts import Level, Reason, Verdict
from ascendctl.facts.matrix.views import hardware_json, model_json, release_json
from ascendctl_engine.vocab import Backend

__all__ = [
    "LATEST",
    "LATEST_STABLE",
    "MATRIX_JSON",
    "MATRIX_YAML",
    "Backend",
    "Fit",
    "Level",
    "Reason",
    "RowFit",
    "Verdict",
    "compatible_releases",
    "constraint_hits",
    "feature_status",
    "find_models",
    "fit_row",
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
    "quantization_support",
    "release_for_pin",
    "release_json",
    "releases",
]
