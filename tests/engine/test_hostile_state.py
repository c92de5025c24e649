"""Hostile input and hostile state for the engine library: the one bounded JSON reader, state records read as
untrusted data, the per-deployment lock, `stop` signalling only verified processes, and no engine process left
running after its supervisor is SIGKILLed. Every process signalled here was started by the test itself."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest

from ascendctl_engine.jsonio import MAX_DEPTH, JsonReadError, loads_json, read_json_file
from ascendctl_engine.state import (
    RUN_ID_ENV,
    AlreadyRunning,
    RecordUnreadable,
    StateError,
    StateStore,
    carries_run_id,
    group_members,
    pid_alive,
    process_start_time,
)
from ascendctl_engine.supervisor import stop_deployment
from tests.state_records import STARTED as _STARTED
from tests.state_records import dead_pid, record, wait_for_run_id

# ---------------------------------------------------------------------------------------------------------
# helpers


def start(argv: list[str], **kw: object) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen(argv, **kw)  # type: ignore[call-overload]
    _STARTED.append(proc)
    return proc  # type: ignore[no-any-return]


def write_raw(store: StateStore, file_name: str, data: bytes | str) -> Path:
    store.ensure()
    path = store.deployments_dir / file_name
    if isinstance(data, str):
        path.write_text(data)
    else:
        path.write_bytes(data)
    return path


def in_thread(fn: object, timeout: float = 10.0) -> object:
    """Run `fn()` in a thread: a call that would block (a FIFO opened for reading) fails the test instead."""
    box: list[object] = []
    thread = threading.Thread(target=lambda: box.append(_call(fn)), daemon=True)
    thread.start()
    thread.join(timeout)
    assert not thread.is_alive(), "the call blocked"
    return box[0]


def _call(fn: object) -> object:
    try:
        return fn()  # type: ignore[operator]
    except Exception as exc:  # returned so the test can inspect it
        return exc


# ---------------------------------------------------------------------------------------------------------
# 1. the bounded JSON reader


def test_reader_refuses_a_fifo_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "facts.json"
    os.mkfifo(fifo)  # no writer: a plain open() for reading would block for ever
    result = in_thread(lambda: read_json_file(fifo))
    assert isinstance(result, JsonReadError) and "not a regular file (a FIFO)" in str(result)
    link = tmp_path / "link.json"
    link.symlink_to(fifo)
    result = in_thread(lambda: read_json_file(link))
    assert isinstance(result, JsonReadError) and "a FIFO" in result.reason


def test_reader_refuses_devices_directories_and_missing_files(tmp_path: Path) -> None:
    with pytest.raises(JsonReadError, match="a device"):
        read_json_file("/dev/zero")  # would never end
    with pytest.raises(JsonReadError, match="a directory"):
        read_json_file(tmp_path)
    with pytest.raises(JsonReadError) as missing:
        read_json_file(tmp_path / "absent.json")
    assert missing.value.missing and missing.value.path == str(tmp_path / "absent.json")


def test_reader_caps_the_size(tmp_path: Path) -> None:
    big = tmp_path / "big.json"
    big.write_text('["' + "x" * 2000 + '"]')
    with pytest.raises(JsonReadError, match="larger than 1 KiB"):
        read_json_file(big, max_bytes=1024)
    assert read_json_file(big, max_bytes=4096) == ["x" * 2000]


def test_reader_decodes_utf8_with_a_bom_and_refuses_other_bytes(tmp_path: Path) -> None:
    path = tmp_path / "bom.json"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps({"k": "v\u00e9"}).encode())
    assert read_json_file(path) == {"k": "v\u00e9"}
    path.write_bytes(b'{"k": "\xff\xfe"}')
    with pytest.raises(JsonReadError, match="not UTF-8"):
        read_json_file(path)
    with pytest.raises(JsonReadError, match="not valid UTF-8"):
        loads_json('{"k": "\udcff"}')  # a str holding a raw surrogate (e.g. from surrogateescape)


def test_reader_refuses_lone_surrogates_but_keeps_pairs() -> None:
    with pytest.raises(JsonReadError, match="lone UTF-16 surrogate"):
        loads_json(b'{"k": "\\ud800"}')
    with pytest.raises(JsonReadError, match="lone UTF-16 surrogate"):
        loads_json(b'["ok", {"\\udfff": 1}]')  # in a key, too
    assert loads_json(b'"\\ud83d\\ude00"') == "\U0001f600"
    assert loads_json(b'"\\\\ud800"') == "\\ud800"  # an escaped backslash, not a surrogate


def test_reader_bounds_nesting_without_a_recursion_error() -> None:
    fine = "[" * MAX_DEPTH + "]" * MAX_DEPTH
    assert loads_json(fine) is not None
    for depth in (MAX_DEPTH + 1, 5000, 200_000):
        with pytest.raises(JsonReadError, match=f"nested deeper than {MAX_DEPTH} levels"):
            loads_json("[" * depth + "]" * depth)
    with pytest.raises(JsonReadError, match="nested deeper"):
        loads_json('{"a":' * 3000 + "1" + "}" * 3000)
    # brackets inside strings are text, not depth; a syntax error is reported as one
    assert loads_json(json.dumps({"s": "[" * 500})) == {"s": "[" * 500}
    with pytest.raises(JsonReadError, match="not valid JSON"):
        loads_json("[" * 100 + "}")


def test_reader_refuses_non_finite_numbers() -> None:
    for text in ("NaN", "[Infinity]", '{"x": -Infinity}', "1e999", "[-1e400]"):
        with pytest.raises(JsonReadError, match="not valid JSON"):
            loads_json(text)
    assert loads_json("[1.5, 2, -0.0]") == [1.5, 2, -0.0]


def test_reader_reports_syntax_errors_with_their_position(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    path.write_text('{"a": 1,\n  oops}')
    with pytest.raises(JsonReadError) as caught:
        read_json_file(path)
    assert caught.value.path == str(path)
    assert caught.value.reason.startswith("not valid JSON: ") and "line 2" in caught.value.reason
    assert isinstance(caught.value, ValueError)  # callers catching ValueError keep working


# ---------------------------------------------------------------------------------------------------------
# 2. state records are validated; a bad one is skipped with one warning, never deleted, never fatal


BAD_RECORDS: dict[str, bytes] = {
    "truncated": b'{"name": "truncated", "node": 0, "role": "he',
    "garbage": b"\x00\xff\xfe garbage",
    "empty": b"",
    "list": b"[]",
    "deep": b"[" * 100_000 + b"]" * 100_000,
    "pgid-text": b"",  # filled in below: a whole record with "engine_pgid": "x"
    "bool-node": b"",
    "negative-pid": b"",
    "escape-status": b"",
    "nan-start": b"",
    "wrong-name": b"",
}


def _hostile_record(name: str, **changes: object) -> bytes:
    data = json.loads(record(name, pid=dead_pid()).to_json())
    data.update(changes)
    return json.dumps(data).encode()


def hostile_store(tmp_path: Path) -> tuple[StateStore, list[str], dict[str, Path]]:
    warnings: list[str] = []
    store = StateStore(tmp_path / "state", warn=warnings.append)
    store.claim(record("good"))  # a live deployment (this process) that must stay visible
    records = dict(BAD_RECORDS)
    records["pgid-text"] = _hostile_record("pgid-text", engine_pgid="x")
    records["bool-node"] = _hostile_record("bool-node", node=True)
    records["negative-pid"] = _hostile_record("negative-pid", supervisor_pid=-5)
    records["escape-status"] = _hostile_record("escape-status", status="\x1b[2J\x1b]0;owned\x07")
    records["nan-start"] = _hostile_record("nan-start").replace(b'"started_at": ', b'"started_at": NaN, "x": ')
    records["wrong-name"] = _hostile_record("someone-else")
    paths = {name: write_raw(store, f"{name}.node0.json", data) for name, data in records.items()}
    fifo = store.deployments_dir / "fifo.node0.json"
    os.mkfifo(fifo)
    paths["fifo"] = fifo
    (store.deployments_dir / "dir.node0.json").mkdir()
    paths["dir"] = store.deployments_dir / "dir.node0.json"
    (store.deployments_dir / "zero.node0.json").symlink_to("/dev/zero")
    paths["zero"] = store.deployments_dir / "zero.node0.json"
    return store, warnings, paths


def test_bad_records_are_skipped_with_one_warning_each_and_kept(tmp_path: Path) -> None:
    store, warnings, paths = hostile_store(tmp_path)
    listed = in_thread(store.entries)
    assert isinstance(listed, list), listed
    assert [e.state.name for e in listed] == ["good"]  # the others still work
    assert set(store.bad_records) == set(paths.values())
    assert len(warnings) == len(paths)
    for path in paths.values():
        [line] = [w for w in warnings if str(path) in w]
        assert "\n" not in line and line.startswith("warning: skipped the deployment record ")
        assert f"rm {path}" in line  # how to clear it
        assert path.exists() or path.is_symlink()  # nothing deleted: it may be a running engine's only trace
    reasons = {p.name.split(".")[0]: e.reason for p, e in store.bad_records.items()}
    assert "'engine_pgid' must be an integer, not a string" in reasons["pgid-text"]
    assert "'node' must be an integer, not a boolean" in reasons["bool-node"]
    assert "'supervisor_pid' is out of range" in reasons["negative-pid"]
    assert "control characters" in reasons["escape-status"]
    assert "not valid JSON" in reasons["nan-start"] and "NaN" in reasons["nan-start"]
    assert "nested deeper than" in reasons["deep"]
    assert "not valid JSON" in reasons["truncated"]
    assert "not a JSON object" in reasons["list"]
    assert "a FIFO" in reasons["fifo"] and "a directory" in reasons["dir"] and "a device" in reasons["zero"]
    assert "describes someone-else.node0, not wrong-name.node0" in reasons["wrong-name"]
    # a second listing by the same store does not repeat the warnings
    store.entries()
    assert len(warnings) == len(paths)


def test_get_of_a_bad_record_is_none_with_a_warning(tmp_path: Path) -> None:
    warnings: list[str] = []
    store = StateStore(tmp_path, warn=warnings.append)
    write_raw(store, "demo.node0.json", _hostile_record("demo", engine_pgid="x"))
    assert store.get("demo", 0) is None
    assert len(warnings) == 1 and "engine_pgid" in warnings[0]


def test_a_bad_record_blocks_a_new_claim_with_how_to_clear_it(tmp_path: Path) -> None:
    store = StateStore(tmp_path, warn=lambda _: None)
    path = write_raw(store, "demo.node0.json", b'{"name": "demo", "no')
    with pytest.raises(RecordUnreadable) as caught:
        store.claim(record())
    assert f"its record {path} is unusable" in str(caught.value) and f"rm {path}" in str(caught.value)
    assert path.read_bytes() == b'{"name": "demo", "no'  # not overwritten
    path.unlink()
    store.claim(record())  # and the lock was let go
    assert store.get("demo", 0) is not None


def test_state_dir_that_is_a_file_or_unwritable_is_a_state_error(tmp_path: Path) -> None:
    (tmp_path / "state").write_text("not a directory")
    store = StateStore(tmp_path / "state")
    with pytest.raises(StateError, match="is a file, not a directory"):
        store.ensure()
    with pytest.raises(StateError, match="not a directory"):
        store.entries()
    with pytest.raises(StateError):
        store.claim(record())
    blocked = StateStore(tmp_path / "ok")
    blocked.ensure()
    (tmp_path / "ok" / "deployments").rmdir()
    (tmp_path / "ok" / "deployments").write_text("")
    with pytest.raises(StateError, match="not a directory"):
        blocked.entries()


def test_unwritable_state_dir_is_a_state_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(self: Path, *args: object, **kw: object) -> None:
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr(Path, "mkdir", refuse)  # as when the parent is read-only (root ignores modes)
    with pytest.raises(StateError, match=r"cannot use the state directory .*: Permission denied"):
        StateStore(tmp_path / "state").ensure()


def test_a_failing_state_dir_is_a_launch_error_for_the_supervisor(tmp_path: Path) -> None:
    from ascendctl_engine.launcher import LaunchError
    from ascendctl_engine.spec import EngineCommand, Listen, RestartPolicy, Supervision
    from ascendctl_engine.supervisor import Supervisor

    (tmp_path / "state").write_text("")
    cmd = EngineCommand(
        node=0,
        role="head",
        argv=("vllm", "serve", "m"),
        listen=Listen("127.0.0.1", 1),
        supervision=Supervision(5.0, 1.0, RestartPolicy("never", 0, 1.0, 1.0)),
    )
    sup = Supervisor(
        cmd, "/bin/false", name="demo", store=StateStore(tmp_path / "state"), install_signal_handlers=False
    )
    with pytest.raises(LaunchError, match="is a file, not a directory"):
        sup.run()


# ---------------------------------------------------------------------------------------------------------
# 4. one supervisor per deployment and node: the lock


CLAIMER = r"""
import os, sys, time
from pathlib import Path
from ascendctl_engine.state import AlreadyRunning, DeploymentState, StateStore, process_start_time
root, go, hold, drop = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), sys.argv[4] == "drop"
state = DeploymentState(
    name="demo", node=0, role="head", run_id=f"run-{os.getpid()}", supervisor_pid=os.getpid(),
    supervisor_start=process_start_time(os.getpid()), started_at=time.time(), log_path="/tmp/x.log",
    endpoint=None, health_url=None, shutdown_timeout=1.0,
)
store = StateStore(Path(root))
time.sleep(max(0.0, go - time.time()))
try:
    store.claim(state)
