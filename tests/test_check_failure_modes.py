"""Host rules for failures operators hit (issue 17): npu-smi's DCMI error codes, the CANN kernels/ops package of
the host's SoC, a driver (HDK) older than the CANN needs, /etc/hccn.conf for multi-node. Every rule is run by
`run_check` over a captured host tree (tests/fixtures/hosts) or a copy of one modified in tmp_path."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from ascendctl.check import CheckContext, host_findings
from ascendctl.check.host_cann import driver_minimum, kernels_package
from ascendctl.check.host_check import requested_files
from ascendctl.check.service import run_check
from ascendctl.core.findings import Finding
from ascendctl.facts.matrix import load_matrix
from ascendctl.facts.matrix.schema import SupportMatrix
from ascendctl.schema.loader import load_profile
from ascendctl_engine.host import CommandResult, FakeHostProbe, HostFacts, LocalHostProbe, gather_host_facts
from ascendctl_engine.host.cann import OPP_KERNEL_SUBDIR, kernel_socs_from_listing
from ascendctl_engine.host.npu_smi import DCMI_CAUSES, dcmi_error_code, parse_npu_smi_info

HOSTS = Path(__file__).resolve().parent / "fixtures" / "hosts"
TWO_NODES = Path(__file__).resolve().parent / "fixtures" / "profiles" / "qwen3-235b-a22b-ray-2node-a2.yaml"
A2_KERNELS = f"usr/local/Ascend/ascend-toolkit/8.5.0/{OPP_KERNEL_SUBDIR}/ascend910b"


@pytest.fixture(scope="module")
def matrix() -> SupportMatrix:
    return load_matrix()


def variant(tmp_path: Path, name: str) -> Path:
    """A copy of fixture host `name` to modify (symlinks such as `latest -> 8.5.0` kept)."""
    dest = tmp_path / "variants" / name
    shutil.copytree(HOSTS / name, dest, symlinks=True)
    return dest


def check_host(
    fixture_host: Any, matrix: SupportMatrix, name: str, root: Path | None = None, profile: Path | None = None
) -> dict[str, Finding]:
    host = fixture_host(name, root=root)
    report = run_check(
        profile, root=str(host.root), engine_python=str(host.engine_python), environ=host.environ, matrix=matrix
    )
    return {r.id: r for r in report.results}


def host_facts(fixture_host: Any, name: str, root: Path | None = None) -> HostFacts:
    host = fixture_host(name, root=root)
    return gather_host_facts(LocalHostProbe(host.root, environ=host.environ), root=str(host.root))


def set_driver(root: Path, version: str) -> None:
    """Swap the driver version in both places a host shows it (driver version.info, npu-smi's title row)."""
    info = root / "usr/local/Ascend/driver/version.info"
    lines = info.read_text().splitlines()
    info.write_text("\n".join([f"Version={version}", *lines[1:]]) + "\n")
    smi = root / "_captured/npu-smi-info.txt"
    old = parse_npu_smi_info(smi.read_text()).driver_version
    assert old is not None
    smi.write_text(smi.read_text().replace(old, version.ljust(len(old)), 2))


# ---- npu-smi / DCMI error codes ------------------------------------------------------------------------

# Lines quoted from real reports (see engine/ascendctl_engine/host/npu_smi.py).
REAL_FAILURES = [
    ("DrvMngGetConsoleLogLevel failed. (g_conLogLevel=3)\ndcmi module initialize failed. ret is -8005", -8005),
    ("dcmi model initialized failed, because the device is used. ret is -8020", -8020),
    ("DrvMngGetConsoleLogLevel failed. (ret=4)\ndcmi module initialize failed. ret is -8005", -8005),
    ("`npu-smi info` exited with 187: dcmi model initialized failed, because the device is used. ret is -8020", -8020),
]


@pytest.mark.parametrize(("text", "code"), REAL_FAILURES)
def test_dcmi_code_from_real_npu_smi_failures(text: str, code: int) -> None:
    assert dcmi_error_code(text) == code


def test_no_dcmi_code_in_other_text() -> None:
    assert dcmi_error_code((HOSTS / "a2-910b3x8/_captured/npu-smi-info.txt").read_text()) is None
    assert dcmi_error_code("DrvMngGetConsoleLogLevel failed. (ret=4)") is None
    assert dcmi_error_code("`npu-smi info` exited with 2: npu-smi stub: no capture for: info") is None


def test_the_dcmi_line_survives_a_stderr_log_line() -> None:
    # npu-smi may print the DCMI line on stdout and only the log-level complaint on stderr: keep the DCMI line
    probe = FakeHostProbe(
        programs={"npu-smi": "/usr/local/bin/npu-smi"},
        commands={
            ("npu-smi", "info"): CommandResult(
                187,
                "dcmi module initialize failed. ret is -8005\n",
                "DrvMngGetConsoleLogLevel failed. (g_conLogLevel=3)\n",
            )
        },
    )
    err = gather_host_facts(probe).probe_errors["npu-smi"]
    assert "exited with 187" in err and dcmi_error_code(err) == -8005


def test_every_dcmi_cause_is_sourced_and_has_a_fix() -> None:
    assert {-8020, -8005, -8002} <= set(DCMI_CAUSES)
    for code, cause in DCMI_CAUSES.items():
        assert -8255 <= code <= -8001
        assert cause.name.startswith("DCMI_ERR_CODE_") and cause.cause and cause.fix
        assert "hiascend.com" in cause.source


def test_device_held_by_another_container(fixture_host: Any, matrix: SupportMatrix) -> None:
    facts = host_facts(fixture_host, "a2-npu-held")
    assert "ret is -8020" in facts.probe_errors["npu-smi"]
    smi = check_host(fixture_host, matrix, "a2-npu-held")["host.npu.smi"]
    assert smi.status == "warn"
    assert "-8020" in smi.message and "DCMI_ERR_CODE_RESOURCE_OCCUPIED" in smi.message
    assert smi.fix and "other container" in smi.fix
    assert "reinstall the driver" not in smi.fix


def test_dcmi_inner_error_names_permission_and_privileges(
    fixture_host: Any, matrix: SupportMatrix, tmp_path: Path
) -> None:
    root = variant(tmp_path, "a2-npu-held")
    (root / "_captured/npu-smi-info.txt").write_text(REAL_FAILURES[0][0] + "\n")
    smi = check_host(fixture_host, matrix, "a2-npu-held", root=root)["host.npu.smi"]
    assert smi.status == "warn" and "-8005" in smi.message
    assert smi.fix and "HwHiAiUser" in smi.fix and "--privileged" in smi.fix


def test_unknown_dcmi_code_is_quoted(fixture_host: Any, matrix: SupportMatrix, tmp_path: Path) -> None:
    root = variant(tmp_path, "a2-npu-held")
    (root / "_captured/npu-smi-info.txt").write_text("dcmi module initialize failed. ret is -8099\n")
    smi = check_host(fixture_host, matrix, "a2-npu-held", root=root)["host.npu.smi"]
    assert smi.status == "warn"
    assert "-8099" in smi.message and smi.fix and "-8099" in smi.fix


# ---- CANN kernels/ops package ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["a2-910b3x8", "a3-16chips", "300i-duo", "cann9-a2"])
def test_fixture_hosts_have_their_soc_kernels(fixture_host: Any, matrix: SupportMatrix, name: str) -> None:
    result = check_host(fixture_host, matrix, name)["host.cann.kernels"]
    assert result.status == "pass", result


def test_kernels_package_missing(fixture_host: Any, matrix: SupportMatrix, tmp_path: Path) -> None:
    root = variant(tmp_path, "a2-910b3x8")
    shutil.rmtree(root / "usr/local/Ascend/ascend-toolkit/8.5.0/opp")
    facts = host_facts(fixture_host, "a2-910b3x8", root=root)
    assert facts.cann.kernel_socs == ()
    result = check_host(fixture_host, matrix, "a2-910b3x8", root=root)["host.cann.kernels"]
    assert result.status == "fail" and result.severity == "error"
    a2 = next(h for h in matrix.hardware if h.id == "a2")
    assert a2.cann_ops and result.fix and a2.cann_ops in result.fix  # CANN 8.5.0: the ops package, from the matrix
    assert "ascend910b" in result.message


def test_only_the_toolkits_ops_oam_is_not_a_kernels_package(
    fixture_host: Any, matrix: SupportMatrix, tmp_path: Path
) -> None:
    root = variant(tmp_path, "a2-910b3x8")
    shutil.rmtree(root / A2_KERNELS)
    (root / A2_KERNELS / "ops_oam").mkdir(parents=True)
    (root / A2_KERNELS / "ops_oam" / "oam.json").write_text("{}\n")
    result = check_host(fixture_host, matrix, "a2-910b3x8", root=root)["host.cann.kernels"]
    assert result.status == "fail"


def test_kernels_for_another_soc_only(fixture_host: Any, matrix: SupportMatrix, tmp_path: Path) -> None:
    root = variant(tmp_path, "a2-910b3x8")
    (root / A2_KERNELS).rename(root / A2_KERNELS.replace("ascend910b", "ascend310p"))
    result = check_host(fixture_host, matrix, "a2-910b3x8", root=root)["host.cann.kernels"]
    assert result.status == "fail" and "ascend310p" in result.message


def test_kernels_under_the_exported_opp_path(fixture_host: Any, matrix: SupportMatrix, tmp_path: Path) -> None:
    # set_env.sh exports ASCEND_OPP_PATH; kernels installed there count too
    root = variant(tmp_path, "a2-910b3x8")
    moved = root / "opt/opp" / OPP_KERNEL_SUBDIR.removeprefix("opp/")
    moved.mkdir(parents=True)
    (root / A2_KERNELS).rename(moved / "ascend910b")
    assert check_host(fixture_host, matrix, "a2-910b3x8", root=root)["host.cann.kernels"].status == "fail"
    env = json.loads((root / "_captured/env.json").read_text())
    (root / "_captured/env.json").write_text(json.dumps({**env, "ASCEND_OPP_PATH": "/opt/opp"}))
    assert check_host(fixture_host, matrix, "a2-910b3x8", root=root)["host.cann.kernels"].status == "pass"


def test_kernels_package_name_follows_the_cann_rename(matrix: SupportMatrix) -> None:
    for hw in matrix.hardware:
        if hw.cann_kernels and hw.cann_ops:
            assert kernels_package(hw, "8.3.RC2") == hw.cann_kernels
            assert kernels_package(hw, "8.5.0") == hw.cann_ops
            assert kernels_package(hw, "9.1.0") == hw.cann_ops


def test_kernel_socs_listing_and_round_trip(fixture_host: Any) -> None:
    assert kernel_socs_from_listing({"ascend910b": ["ops_oam"], "ascend910_93": ["ops_legacy"], "x": None}) == (
        "ascend910_93",
    )
    facts = host_facts(fixture_host, "a3-16chips")
    assert facts.cann.kernel_socs == ("ascend910_93",)
    assert HostFacts.from_dict(facts.to_dict()).cann.kernel_socs == ("ascend910_93",)


# ---- driver (HDK) vs CANN --------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["a2-910b3x8", "a3-16chips", "300i-duo", "cann9-a2"])
def test_fixture_hosts_drivers_fit_their_cann(fixture_host: Any, matrix: SupportMatrix, name: str) -> None:
    result = check_host(fixture_host, matrix, name)["host.npu.driver-cann"]
    assert result.status == "pass", result


def test_driver_24_1_is_too_old_for_cann_8_5(fixture_host: Any, matrix: SupportMatrix, tmp_path: Path) -> None:
    root = variant(tmp_path, "a2-910b3x8")
    set_driver(root, "24.1.0")  # vllm-project/vllm-ascend#5468: CANN 8.5 does not support driver 24.1
    result = check_host(fixture_host, matrix, "a2-910b3x8", root=root)["host.npu.driver-cann"]
    assert result.status == "fail" and result.severity == "error"
    row = driver_minimum(matrix.cann_driver_minimums, "8.5.0")
    assert row is not None and row.driver in result.message and result.fix and row.driver in result.fix
    assert "24.1.0" in result.message


def test_cann_9_1_needs_hdk_25_2(fixture_host: Any, matrix: SupportMatrix, tmp_path: Path) -> None:
    root = variant(tmp_path, "a3-16chips")
    set_driver(root, "25.0.rc1.1")
    assert host_facts(fixture_host, "a3-16chips", root=root).driver.version == "25.0.rc1.1"
    result = check_host(fixture_host, matrix, "a3-16chips", root=root)["host.npu.driver-cann"]
    assert result.status == "fail" and "9.1.0" in result.message


def test_cann_line_without_a_recorded_minimum_is_skipped(fixture_host: Any, matrix: SupportMatrix) -> None:
    facts = host_facts(fixture_host, "a2-910b3x8")
    older = replace(facts, cann=replace(facts.cann, version="8.2.RC1"))  # no upstream statement for 8.2 (issue 32)
    result = next(f for f in host_findings(CheckContext(older, matrix)) if f.id == "host.npu.driver-cann")
    assert result.status == "skip" and "8.2.RC1" in result.message


def test_every_driver_minimum_row_is_sourced(matrix: SupportMatrix) -> None:
    assert matrix.cann_driver_minimums
    for row in matrix.cann_driver_minimums:
        # a vendor URL, an upstream `tag:path:line`, or an upstream issue (vllm-project/vllm-ascend#N)
        assert row.source.startswith(("https://", "v0.", "vllm-project/vllm-ascend#")), row.source
    assert driver_minimum(matrix.cann_driver_minimums, "8.5.2") == driver_minimum(matrix.cann_driver_minimums, "8.5.0")


# ---- /etc/hccn.conf for multi-node ------------------------------------------------------------------------


def hccn_result(fixture_host: Any, matrix: SupportMatrix, root: Path | None = None) -> Finding:
    """host.net.hccn-conf for the two-node profile on (a copy of) the A2 host: facts from the tree, no planning."""
    host = fixture_host("a2-910b3x8", root=root)
    profile = load_profile(TWO_NODES)
    probe = LocalHostProbe(host.root, environ=host.environ)
    facts = gather_host_facts(probe, root=str(host.root), files=requested_files(profile))
    ctx = CheckContext(facts, matrix, profile)
    return next(f for f in host_findings(ctx) if f.id == "host.net.hccn-conf")


def test_two_nodes_without_hccn_conf(fixture_host: Any, matrix: SupportMatrix) -> None:
    result = hccn_result(fixture_host, matrix)
    assert result.status == "fail" and result.severity == "error"
    assert "/etc/hccn.conf" in result.message
    assert result.fix and "hccn_tool -i" in result.fix and "-ip -s address" in result.fix and ":ro" in result.fix


def test_two_nodes_with_hccn_conf(fixture_host: Any, matrix: SupportMatrix, tmp_path: Path) -> None:
    root = variant(tmp_path, "a2-910b3x8")
    (root / "etc").mkdir()
    (root / "etc/hccn.conf").write_text("address_0=192.0.2.100\nnetmask_0=255.255.255.0\nnetdetect_0=192.0.2.1\n")
    assert hccn_result(fixture_host, matrix, root).status == "pass"


def test_a_container_without_the_hosts_hccn_conf_is_told_to_mount_it(
    fixture_host: Any, matrix: SupportMatrix, tmp_path: Path
) -> None:
    # issue 55: inside a container (Docker's /.dockerenv) the file is missing because it is not mounted
    root = variant(tmp_path, "a2-910b3x8")
    (root / ".dockerenv").write_text("")
    result = hccn_result(fixture_host, matrix, root)
    assert result.status == "fail" and result.severity == "error" and result.clause == "placement"
    assert "missing in this container (/.dockerenv shows one)" in result.message
    assert result.fix and result.fix.startswith("mount the host's /etc/hccn.conf read-only")
    assert "-v /etc/hccn.conf:/etc/hccn.conf:ro" in result.fix and "hostPath" in result.fix
    (root / "etc").mkdir()
    (root / "etc/hccn.conf").write_text("address_0=192.0.2.100\nnetmask_0=255.255.255.0\n")
    mounted = hccn_result(fixture_host, matrix, root)
    assert mounted.status == "pass" and "mounted into this container" in mounted.message


def test_a_kubernetes_pod_is_a_container_too(fixture_host: Any, matrix: SupportMatrix) -> None:
    # containerd and CRI-O write no marker file; the kubelet sets KUBERNETES_SERVICE_HOST in every container
    facts = host_facts(fixture_host, "a2-910b3x8")
    assert facts.container is None and facts.files.get("/.dockerenv") is False
    pod = replace(facts, env={**facts.env, "KUBERNETES_SERVICE_HOST": "10.96.0.1"})
    assert pod.container == "KUBERNETES_SERVICE_HOST"
    result = next(
        f for f in host_findings(CheckContext(pod, matrix, load_profile(TWO_NODES))) if f.id == "host.net.hccn-conf"
    )
    assert result.status == "fail" and "KUBERNETES_SERVICE_HOST shows one" in result.message
    assert HostFacts.from_dict(pod.to_dict()).container == "KUBERNETES_SERVICE_HOST"  # `--facts` round trip


def test_single_node_does_not_need_hccn_conf(fixture_host: Any, matrix: SupportMatrix) -> None:
    assert check_host(fixture_host, matrix, "a2-910b3x8")["host.net.hccn-conf"].status == "skip"


def test_hccn_conf_not_looked_at_is_undecided(fixture_host: Any, matrix: SupportMatrix) -> None:
    facts = host_facts(fixture_host, "a2-910b3x8")
    ctx = CheckContext(replace(facts, files={}), matrix, load_profile(TWO_NODES))
    result = next(f for f in host_findings(ctx) if f.id == "host.net.hccn-conf")
    assert result.status == "skip" and result.undecided
