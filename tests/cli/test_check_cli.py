"""`ascendctl check`: the JSON contract, verdicts on every captured host (a root tree + a stub `npu-smi` on
PATH + a stub engine interpreter), profiles, exit codes, and this machine for real."""

from __future__ import annotations

import json
import platform
import shutil
import socket
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from ascendctl.cli import app

REPO = Path(__file__).resolve().parents[2]
QWEN_A2 = REPO / "profiles" / "qwen3-32b-w8a8-a2.yaml"
CPU_DEMO = REPO / "profiles" / "cpu-demo.yaml"

runner = CliRunner()


def run_check(host: Any, *args: str) -> tuple[int, str]:
    argv = ["check", *args, "--root", str(host.root), "--engine-python", str(host.engine_python)]
    result = runner.invoke(app, argv, env=host.cli_env())
    return result.exit_code, result.stdout


def run_json(host: Any, *args: str) -> tuple[int, dict[str, Any]]:
    code, out = run_check(host, "--json", *args)
    return code, json.loads(out)


def by_status(report: dict[str, Any], status: str) -> set[str]:
    return {r["id"] for r in report["results"] if r["status"] == status}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def assert_contract(report: dict[str, Any]) -> None:
    """The minimal `--json` shape other commands rely on (`matrix --here --facts` reads `host`)."""
    host = report["host"]
    assert host["backend"] in ("npu", "cuda", "cpu")
    assert set(host["hardware"]) >= {"family", "devices"}
    assert host["hardware"]["family"] in ("a2", "a3", "300i-duo", "950", None)
    for device in host["hardware"]["devices"]:
        assert set(device) >= {"id", "chip", "name", "health", "hbm_total_mb", "hbm_used_mb"}
        assert isinstance(device["id"], int) and isinstance(device["chip"], int)
        assert isinstance(device["name"], str) and isinstance(device["health"], str)
        assert device["hbm_total_mb"] is None or isinstance(device["hbm_total_mb"], int)
        assert device["hbm_used_mb"] is None or isinstance(device["hbm_used_mb"], int)
    assert set(host["driver"]) >= {"version"}
    assert set(host["cann"]) >= {"version", "path"}
    assert set(host["python"]) >= {"version"}
    assert all(isinstance(k, str) and isinstance(v, str) for k, v in host["packages"].items())
    assert report["results"]
    for r in report["results"]:
        assert set(r) >= {"id", "severity", "status", "message", "fix"}
        assert r["severity"] in ("error", "warn", "info")
        assert r["status"] in ("pass", "warn", "fail", "skip", "advice")
        assert isinstance(r["message"], str) and r["message"]
        if r["status"] in ("fail", "warn"):
            assert isinstance(r["fix"], str) and r["fix"], r
        if r["status"] == "fail":
            assert r["severity"] == "error"