except AlreadyRunning as exc:
    print("refused:", exc, flush=True)
    sys.exit(1)
if drop:
    store.path_for("demo", 0).unlink()  # the record is gone, the lock is still held
print("claimed", flush=True)
time.sleep(hold)
"""


def claimer(root: Path, *, go: float = 0.0, hold: float = 30.0, drop: bool = False) -> subprocess.Popen[bytes]:
    argv = [sys.executable, "-c", CLAIMER, str(root), str(go), str(hold), "drop" if drop else "keep"]
    return start(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)


def test_the_lock_refuses_a_second_claim_even_without_a_record(tmp_path: Path) -> None:
    holder = claimer(tmp_path, drop=True)
    assert holder.stdout is not None and holder.stdout.readline() == b"claimed\n"
    store = StateStore(tmp_path)
    assert store.get("demo", 0) is None  # nothing on disk says it runs: only the lock does
    started = time.monotonic()
    with pytest.raises(AlreadyRunning, match=r"demo \(node 0\) is already running"):
        store.claim(record(run_id="second"))
    assert time.monotonic() - started < 10
    assert store.get("demo", 0) is None  # the loser wrote nothing


def test_the_lock_goes_with_a_killed_holder(tmp_path: Path) -> None:
    holder = claimer(tmp_path)
    assert holder.stdout is not None and holder.stdout.readline() == b"claimed\n"
    with pytest.raises(AlreadyRunning):
        StateStore(tmp_path).claim(record(run_id="second"))
    holder.kill()  # SIGKILL: no cleanup ran; the kernel released the flock
    holder.wait(10)
    store = StateStore(tmp_path)
    store.claim(record(run_id="third"))  # its record was stale (pid gone): replaced
    assert store.get("demo", 0).run_id == "third"  # type: ignore[union-attr]
    store.remove(store.get("demo", 0))  # type: ignore[arg-type]


def test_concurrent_claims_have_exactly_one_winner(tmp_path: Path) -> None:
    go = time.time() + 1.5  # every claimer is started and waiting before this instant
    claimers = [claimer(tmp_path, go=go, hold=3.0) for _ in range(6)]
    outputs = [c.communicate(timeout=60)[0].decode() for c in claimers]
    winners = [o for o in outputs if o.startswith("claimed")]
    assert len(winners) == 1, outputs
    assert all("is already running" in o for o in outputs if not o.startswith("claimed"))


# ---------------------------------------------------------------------------------------------------------
# 3. `stop` signals only what it can verify (real, unrelated processes as the "stale" targets)


def sleeper(*, session: bool = False, env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
    return start(["sleep", "30"], start_new_session=session, env=env)


def listed_entry(store: StateStore, name: str = "demo") -> object:
    [entry] = store.find(name)
    return entry


def test_stop_leaves_a_live_pid_without_a_start_time_alone(tmp_path: Path) -> None:
    unrelated = sleeper()
    store = StateStore(tmp_path)
    store.claim(record(pid=unrelated.pid, supervisor_start=None))
    report = stop_deployment(listed_entry(store), timeout=2)  # type: ignore[arg-type]
    assert report.how == "unverified"
    assert f"cannot verify that pid {unrelated.pid} is ours; it was left alone" in report.message
    assert f"remove {store.path_for('demo', 0)} if the deployment is gone" in report.message
    time.sleep(0.3)
    assert unrelated.poll() is None and pid_alive(unrelated.pid)


def test_stop_never_signals_a_recycled_supervisor_pid(tmp_path: Path) -> None:
    unrelated = sleeper()
    start_time = process_start_time(unrelated.pid)
    assert start_time is not None
    store = StateStore(tmp_path)
    store.claim(record(pid=unrelated.pid, supervisor_start=start_time + 7))  # another process had that pid
    assert store.find("demo") == []  # not ours: the record is stale (and cleaned)
    time.sleep(0.3)
    assert unrelated.poll() is None


@pytest.mark.parametrize("engine_start", ["missing", "other"])
def test_stop_leaves_an_unverified_engine_group_alone(tmp_path: Path, engine_start: str) -> None:
    unrelated = sleeper(session=True)  # a group leader of its own, as an engine would be
    real = process_start_time(unrelated.pid)
    assert real is not None
    recorded = None if engine_start == "missing" else real + 3
    store = StateStore(tmp_path)
    store.claim(record(pid=dead_pid(), engine_pid=unrelated.pid, engine_pgid=unrelated.pid, engine_start=recorded))
    entry = listed_entry(store)
    report = stop_deployment(entry, timeout=2)  # type: ignore[arg-type]
    assert report.how == "unverified" and f"pid {unrelated.pid} is ours" in report.message
    time.sleep(0.3)
    assert unrelated.poll() is None and group_members(unrelated.pid) == [unrelated.pid]


def test_stop_ends_a_verified_orphaned_engine(tmp_path: Path) -> None:
    run_id = uuid.uuid4().hex
    engine = sleeper(session=True, env={**os.environ, RUN_ID_ENV: run_id})  # as the launcher starts an engine
    assert wait_for_run_id(engine.pid, run_id)
    store = StateStore(tmp_path)
    start_time = process_start_time(engine.pid)
    store.claim(
        record(pid=dead_pid(), run_id=run_id, engine_pid=engine.pid, engine_pgid=engine.pid, engine_start=start_time)
    )
    report = stop_deployment(listed_entry(store), timeout=5)  # type: ignore[arg-type]
    assert report.how == "orphan"
    assert engine.wait(10) == -signal.SIGTERM


@pytest.mark.parametrize("marker", ["none", "another run"])
def test_stop_leaves_an_engine_of_another_run_alone(tmp_path: Path, marker: str) -> None:
    """Pid, start time and group are all right, as anyone can read them from /proc: without this run's id in
    its environment the process was not started for this record, and is not signalled."""
    env = {k: v for k, v in os.environ.items() if k != RUN_ID_ENV}
    if marker == "another run":
        env[RUN_ID_ENV] = uuid.uuid4().hex
    engine = sleeper(session=True, env=env)
    store = StateStore(tmp_path)
    start_time = process_start_time(engine.pid)
    store.claim(record(pid=dead_pid(), engine_pid=engine.pid, engine_pgid=engine.pid, engine_start=start_time))
    report = stop_deployment(listed_entry(store), timeout=2)  # type: ignore[arg-type]
    assert report.how == "unverified" and f"cannot verify that pid {engine.pid} is ours" in report.message
    time.sleep(0.3)
    assert engine.poll() is None and group_members(engine.pid) == [engine.pid]


def test_stop_leaves_a_supervisor_with_the_right_start_time_but_not_the_lock_alone(tmp_path: Path) -> None:
    """The forged record of the bug report: an unrelated process's pid and its real start time."""
    unrelated = sleeper(session=True)
    start_time = process_start_time(unrelated.pid)
    store = StateStore(tmp_path)
    store.claim(record(pid=unrelated.pid, engine_pid=unrelated.pid, engine_pgid=unrelated.pid, engine_start=start_time))
    entry = listed_entry(store)
    assert not entry.supervisor_verified and not entry.engine_verified  # type: ignore[attr-defined]
    report = stop_deployment(entry, timeout=2)  # type: ignore[arg-type]
    assert report.how == "unverified" and f"cannot verify that pid {unrelated.pid} is ours" in report.message
    time.sleep(0.3)
    assert unrelated.poll() is None


