"""`ascendctl serve`, `ps`, `logs`, `stop` through the CLI, with a fake engine environment (the fake `vllm`
of tests/fixtures/fake_vllm.py installed where `find_engine` looks)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ascendctl.cli import app
from ascendctl_engine.state import StateStore, group_members, pid_alive
from ascendctl_engine.supervisor import stop_deployment

runner = CliRunner()


def write_profile(
    tmp_path: Path,
    port: int,
    *,
    name: str = "fakedemo",
    env: dict[str, str] | None = None,
    api_key_env: str | None = None,
    restart: str = "never",
    ready_timeout: int = 30,
) -> Path:
    model = tmp_path / "model"
    model.mkdir(exist_ok=True)
    lines = [
        "apiVersion: ascendctl/v1",
        "kind: Profile",
        "metadata:",
        f"  name: {name}",
        "model:",
        f"  source: {model}",
        "  served_name: tiny",
        "target:",
        "  backend: cpu",
        "engine:",
        "  graph:",
        "    mode: eager",
        "server:",
        "  host: 127.0.0.1",
        f"  port: {port}",
        "  shutdown_timeout: 5",
    ]
    if api_key_env:
        lines += ["  api_key:", f"    env: {api_key_env}"]
    lines += ["runtime:", f"  ready_timeout: {ready_timeout}", "  restart:", f"    policy: {restart}"]
    lines += ["    backoff_seconds: 0.1"]
    if env:
        lines.append("  env:")
        lines += [f"    {k}: {json.dumps(v)}" for k, v in env.items()]
    path = tmp_path / f"{name}.yaml"
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture(autouse=True)
def cleanup() -> Iterator[None]:
    """Whatever a test leaves running (even when it fails) is stopped."""
    yield
    for entry in StateStore().entries():
        stop_deployment(entry, timeout=10)


def test_missing_engine_environment_names_the_install_command(tmp_path: Path, free_port: int) -> None:
    profile = write_profile(tmp_path, free_port)
    result = runner.invoke(app, ["serve", str(profile)])
    assert result.exit_code == 1
    assert f"install it with: ascendctl engine install {profile}" in result.stderr


def test_missing_engine_is_reported_before_an_unprepared_model(tmp_path: Path, free_port: int) -> None:
    # `model prepare` runs inside the engine environment, so the engine install is the first thing to say.
    profile = write_profile(tmp_path, free_port)
    profile.write_text(profile.read_text().replace(f"source: {tmp_path / 'model'}", "source: prepared:tiny-random"))
    result = runner.invoke(app, ["serve", str(profile)])
    assert result.exit_code == 1
    assert "ascendctl engine install" in result.stderr
    assert "model prepare" not in result.stderr


def test_unprepared_model_fails_before_launch_with_the_prepare_command(
    fake_cpu_engine_env: Path, tmp_path: Path, free_port: int
) -> None:
    profile = write_profile(tmp_path, free_port)
    profile.write_text(profile.read_text().replace(f"source: {tmp_path / 'model'}", "source: prepared:tiny-random"))
    result = runner.invoke(app, ["serve", str(profile)])
    assert result.exit_code == 1
    assert "model 'tiny-random' is not prepared on this machine; run: ascendctl model prepare tiny-random" in (
        result.stderr
    )
    assert not StateStore().log_path("fakedemo", 0).exists()


def test_busy_port_fails_before_launch(fake_cpu_engine_env: Path, tmp_path: Path, free_port: int) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", free_port))
        sock.listen()
        result = runner.invoke(app, ["serve", str(write_profile(tmp_path, free_port))])
    assert result.exit_code == 1
    assert f"cannot serve on port {free_port}" in result.stderr and "already in use" in result.stderr
    store = StateStore()
    assert not store.log_path("fakedemo", 0).exists()  # nothing was started
    assert store.entries() == []


def test_foreground_start_failure_shows_log_tail_and_diagnosis(
    fake_cpu_engine_env: Path, tmp_path: Path, free_port: int
) -> None:
    text = (
        "Traceback (most recent call last):|"
        "OSError: Repo id must be in the form 'repo_name' or 'namespace/repo_name': '/nope'"
    )
    profile = write_profile(tmp_path, free_port, env={"FAKE_VLLM_FAIL_TEXT": text})
    result = runner.invoke(app, ["serve", str(profile)])
    assert result.exit_code == 1
    assert "[fakedemo] OSError: Repo id must be in the form" in result.stdout  # streamed with its prefix
    assert "diagnosis [log.model.not-found]: the model could not be found" in result.stderr
    assert "fix: check `model.source`" in result.stderr
    assert "error: the engine exited with status 1 before it was ready" in result.stderr


def test_node_outside_the_plan_is_invalid(fake_cpu_engine_env: Path, tmp_path: Path, free_port: int) -> None:
    result = runner.invoke(app, ["serve", str(write_profile(tmp_path, free_port)), "--node", "1"])
    assert result.exit_code == 2
    assert "--node 1: fakedemo has nodes 0" in result.stderr


def test_detach_ps_logs_stop(
    fake_cpu_engine_env: Path, tmp_path: Path, free_port: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = "sk-detach-3b1f-never-printed"
    monkeypatch.setenv("FAKE_KEY", secret)
    profile = write_profile(
        tmp_path,
        free_port,
        api_key_env="FAKE_KEY",
        env={"FAKE_VLLM_CHILD": "1", "FAKE_VLLM_PRINT_SECRET": "1"},
    )
    result = runner.invoke(app, ["serve", str(profile), "--detach", "--warmup"])
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "ready in " in out and f"at http://127.0.0.1:{free_port}" in out
    assert "phase: KV cache sized" in out
    assert f'curl http://127.0.0.1:{free_port}/v1/chat/completions -H "Authorization: Bearer $FAKE_KEY"' in out
    assert "warm-up request answered" in out
    assert secret not in result.output

    ps = runner.invoke(app, ["ps", "--json"])
    assert ps.exit_code == 0
    [row] = json.loads(ps.stdout)
    assert sorted(row) == [
        "endpoint", "engine_pid", "health", "instance", "instance_role", "log", "name", "node", "pid", "restarts",
        "role", "started_at",
        "status", "uptime_s",
    ]  # fmt: skip
    assert (row["name"], row["node"], row["role"], row["status"], row["health"], row["restarts"]) == (
        "fakedemo", 0, "head", "ready", "ok", 0,
    )  # fmt: skip
    assert row["endpoint"] == f"http://127.0.0.1:{free_port}"
    supervisor, engine = row["pid"], row["engine_pid"]
    assert pid_alive(supervisor) and supervisor != os.getpid()

    table = runner.invoke(app, ["ps"])
    assert table.stdout.splitlines()[0].split() == [
        "NAME", "NODE", "INSTANCE", "ROLE", "PID", "ENDPOINT", "UPTIME", "STATUS", "HEALTH", "RESTARTS",
    ]  # fmt: skip
    # a single-instance deployment has no instance; its role is the node's
    assert table.stdout.splitlines()[1].split()[:6] == ["fakedemo", "0", "-", "head", str(supervisor), row["endpoint"]]

    logs = runner.invoke(app, ["logs", "fakedemo"])
    assert logs.exit_code == 0
    assert "Application startup complete." in logs.stdout
    assert "'api_key': '<redacted>'" in logs.stdout and secret not in logs.stdout
    tail = runner.invoke(app, ["logs", "fakedemo", "--tail", "1"])
    assert len(tail.stdout.splitlines()) == 1

    state_files = list((StateStore().deployments_dir).iterdir())
    assert state_files and all(secret not in p.read_text() for p in state_files)

    stop = runner.invoke(app, ["stop", "fakedemo"])
    assert stop.exit_code == 0, stop.output
    assert "fakedemo (node 0): stopped in" in stop.stdout
    assert not pid_alive(supervisor)
    assert group_members(engine) == []
    assert json.loads(runner.invoke(app, ["ps", "--json"]).stdout) == []
    assert "no deployments running" in runner.invoke(app, ["ps"]).stdout
    # the log outlives the deployment
    after = runner.invoke(app, ["logs", "fakedemo"])
    assert after.exit_code == 0 and "SIGTERM to the engine (pid" in after.stdout


def test_detached_start_failure_is_reported_with_diagnosis(
    fake_cpu_engine_env: Path, tmp_path: Path, free_port: int
) -> None:
    text = "RuntimeError: Not enough allowed NUMA nodes to bind threads of 2 CPUWorkers."
    profile = write_profile(tmp_path, free_port, env={"FAKE_VLLM_FAIL_TEXT": text})
    result = runner.invoke(app, ["serve", str(profile), "--detach"])
    assert result.exit_code == 1
    assert "diagnosis [log.cpu.numa-bind]: the CPU engine could not give each rank its own NUMA node" in result.stderr
    assert "error: the engine exited with status 1 before it was ready" in result.stderr
    assert StateStore().entries() == []


def test_second_serve_of_a_running_deployment_is_refused(
    fake_cpu_engine_env: Path, tmp_path: Path, free_port: int
) -> None:
    profile = write_profile(tmp_path, free_port)
    assert runner.invoke(app, ["serve", str(profile), "--detach"]).exit_code == 0
    again = runner.invoke(app, ["serve", str(profile), "--detach"])
    assert again.exit_code == 1
    assert "fakedemo (node 0) is already running" in again.stderr and "ascendctl stop fakedemo" in again.stderr


def test_stop_and_logs_of_unknown_deployment(tmp_path: Path) -> None:
    stop = runner.invoke(app, ["stop", "nosuch"])
    assert stop.exit_code == 1 and "no running deployment named 'nosuch'" in stop.stderr
    logs = runner.invoke(app, ["logs", "nosuch"])
    assert logs.exit_code == 1 and "no logs for 'nosuch'" in logs.stderr


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "ascendctl", *args]


def _wait_status(name: str, status: str, timeout: float = 30.0) -> None:
    """Wait until the deployment has this status and its engine has been launched."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = StateStore().find(name)
        if found and found[0].state.status == status and found[0].state.engine_pgid is not None:
            return
        time.sleep(0.05)
    raise AssertionError(f"{name} never reached {status}")


