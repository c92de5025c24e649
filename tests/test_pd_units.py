"""Prefill/decode deployments as units on one host: state keys per instance, a supervisor recording its unit,
`Plan.units_on`, `host_target`, the stop order, the router program's preflight, the router's install step, and
`ps` / `logs` telling instances apart. Every process signalled here was started by the test itself."""

from __future__ import annotations

import json
import os
import signal
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import replace
from functools import cache
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ascendctl.cli import app
from ascendctl.core.errors import OperationFailed, UserInputError
from ascendctl.plan.planner import plan_profile
from ascendctl.plan.types import Plan
from ascendctl.run import units as units_module
from ascendctl.run.deployments import deployment_rows, log_path_for
from ascendctl.run.serve import check_router_program, preflight_host
from ascendctl.run.units import HostTarget, host_target, stop_in_order, stop_key
from ascendctl.schema.loader import load_profile
from ascendctl_engine.envs import EngineEnv
from ascendctl_engine.install_plan import EngineReleaseSpec, InstallPlan, plan_install
from ascendctl_engine.spec import EngineCommand, Listen, RestartPolicy, Supervision, Unit
from ascendctl_engine.state import (
    DeploymentState,
    Listed,
    StateStore,
    describe_process,
    key_for,
    signal_group,
)
from ascendctl_engine.supervisor import StopReport, Supervisor, SupervisorConfig, SupervisorReady
from tests.conftest import pick_free_port
from tests.state_records import record

ROOT = Path(__file__).resolve().parents[1]
CPU_PD = ROOT / "tests" / "fixtures" / "profiles" / "cpu-pd-shared-storage.yaml"
GLM = ROOT / "profiles" / "glm-5-2-pd-a3.yaml"
LLMDD = ROOT / "tests" / "fixtures" / "profiles" / "qwen2.5-vl-7b-pd-llmdatadist-a2-v0110.yaml"
CPU_DEMO = ROOT / "profiles" / "cpu-demo.yaml"

runner = CliRunner()


@cache
def planned(path: Path) -> Plan:
    return plan_profile(load_profile(path), data_root=Path("/var/lib/ascendctl"))


def listing(units: tuple[tuple[Unit, EngineCommand], ...]) -> list[tuple[str, str, int]]:
    return [(unit.instance, unit.role, unit.host) for unit, _ in units]


def fake_engine(root: Path, *programs: str) -> EngineEnv:
    """An engine environment under `root` whose bin dir holds `vllm` and the given programs (empty files)."""
    bin_dir = root / "bin"
    bin_dir.mkdir(parents=True, exist_ok=True)
    for program in ("vllm", *programs):
        exe = bin_dir / program
        exe.write_text("#!/bin/sh\nexit 0\n")
        exe.chmod(0o755)
    return EngineEnv(
        name="fake",
        backend="cpu",
        release="0.0.0",
        root=root,
        python=bin_dir / "python",
        bin_dir=bin_dir,
        vllm_executable=bin_dir / "vllm",
        manifest={},
    )


def target_for(path: Path, engine: EngineEnv, node: int | None = None) -> HostTarget:
    return host_target(load_profile(path), path, (), (), node, engine, planned(path))


def unit_record(name: str, instance: str | None, role: str | None, node: int = 0, **kw: object) -> DeploymentState:
    """A record of this (live) process as one unit of `name`."""
    base = record(name, node, run_id=f"run-{name}-{instance}-{node}", instance=instance, instance_role=role)
    return replace(base, **kw)  # type: ignore[arg-type]


@pytest.fixture
def claimed() -> Iterator[list[tuple[StateStore, DeploymentState]]]:
    """Records a test claims; removed again (and their locks let go) when it is over."""
    held: list[tuple[StateStore, DeploymentState]] = []
    yield held
    for store, state in held:
        store.remove(state)