HOLDER = "import os, sys, time; fd = os.open(sys.argv[1], os.O_RDONLY); print('open', flush=True); time.sleep(60)"


def test_stop_signals_a_supervisor_that_holds_the_deployment_lock(tmp_path: Path) -> None:
    store = StateStore(tmp_path)
    store.ensure()
    lock = store.lock_path("demo", 0)
    lock.touch()
    holder = start([sys.executable, "-c", HOLDER, str(lock)], stdout=subprocess.PIPE)
    assert holder.stdout is not None and holder.stdout.readline() == b"open\n"
    store.claim(record(pid=holder.pid))
    entry = listed_entry(store)
    assert entry.supervisor_verified  # type: ignore[attr-defined]
    report = stop_deployment(entry, timeout=5)  # type: ignore[arg-type]
    assert report.how == "drained"
    assert holder.wait(10) == -signal.SIGTERM


# ---------------------------------------------------------------------------------------------------------
# 5. a supervisor killed with SIGKILL leaves nothing of its engine running (fake engine, with a child)


DRIVER = r"""
import sys
from pathlib import Path
from ascendctl_engine.spec import EngineCommand, Listen, RestartPolicy, Supervision
from ascendctl_engine.state import StateStore
from ascendctl_engine.supervisor import Supervisor
fake, root, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
argv = ("vllm", "serve", "/models/tiny", "--host", "127.0.0.1", "--port", str(port))
cmd = EngineCommand(
    node=0, role="head", argv=argv, listen=Listen("127.0.0.1", port),
    supervision=Supervision(30.0, 5.0, RestartPolicy("never", 0, 1.0, 1.0)),
)
sys.exit(Supervisor(cmd, fake, name="demo", store=StateStore(Path(root))).run().exit_code)
"""


