"""The supervisor against a fake engine (tests/fixtures/fake_vllm.py): readiness, phases, failure diagnosis,
restarts with backoff, drain, escalation to SIGKILL, no orphans, state files and redaction."""

from __future__ import annotations

import json
import os
import signal
import stat
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator, Mapping
from dataclasses import replace
from pathlib import Path

import pytest

from ascendctl_engine.launcher import LaunchError
from ascendctl_engine.spec import EngineCommand, Listen, RestartPolicy, SecretRef, Supervision
from ascendctl_engine.state import StateStore, group_members, pid_alive, signal_group
from ascendctl_engine.supervisor import (
    Supervisor,
    SupervisorConfig,
    SupervisorReady,
    SupervisorResult,
)

NEVER = RestartPolicy("never", 3, 2.0, 60.0)


def command(
    port: int, *, shutdown_timeout: int = 5, env: Mapping[str, str] | None = None, **kw: object
) -> EngineCommand:
    argv = (
        "vllm",
        "serve",
        "/models/tiny",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--served-model-name",
        "tiny",
        "--shutdown-timeout",
        str(shutdown_timeout),
    )
    return EngineCommand(
        node=0,
        role="head",
        argv=argv,
        env=dict(env or {}),
        listen=Listen("127.0.0.1", port),
        supervision=Supervision(20.0, float(shutdown_timeout), NEVER),
        **kw,  # type: ignore[arg-type]
    )


_RUNS: list[Run] = []


@pytest.fixture(autouse=True)
def _stop_leftover_runs() -> Iterator[None]:
    """A failing test must not leave an engine behind: stop (then force) every supervisor it started."""
    yield
    while _RUNS:
        run = _RUNS.pop()
        if run.thread.is_alive():
            run.sup.request_stop()
            run.sup.request_stop()
            run.thread.join(30)
        process = run.sup.process
        if process is not None:
            signal_group(process.pgid, signal.SIGKILL)
            process.wait(5)