# name: backend, family, devices, driver, CANN, engine Python, exit code, failing rules, warning rules
EXPECTED = {
    "a2-910b3x8": ("npu", "a2", 8, "25.5.0", "8.5.0", "3.11.10", 0, set(), {"host.npu.busy"}),
    "a3-16chips": ("npu", "a3", 16, "26.0.rc1", "9.1.0", "3.12.8", 0, set(), {"host.npu.health"}),
    "300i-duo": (
        "npu",
        "300i-duo",
        4,
        "25.2.0",
        "9.1.0",
        "3.11.10",
        1,
        {"host.engine.soc-build", "host.engine.no-triton"},
        set(),
    ),
    "cann9-a2": (
        "npu",
        "a2",
        8,
        "25.5.0",
        "9.0.1",
        "3.12.8",
        1,
        {"host.cann.sourced", "host.cann.atb", "host.engine.torch-npu-cann"},
        set(),
    ),
    # No NPU is found: no npu release can run here (the one row-fit function says so).
    "no-driver": ("cpu", None, 0, None, "8.3.RC2", "3.11.10", 1, {"host.npu.driver"}, {"host.matrix.runnable"}),
    "broken-env": ("cpu", None, 0, None, None, "3.11.7", 1, {"host.engine.torch-npu-cann"}, set()),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_fixture_hosts_facts_and_verdicts(fixture_host, name: str) -> None:  # type: ignore[no-untyped-def]
    backend, family, count, driver, cann, python, code, fails, warns = EXPECTED[name]
    exit_code, report = run_json(fixture_host(name))
    assert_contract(report)
    host = report["host"]
    assert host["backend"] == backend
    assert host["hardware"]["family"] == family
    assert len(host["hardware"]["devices"]) == count
    assert host["driver"]["version"] == driver
    assert host["cann"]["version"] == cann
    assert host["python"]["version"] == python
    assert host["probe_errors"] == {}
    assert by_status(report, "fail") == fails
    assert by_status(report, "warn") == warns
    assert exit_code == code
    assert report["ok"] is (code == 0)


def test_a2_json_details(fixture_host) -> None:  # type: ignore[no-untyped-def]
    _, report = run_json(fixture_host("a2-910b3x8"))
    host = report["host"]
    dev0 = host["hardware"]["devices"][0]
    assert (dev0["id"], dev0["chip"], dev0["name"], dev0["health"]) == (0, 0, "910B3", "OK")
    assert (dev0["hbm_used_mb"], dev0["hbm_total_mb"]) == (3400, 65536)
    assert host["hardware"]["soc_version"] == "ascend910b3"
    assert host["cann"]["path"] == "/usr/local/Ascend/ascend-toolkit/latest"
    assert host["packages"]["vllm-ascend"] == "0.13.0"
    assert host["packages"]["torch-npu"] == "2.8.0.post2"
    assert report["target"] == "npu"
    assert report["release"] == {"version": "v0.13.0", "source": "installed"}
    assert report["profile"] is None
    runnable = next(r for r in report["results"] if r["id"] == "host.matrix.runnable")
    assert runnable["status"] == "pass" and "releases fit" in runnable["message"]


def test_a3_chips_and_soc_from_board_info(fixture_host) -> None:  # type: ignore[no-untyped-def]
    _, report = run_json(fixture_host("a3-16chips"))
    devices = report["host"]["hardware"]["devices"]
    assert [(d["id"], d["npu"], d["chip"]) for d in devices[:4]] == [(0, 0, 0), (1, 0, 1), (2, 1, 0), (3, 1, 1)]
    assert report["host"]["hardware"]["soc_version"] == "ascend910_9391"


def test_fix_texts_for_broken_hosts(fixture_host) -> None:  # type: ignore[no-untyped-def]
    _, cann9 = run_json(fixture_host("cann9-a2"))
    fixes = {r["id"]: r["fix"] for r in cann9["results"]}
    assert fixes["host.cann.sourced"] == "source /usr/local/Ascend/cann/set_env.sh"
    assert fixes["host.cann.atb"] == "source /usr/local/Ascend/nnal/atb/set_env.sh"
    assert cann9["host"]["cann"]["layout"] == "cann9"
    _, duo = run_json(fixture_host("300i-duo"))
    fixes = {r["id"]: r["fix"] for r in duo["results"]}
    assert "quay.io/ascend/vllm-ascend:v0.23.0-310p" in fixes["host.engine.soc-build"]
    assert fixes["host.engine.no-triton"].startswith("pip uninstall -y triton-ascend triton")


def test_strict_counts_warnings(fixture_host) -> None:  # type: ignore[no-untyped-def]
    host = fixture_host("a2-910b3x8")
    assert run_check(host)[0] == 0
    code, report = run_json(host, "--strict")
    assert code == 1
    assert report["strict"] is True and report["ok"] is False


def test_a2_host_runs_the_qwen_profile_at_its_installed_release(fixture_host) -> None:  # type: ignore[no-untyped-def]
    host = fixture_host("a2-910b3x8")
    port = str(free_port())
    code, report = run_json(host, str(QWEN_A2), "--set", "release=v0.13.0", "--set", f"server.port={port}")
    assert code == 0, [r for r in report["results"] if r["status"] == "fail"]
    assert report["profile"]["name"] == "qwen3-32b-w8a8-a2"
    assert report["release"] == {"version": "v0.13.0", "source": "profile"}
    statuses = {r["id"]: r["status"] for r in report["results"]}
    # ~119 sequences of 5,500 tokens fit at once (fewer than max_num_seqs 256, which is no problem: vLLM schedules
    # by tokens and preempts), so check is quiet about memory
    assert statuses["host.npu.hbm"] == "pass"
    assert statuses["host.npu.busy"] == "pass"  # devices 0-3; the busy NPU is 7
    assert statuses["host.net.ports"] == "pass"
    assert report["next"] == f"ascendctl serve {QWEN_A2}"
    # the plan rules run too, against the same host facts (one registry, one finding shape)
    assert report["schema"] == 3
    assert statuses["plan.matrix"] == "pass" and statuses["plan.hardware.dtype"] == "pass"
    assert statuses["plan.refused"] == statuses["plan.rejected"] == statuses["plan.plannable"] == "pass"
    assert {r["id"].split(".")[0] for r in report["results"]} == {"host", "plan"}


def test_check_shows_the_plans_findings(fixture_host, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # a model-rule problem `plan` would refuse is a failing `plan.*` result of `check PROFILE`, with its fix and
    # clause; one only a document claims (main's FAQ on MLA heads per rank) is a warning
    model = tmp_path / "dsv2"
    model.mkdir()
    config = {"architectures": ["DeepseekV2ForCausalLM"], "model_type": "deepseek_v2", "num_attention_heads": 14,
              "kv_lora_rank": 512, "n_routed_experts": 64, "torch_dtype": "bfloat16"}  # fmt: skip
    (model / "config.json").write_text(json.dumps(config))
    host = fixture_host("a2-910b3x8")
    code, report = run_json(
        host, str(QWEN_A2), "--set", "release=v0.13.0", "--set", f"server.port={free_port()}",
        "--set", f"model.source={model}", "--set", "model.quantization=none",
    )  # fmt: skip
    assert code == 1
    failed = {r["id"]: r for r in report["results"] if r["status"] == "fail"}
    heads = failed["plan.tp.heads-divisible"]
    assert "does not split 14 attention heads" in heads["message"] and heads["fix"]
    assert heads["clause"] == "engine-start"
    mla = next(r for r in report["results"] if r["id"] == "plan.mla.heads-per-rank")
    assert mla["status"] == "warn" and mla["clause"] is None and "14 heads / TP 4" in mla["message"]
    assert mla["source"] == "main:docs/source/faqs.md #13"


def test_a2_host_cannot_run_the_profile_pinned_to_another_release(fixture_host) -> None:  # type: ignore[no-untyped-def]
    host = fixture_host("a2-910b3x8")
    code, report = run_json(host, str(QWEN_A2), "--set", f"server.port={free_port()}")
    assert code == 1
    assert {"host.engine.release", "host.cann.release", "host.engine.vllm-pair"} - by_status(report, "fail") == {
        "host.engine.vllm-pair"
    }
    assert {"host.engine.release", "host.cann.release"} <= by_status(report, "fail")
    assert "host.engine.pins" in by_status(report, "warn")


def test_busy_port_fails_the_check(fixture_host) -> None:  # type: ignore[no-untyped-def]
    host = fixture_host("broken-env")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        port = sock.getsockname()[1]
        code, report = run_json(host, str(CPU_DEMO), "--set", f"server.port={port}")
    assert code == 1
    ports = next(r for r in report["results"] if r["id"] == "host.net.ports")
    assert ports["status"] == "fail" and f"127.0.0.1:{port}" in ports["message"]


def test_cpu_profile_on_the_broken_env(fixture_host) -> None:  # type: ignore[no-untyped-def]
    code, report = run_json(fixture_host("broken-env"), str(CPU_DEMO), "--set", f"server.port={free_port()}")
    assert code == 1
    assert by_status(report, "fail") == {"host.engine.torch-npu-cann"}
    fix = next(r["fix"] for r in report["results"] if r["id"] == "host.engine.torch-npu-cann")
    assert fix.startswith("pip uninstall -y torch-npu")
    assert report["target"] == "cpu"


def test_npu_profile_on_a_host_without_driver(fixture_host) -> None:  # type: ignore[no-untyped-def]
    code, report = run_json(fixture_host("no-driver"), str(QWEN_A2), "--set", "release=v0.11.0")
    assert code == 1
    assert "host.npu.driver" in by_status(report, "fail")


def test_text_report_shows_hardware_then_table_then_next(fixture_host) -> None:  # type: ignore[no-untyped-def]
    code, out = run_check(fixture_host("300i-duo"))
    assert code == 1
    lines = out.splitlines()
    # the first line says what the host has and which backend is judged
    assert lines[0] == "accelerator: 4 × Ascend 310P3 (300i-duo); judging the npu backend (what this host has)"
    assert lines[1] == "Host"
    hw = next(i for i, ln in enumerate(lines) if ln.strip().startswith("NPUs"))
    assert "4 × 310P3" in lines[hw]
    table = next(i for i, ln in enumerate(lines) if "host.engine.soc-build" in ln)
    nxt = next(i for i, ln in enumerate(lines) if ln.startswith("next:"))
    assert hw < table < nxt
    assert "FAIL" in out
    assert "failed:" in out


def test_set_needs_a_profile() -> None:
    result = runner.invoke(app, ["check", "--set", "server.port=1"])
    assert result.exit_code == 2
    assert "--set needs a PROFILE" in result.output


def test_invalid_profile_and_root_are_input_errors(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("apiVersion: ascendctl/v1\nkind: Profile\n")
    assert runner.invoke(app, ["check", str(bad)]).exit_code == 2
    assert runner.invoke(app, ["check", "--root", str(tmp_path / "missing")]).exit_code == 2


@pytest.mark.skipif(
    bool(shutil.which("npu-smi") or shutil.which("nvidia-smi")), reason="asserts the CPU-backend report"
)
def test_this_machine_for_real() -> None:
    result = runner.invoke(app, ["check", "--json", "--engine-python", sys.executable])
    report = json.loads(result.stdout)
    assert_contract(report)
    host = report["host"]
    assert host["backend"] == "cpu"
    assert host["hardware"]["devices"] == []
    assert host["hardware"]["family"] is None
    assert host["python"]["version"] == platform.python_version()
    assert host["python"]["interpreter"] == sys.executable
    assert host["cpu"]["cores"] and host["cpu"]["memory_total_mb"]
    assert host["probe_errors"] == {}
    assert report["target"] == "cpu"
    failed = by_status(report, "fail")
    assert result.exit_code == (1 if failed else 0)
    # This venv holds ascendctl, not the engine: the CPU engine is reported missing (a warning without a profile).
    assert "host.engine.installed" in by_status(report, "warn")


def test_a_host_without_an_npu_says_so_first_and_judges_no_device_from_table_data(
    fixture_host,  # type: ignore[no-untyped-def]
) -> None:
    """An NPU profile on a CPU host: the headline says there is no accelerator; the rules that judge devices skip
    with that reason (never pass from the hardware table), and the backend mismatch fails with a fix."""
    code, report = run_json(fixture_host("no-driver"), str(QWEN_A2))
    assert code == 1
    assert (
        report["headline"].startswith("accelerator: none (no Ascend NPU")
        and "judging the npu backend" in report["headline"]
    )
    results = {r["id"]: r for r in report["results"]}
    for rule_id in ("host.npu.hbm", "host.npu.visible-devices", "host.npu.release-hardware"):
        assert results[rule_id]["status"] == "skip" and "this host has no Ascend NPU" in results[rule_id]["message"]
    assert results["plan.host.backend"]["status"] == "fail" and results["plan.host.backend"]["fix"]