def claim(held: list[tuple[StateStore, DeploymentState]], store: StateStore, state: DeploymentState) -> None:
    store.claim(state)
    held.append((store, state))


# --- state keys per instance ----------------------------------------------------------------------------


def test_keys_name_the_instance_and_paths_follow_them(tmp_path: Path) -> None:
    assert key_for("demo", 0) == "demo.node0"
    assert key_for("demo", 3, "decode-0") == "demo@decode-0.node3"
    store = StateStore(tmp_path)
    assert store.path_for("demo", 3, "decode-0") == tmp_path / "deployments" / "demo@decode-0.node3.json"
    assert store.log_path("demo", 3, "decode-0") == tmp_path / "logs" / "demo@decode-0.node3.log"
    assert store.lock_path("demo", 3, "decode-0") == tmp_path / "locks" / "demo@decode-0.node3.lock"
    assert store.path_for("demo", 3) == tmp_path / "deployments" / "demo.node3.json"
    assert unit_record("demo", "router", "router", 2).key == "demo@router.node2"
    assert record("demo", 2).key == "demo.node2"
    assert describe_process("demo", 2) == "demo (node 2)"
    assert describe_process("demo", 2, "prefill-0") == "demo prefill-0 (node 2)"


@pytest.mark.parametrize("instance", ["", "bad name", "a/b", "x@y", "-lead", "../up", "a" * 129])
def test_an_invalid_instance_name_is_refused(tmp_path: Path, instance: str) -> None:
    with pytest.raises(ValueError, match="invalid instance name"):
        key_for("demo", 0, instance)
    with pytest.raises(ValueError, match="invalid instance name"):
        StateStore(tmp_path).path_for("demo", 0, instance)


def test_an_instance_key_never_collides_with_another_deployment(
    tmp_path: Path, claimed: list[tuple[StateStore, DeploymentState]]
) -> None:
    assert key_for("a.b", 0) != key_for("a", 0, "b")
    # the node is always the last `.node<N>`, the instance after the one `@`: no two triples share a key
    triples = [
        ("a.b", 0, None),
        ("a", 0, "b"),
        ("a", 0, None),
        ("a", 0, "b.node0"),
        ("a", 1, "b"),
        ("a.node1", 0, None),
    ]
    assert len({key_for(*t) for t in triples}) == len(triples)
    store = StateStore(tmp_path, warn=lambda _: None)
    claim(claimed, store, record("a.b", 0, run_id="plain"))
    claim(claimed, store, unit_record("a", "b", "decode", 0))  # a different deployment: no AlreadyRunning
    files = sorted(p.name for p in store.deployments_dir.iterdir())
    assert files == ["a.b.node0.json", "a@b.node0.json"]
    got = {(e.state.name, e.state.instance) for e in store.entries()}
    assert got == {("a.b", None), ("a", "b")}
    assert [e.state.instance for e in store.find("a")] == ["b"]
    assert store.get("a", 0) is None  # the instance record is not the plain deployment's
    found = store.get("a", 0, "b")
    assert found is not None and found.instance_role == "decode"