def test_sigkilled_supervisor_takes_its_engine_group_with_it(fake_vllm: Path, free_port: int, tmp_path: Path) -> None:
    pidfile = tmp_path / "pids"
    env = {**os.environ, "FAKE_VLLM_CHILD": "stubborn", "FAKE_VLLM_PIDFILE": str(pidfile)}
    root = tmp_path / "state"
    supervisor = start([sys.executable, "-c", DRIVER, str(fake_vllm), str(root), str(free_port)], env=env)
    store = StateStore(root)
    deadline = time.monotonic() + 60
    state = None
    while time.monotonic() < deadline:
        state = store.get("demo", 0)
        if state is not None and state.status == "ready":
            break
        assert supervisor.poll() is None, "the supervisor ended"
        time.sleep(0.05)
    assert state is not None and state.status == "ready"
    assert state.engine_pgid is not None and state.engine_start == process_start_time(state.engine_pgid)
    assert carries_run_id(state.engine_pgid, state.run_id)  # what `stop` checks before it signals the group
    leader, child = (int(x) for x in pidfile.read_text().split())
    assert leader == state.engine_pgid and set(group_members(leader)) == {leader, child}

    supervisor.send_signal(signal.SIGKILL)  # no handler, no cleanup, no finally
    supervisor.wait(10)
    deadline = time.monotonic() + 15
    while group_members(leader) and time.monotonic() < deadline:
        time.sleep(0.1)
    left = group_members(leader)
    if left:  # clean up what the test started before failing
        os.killpg(leader, signal.SIGKILL)
    assert left == [], f"left running without a supervisor: {left}"
    assert not pid_alive(child)  # the stubborn child, which ignores SIGTERM, went too


