"""`ps`, `logs`, `stop` and `serve` against hostile state: garbage records, wrong field types, a FIFO as a
record, a directory or nothing where a log should be, a state path that is a file, stale records pointing
at unrelated live processes, and two `serve` of one deployment at the same instant. Exit codes stay in
{0, 1, 2}, nothing prints a traceback, and nothing the tests did not start is signalled."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ascendctl.cli import app
from ascendctl_engine.state import (
    DeploymentState,
    StateError,
    StateStore,
    group_members,
    pid_alive,
    process_start_time,
)
from ascendctl_engine.supervisor import stop_deployment

runner = CliRunner()

_STARTED: list[subprocess.Popen[bytes]] = []


@pytest.fixture(autouse=True)
def cleanup() -> Iterator[None]:
    """What a test started is ended by pid: its own processes, then any deployment it served."""
    yield
    try:
        entries = StateStore(warn=lambda _: None).entries()
    except StateError:
        entries = []
    for entry in entries:
        if entry.supervisor_verified or entry.engine_verified:
            stop_deployment(entry, timeout=10)
    while _STARTED:
        proc = _STARTED.pop()
        if proc.poll() is None:
            proc.kill()
        proc.wait(10)


def start(argv: list[str], **kw: object) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen(argv, **kw)  # type: ignore[call-overload]
    _STARTED.append(proc)
    return proc  # type: ignore[no-any-return]


def cli(*args: str) -> tuple[int, str]:
    """Run the CLI in-process; every outcome must be an exit code a user can act on, without a traceback."""
    code, text, _ = cli_out(*args)
    return code, text


def cli_out(*args: str) -> tuple[int, str, str]:
    """`cli`, plus stdout alone (for --json)."""
    result = runner.invoke(app, list(args))
    text = result.stdout + result.stderr
    assert result.exit_code in (0, 1, 2), f"{args}: exit {result.exit_code}\n{text}"
    assert "Traceback" not in text and "internal error" not in text, f"{args}:\n{text}"
    return result.exit_code, text, result.stdout


def record(name: str, pid: int, **kw: object) -> DeploymentState:
    store = StateStore()
    values: dict[str, object] = {
        "name": name,
        "node": 0,
        "role": "head",
        "run_id": f"run-{name}",
        "supervisor_pid": pid,
        "supervisor_start": process_start_time(pid),
        "started_at": time.time(),
        "log_path": str(store.log_path(name, 0)),
        "endpoint": "http://127.0.0.1:9",
        "health_url": "http://127.0.0.1:9/health",
        "shutdown_timeout": 1.0,
        "status": "ready",
    }
    values.update(kw)
    return DeploymentState(**values)  # type: ignore[arg-type]


def write_record(state: DeploymentState) -> Path:
    store = StateStore()
    store.ensure()
    path = store.path_for(state.name, state.node)
    path.write_text(state.to_json())
    return path


def write_raw(name: str, data: bytes) -> Path:
    store = StateStore()
    store.ensure()
    path = store.deployments_dir / f"{name}.node0.json"
    path.write_bytes(data)
    return path


def sleeper(*, session: bool = False) -> subprocess.Popen[bytes]:
    return start(["sleep", "30"], start_new_session=session)


def good_deployment() -> subprocess.Popen[bytes]:
    """A well-formed record of a live "supervisor" (a sleep the test started) with a log."""
    proc = sleeper()
    state = record("good", proc.pid)
    write_record(state)
    Path(state.log_path).write_text("good line 1\ngood line 2\n")
    return proc


# ---------------------------------------------------------------------------------------------------------
# garbage in the deployments directory


@pytest.mark.timeout(120)
def test_garbage_records_are_skipped_and_the_good_one_still_works() -> None:
    good = good_deployment()
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    base = json.loads(record("x", dead.pid).to_json())
    bad = {
        "truncated": b'{"name": "truncated", "node": 0, "ro',
        "binary": b"\x00\xff\xfe\xfd",
        "deep": b"[" * 200_000 + b"]" * 200_000,
        "pgid": json.dumps({**base, "name": "pgid", "engine_pgid": "x"}).encode(),
        "pidtext": json.dumps({**base, "name": "pidtext", "supervisor_pid": "1"}).encode(),
        "escape": json.dumps({**base, "name": "escape", "endpoint": "http://x\x1b[2J"}).encode(),
        "fileurl": json.dumps({**base, "name": "fileurl", "health_url": "file:///etc/passwd"}).encode(),
    }
    paths = {name: write_raw(name, data) for name, data in bad.items()}
    fifo = StateStore().deployments_dir / "fifo.node0.json"
    os.mkfifo(fifo)  # a plain open() for reading would block `ps` for ever
    paths["fifo"] = fifo

    code, out = cli("ps")
    assert code == 0
    assert "good" in out and "down" in out
    for path in paths.values():
        assert f"warning: skipped the deployment record {path}: " in out and f"rm {path}" in out
    assert "\x1b" not in out
    code, _, stdout = cli_out("ps", "--json")
    assert code == 0
    assert [row["name"] for row in json.loads(stdout)] == ["good"]

    code, out = cli("logs", "good")
    assert code == 0 and "good line 2" in out
    for name in paths:
        code, out = cli("logs", name)
        assert code == 1 and "error: no logs for" in out
        code, out = cli("stop", name)
        assert code == 1
        assert f"no usable record of a deployment named {name!r}" in out and str(paths[name]) in out
    assert all(p.exists() for p in paths.values())  # nothing was deleted
    assert good.poll() is None  # and nothing signalled the good one


@pytest.mark.timeout(60)
def test_a_directory_where_a_log_should_be_and_a_deleted_log() -> None:
    good = good_deployment()
    store = StateStore()
    directory_log = store.log_path("dirlog", 0)
    directory_log.mkdir(parents=True)
    write_record(record("dirlog", good.pid, run_id="r2"))
    code, out = cli("logs", "dirlog")
    assert code == 1 and f"cannot read the log of 'dirlog': {directory_log}: not a regular file (a directory)" in out

    Path(store.log_path("good", 0)).unlink()  # deleted while it runs
    code, out = cli("logs", "good")
    assert code == 1 and f"the log of 'good' is gone: {store.log_path('good', 0)} was deleted" in out

    fifo_log = store.log_path("fifolog", 0)
    os.mkfifo(fifo_log)
    write_record(record("fifolog", good.pid, run_id="r3"))
    code, out = cli("logs", "fifolog", "-f")
    assert code == 1 and "not a regular file (a FIFO)" in out


def test_a_state_path_that_is_a_file(isolated_state: Path) -> None:
    state = Path(os.environ["ASCENDCTL_HOME"]) / "state"
    state.write_text("oops")
    for args in (("ps",), ("ps", "--json"), ("logs", "demo"), ("stop", "demo")):
        code, out = cli(*args)
        assert code == 1 and f"the state directory {state}" in out and "not a directory" in out, (args, out)


def test_an_unreadable_deployments_dir(monkeypatch: pytest.MonkeyPatch) -> None:
    StateStore().ensure()
    real_iterdir = Path.iterdir

    def refuse(self: Path) -> Iterator[Path]:
        if self.name == "deployments":  # as with mode 000 for another user (root ignores modes)
            raise PermissionError(13, "Permission denied", str(self))
        return real_iterdir(self)

    monkeypatch.setattr(Path, "iterdir", refuse)
    for args in (("ps",), ("logs", "demo"), ("stop", "demo")):
        code, out = cli(*args)
        assert code == 1 and "cannot read the state directory" in out and "Permission denied" in out


# ---------------------------------------------------------------------------------------------------------
# `stop` and stale records pointing at live processes it did not start


def test_stop_does_not_kill_an_unrelated_process_behind_a_stale_record() -> None:
    unrelated = sleeper()
    path = write_record(record("stale", unrelated.pid, supervisor_start=None))
    code, out = cli("stop", "stale")
    assert code == 1
    assert f"cannot verify that pid {unrelated.pid} is ours; it was left alone; remove {path} if the deployment" in out
    time.sleep(0.5)
    assert unrelated.poll() is None and pid_alive(unrelated.pid)
    assert path.exists()


def test_stop_does_not_kill_an_unrelated_group_behind_a_stale_engine_record() -> None:
    unrelated = sleeper(session=True)
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    start_time = process_start_time(unrelated.pid)
    assert start_time is not None
    path = write_record(
        record("stale", dead.pid, engine_pid=unrelated.pid, engine_pgid=unrelated.pid, engine_start=start_time + 5)
    )
    code, _, stdout = cli_out("ps", "--json")
    assert code == 0 and json.loads(stdout)[0]["status"] == "orphaned"
    code, out = cli("stop", "stale")
    assert code == 1 and f"cannot verify that pid {unrelated.pid} is ours" in out and str(path) in out
    time.sleep(0.5)
    assert unrelated.poll() is None and group_members(unrelated.pid) == [unrelated.pid]


def test_stop_of_a_recycled_pid_is_not_a_stop() -> None:
    unrelated = sleeper()
    start_time = process_start_time(unrelated.pid)
    assert start_time is not None
    write_record(record("stale", unrelated.pid, supervisor_start=start_time + 9))
    code, out = cli("stop", "stale")
    assert code == 1 and "no running deployment named 'stale'" in out
    time.sleep(0.5)
    assert unrelated.poll() is None


# ---------------------------------------------------------------------------------------------------------
# two `serve` of the same deployment at the same instant (the fake engine of tests/cli/test_serve_cli.py)


def write_profile(tmp_path: Path, port: int) -> Path:
    model = tmp_path / "model"
    model.mkdir(exist_ok=True)
    path = tmp_path / "racedemo.yaml"
    path.write_text(
        "apiVersion: ascendctl/v1\nkind: Profile\nmetadata:\n  name: racedemo\n"
        f"model:\n  source: {model}\n  served_name: tiny\ntarget:\n  backend: cpu\n"
        "engine:\n  graph:\n    mode: eager\n"
        f"server:\n  host: 127.0.0.1\n  port: {port}\n  shutdown_timeout: 5\n"
        "runtime:\n  ready_timeout: 60\n  env:\n    FAKE_VLLM_STEP: '0.3'\n"
    )
    return path


def _serve_both(argv: list[str]) -> list[tuple[int, str, str]]:
    procs = [
        start([sys.executable, "-m", "ascendctl", *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        for _ in range(2)
    ]
    out = []
    for proc in procs:
        stdout, stderr = proc.communicate(timeout=120)
        out.append((proc.returncode, stdout.decode(), stderr.decode()))
    return out


@pytest.mark.timeout(300)
def test_two_detached_serves_at_once_one_wins_the_other_says_already_running(
    fake_cpu_engine_env: Path, tmp_path: Path, free_port: int
) -> None:
    profile = write_profile(tmp_path, free_port)
    results = _serve_both(["serve", str(profile), "--detach"])
    assert sorted(code for code, _, _ in results) == [0, 1], results
    [(_, won, _)] = [r for r in results if r[0] == 0]
    [(_, lost_out, lost_err)] = [r for r in results if r[0] == 1]
    assert "ready in " in won
    lost = lost_out + lost_err
    assert "racedemo (node 0) is already running" in lost and "ascendctl stop racedemo" in lost
    # the winner's log is not the loser's failure: no tail, no diagnosis drawn from it
    assert "--- last" not in lost and "Application startup complete" not in lost
    assert "no known failure pattern" not in lost and "Traceback" not in lost
    [entry] = StateStore().find("racedemo")
    assert entry.supervisor_verified and entry.engine_verified
    assert runner.invoke(app, ["stop", "racedemo"]).exit_code == 0


@pytest.mark.timeout(300)
def test_two_foreground_serves_at_once_one_is_refused(
    fake_cpu_engine_env: Path, tmp_path: Path, free_port: int
) -> None:
    profile = write_profile(tmp_path, free_port)
    procs = [
        start(
            [sys.executable, "-m", "ascendctl", "serve", str(profile)], stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        for _ in range(2)
    ]
    deadline = time.monotonic() + 120
    while all(p.poll() is None for p in procs) and time.monotonic() < deadline:
        time.sleep(0.1)
    [loser] = [p for p in procs if p.poll() is not None]
    [winner] = [p for p in procs if p is not loser]
    stdout, stderr = loser.communicate(timeout=10)
    assert loser.returncode == 1, stdout + stderr
    assert b"racedemo (node 0) is already running" in stderr and b"Traceback" not in stdout + stderr
    winner.send_signal(signal.SIGTERM)  # our own foreground serve: drains and exits
    winner.communicate(timeout=60)
    assert winner.returncode in (0, 130)


# ---------------------------------------------------------------------------------------------------------
# `--facts FILE` goes through the bounded reader (its messages keep the `--facts PATH: ...` form)

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.timeout(60)
def test_hostile_facts_files_are_one_line_errors(tmp_path: Path) -> None:
    profile = str(REPO / "profiles" / "cpu-demo.yaml")
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)  # open() for reading would block `plan` for ever
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    nan = tmp_path / "nan.json"
    nan.write_text('{"backend": "cpu", "cpu": {"cores": NaN}}')
    for path, why in ((fifo, "not a regular file (a FIFO)"), (deep, "nested deeper than 64 levels"), (nan, "NaN")):
        code, out = cli("plan", profile, "--facts", str(path))
        assert code == 2 and f"--facts {path}: " in out and why in out, out
