"""`ascendctl stop` signals only processes proved to be the record's: a pid and its start time can be read from
/proc by anyone and written into a record, so the engine must also carry the record's run id in its environment
(`ASCENDCTL_RUN_ID`, put there by the launcher), and the supervisor must hold the deployment's lock file open.
Every process here is started by the test and ended by its pid."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from ascendctl_engine.launcher import EngineProcess, LogSink, launch
from ascendctl_engine.spec import EngineCommand
from ascendctl_engine.state import RUN_ID_ENV, StateStore, group_members, process_start_time
from tests.state_records import STARTED as _STARTED
from tests.state_records import dead_pid, wait_for_run_id


def stop_cli(name: str) -> subprocess.CompletedProcess[str]:
    """The real CLI in a process of its own, as a user runs it (the state directory is the test's)."""
    return subprocess.run(
        [sys.executable, "-m", "ascendctl", "stop", name, "--timeout", "3"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def write_record(name: str, supervisor: int, engine: int | None, run_id: str) -> Path:
    """A record as the bug report forged it: pids and their real start times from /proc."""
    store = StateStore()
    store.ensure()
    start = process_start_time(engine) if engine is not None else None
    path = store.path_for(name, 0)
    path.write_text(
        json.dumps(
            {
                "name": name,
                "node": 0,
                "role": "head",
                "run_id": run_id,
                "supervisor_pid": supervisor,
                "supervisor_start": process_start_time(supervisor),
                "started_at": time.time(),
                "log_path": str(store.log_path(name, 0)),
                "endpoint": "http://127.0.0.1:9",
                "health_url": "http://127.0.0.1:9/health",
                "shutdown_timeout": 2,
                "status": "ready",
                "engine_pid": engine,
                "engine_pgid": engine,
                "engine_start": start,
            }
        )
    )
    return path


def unrelated_sleep() -> subprocess.Popen[bytes]:
    """A process ascendctl did not start: its own session (like `setsid sleep 300`), no run id."""
    env = {k: v for k, v in os.environ.items() if k != RUN_ID_ENV}
    proc = subprocess.Popen(["sleep", "300"], start_new_session=True, env=env, stdin=subprocess.DEVNULL)
    _STARTED.append(proc)
    return proc


@pytest.mark.parametrize("supervisor", ["the sleep", "dead"])
def test_a_forged_record_of_an_unrelated_process_is_left_alone(supervisor: str) -> None:
    victim = unrelated_sleep()
    path = write_record("victim", victim.pid if supervisor == "the sleep" else dead_pid(), victim.pid, "r1")
    result = stop_cli("victim")
    assert result.returncode == 1, result.stdout + result.stderr
    assert f"cannot verify that pid {victim.pid} is ours; it was left alone; remove {path}" in result.stderr
    assert "stopped" not in result.stdout and "Traceback" not in result.stderr
    time.sleep(0.3)
    assert victim.poll() is None  # not signalled
    assert path.exists()  # nor its record removed: it may be the only trace of something running


@pytest.fixture
def engine(tmp_path: Path) -> Iterator[tuple[EngineProcess, str]]:
    """A `sleep` started by the launcher the way the supervisor starts an engine, for run `run_id`."""
    run_id = uuid.uuid4().hex
    sleep = shutil.which("sleep")
    assert sleep is not None
    sink = LogSink(tmp_path / "engine.log")
    proc = launch(EngineCommand(node=0, role="head", argv=("vllm", "300")), sleep, sink, run_id=run_id)
    try:
        yield proc, run_id
    finally:
        if proc.poll() is None:
            proc.popen.kill()
        proc.wait(10)
        proc.release()
        proc.join_reader()
        sink.close()


def test_an_engine_the_launcher_started_for_the_run_is_stopped(engine: tuple[EngineProcess, str]) -> None:
    proc, run_id = engine
    assert wait_for_run_id(proc.pid, run_id)
    write_record("mine", dead_pid(), proc.pid, run_id)  # its supervisor is gone: an orphaned engine
    result = stop_cli("mine")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "mine (node 0): stopped its orphaned engine" in result.stdout
    assert proc.wait(10) == -signal.SIGTERM
    assert group_members(proc.pgid) == []


def test_the_same_engine_under_another_run_id_is_left_alone(engine: tuple[EngineProcess, str]) -> None:
    proc, _ = engine
    write_record("other", dead_pid(), proc.pid, uuid.uuid4().hex)
    result = stop_cli("other")
    assert result.returncode == 1 and f"cannot verify that pid {proc.pid} is ours" in result.stderr
    time.sleep(0.3)
    assert proc.poll() is None


def test_the_run_id_is_first_and_only_this_runs(tmp_path: Path) -> None:
    """An inherited or profile-set ASCENDCTL_RUN_ID never reaches the engine: only the run's own, first in its
    environment (where the bounded read of /proc/<pid>/environ finds it)."""
    from ascendctl_engine.launcher import build_env

    cmd = EngineCommand(node=0, role="head", argv=("vllm",), env={RUN_ID_ENV: "from-profile"})
    env = build_env(cmd, {"A": "1", RUN_ID_ENV: "inherited"}, {}, run_id="abc")
    assert next(iter(env.items())) == (RUN_ID_ENV, "abc") and env["A"] == "1"
    assert RUN_ID_ENV not in build_env(cmd, {RUN_ID_ENV: "inherited"}, {})