def test_foreground_sigterm_drains_and_exits_zero(fake_cpu_engine_env: Path, tmp_path: Path, free_port: int) -> None:
    profile = write_profile(tmp_path, free_port, env={"FAKE_VLLM_CHILD": "1"})
    proc = subprocess.Popen(_cli("serve", str(profile)), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        _wait_status("fakedemo", "ready")
        pgid = StateStore().find("fakedemo")[0].state.engine_pgid
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            proc.wait(30)
    assert proc.returncode == 0, out
    assert "ascendctl: fakedemo stopped" in out
    assert pgid is not None and group_members(pgid) == []
    assert StateStore().entries() == []


def test_foreground_interrupt_before_ready_exits_130(fake_cpu_engine_env: Path, tmp_path: Path, free_port: int) -> None:
    profile = write_profile(tmp_path, free_port, env={"FAKE_VLLM_STEP": "30"})
    proc = subprocess.Popen(_cli("serve", str(profile)), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        _wait_status("fakedemo", "starting")
        pgid = StateStore().find("fakedemo")[0].state.engine_pgid
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            proc.wait(30)
    assert proc.returncode == 130, out
    assert "interrupted before the engine was ready" in out
    assert pgid is not None and group_members(pgid) == []


def test_logs_follow_ends_when_the_deployment_stops(fake_cpu_engine_env: Path, tmp_path: Path, free_port: int) -> None:
    profile = write_profile(tmp_path, free_port)
    assert runner.invoke(app, ["serve", str(profile), "--detach"]).exit_code == 0
    follower = subprocess.Popen(_cli("logs", "fakedemo", "-f"), stdout=subprocess.PIPE, text=True)
    try:
        time.sleep(0.5)
        assert runner.invoke(app, ["stop", "fakedemo"]).exit_code == 0
        out, _ = follower.communicate(timeout=15)
    finally:
        if follower.poll() is None:
            follower.kill()
            follower.wait()
    assert follower.returncode == 0
    assert "Application startup complete." in out
    assert "engine stopped in" in out  # written after -f started: it was followed


def test_restart_policy_through_the_cli(fake_cpu_engine_env: Path, tmp_path: Path, free_port: int) -> None:
    env = {"FAKE_VLLM_CRASH_AFTER": "0.5", "FAKE_VLLM_CRASH_TIMES": "1", "FAKE_VLLM_COUNTER": str(tmp_path / "n")}
    profile = write_profile(tmp_path, free_port, env=env, restart="on-failure")
    assert runner.invoke(app, ["serve", str(profile), "--detach"]).exit_code == 0
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        rows = json.loads(runner.invoke(app, ["ps", "--json"]).stdout)
        if rows and rows[0]["restarts"] == 1 and rows[0]["status"] == "ready":
            break
        time.sleep(0.1)
    else:
        raise AssertionError(runner.invoke(app, ["logs", "fakedemo"]).stdout)
    log = runner.invoke(app, ["logs", "fakedemo"]).stdout
    assert "restart 1/3 in 0.1s: the engine exited with status 1" in log