def test_a_normal_stop_stands_the_watchdog_down(fake_vllm: Path, free_port: int, tmp_path: Path) -> None:
    from ascendctl_engine.launcher import LogSink, launch
    from ascendctl_engine.spec import EngineCommand, Listen

    cmd = EngineCommand(
        node=0,
        role="head",
        argv=("vllm", "serve", "/m", "--host", "127.0.0.1", "--port", str(free_port)),
        listen=Listen("127.0.0.1", free_port),
    )
    sink = LogSink(tmp_path / "log")
    proc = launch(cmd, fake_vllm, sink, environ=dict(os.environ))
    try:
        assert proc.start_time == process_start_time(proc.pid)
        assert proc.watchdog is not None and proc.watchdog.popen is not None
        watchdog = proc.watchdog.popen
        assert watchdog.poll() is None
        assert proc.pid not in group_members(watchdog.pid) and watchdog.pid not in group_members(proc.pgid)
        proc.popen.send_signal(signal.SIGTERM)
        proc.wait(10)
        proc.release()
        assert watchdog.returncode == 0  # stood down and reaped
    finally:
        if proc.poll() is None:
            proc.signal_group(signal.SIGKILL)
            proc.wait(5)
        proc.join_reader()
        sink.close()


def test_a_missing_executable_is_still_a_launch_error(tmp_path: Path) -> None:
    from ascendctl_engine.launcher import LaunchError, LogSink, launch
    from ascendctl_engine.spec import EngineCommand

    sink = LogSink(tmp_path / "log")
    with pytest.raises(LaunchError, match=r"cannot start .*: No such file or directory"):
        launch(EngineCommand(node=0, role="head", argv=("vllm", "serve")), tmp_path / "absent", sink)
    sink.close()


