"""Which engine environment a backend × release pin needs: a support-matrix row → the engine's own spec.

`engine_spec_for(backend, pin)` is what `ascendctl engine install`, `ascendctl model prepare` and
`ascendctl serve` use to name the environment (`ascendctl_engine.envs.find_engine(spec.backend,
spec.release)`). `spec_from_row` is pure; the matrix is loaded at the one named boundary
(`ascendctl.facts.matrix.load_matrix`).
"""

from __future__ import annotations

from ascendctl.core.errors import UserInputError
from ascendctl.facts.matrix import load_matrix, release_for_pin
from ascendctl.facts.matrix.schema import Release
from ascendctl_engine.install_plan import EngineReleaseSpec

BACKENDS = ("cpu", "npu", "cuda")


def spec_from_row(row: Release, *, extra_index_urls: tuple[str, ...] = ()) -> EngineReleaseSpec:
    """Translate one matrix release row into the engine's spec. The environment is named by the row's
    `version`: the vllm-ascend tag for npu rows (`v0.13.0`), the engine version for cpu and cuda rows
    (`0.32.0`). A MindIE Turbo pin (v0.7.3 era) becomes an extra package of the row."""
    npu = row.backend == "npu"
    return EngineReleaseSpec(
        backend=row.backend,
        release=row.version,
        vllm=row.vllm.removeprefix("v"),
        torch=row.torch,
        torch_npu=row.torch_npu if npu else None,
        triton_ascend=row.triton_ascend if npu else None,
        vllm_ascend=row.version.removeprefix("v") if npu else None,
        extra_index_urls=extra_index_urls,
        python=row.python,
        extra_packages=(f"mindie_turbo=={row.mindie_turbo}",) if (npu and row.mindie_turbo) else (),
    )


def engine_spec_for(backend: str, pin: str | None) -> EngineReleaseSpec:
    """The spec of the engine release `pin` (a version, `latest-stable` or `latest`) for `backend`."""
    if backend not in BACKENDS:
        raise UserInputError(f"unknown backend {backend!r} (expected cpu, npu or cuda)")
    row = release_for_pin(load_matrix(), backend, pin or "latest-stable")
    return spec_from_row(row)