class Run:
    """A supervisor running in a thread, with its ready notifications."""

    def __init__(self, sup: Supervisor) -> None:
        _RUNS.append(self)
        self.sup = sup
        self.readies: list[SupervisorReady] = []
        self.ready = threading.Event()
        self.result: SupervisorResult | None = None
        sup.on_ready = self._on_ready
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _on_ready(self, info: SupervisorReady) -> None:
        self.readies.append(info)
        self.ready.set()

    def _run(self) -> None:
        self.result = self.sup.run()

    def wait_ready(self, count: int = 1, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while len(self.readies) < count:
            assert time.monotonic() < deadline, f"not ready {count} time(s); log:\n{self.log()}"
            assert self.thread.is_alive() or len(self.readies) >= count, f"supervisor ended; log:\n{self.log()}"
            time.sleep(0.02)

    def finish(self, timeout: float = 60.0) -> SupervisorResult:
        self.thread.join(timeout)
        assert not self.thread.is_alive(), f"supervisor did not finish; log:\n{self.log()}"
        assert self.result is not None
        return self.result

    def log(self) -> str:
        path = self.sup.log_path
        return path.read_text() if path.exists() else ""


def wait_state(store: StateStore, run: Run, check: Callable[[dict[str, object]], bool], timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = store.entries()
        if found and check(found[0].state.__dict__):
            return
        assert run.thread.is_alive(), f"supervisor ended; log:\n{run.log()}"
        time.sleep(0.02)
    raise AssertionError(f"state never matched; log:\n{run.log()}")


@pytest.fixture
def store(tmp_path: Path) -> StateStore:
    return StateStore(tmp_path / "state")


def supervise(
    fake_vllm: Path,
    store: StateStore,
    cmd: EngineCommand,
    *,
    environ: Mapping[str, str] | None = None,
    console: Callable[[str], None] | None = None,
    **config: object,
) -> Supervisor:
    # what the deployment asks for rides on the command; the supervisor's own pacing is its config
    planned = {k: config.pop(k) for k in ("ready_timeout", "shutdown_timeout", "restart") if k in config}
    assert cmd.supervision is not None
    cmd = replace(cmd, supervision=replace(cmd.supervision, **planned))  # type: ignore[arg-type]
    settings: dict[str, object] = {"kill_margin": 2.0}
    settings.update(config)
    return Supervisor(
        cmd,
        fake_vllm,
        name="demo",
        config=SupervisorConfig(**settings),  # type: ignore[arg-type]
        store=store,
        console=console,
        environ={**os.environ, **(environ or {})},
        install_signal_handlers=False,
    )


def test_ready_with_phases_then_clean_stop_leaves_no_process(
    fake_vllm: Path, store: StateStore, free_port: int, tmp_path: Path
) -> None:
    pidfile = tmp_path / "pids"
    mark = tmp_path / "child-got-sigterm"
    lines: list[str] = []
    env = {"FAKE_VLLM_CHILD": "1", "FAKE_VLLM_PIDFILE": str(pidfile), "FAKE_VLLM_CHILD_MARK": str(mark)}
    run = Run(supervise(fake_vllm, store, command(free_port, env=env), console=lines.append))
    run.wait_ready()

    info = run.readies[0]
    assert [p.key for p in info.phases] == ["process_start", "weights_loaded", "kv_cache_sized", "warmup", "ready"]
    assert all(p.took >= 0 for p in info.phases)
    assert info.phases[-1].at >= info.phases[0].at

    listed = store.entries()
    assert len(listed) == 1
    state = listed[0].state
    assert (state.name, state.node, state.status, state.endpoint) == (
        "demo",
        0,
        "ready",
        f"http://127.0.0.1:{free_port}",
    )
    assert state.supervisor_pid == os.getpid()
    assert [p["phase"] for p in state.phases][-1] == "ready"
    record = store.path_for("demo", 0)
    assert stat.S_IMODE(record.stat().st_mode) == 0o600
    assert stat.S_IMODE(store.root.stat().st_mode) == 0o700
    assert stat.S_IMODE(store.deployments_dir.stat().st_mode) == 0o700

    leader, child = (int(x) for x in pidfile.read_text().split())
    assert state.engine_pgid == leader
    assert set(group_members(leader)) >= {leader, child}

    run.sup.request_stop()
    result = run.finish()
    assert (result.exit_code, result.outcome, result.escalated) == (0, "stopped", False)
    assert group_members(leader) == []
    assert not pid_alive(child)
    # only the leader was signalled: it drains and stops its own workers (a SIGTERM to the whole group
    # kills vLLM's workers mid-step and fails the requests being drained)
    assert not mark.exists()
    assert not record.exists()
    # console lines are prefixed, the log file holds the raw engine lines plus supervisor events
    assert any(line.startswith("[demo] ") and "Application startup complete" in line for line in lines)
    log = run.log()
    assert "Application startup complete." in log
    assert "[ascendctl " in log and "SIGTERM to the engine (pid" in log
    assert stat.S_IMODE(run.sup.log_path.stat().st_mode) == 0o600


def test_startup_failure_is_diagnosed_and_not_restarted(fake_vllm: Path, store: StateStore, free_port: int) -> None:
    text = "Traceback (most recent call last):|OSError: [Errno 98] Address already in use"
    sup = supervise(
        fake_vllm,
        store,
        command(free_port, env={"FAKE_VLLM_FAIL_TEXT": text}),
        restart=RestartPolicy("on-failure", 3, 0.05, 0.1),
    )
    result = Run(sup).finish()
    assert (result.exit_code, result.outcome, result.restarts) == (1, "failed", 0)
    assert result.failure is not None
    assert result.failure.reason == "the engine exited with status 1 before it was ready"
    assert result.failure.returncode == 1
    assert [d.key for d in result.failure.diagnoses] == ["log.server.port-in-use"]
    assert result.failure.tail[-1] == "OSError: [Errno 98] Address already in use"
    assert store.entries() == []


def test_a_failure_is_diagnosed_in_the_phase_the_whole_run_reached(
    fake_vllm: Path, store: StateStore, free_port: int
) -> None:
    # the KV cache line scrolls out of the 200-line tail before graph capture runs out of memory: the tracker, which
    # saw every line, still tells `diagnose` the phase (issue 55)
    lines = [
        "(EngineCore pid=1) INFO 07-14 09:21:13 [kv_cache_utils.py:2327] NPU KV cache size: 296,576 tokens",
        *(
            f"(Worker_TP0 pid=2) INFO 07-14 09:21:15 [worker.py:727] Compile and warming up model for size {n}"
            for n in range(300)
        ),
        "torch.OutOfMemoryError: NPU out of memory. Tried to allocate 512.00 MiB",
    ]
    sup = supervise(fake_vllm, store, command(free_port, env={"FAKE_VLLM_FAIL_TEXT": "|".join(lines)}))
    result = Run(sup).finish()
    assert result.failure is not None and "NPU KV cache size" not in "\n".join(result.failure.tail)
    assert [(d.key, d.phase) for d in result.failure.diagnoses] == [("log.graph.capture-oom", "capture")]


def test_restarts_with_capped_exponential_backoff_then_stays_up(
    fake_vllm: Path, store: StateStore, free_port: int, tmp_path: Path
) -> None:
    env = {
        "FAKE_VLLM_CRASH_AFTER": "0.1",
        "FAKE_VLLM_CRASH_TIMES": "2",
        "FAKE_VLLM_COUNTER": str(tmp_path / "runs"),
    }
    sup = supervise(fake_vllm, store, command(free_port, env=env), restart=RestartPolicy("on-failure", 3, 0.1, 0.15))
    run = Run(sup)
    wait_state(store, run, lambda s: s["restarts"] == 2 and s["status"] == "ready")
    state = store.entries()[0].state
    assert state.last_restart_reason == "the engine exited with status 1"
    run.sup.request_stop()
    result = run.finish()
    assert (result.exit_code, result.outcome, result.restarts) == (0, "stopped", 2)
    assert (tmp_path / "runs").read_text() == "3"
    log = run.log()
    assert "restart 1/3 in 0.1s: the engine exited with status 1" in log
    assert "restart 2/3 in 0.15s: the engine exited with status 1" in log  # 0.2 capped to 0.15
    assert "restart 3/3" not in log


def test_gives_up_after_max_restarts(fake_vllm: Path, store: StateStore, free_port: int) -> None:
    env = {"FAKE_VLLM_CRASH_AFTER": "0.05", "FAKE_VLLM_CRASH_CODE": "3"}
    sup = supervise(fake_vllm, store, command(free_port, env=env), restart=RestartPolicy("on-failure", 2, 0.05, 1))
    result = Run(sup).finish()
    assert (result.exit_code, result.outcome, result.restarts) == (1, "failed", 2)
    assert result.failure is not None
    assert result.failure.reason == "the engine exited with status 3; gave up after 2 restart(s)"
    assert store.entries() == []


def test_policy_never_does_not_restart_a_crash(fake_vllm: Path, store: StateStore, free_port: int) -> None:
    env = {"FAKE_VLLM_CRASH_AFTER": "0.3"}
    run = Run(supervise(fake_vllm, store, command(free_port, env=env)))
    result = run.finish()
    assert (result.exit_code, result.outcome, result.restarts) == (1, "failed", 0)
    # it had served (its log says so) before it crashed: not a start-up failure
    assert result.failure is not None and result.failure.reason == "the engine exited with status 1"
    assert store.entries() == []


def test_engine_killed_from_outside_restarts_and_health_returns(
    fake_vllm: Path, store: StateStore, free_port: int
) -> None:
    sup = supervise(fake_vllm, store, command(free_port), restart=RestartPolicy("on-failure", 1, 0.05, 0.05))
    run = Run(sup)
    run.wait_ready()
    first = store.entries()[0].state.engine_pid
    assert first is not None
    os.kill(first, signal.SIGKILL)
    run.wait_ready(count=2)
    second = store.entries()[0].state
    assert second.engine_pid != first and second.restarts == 1
    assert second.last_restart_reason == "the engine was killed by SIGKILL"
    with urllib.request.urlopen(f"http://127.0.0.1:{free_port}/health", timeout=5) as response:
        assert response.status == 200
    run.sup.request_stop()
    assert run.finish().exit_code == 0


def test_drain_lets_an_in_flight_request_finish(fake_vllm: Path, store: StateStore, free_port: int) -> None:
    env = {"FAKE_VLLM_REQUEST_DELAY": "1.0"}
    run = Run(supervise(fake_vllm, store, command(free_port, shutdown_timeout=10, env=env), shutdown_timeout=10.0))
    run.wait_ready()
    answers: list[int] = []

    def request() -> None:
        req = urllib.request.Request(f"http://127.0.0.1:{free_port}/v1/completions", data=b"{}", method="POST")
        with urllib.request.urlopen(req, timeout=10) as response:
            answers.append(response.status)

    client = threading.Thread(target=request)
    client.start()
    time.sleep(0.3)  # the request is in flight
    run.sup.request_stop()
    client.join(15)
    result = run.finish()
    assert answers == [200]
    assert (result.exit_code, result.escalated) == (0, False)


def test_engine_ignoring_sigterm_is_killed_after_the_drain_budget(
    fake_vllm: Path, store: StateStore, free_port: int
) -> None:
    env = {"FAKE_VLLM_IGNORE_SIGTERM": "1", "FAKE_VLLM_CHILD": "stubborn"}
    run = Run(
        supervise(
            fake_vllm, store, command(free_port, shutdown_timeout=0, env=env), shutdown_timeout=0.0, kill_margin=0.5
        )
    )
    run.wait_ready()
    pgid = store.entries()[0].state.engine_pgid
    assert pgid is not None and len(group_members(pgid)) == 2
    started = time.monotonic()
    run.sup.request_stop()
    result = run.finish()
    assert result.escalated and result.exit_code == 0
    assert time.monotonic() - started < 5
    assert group_members(pgid) == []
    assert "SIGKILL to process group" in run.log()


def test_leftover_child_of_an_exited_leader_is_killed(fake_vllm: Path, store: StateStore, free_port: int) -> None:
    env = {"FAKE_VLLM_CHILD": "stubborn"}  # the leader exits on SIGTERM, its child ignores it
    run = Run(supervise(fake_vllm, store, command(free_port, env=env), shutdown_timeout=0.5, kill_margin=0.5))
    run.wait_ready()
    pgid = store.entries()[0].state.engine_pgid
    assert pgid is not None
    run.sup.request_stop()
    run.finish()
    assert group_members(pgid) == []


def test_second_stop_request_escalates_at_once(fake_vllm: Path, store: StateStore, free_port: int) -> None:
    env = {"FAKE_VLLM_IGNORE_SIGTERM": "1"}
    run = Run(supervise(fake_vllm, store, command(free_port, env=env), shutdown_timeout=60.0, kill_margin=60.0))
    run.wait_ready()
    run.sup.request_stop()
    time.sleep(0.2)
    started = time.monotonic()
    run.sup.request_stop()
    result = run.finish(timeout=10)
    assert result.escalated and time.monotonic() - started < 5


def test_not_ready_in_time_fails_and_cleans_up(fake_vllm: Path, store: StateStore, free_port: int) -> None:
    env = {"FAKE_VLLM_STEP": "30"}
    run = Run(supervise(fake_vllm, store, command(free_port, env=env), ready_timeout=0.5, kill_margin=1.0))
    result = run.finish()
    assert result.exit_code == 1
    assert result.failure is not None and result.failure.reason == "the engine was not ready within 0.5s"
    assert run.sup.process is not None and group_members(run.sup.process.pgid) == []


def test_stop_before_ready_is_an_interruption(fake_vllm: Path, store: StateStore, free_port: int) -> None:
    env = {"FAKE_VLLM_STEP": "30"}
    run = Run(supervise(fake_vllm, store, command(free_port, env=env), kill_margin=1.0))
    deadline = time.monotonic() + 10
    while run.sup.process is None and time.monotonic() < deadline:
        time.sleep(0.02)
    run.sup.request_stop()
    result = run.finish()
    assert (result.exit_code, result.outcome) == (130, "interrupted")
    assert run.sup.process is not None and group_members(run.sup.process.pgid) == []


def test_secrets_reach_the_engine_but_never_logs_or_state(fake_vllm: Path, store: StateStore, free_port: int) -> None:
    secret = "sk-test-7f3a9c-never-written"
    cmd = command(
        free_port,
        env={"FAKE_VLLM_PRINT_SECRET": "1"},
        secret_env={"VLLM_API_KEY": SecretRef(env="MY_API_KEY")},
    )
    lines: list[str] = []
    run = Run(supervise(fake_vllm, store, cmd, environ={"MY_API_KEY": secret}, console=lines.append))
    run.wait_ready()
    state_text = store.path_for("demo", 0).read_text()
    run.sup.request_stop()
    run.finish()
    log = run.log()
    args_line = next(line for line in log.splitlines() if "non-default args" in line)
    assert "'api_key': '<redacted>'" in args_line  # the engine got the value; we wrote the placeholder
    assert secret not in log and secret not in state_text
    assert not any(secret in line for line in lines)


def test_missing_secret_fails_before_anything_starts(fake_vllm: Path, store: StateStore, free_port: int) -> None:
    cmd = command(free_port, secret_env={"VLLM_API_KEY": SecretRef(env="ABSENT_KEY_VAR")})
    sup = supervise(fake_vllm, store, cmd, environ={"ABSENT_KEY_VAR": ""})
    with pytest.raises(LaunchError, match="ABSENT_KEY_VAR"):
        sup.run()
    assert store.entries() == []


def test_second_supervisor_for_the_same_deployment_is_refused(
    fake_vllm: Path, store: StateStore, free_port: int
) -> None:
    from ascendctl_engine.state import AlreadyRunning

    run = Run(supervise(fake_vllm, store, command(free_port)))
    run.wait_ready()
    with pytest.raises(AlreadyRunning):
        supervise(fake_vllm, store, command(free_port)).run()
    run.sup.request_stop()
    assert run.finish().exit_code == 0
    data = json.loads(json.dumps([e.state.name for e in store.entries()]))
    assert data == []