def test_records_with_a_bad_instance_role_or_a_misnamed_file_are_skipped(tmp_path: Path) -> None:
    warnings: list[str] = []
    store = StateStore(tmp_path, warn=warnings.append)
    store.ensure()
    good = unit_record("demo", "decode-0", "decode")
    (store.deployments_dir / "demo@decode-0.node0.json").write_text(good.to_json())
    hostile = {
        "demo@boss-0.node0.json": {**json.loads(good.to_json()), "instance": "boss-0", "instance_role": "boss"},
        "demo@num-0.node0.json": {**json.loads(good.to_json()), "instance": "num-0", "instance_role": 1},
        # the file says prefill-0, the record decode-0: it describes another key
        "demo@prefill-0.node0.json": json.loads(good.to_json()),
        # a unit record under the plain deployment's file name
        "demo.node0.json": json.loads(good.to_json()),
    }
    paths = {}
    for file_name, data in hostile.items():
        paths[file_name] = store.deployments_dir / file_name
        paths[file_name].write_text(json.dumps(data))
    listed = store.entries()
    assert [(e.state.instance, e.state.instance_role) for e in listed] == [("decode-0", "decode")]
    assert set(store.bad_records) == set(paths.values())
    reasons = {p.name: e.reason for p, e in store.bad_records.items()}
    assert "'instance_role' is not one of prefill, decode, router" in reasons["demo@boss-0.node0.json"]
    assert "'instance_role' must be a string" in reasons["demo@num-0.node0.json"]
    assert "describes demo@decode-0.node0, not demo@prefill-0.node0" in reasons["demo@prefill-0.node0.json"]
    assert "describes demo@decode-0.node0, not demo.node0" in reasons["demo.node0.json"]
    assert len(warnings) == len(paths)
    assert all(p.exists() for p in paths.values())  # skipped, never deleted
    for bad in ("bad name", "", "x@y"):  # the instance is part of the file name: a name, or the record is skipped
        path = store.deployments_dir / "demo@odd.node0.json"
        path.write_text(json.dumps({**json.loads(good.to_json()), "instance": bad}))
        assert [e.state.instance for e in store.entries()] == ["decode-0"]
        assert (
            "is not a deployment name" in store.bad_records[path].reason or "string" in store.bad_records[path].reason
        )
        path.unlink()


def test_old_records_without_instance_fields_still_read(tmp_path: Path) -> None:
    store = StateStore(tmp_path)
    store.ensure()
    data = json.loads(record("old").to_json())
    del data["instance"], data["instance_role"]
    (store.deployments_dir / "old.node0.json").write_text(json.dumps(data))
    [entry] = store.entries()
    assert (entry.state.instance, entry.state.instance_role, entry.state.key) == (None, None, "old.node0")


# --- a supervisor run as one unit -----------------------------------------------------------------------