# ---------------------------------------------------------------------------------------------------------
# 1b. every JSON reader goes through it: deep nesting, NaN and FIFOs reach none of them raw


DEEP = "[" * 50_000 + "]" * 50_000  # json.loads raises RecursionError on it


def test_model_config_json_is_read_by_the_bounded_reader(tmp_path: Path) -> None:
    from ascendctl.facts.model_inspect import read_model_config

    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text(json.dumps({"model_type": "qwen2", "num_attention_heads": 8}))
    assert read_model_config(str(model)) is not None
    for text in (DEEP, '{"model_type": "qwen2", "num_attention_heads": NaN}'):
        (model / "config.json").write_text(text)
        assert read_model_config(str(model)) is None  # unreadable: planned without it, never a crash
    (model / "config.json").unlink()
    os.mkfifo(model / "config.json")
    assert in_thread(lambda: read_model_config(str(model))) is None


def test_engine_manifests_and_model_records_are_read_by_the_bounded_reader(tmp_path: Path) -> None:
    from ascendctl_engine import envs, prepared_models

    env_dir = tmp_path / "engines" / "cpu-0.32.0"
    (env_dir / "bin").mkdir(parents=True)
    (env_dir / "bin" / "python").symlink_to(sys.executable)
    (env_dir / "manifest.json").write_text(json.dumps({"backend": "cpu", "release": "0.32.0"}))
    assert envs.load_engine("cpu-0.32.0", root=tmp_path) is not None
    (env_dir / "manifest.json").write_text(DEEP)
    assert envs.load_engine("cpu-0.32.0", root=tmp_path) is None  # incomplete, not a RecursionError
    (env_dir / "manifest.json").unlink()
    os.mkfifo(env_dir / "manifest.json")
    assert in_thread(lambda: envs.load_engine("cpu-0.32.0", root=tmp_path)) is None

    (tmp_path / "models" / "tiny").mkdir(parents=True)
    (tmp_path / "models" / "tiny.json").write_text(DEEP)
    assert prepared_models._read_record("tiny", tmp_path) is None


def test_probe_reports_are_read_by_the_bounded_reader() -> None:
    from ascendctl_engine.host.pyenv import parse_probe_output

    assert parse_probe_output('noise\nASCENDCTL-PROBE {"packages": {}}\n') == {"packages": {}}
    for report in (DEEP, '{"python": NaN}', '{"k": "\\ud800"}'):
        with pytest.raises(ValueError):  # becomes PythonEnv.error, never a RecursionError
            parse_probe_output(f"ASCENDCTL-PROBE {report}\n")


def test_a_fifo_in_a_captured_host_tree_is_not_read(tmp_path: Path) -> None:
    from ascendctl_engine.host.probe import LocalHostProbe

    (tmp_path / "proc").mkdir()
    os.mkfifo(tmp_path / "proc" / "cpuinfo")  # `check --root` of a hostile tree: open() would block
    (tmp_path / "proc" / "meminfo").write_text("MemTotal: 1 kB\n")
    probe = LocalHostProbe(tmp_path, environ={})
    assert in_thread(lambda: probe.read_text("/proc/cpuinfo")) is None
    assert probe.read_text("/proc/meminfo") == "MemTotal: 1 kB\n"
