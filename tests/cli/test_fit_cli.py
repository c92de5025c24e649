"""`ascendctl fit PROFILE [--facts F] [--json]` end to end through the CLI: the JSON contract, the exit code,
one estimate shared with `plan` and `check`, every curated profile, and a suggestion that makes a profile fit."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from ascendctl.cli import app
from ascendctl.facts.published_shapes import published_config
from ascendctl.schema.loader import load_profile
from ascendctl_engine.host.facts import CpuInfo, CudaGpu, CudaInfo, DriverInfo, HostFacts, NpuDevice, NpuSmiInfo

REPO = Path(__file__).resolve().parents[2]
CURATED = sorted((REPO / "profiles").glob("*.yaml"))
runner = CliRunner()

DEVICE_KEYS = {
    "rank", "count", "hbm_gib", "weights_gib", "activation_gib", "graph_capture_gib", "comm_buffers_gib",
    "runtime_reserve_gib", "kv_cache_gib",
}  # fmt: skip
TOP_KEYS = {
    "schema", "per_device", "limiting_rank", "kv_bytes_per_token", "kv_tokens", "max_concurrency", "verdict",
    "suggestions", "inputs", "block_size", "graph_headroom_gib", "suggested_kv_cache_memory", "hccl", "notes",
    "workload",
}  # fmt: skip


def write(tmp_path: Path, text: str, name: str = "p.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


QWEN32_BF16_TP1 = """apiVersion: ascendctl/v1
kind: Profile
metadata: {name: qwen32-tp1}
model: {source: Qwen/Qwen3-32B, max_model_len: 32768}
target: {backend: npu, hardware: a2, devices_per_node: 1}
release: v0.23.0
engine: {scheduler: {max_num_seqs: 16}}
"""


def fit_json(*args: str) -> tuple[int, dict[str, Any]]:
    result = runner.invoke(app, ["fit", *args, "--json"])
    assert result.exit_code in (0, 1), result.output
    return result.exit_code, json.loads(result.stdout)


def test_json_contract_and_exit_code(tmp_path: Path) -> None:
    code, data = fit_json(str(write(tmp_path, QWEN32_BF16_TP1)))
    assert set(data) == TOP_KEYS and data["schema"] == 2
    assert data["verdict"] == "does-not-fit" and code == 1  # 61 GiB of bf16 weights on one 61 GiB device
    (device,) = data["per_device"]
    assert set(device) == DEVICE_KEYS and device["count"] == 1 and device["hbm_gib"] == pytest.approx(60.96)
    assert data["kv_bytes_per_token"] == 64 * 8 * 128 * 2 * 2
    for s in data["suggestions"]:
        assert set(s) == {"set", "sets", "kv_tokens", "max_concurrency", "verdict", "why"}
        assert s["set"] == " ".join(s["sets"])
    assert "published shapes of Qwen/Qwen3-32B" in data["inputs"]["config"]


def test_a_suggestion_makes_the_profile_fit(tmp_path: Path) -> None:
    profile = write(tmp_path, QWEN32_BF16_TP1)
    _, data = fit_json(str(profile))
    fitting = [s for s in data["suggestions"] if s["verdict"] == "fits"]
    assert fitting, data["suggestions"]
    first = fitting[0]
    # applying it gives what the suggestion said (the devices follow the tensor size)
    sets = [a for one in first["sets"] for a in ("--set", one)]
    if any(one.startswith("engine.parallel.tensor=") for one in first["sets"]):
        tensor = next(one for one in first["sets"] if one.startswith("engine.parallel.tensor=")).split("=")[1]
        sets += ["--set", f"target.devices_per_node={tensor}"]
    code, after = fit_json(str(profile), *sets)
    assert code == 0 and after["verdict"] == "fits" and after["kv_tokens"] == first["kv_tokens"]
    text = runner.invoke(app, ["fit", str(profile)])
    assert text.exit_code == 1 and "verdict: does-not-fit" in text.stdout and "--set " + first["sets"][0] in text.stdout


def test_plan_carries_the_same_fit_and_a_line(tmp_path: Path) -> None:
    profile = str(write(tmp_path, QWEN32_BF16_TP1.replace("devices_per_node: 1", "devices_per_node: 2")))
    _, fitted = fit_json(profile, "--set", "engine.parallel.tensor=2")
    planned = json.loads(runner.invoke(app, ["plan", profile, "--set", "engine.parallel.tensor=2", "--json"]).stdout)
    assert planned["fit"] == fitted and planned["fit_error"] is None
    text = runner.invoke(app, ["plan", profile, "--set", "engine.parallel.tensor=2"]).stdout
    assert f"fit: {fitted['verdict']}: {fitted['kv_tokens']:,} KV tokens" in text


def test_host_facts_give_the_device_memory(tmp_path: Path) -> None:
    devices = tuple(NpuDevice(i, i, 0, "910B4", "OK", hbm_used_mb=0, hbm_total_mb=32768) for i in range(8))
    facts = HostFacts(
        backend="npu", family="a2", driver=DriverInfo(True, "25.5.1"),
        npu=NpuSmiInfo(recognized=True, layout="a2", devices=devices), cpu=CpuInfo(arch="aarch64"),
    )  # fmt: skip
    path = tmp_path / "facts.json"
    path.write_text(json.dumps({"host": facts.to_dict()}))
    profile = str(write(tmp_path, QWEN32_BF16_TP1.replace("devices_per_node: 1", "devices_per_node: 4")))
    _, data = fit_json(profile, "--set", "engine.parallel.tensor=4", "--facts", str(path))
    assert data["per_device"][0]["hbm_gib"] == pytest.approx(31662800896 / 2**30, abs=0.01)
    assert "32768 MB per device (npu-smi)" in data["inputs"]["hbm"]
    # a CUDA host: the GPUs' memory from nvidia-smi
    cuda = HostFacts(backend="cuda", cuda=CudaInfo(True, gpus=(CudaGpu(0, "NVIDIA H100", 81559, 0),)))
    path.write_text(json.dumps({"host": cuda.to_dict()}))
    _, on_gpu = fit_json(str(REPO / "profiles" / "cuda-qwen3-8b.yaml"), "--facts", str(path))
    assert on_gpu["per_device"][0]["hbm_gib"] == pytest.approx(81559 / 1024, abs=0.01)


@pytest.mark.parametrize("profile", CURATED, ids=[p.name for p in CURATED])
def test_every_curated_profile_gets_a_table_and_a_verdict(profile: Path, tmp_path: Path) -> None:
    args = [str(profile)]
    if published_config(load_profile(profile).model.source) is None:  # see test_model_shapes.UNPUBLISHED_SHAPES
        result = runner.invoke(app, ["fit", *args])
        assert result.exit_code == 1 and "its shapes are not published" in result.output
        return
    if load_profile(profile).target.backend == "cuda":  # no hardware table for GPUs: the host says
        cuda = HostFacts(backend="cuda", cuda=CudaInfo(True, gpus=(CudaGpu(0, "NVIDIA H100", 81559, 0),)))
        (tmp_path / "f.json").write_text(json.dumps({"host": cuda.to_dict()}))
        args += ["--facts", str(tmp_path / "f.json")]
    result = runner.invoke(app, ["fit", *args])
    assert result.exit_code in (0, 1), result.output
    assert "per device (GiB):" in result.stdout and "KV cache:" in result.stdout
    assert any(line.startswith("verdict: ") for line in result.stdout.splitlines())
    assert result.exit_code == (1 if "verdict: does-not-fit" in result.stdout else 0)


def test_an_unknown_model_says_what_is_missing(tmp_path: Path) -> None:
    unknown = QWEN32_BF16_TP1.replace("Qwen/Qwen3-32B", "/models/my-finetune")
    result = runner.invoke(app, ["fit", str(write(tmp_path, unknown))])
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert "cannot estimate the fit: the fit needs the model's config.json" in result.output
    planned = json.loads(runner.invoke(app, ["plan", str(tmp_path / "p.yaml"), "--json"]).stdout)
    assert planned["fit"] is None and "config.json" in planned["fit_error"]


def test_memory_in_use_on_the_host_counts_by_era(tmp_path: Path) -> None:
    # 24 GiB held by another engine on top of the driver's own ~3 GB that npu-smi also counts as used
    held = 24576 + 65536 - 65452113920 // 2**20
    devices = tuple(NpuDevice(i, i, 0, "910B3", "OK", hbm_used_mb=held, hbm_total_mb=65536) for i in range(8))
    facts = HostFacts(
        backend="npu", family="a2", driver=DriverInfo(True, "25.5.1"),
        npu=NpuSmiInfo(recognized=True, layout="a2", devices=devices), cpu=CpuInfo(arch="aarch64"),
    )  # fmt: skip
    path = tmp_path / "facts.json"
    path.write_text(json.dumps({"host": facts.to_dict()}))
    profile = str(write(tmp_path, QWEN32_BF16_TP1.replace("devices_per_node: 1", "devices_per_node: 4")))
    args = ("--set", "engine.parallel.tensor=4", "--facts", str(path))
    code, new = fit_json(profile, *args)  # v0.23.0: sized from its share, which no longer fits next to 24 GiB
    assert code == 1 and new["verdict"] == "does-not-fit" and "24.00 GiB held" in new["inputs"]["hbm_in_use"]
    code, old = fit_json(profile, *args, "--release", "v0.13.0")  # the old worker charges the 24 GiB
    assert old["per_device"][0]["kv_cache_gib"] < new["per_device"][0]["kv_cache_gib"] - 23


def test_the_drivers_own_reserve_is_not_charged_twice(tmp_path: Path) -> None:
    """An idle 64 GB NPU shows ~3.3 GB used in npu-smi: the driver's reserve, which the runtime's total (60.96 GiB)
    already leaves out (tests/fixtures/hosts/a3-16chips shows 3300 / 65536)."""
    devices = tuple(NpuDevice(i, i, 0, "910B3", "OK", hbm_used_mb=3300, hbm_total_mb=65536) for i in range(8))
    facts = HostFacts(
        backend="npu", family="a2", driver=DriverInfo(True, "25.5.1"),
        npu=NpuSmiInfo(recognized=True, layout="a2", devices=devices), cpu=CpuInfo(arch="aarch64"),
    )  # fmt: skip
    path = tmp_path / "facts.json"
    path.write_text(json.dumps({"host": facts.to_dict()}))
    profile = str(write(tmp_path, QWEN32_BF16_TP1.replace("devices_per_node: 1", "devices_per_node: 4")))
    _, idle = fit_json(profile, "--set", "engine.parallel.tensor=4", "--facts", str(path))
    _, table = fit_json(profile, "--set", "engine.parallel.tensor=4")
    assert idle["inputs"]["hbm_in_use"] == "0.18 GiB held by other processes (npu-smi)"
    assert idle["verdict"] == table["verdict"] and idle["kv_tokens"] == table["kv_tokens"]


QWEN32_TP4 = QWEN32_BF16_TP1.replace("devices_per_node: 1}", "devices_per_node: 4}").replace(
    "engine: {scheduler: {max_num_seqs: 16}}", "engine: {parallel: {tensor: 4}}"
)


def test_workload_fit_in_text_and_json(tmp_path: Path) -> None:
    profile = str(write(tmp_path, QWEN32_TP4))
    code, plain = fit_json(profile)
    assert code == 0 and plain["verdict"] == "fits" and plain["workload"] is None
    code, data = fit_json(profile, "--workload", "2k:256:16")
    (point,) = data["workload"]["points"]
    assert set(point) == {
        "point", "input_len", "output_len", "concurrency", "tokens_needed", "fits", "headroom_tokens", "headroom_pct",
        "requests_held", "over_max_model_len",
    }  # fmt: skip
    assert point["tokens_needed"] == 16 * 18 * 128 and point["fits"] and data["verdict"] == "fits"
    assert point["headroom_tokens"] == data["kv_tokens"] - point["tokens_needed"]
    # the same deployment under a load it cannot hold at once: it starts (exit 0) but is tight
    code, heavy = fit_json(profile, "--workload", "30k:2k:64")
    assert code == 0 and heavy["verdict"] == "tight" and heavy["workload"]["fits"] is False
    assert all(not one.startswith("model.max_model_len=") for s in heavy["suggestions"] for one in s["sets"])
    text = runner.invoke(app, ["fit", profile, "--workload", "30k:2k:64"])
    assert "NOT held without preemption" in text.stdout and "tokens short" in text.stdout
    bad = runner.invoke(app, ["fit", profile, "--workload", "2k:256"])
    assert bad.exit_code == 2
