"""Rendering: every curated profile × target, golden files, real schemas, and plan ↔ manifest equality.

Golden files live in tests/golden/render/<profile>/; regenerate them only on purpose with
`ASCENDCTL_UPDATE_GOLDEN=1 .venv/bin/pytest tests/test_render.py` and review the diff.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import jsonschema
import pytest
import yaml
from consumers import k8s_expand, run_worker_shell
from typer.testing import CliRunner

from ascendctl.cli import app
from ascendctl.facts.matrix import load_matrix
from ascendctl.outputs.render import TARGETS, RenderOptions, render, render_overrides
from ascendctl.plan.planner import plan_profile
from ascendctl.plan.types import Plan
from ascendctl.schema.loader import load_profile

ROOT = Path(__file__).resolve().parents[1]
PROFILES = sorted((ROOT / "profiles").glob("*.yaml"))
GOLDEN = ROOT / "tests" / "golden" / "render"
LWS_SCHEMA = json.loads((ROOT / "tests/fixtures/schemas/leaderworkerset-v1-subset.json").read_text())
K8S_VERSION = "1.33.0"
DATA_ROOT = Path("/var/lib/ascendctl")  # fixed, so prepared-model paths in golden files do not depend on $HOME
UPDATE = os.environ.get("ASCENDCTL_UPDATE_GOLDEN") == "1"
# Curated profiles that disaggregate prefill and decode (rendered instance by instance, plus the router).
DISAGGREGATED = {p.stem for p in PROFILES if "disaggregation:" in p.read_text()}


def _render(profile_path: Path, target: str, **options: str) -> tuple[dict[str, str], Plan]:
    profile = load_profile(profile_path, render_overrides(target, []))
    plan = plan_profile(profile, matrix=load_matrix(), data_root=DATA_ROOT)
    return {f.name: f.content for f in render(plan, target, RenderOptions(**options))}, plan


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("profile_path", PROFILES, ids=lambda p: p.stem)
def test_every_profile_renders_to_its_golden_files(profile_path: Path, target: str) -> None:
    if target == "systemd" and profile_path.stem in DISAGGREGATED:
        return  # refused, see test_systemd_refuses_a_disaggregated_plan
    files, _ = _render(profile_path, target)
    assert files
    folder = GOLDEN / profile_path.stem
    for name, content in files.items():
        golden = folder / name
        if UPDATE:
            folder.mkdir(parents=True, exist_ok=True)
            golden.write_text(content)
        assert golden.exists(), f"no golden file {golden}; run with ASCENDCTL_UPDATE_GOLDEN=1 and review it"
        assert content == golden.read_text(), f"{golden} is stale (ASCENDCTL_UPDATE_GOLDEN=1 to accept)"


def _k8s_objects(profile_path: Path) -> list[dict]:
    files, _ = _render(profile_path, "k8s")
    return [doc for name, text in files.items() if name.endswith("k8s.yaml") for doc in yaml.safe_load_all(text) if doc]


@pytest.mark.parametrize("profile_path", PROFILES, ids=lambda p: p.stem)
def test_kubernetes_objects_validate_against_the_real_schemas(profile_path: Path) -> None:
    import kubernetes_validate

    for obj in _k8s_objects(profile_path):
        if obj["kind"] == "LeaderWorkerSet":
            jsonschema.validate(obj, LWS_SCHEMA)
            templates = obj["spec"]["leaderWorkerTemplate"]
            for key in ("leaderTemplate", "workerTemplate"):
                pod_template = {
                    "apiVersion": "v1",
                    "kind": "PodTemplate",
                    "metadata": {"name": f"{obj['metadata']['name']}-{key.lower()}"},
                    "template": templates[key],
                }
                kubernetes_validate.validate(pod_template, K8S_VERSION, strict=True)
        else:
            kubernetes_validate.validate(obj, K8S_VERSION, strict=True)


def test_schema_validation_catches_a_broken_object() -> None:
    import kubernetes_validate

    obj = _k8s_objects(ROOT / "profiles/qwen3-32b-w8a8-a2.yaml")[0]
    obj["spec"]["template"]["spec"]["containers"][0]["imagePullPolicyy"] = "Always"
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(obj, K8S_VERSION, strict=True)


def _container(obj: dict, template: str | None = None) -> dict:
    spec = obj["spec"]["leaderWorkerTemplate"][template]["spec"] if template else obj["spec"]["template"]["spec"]
    return spec["containers"][0]


def test_single_node_npu_deployment_has_devices_mounts_and_probes_sized_from_the_profile() -> None:
    profile_path = ROOT / "profiles/qwen3-32b-w8a8-a2.yaml"
    deployment, service = _k8s_objects(profile_path)
    profile = load_profile(profile_path)
    container = _container(deployment)
    assert container["resources"]["limits"] == {"huawei.com/Ascend910": 4}
    mounts = {m["mountPath"] for m in container["volumeMounts"]}
    assert {"/usr/local/dcmi", "/usr/local/bin/npu-smi", "/usr/local/Ascend/driver/lib64"} <= mounts
    assert {"/usr/local/Ascend/driver/version.info", "/etc/ascend_install.info", "/dev/shm"} <= mounts
    startup = container["startupProbe"]
    assert startup["httpGet"]["path"] == "/health"
    assert startup["periodSeconds"] * startup["failureThreshold"] >= profile.runtime.ready_timeout
    assert container["image"] == "quay.io/ascend/vllm-ascend:v0.23.0"
    args = container["args"]
    assert args[args.index("--host") + 1] == "0.0.0.0"  # a pod must listen beyond loopback
    assert service["spec"]["ports"][0]["port"] == profile.server.port


def test_resource_name_is_configurable() -> None:
    files, _ = _render(ROOT / "profiles/qwen3-32b-w8a8-a2.yaml", "k8s", resource_name="huawei.com/ascend-1980")
    deployment = next(yaml.safe_load_all(files["k8s.yaml"]))
    assert _container(deployment)["resources"]["limits"] == {"huawei.com/ascend-1980": 4}


@pytest.mark.parametrize(
    ("target", "option", "value"),
    [
        ("docker", "--image", "--privileged"),  # `docker run … --privileged serve …`: the image became a flag
        ("docker", "--image", "-v=/:/host"),
        ("k8s", "--image", "img with space"),
        ("k8s", "--namespace", "a b"),
        ("k8s", "--namespace", "UPPER"),
        ("k8s", "--namespace", "-x"),
        ("k8s", "--resource-name", "-x"),
        ("k8s", "--resource-name", "$(id)/x"),
        ("systemd", "--installed-profile", "--dry-run"),  # ExecStart=… serve --dry-run --node 0
        ("systemd", "--installed-profile", "relative/profile.yaml"),
        ("systemd", "--ascendctl-bin", "-x"),
    ],
)
def test_an_option_its_rendered_position_cannot_hold_is_refused(target: str, option: str, value: str) -> None:
    result = CliRunner().invoke(
        app, ["render", str(ROOT / "profiles/qwen3-32b-w8a8-a2.yaml"), "-t", target, f"{option}={value}"]
    )
    assert result.exit_code == 2, result.output
    [line] = result.output.strip().splitlines()
    assert line.startswith(f"error: {option} {value!r}: ")


@pytest.mark.parametrize(
    "options",
    [
        ["--image=quay.io/ascend/vllm-ascend:v0.13.0-a3", "--image=registry.local:5000/vllm@sha256:" + "a" * 64],
        ["--namespace=prod-1", "--resource-name=huawei.com/Ascend910", "--resource-name=Ascend910"],
        ["--installed-profile=/etc/ascendctl/q.yaml", "--ascendctl-bin=/opt/ascendctl/bin/ascendctl"],
    ],
)
def test_ordinary_option_values_render(options: list[str]) -> None:
    for option in options:
        target = "systemd" if option.startswith(("--installed", "--ascendctl")) else "k8s"
        result = CliRunner().invoke(
            app, ["render", str(ROOT / "profiles/qwen3-32b-w8a8-a2.yaml"), "-t", target, option]
        )
        assert result.exit_code == 0, (option, result.output)


def test_cpu_has_no_device_resources_and_cuda_asks_for_gpus() -> None:
    cpu = _container(_k8s_objects(ROOT / "profiles/cpu-demo.yaml")[0])
    assert "resources" not in cpu
    cuda = _container(_k8s_objects(ROOT / "profiles/cuda-qwen3-8b.yaml")[0])
    assert cuda["resources"]["limits"] == {"nvidia.com/gpu": 1}


def test_api_key_comes_from_a_secret_reference_and_is_never_inline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VLLM_DEMO_API_KEY", "s3cr3t-value")
    profile_path = ROOT / "profiles/cuda-qwen3-8b.yaml"
    env = {e["name"]: e for e in _container(_k8s_objects(profile_path)[0])["env"]}
    assert env["VLLM_API_KEY"]["valueFrom"]["secretKeyRef"] == {"name": "cuda-qwen3-8b-api-key", "key": "api-key"}
    for target in TARGETS:
        files, _ = _render(profile_path, target)
        assert all("s3cr3t-value" not in content for content in files.values())


def test_two_node_deepseek_renders_a_leaderworkerset_equal_to_the_planned_commands(tmp_path: Path) -> None:
    profile_path = ROOT / "profiles/deepseek-r1-w8a8-2node-a2.yaml"
    files, plan = _render(profile_path, "k8s")
    lws, service = [d for d in yaml.safe_load_all(files["k8s.yaml"]) if d]
    assert lws["kind"] == "LeaderWorkerSet" and lws["spec"]["leaderWorkerTemplate"]["size"] == 2
    assert service["spec"]["selector"]["ascendctl.dev/role"] == "leader"
    head_cmd, worker_cmd = plan.commands
    layout = plan.deployment.nodes
    pod_ip = {0: layout[0].address, 1: layout[1].address}

    # Leader: it advertises its pod IP, which Kubernetes expands from $(POD_IP); substitute it the same way.
    leader = _container(lws, "leaderTemplate")
    argv = [k8s_expand(a, {"POD_IP": layout[0].address}) for a in [*leader["command"], *leader["args"]]]
    assert argv == list(head_cmd.argv)
    assert _pod_env(leader, pod_ip[0]) == dict(head_cmd.env)

    # Worker: one template for all workers; its shell computes the start rank from LWS_WORKER_INDEX.
    worker = _container(lws, "workerTemplate")
    assert worker["command"][:2] == ["/bin/sh", "-c"]
    argv = run_worker_shell(
        worker["command"][2], tmp_path, {"LWS_WORKER_INDEX": "1", "LWS_LEADER_ADDRESS": layout[0].address}
    )
    assert argv == list(worker_cmd.argv)
    assert _pod_env(worker, pod_ip[1]) == dict(worker_cmd.env)
    assert "ports" not in worker and "startupProbe" not in worker  # headless: no HTTP server


def test_ray_leaderworkerset_starts_ray_before_serving_and_wires_addresses(tmp_path: Path) -> None:
    files, plan = _render(ROOT / "tests/fixtures/profiles/qwen3-235b-a22b-ray-2node-a2.yaml", "k8s")
    lws = next(yaml.safe_load_all(files["k8s.yaml"]))
    head_cmd, worker_cmd = plan.commands
    layout = plan.deployment.nodes
    leader = _container(lws, "leaderTemplate")
    leader_env = {"POD_IP": layout[0].address, "LWS_LEADER_ADDRESS": "leader.svc"}
    # The fake `vllm` prints its argv; a fake `ray` records its own so the order can be checked.
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "ray").write_text('#!/bin/sh\necho "ray $*" >> "$RAY_LOG"\n')
    (bin_dir / "ray").chmod(0o755)
    log = tmp_path / "ray.log"
    argv = run_worker_shell(leader["command"][2], tmp_path, {**leader_env, "RAY_LOG": str(log)})
    assert argv == list(head_cmd.argv)
    assert log.read_text().split() == list(head_cmd.pre_commands[0])  # ray start --head ... ran first
    # The Ray worker needs no shell: Kubernetes itself expands the leader's and the pod's address.
    worker = _container(lws, "workerTemplate")
    pod = {"LWS_LEADER_ADDRESS": layout[0].address, "POD_IP": layout[1].address}
    assert [k8s_expand(a, pod) for a in [*worker["command"], *worker["args"]]] == list(worker_cmd.argv)
    assert worker["args"][worker["args"].index("--address") + 1] == "$(LWS_LEADER_ADDRESS):6379"


def test_text_that_looks_like_an_address_is_not_rewritten(tmp_path: Path) -> None:
    # the renderer substitutes the plan's references by position; a model path or an argument that merely
    # contains a node's address stays literal (a regex over the argv would have rewritten it)
    profile_path = ROOT / "profiles/deepseek-r1-w8a8-2node-a2.yaml"
    head_address = load_profile(profile_path).network.nodes[0].address
    model = tmp_path / f"models-{head_address}"
    model.mkdir()
    (model / "config.json").write_text("{}")
    sets = [f"model.source={model}", f"engine.extra_args=['--served-model-name', '{head_address}']"]
    profile = load_profile(profile_path, render_overrides("k8s", sets))
    plan = plan_profile(profile, matrix=load_matrix(), data_root=DATA_ROOT)
    [files] = render(plan, "k8s", RenderOptions())
    lws = next(yaml.safe_load_all(files.content))
    leader = _container(lws, "leaderTemplate")
    words = [*leader["command"], *leader["args"]]
    assert str(model) in words and words[-1] == head_address  # literal (extra_args come last), not $(POD_IP)
    assert words[words.index("--data-parallel-address") + 1] == "$(POD_IP)"  # the planned reference
    worker = _container(lws, "workerTemplate")
    argv = run_worker_shell(worker["command"][2], tmp_path, {"LWS_WORKER_INDEX": "1", "LWS_LEADER_ADDRESS": "x"})
    assert str(model) in argv and argv[-1] == head_address
    assert argv[argv.index("--data-parallel-address") + 1] == "x"


def _pod_env(container: dict, pod_ip: str) -> dict[str, str]:
    out = {}
    for e in container["env"]:
        if e["name"] == "POD_IP":
            continue
        if "value" in e:
            out[e["name"]] = k8s_expand(e["value"], {})
        elif e["valueFrom"].get("fieldRef", {}).get("fieldPath") == "status.podIP":
            out[e["name"]] = pod_ip
    return out


def test_docker_script_maps_the_documented_devices_per_family() -> None:
    files, _ = _render(ROOT / "profiles/qwen3-32b-w8a8-a2.yaml", "docker")
    script = files["docker-run.sh"]
    for i in range(8):  # an A2 server exposes davinci0..7 (vllm-ascend installation.md)
        assert f"--device /dev/davinci{i} " in script
    assert "--device /dev/davinci8 " not in script
    for dev in ("/dev/davinci_manager", "/dev/devmm_svm", "/dev/hisi_hdc"):
        assert f"--device {dev} " in script
    assert "quay.io/ascend/vllm-ascend:v0.23.0" in script


@pytest.mark.parametrize("profile_path", PROFILES, ids=lambda p: p.stem)
def test_shell_outputs_are_valid_bash_and_yaml_outputs_parse(profile_path: Path) -> None:
    for target in ("docker", "script"):
        files, _ = _render(profile_path, target)
        for content in files.values():
            subprocess.run(["bash", "-n"], input=content, text=True, check=True, timeout=30)
    files, _ = _render(profile_path, "compose")
    for name, content in files.items():
        compose = yaml.safe_load(content)
        assert compose["services"]["router" if name == "compose-router.yaml" else "engine"]["network_mode"] == "host"


def test_script_exports_the_planned_env_and_execs_the_planned_argv(tmp_path: Path) -> None:
    files, plan = _render(ROOT / "profiles/qwen3-32b-w8a8-a2.yaml", "script")
    script = next(iter(files.values()))
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "vllm"
    fake.write_text(
        "#!/usr/bin/env python3\nimport json, os, sys\n"
        'print(json.dumps({"argv": ["vllm", *sys.argv[1:]], "env": dict(os.environ)}))\n'
    )
    fake.chmod(0o755)
    out = subprocess.run(
        ["bash", "-c", script], env={"PATH": f"{bin_dir}:/usr/bin:/bin"}, capture_output=True, text=True, check=True
    )
    seen = json.loads(out.stdout)
    command = plan.commands[0]
    assert seen["argv"] == list(command.argv)
    assert {k: seen["env"][k] for k in command.env} == dict(command.env)


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze is not installed")
@pytest.mark.parametrize("profile_path", PROFILES, ids=lambda p: p.stem)
def test_systemd_units_pass_systemd_analyze_verify(profile_path: Path, tmp_path: Path) -> None:
    # `verify` checks that ExecStart exists: point it at this checkout's real ascendctl.
    ascendctl = shutil.which("ascendctl") or str(ROOT / ".venv/bin/ascendctl")
    if profile_path.stem in DISAGGREGATED:
        return  # refused, see test_systemd_refuses_a_disaggregated_plan
    files, plan = _render(profile_path, "systemd", ascendctl_bin=ascendctl)
    assert len(files) == len(plan.commands)
    for name, content in files.items():
        unit = tmp_path / name
        unit.write_text(content)
        assert f"--node {name.split('-node')[-1].removesuffix('.service')}" in content or "-node" not in name
        result = subprocess.run(["systemd-analyze", "verify", str(unit)], capture_output=True, text=True, timeout=60)
        problems = [line for line in result.stderr.splitlines() if name in line]
        assert result.returncode == 0 and not problems, result.stderr


def test_cli_writes_all_files_into_the_output_directory(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = CliRunner().invoke(
        app, ["render", str(ROOT / "profiles/deepseek-r1-w8a8-2node-a2.yaml"), "--target", "script", "-o", str(out)]
    )
    assert result.exit_code == 0, result.output
    names = sorted(p.name for p in out.iterdir())
    assert names == ["deepseek-r1-w8a8-2node-a2-node0.sh", "deepseek-r1-w8a8-2node-a2-node1.sh"]
    assert all(os.access(out / n, os.X_OK) for n in names)


@pytest.mark.parametrize("command", ["render", "import", "lock"])
def test_an_empty_output_path_is_refused_not_read_as_the_current_directory(
    command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # `-o "$UNSET"`: typer alone reads "" as ".", and render wrote its files where the user stood
    monkeypatch.chdir(tmp_path)
    source = {"render": ["profiles/cpu-demo.yaml", "-t", "k8s"], "import": [], "lock": ["profiles/cpu-demo.yaml"]}
    args = [command, *[str(ROOT / a) if a.endswith(".yaml") else a for a in source[command]], "-o", ""]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2, result.output
    assert "an empty path" in result.output
    assert list(tmp_path.iterdir()) == []


def test_cli_rejects_an_unknown_target_with_exit_2() -> None:
    result = CliRunner().invoke(app, ["render", str(ROOT / "profiles/cpu-demo.yaml"), "--target", "helm"])
    assert result.exit_code == 2
    assert "choose one of k8s, docker, compose, systemd, script" in result.output


def test_the_cli_help_lists_every_registered_target() -> None:
    from ascendctl.outputs.render import RENDERERS

    assert tuple(RENDERERS) == TARGETS
    result = CliRunner().invoke(app, ["render", "--help"], terminal_width=200)
    assert result.exit_code == 0, result.output
    help_text = " ".join(result.output.split())
    for renderer in RENDERERS.values():
        assert f"{renderer.name}: {renderer.help}" in help_text