def test_a_supervised_unit_is_recorded_under_its_host_and_instance(
    fake_vllm: Path, free_port: int, tmp_path: Path
) -> None:
    store = StateStore(tmp_path / "state")
    cmd = EngineCommand(
        node=0,
        role="head",
        argv=("vllm", "serve", "/models/tiny", "--host", "127.0.0.1", "--port", str(free_port)),
        listen=Listen("127.0.0.1", free_port),
        supervision=Supervision(20.0, 2.0, RestartPolicy("never", 0, 1.0, 1.0)),
    )
    ready = threading.Event()

    def on_ready(_: SupervisorReady) -> None:
        ready.set()

    sup = Supervisor(
        cmd,
        fake_vllm,
        name="demo",
        config=SupervisorConfig(kill_margin=2.0),
        store=store,
        environ=dict(os.environ),
        install_signal_handlers=False,
        unit=Unit("decode-0", "decode", 3),
        on_ready=on_ready,
    )
    assert sup.log_path == store.log_path("demo", 3, "decode-0")
    results: list[object] = []
    thread = threading.Thread(target=lambda: results.append(sup.run()), daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 30
        while not ready.is_set():
            log = sup.log_path.read_text() if sup.log_path.exists() else ""
            assert thread.is_alive(), f"supervisor ended; log:\n{log}"
            assert time.monotonic() < deadline, f"not ready; log:\n{log}"
            time.sleep(0.02)
        path = store.deployments_dir / "demo@decode-0.node3.json"
        assert path.is_file()
        assert not (store.deployments_dir / "demo.node0.json").exists()
        saved = json.loads(path.read_text())
        saved_unit = (saved["name"], saved["node"], saved["instance"], saved["instance_role"])
        assert saved_unit == ("demo", 3, "decode-0", "decode")
        assert saved["log_path"] == str(store.logs_dir / "demo@decode-0.node3.log")
        [row] = deployment_rows(store)
        assert (row["name"], row["node"], row["instance"], row["instance_role"]) == ("demo", 3, "decode-0", "decode")
        assert row["health"] == "ok" and row["endpoint"] == f"http://127.0.0.1:{free_port}"
    finally:
        sup.request_stop()
        thread.join(30)
        if thread.is_alive():
            sup.request_stop()  # the second request escalates to SIGKILL
            thread.join(15)
        if sup.process is not None:
            signal_group(sup.process.pgid, signal.SIGKILL)
            sup.process.wait(5)
    assert not thread.is_alive()
    assert not (store.deployments_dir / "demo@decode-0.node3.json").exists()  # removed on stop


# --- stop order -----------------------------------------------------------------------------------------


def test_stop_in_order_stops_router_then_decode_then_prefill(monkeypatch: pytest.MonkeyPatch) -> None:
    entries = [
        Listed(unit_record("pd", "prefill-0", "prefill", 0), True, True),
        Listed(unit_record("pd", "plain", None, 0), True, True),
        Listed(unit_record("pd", "decode-1", "decode", 1), True, True),
        Listed(unit_record("pd", "prefill-1", "prefill", 1), True, True),
        Listed(unit_record("pd", "router", "router", 0), True, True),
        Listed(unit_record("pd", "decode-0", "decode", 0), True, True),
    ]
    stopped: list[tuple[str | None, float | None]] = []

    def fake_stop(entry: Listed, timeout: float | None = None) -> StopReport:
        stopped.append((entry.state.instance, timeout))
        return StopReport(entry.state.name, entry.state.node, "drained", 0.0, instance=entry.state.instance)

    monkeypatch.setattr(units_module, "stop_deployment", fake_stop)
    reports = stop_in_order(entries, 7.0)
    order = ["router", "decode-0", "decode-1", "prefill-0", "prefill-1", "plain"]
    assert stopped == [(name, 7.0) for name in order]
    assert [r.instance for r in reports] == order
    assert reports[0].who == "pd router (node 0)"
    assert sorted(stop_key(e) for e in entries) == [(0, 0), (1, 0), (1, 1), (2, 0), (2, 1), (3, 0)]


# --- units per host -------------------------------------------------------------------------------------


def test_units_on_the_cpu_host_are_the_instances_then_the_router() -> None:
    units = planned(CPU_PD).units_on(0)
    assert listing(units) == [("prefill-0", "prefill", 0), ("decode-0", "decode", 0), ("router", "router", 0)]
    router = units[-1][1]
    assert router.argv[0] == "vllm-router"
    assert router.health_url is not None and router.health_url.endswith("/health")
    assert router.health_url == "http://127.0.0.1:8100/health"
    assert router.supervision is not None and router.supervision == units[0][1].supervision
    assert [c.argv[0] for _, c in units[:2]] == ["vllm", "vllm"]
    assert planned(CPU_PD).units_on(1) == ()


def test_units_on_the_npu_hosts_follow_the_placement() -> None:
    plan = planned(GLM)
    head = plan.units_on(0)
    assert listing(head) == [("prefill-0", "prefill", 0), ("router", "router", 0)]
    router = head[-1][1]
    assert router.health_url is not None and router.health_url.endswith("/healthcheck")
    assert listing(plan.units_on(1)) == [("prefill-0", "prefill", 1)]
    assert listing(plan.units_on(2)) == [("decode-0", "decode", 2)]
    assert listing(plan.units_on(3)) == [("decode-0", "decode", 3)]
    assert plan.units_on(4) == ()
    assert plan.units_on(3)[0][1].health_url is None  # the headless node serves no HTTP


def test_a_plan_without_disaggregation_has_no_units() -> None:
    plan = planned(CPU_DEMO)
    assert not plan.disaggregated
    assert plan.units_on(0) == ()


# --- host_target ----------------------------------------------------------------------------------------


def test_host_target_needs_a_node_where_several_hosts_run_the_plan(tmp_path: Path) -> None:
    engine = fake_engine(tmp_path / "env")
    with pytest.raises(UserInputError) as caught:
        target_for(GLM, engine)
    text = str(caught.value)
    assert "spans 4 hosts" in text
    for node in range(4):
        assert f"`--node {node}`" in text
    assert "`--node 2`: decode-0" in text
    with pytest.raises(UserInputError, match=r"--node 4: .* runs on nodes 0, 1, 2, 3"):
        target_for(GLM, engine, node=4)
    target = target_for(GLM, engine, node=2)
    assert (target.node, listing(target.units)) == (2, [("decode-0", "decode", 2)])
    assert target.router is None


def test_missing_addresses_name_the_profile_nodes_of_instances_and_router(tmp_path: Path) -> None:
    """An instance's symbols count its own nodes; the message names the host (profile node) whose address is
    missing, and the router, which names every instance's host, is refused where one is still a placeholder."""
    engine = fake_engine(tmp_path / "env")
    profile = load_profile(GLM, ["network.nodes=[]"])
    plan = plan_profile(profile, data_root=Path("/var/lib/ascendctl"))
    with pytest.raises(UserInputError, match=r"node 3 needs .*: set network\.nodes\[2\]\.address$"):
        host_target(profile, GLM, (), (), 3, engine, plan)
    sets = ["target.devices_per_node=1", "target.nodes=2", "disaggregation.prefill.devices=1",
            "disaggregation.decode.devices=1"]  # fmt: skip
    profile = load_profile(LLMDD, sets)
    plan = plan_profile(profile, data_root=Path("/var/lib/ascendctl"))
    assert any("<node1-address>" in word for word in plan.services[0].command)
    with pytest.raises(UserInputError, match=r"node 0 needs .*: set network\.nodes\[1\]\.address$"):
        host_target(profile, LLMDD, tuple(sets), (), 0, engine, plan)


def test_host_target_of_a_one_host_plan_takes_that_host(tmp_path: Path) -> None:
    target = target_for(CPU_PD, fake_engine(tmp_path / "env"))
    assert target.node == 0 and target.name == "cpu-pd"
    assert [u.instance for u, _ in target.units] == ["prefill-0", "decode-0", "router"]
    assert target.router is not None and target.router[0].instance == "router"
    assert target.unit("decode-0")[0].role == "decode"
    with pytest.raises(UserInputError, match="runs prefill-0, decode-0, router, not 'decode-9'"):
        target.unit("decode-9")
    assert target.prefix(target.units[0][0]) == "[cpu-pd/prefill-0] "
    with pytest.raises(UserInputError, match="--node 1"):
        target_for(CPU_PD, fake_engine(tmp_path / "env"), node=1)


# --- preflight: the router program ----------------------------------------------------------------------


def test_a_missing_vllm_router_names_the_engine_install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    empty = tmp_path / "empty-path"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    target = target_for(CPU_PD, fake_engine(tmp_path / "env"))
    assert target.router is not None
    with pytest.raises(OperationFailed) as caught:
        check_router_program(target, target.router[1])
    text = str(caught.value)
    assert "vllm-router" in text and "ascendctl engine install" in text and str(CPU_PD) in text


def test_a_vllm_router_in_the_engine_bin_dir_passes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    empty = tmp_path / "empty-path"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    target = target_for(CPU_PD, fake_engine(tmp_path / "env", "vllm-router"))
    assert target.router is not None
    check_router_program(target, target.router[1])  # no error


def test_a_vllm_router_on_path_passes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    elsewhere = fake_engine(tmp_path / "elsewhere", "vllm-router").bin_dir
    monkeypatch.setenv("PATH", str(elsewhere))
    target = target_for(CPU_PD, fake_engine(tmp_path / "env"))
    assert target.router is not None
    check_router_program(target, target.router[1])


def test_the_proxy_script_missing_from_the_host_names_the_release_image(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    empty = tmp_path / "empty-path"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    target = target_for(LLMDD, fake_engine(tmp_path / "env", "python3"))
    assert target.router is not None
    router = target.router[1]
    script = router.argv[1]
    assert router.argv[0] == "python3" and script.endswith(".py")
    if Path(script).exists():
        pytest.skip(f"this machine has the release image's {script}")
    with pytest.raises(OperationFailed) as caught:
        check_router_program(target, router)
    text = str(caught.value)
    assert script in text and "container image" in text


def test_preflight_refuses_an_instance_already_running_here(
    tmp_path: Path, claimed: list[tuple[StateStore, DeploymentState]]
) -> None:
    store = StateStore(tmp_path / "state", warn=lambda _: None)
    claim(claimed, store, unit_record("cpu-pd", "decode-0", "decode"))
    target = target_for(CPU_PD, fake_engine(tmp_path / "env", "vllm-router"))
    with pytest.raises(OperationFailed, match=r"cpu-pd decode-0 \(node 0\) is already running.*ascendctl stop cpu-pd"):
        preflight_host(target, store)


def test_preflight_refuses_a_router_metrics_port_in_use(tmp_path: Path) -> None:
    # vllm-router exits when it cannot bind its metrics port: a second deployment's router on this host, with the
    # same default, is refused before anything starts, with the setting that moves it.
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        taken = held.getsockname()[1]
        server, router = pick_free_port(), pick_free_port()
        text = CPU_PD.read_text().replace("port: 8100", f"port: {server}")
        text += f"  router:\n    port: {router}\n    metrics_port: {taken}\n"
        path = tmp_path / "cpu-pd.yaml"
        path.write_text(text)
        target = target_for(path, fake_engine(tmp_path / "env", "vllm-router"))
        assert target.plan.services[0].metrics_port == taken
        store = StateStore(tmp_path / "state", warn=lambda _: None)
        with pytest.raises(
            OperationFailed, match=rf"router's metrics on port {taken}.*disaggregation\.router\.metrics_port"
        ):
            preflight_host(target, store)


# --- the router's install step --------------------------------------------------------------------------


def router_steps(plan: InstallPlan) -> list[tuple[str, tuple[str, ...]]]:
    return [(s.id, s.pip_args) for s in plan.steps if s.id.endswith("-pd-router")]


@pytest.mark.parametrize(
    "spec",
    [
        EngineReleaseSpec(backend="cpu", release="0.32.0", vllm="0.32.0", torch="2.13.0+cpu"),
        EngineReleaseSpec(backend="cuda", release="0.33.0", vllm="0.33.0"),
    ],
    ids=["cpu", "cuda"],
)
def test_cpu_and_cuda_environments_end_with_the_router(spec: EngineReleaseSpec) -> None:
    plan = plan_install(spec)
    last = plan.steps[-1]
    assert last.id == f"{len(plan.steps)}-pd-router"
    assert last.pip_args[0] == "install" and "vllm-router==0.1.17" in last.pip_args
    assert len(router_steps(plan)) == 1


@pytest.mark.parametrize(
    ("release", "vllm", "torch", "torch_npu", "triton"),
    [
        ("v0.11.0", "0.11.0", "2.7.1", "2.7.1", None),
        ("v0.13.0", "0.13.0", "2.8.0", "2.8.0.post2", "3.2.0"),
        ("v0.25.1rc1", "0.25.1", "2.10.0", "2.10.0.post2", "3.2.1"),
    ],
)
def test_npu_environments_install_no_router(
    release: str, vllm: str, torch: str, torch_npu: str, triton: str | None
) -> None:
    spec = EngineReleaseSpec(
        backend="npu", release=release, vllm=vllm, torch=torch, torch_npu=torch_npu, triton_ascend=triton
    )
    plan = plan_install(spec)
    assert router_steps(plan) == []
    assert not any(arg.startswith("vllm-router") for step in plan.steps for arg in step.pip_args)


# --- logs and ps per instance ---------------------------------------------------------------------------


def two_instances(tmp_path: Path, held: list[tuple[StateStore, DeploymentState]]) -> dict[str, Path]:
    """`pd` running prefill-0 and decode-0 here (records of this process) in the default state store."""
    store = StateStore()
    store.ensure()
    logs = {}
    for instance, role in (("prefill-0", "prefill"), ("decode-0", "decode")):
        log = store.log_path("pd", 0, instance)  # a record may name only its own log
        log.write_text(f"{instance} line\n")
        logs[instance] = log
        claim(held, store, unit_record("pd", instance, role, log_path=str(log)))
    return logs


def test_log_path_for_asks_for_an_instance_when_several_run(
    tmp_path: Path, claimed: list[tuple[StateStore, DeploymentState]]
) -> None:
    logs = two_instances(tmp_path, claimed)
    with pytest.raises(UserInputError) as caught:
        log_path_for("pd", None)
    text = str(caught.value)
    assert "--instance" in text and "decode-0" in text and "prefill-0" in text
    assert log_path_for("pd", None, instance="decode-0") == logs["decode-0"]
    assert log_path_for("pd", 0, instance="prefill-0") == logs["prefill-0"]
    with pytest.raises(UserInputError, match="--instance"):
        log_path_for("pd", None, instance="bad name")
    with pytest.raises(OperationFailed, match="no logs for 'pd' router"):
        log_path_for("pd", None, instance="router")  # neither running nor a log left


def test_log_path_for_one_running_instance_needs_no_flag(
    tmp_path: Path, claimed: list[tuple[StateStore, DeploymentState]]
) -> None:
    store = StateStore()
    store.ensure()
    log = store.log_path("pd", 0, "router")  # a record may name only its own log
    log.write_text("router line\n")
    claim(claimed, store, unit_record("pd", "router", "router", log_path=str(log)))
    assert log_path_for("pd", None) == log


def test_ps_shows_instance_and_role_columns(tmp_path: Path, claimed: list[tuple[StateStore, DeploymentState]]) -> None:
    two_instances(tmp_path, claimed)
    claim(claimed, StateStore(), record("plain", 0, run_id="plain"))
    result = runner.invoke(app, ["ps"])
    assert result.exit_code == 0, result.output
    header, *rows = result.stdout.splitlines()
    assert header.split()[:4] == ["NAME", "NODE", "INSTANCE", "ROLE"]
    cells = sorted(tuple(row.split()[:4]) for row in rows)
    assert cells == [
        ("pd", "0", "decode-0", "decode"),
        ("pd", "0", "prefill-0", "prefill"),
        ("plain", "0", "-", "head"),
    ]
    data = json.loads(runner.invoke(app, ["ps", "--json"]).stdout)
    got = sorted((r["name"], r["instance"], r["instance_role"]) for r in data)
    assert got == [("pd", "decode-0", "decode"), ("pd", "prefill-0", "prefill"), ("plain", None, None)]


def test_logs_of_two_instances_needs_the_instance(
    tmp_path: Path, claimed: list[tuple[StateStore, DeploymentState]]
) -> None:
    two_instances(tmp_path, claimed)
    result = runner.invoke(app, ["logs", "pd"])
    assert result.exit_code == 2, result.output
    assert "--instance" in result.output
    chosen = runner.invoke(app, ["logs", "pd", "--instance", "decode-0"])
    assert chosen.exit_code == 0, chosen.output
    assert chosen.stdout == "decode-0 line\n"
    short = runner.invoke(app, ["logs", "pd", "-i", "prefill-0"])
    assert short.exit_code == 0 and short.stdout == "prefill-0 line\n"
    bad = runner.invoke(app, ["logs", "pd", "-i", "no/such"])
    assert bad.exit_code == 2 and "not an instance name" in bad.output
