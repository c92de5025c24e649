"""`serve` and `plan` give one answer on one host: `serve --dry-run --facts F` prints `plan --facts F`, and the
plan `serve` runs is the plan of this host's own `check --json` facts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ascendctl.cli import app
from ascendctl.run.serve import plan_here
from ascendctl.schema.loader import load_profile
from ascendctl_engine.host.facts import CannInfo, CpuInfo, CudaGpu, CudaInfo, DriverInfo, HostFacts

REPO = Path(__file__).resolve().parents[2]
CURATED = sorted((REPO / "profiles").glob("*.yaml"))
runner = CliRunner()

# One plausible host per backend (the facts a `check --json` on it would report).
HOSTS = {
    "npu": HostFacts(
        backend="npu", family="a2", driver=DriverInfo(True, "25.5.1"), cann=CannInfo(version="9.1.0"),
        cpu=CpuInfo(arch="aarch64", cores=192, memory_total_mb=1_548_000, numa_nodes=4),
    ),
    "npu-a3": HostFacts(
        backend="npu", family="a3", driver=DriverInfo(True, "26.0.rc1"), cann=CannInfo(version="9.1.0"),
        cpu=CpuInfo(arch="aarch64", cores=320, memory_total_mb=1_548_000, numa_nodes=4),
    ),
    "cpu": HostFacts(backend="cpu", cpu=CpuInfo(arch="x86_64", cores=16, memory_total_mb=64_000, numa_nodes=1)),
    "cuda": HostFacts(
        backend="cuda", cuda=CudaInfo(nvidia_smi=True, gpus=(CudaGpu(0, "NVIDIA H100", 81559, 0),)),
        cpu=CpuInfo(arch="x86_64", cores=64, memory_total_mb=512_000, numa_nodes=2),
    ),
}  # fmt: skip


def facts_file(tmp_path: Path, backend: str) -> Path:
    path = tmp_path / f"{backend}.json"
    path.write_text(json.dumps({"host": HOSTS[backend].to_dict()}))
    return path


@pytest.mark.parametrize("profile", CURATED, ids=[p.name for p in CURATED])
def test_serve_dry_run_with_facts_is_plan_with_facts(profile: Path, tmp_path: Path) -> None:
    target = load_profile(profile).target
    facts = facts_file(tmp_path, "npu-a3" if target.hardware == "a3" else target.backend)
    served = runner.invoke(app, ["serve", str(profile), "--dry-run", "--json", "--facts", str(facts)])
    planned = runner.invoke(app, ["plan", str(profile), "--json", "--facts", str(facts)])
    assert served.exit_code == 0 and planned.exit_code == 0, served.output + planned.output
    assert json.loads(served.stdout) == json.loads(planned.stdout)
    # without --facts neither probes: the plan differs wherever host facts matter
    bare = json.loads(runner.invoke(app, ["plan", str(profile), "--json"]).stdout)
    assert bare == json.loads(runner.invoke(app, ["serve", str(profile), "--dry-run", "--json"]).stdout)


TINY = ["--set", "model.source=prepared:tiny-random", "--set", "model.max_model_len=512"]


def test_facts_change_a_cpu_plan_the_same_way_for_both(tmp_path: Path) -> None:
    # the case that once differed: CPU TP2 binds OMP threads per rank from the host's cores. The tiny random model
    # (4 heads, 2 KV heads) splits over two ranks; the demo's SmolLM2 (9 heads) does not, and vLLM refuses it.
    profile = REPO / "profiles" / "cpu-demo.yaml"
    sets = ["--set", "target.devices_per_node=2", "--set", "engine.parallel.tensor=2", *TINY]
    facts = facts_file(tmp_path, "cpu")
    out = [
        json.loads(runner.invoke(app, [*cmd, str(profile), *sets, "--json", "--facts", str(facts)]).stdout)
        for cmd in (["plan"], ["serve", "--dry-run"])
    ]
    assert out[0] == out[1]
    assert out[0]["nodes"][0]["env"]["VLLM_CPU_OMP_THREADS_BIND"] == "0-7|8-15"


def test_serve_plans_against_this_hosts_own_check_facts(tmp_path: Path) -> None:
    # what `serve` would run here equals `plan --facts` fed with this machine's `check --json`
    report = runner.invoke(app, ["check", "--json"])
    facts = tmp_path / "here.json"
    facts.write_text(report.stdout)
    profile = REPO / "profiles" / "cpu-demo.yaml"
    sets = ["--set", "target.devices_per_node=2", "--set", "engine.parallel.tensor=2", *TINY]
    planned = json.loads(runner.invoke(app, ["plan", str(profile), *sets, "--json", "--facts", str(facts)]).stdout)
    served = plan_here(load_profile(profile, sets[1::2])).to_json()
    # `plan` adds the on-demand recipe advice (`plan.recipe`, a skip on CPU); what serve runs is the rest, alike
    assert [f["id"] for f in planned["findings"] if f["id"].startswith("plan.recipe")] == ["plan.recipe"]
    planned["findings"] = [f for f in planned["findings"] if not f["id"].startswith("plan.recipe")]
    assert served == planned


def test_facts_outside_dry_run_are_refused(tmp_path: Path) -> None:
    result = runner.invoke(app, ["serve", str(REPO / "profiles" / "cpu-demo.yaml"), "--facts", "x.json"])
    assert result.exit_code == 2 and "--facts is only for --dry-run" in result.output
