"""Deployment state records for tests: a valid record for this process (or a given PID), a PID that is
certainly dead (a child that already exited), and `STARTED`: the processes a test starts to stand for a
supervisor or an engine, each ended by its own pid (never by name) when the test is over (tests/conftest.py)."""

from __future__ import annotations

import os
import subprocess
import sys
import time

from ascendctl_engine.state import DeploymentState, process_start_time


def record(name: str = "demo", node: int = 0, pid: int | None = None, **kw: object) -> DeploymentState:
    pid = os.getpid() if pid is None else pid
    values: dict[str, object] = {
        "name": name,
        "node": node,
        "role": "head",
        "run_id": f"run-{name}-{node}-{pid}",
        "supervisor_pid": pid,
        "supervisor_start": process_start_time(pid),
        "started_at": time.time(),
        "log_path": "/tmp/x.log",
        "endpoint": "http://127.0.0.1:1",
        "health_url": "http://127.0.0.1:1/health",
        "shutdown_timeout": 5.0,
    }
    values.update(kw)
    return DeploymentState(**values)  # type: ignore[arg-type]


def dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


STARTED: list[subprocess.Popen[bytes]] = []


def reap_started() -> None:
    while STARTED:
        proc = STARTED.pop()
        if proc.poll() is None:
            proc.kill()
        proc.wait(10)


def wait_for_run_id(pid: int, run_id: str, timeout: float = 10.0) -> bool:
    """Until a just-started child has exec'd, /proc shows the environment it inherited from the test process, not
    the run id it was started with: wait for the exec (what `stop` sees of any engine that has run a moment)."""
    from ascendctl_engine.state import carries_run_id

    deadline = time.monotonic() + timeout
    while not carries_run_id(pid, run_id):
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.01)
    return True
