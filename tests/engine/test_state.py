"""State records: private directory, 0600 files, atomic updates, stale cleanup, orphans, pid reuse."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ascendctl_engine.state import (
    AlreadyRunning,
    DeploymentState,
    StateStore,
    ensure_private_dir,
    group_members,
    pid_alive,
    process_start_time,
    state_dir,
    terminate_group,
)
from tests.state_records import dead_pid, record


def test_state_dir_rule() -> None:
    assert state_dir({"ASCENDCTL_HOME": "/h", "XDG_STATE_HOME": "/x", "HOME": "/u"}) == Path("/h/state")
    assert state_dir({"XDG_STATE_HOME": "/x", "HOME": "/u"}) == Path("/x/ascendctl")
    assert state_dir({"HOME": "/u"}) == Path("/u/.local/state/ascendctl")


def test_directories_are_private_even_if_they_existed(tmp_path: Path) -> None:
    loose = tmp_path / "state"
    loose.mkdir(mode=0o755)
    loose.chmod(0o755)
    ensure_private_dir(loose)
    assert stat.S_IMODE(loose.stat().st_mode) == 0o700
    store = StateStore(loose)
    store.claim(record())
    for directory in (store.root, store.deployments_dir, store.logs_dir):
        assert stat.S_IMODE(directory.stat().st_mode) == 0o700
    path = store.path_for("demo", 0)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    store.update(store.get("demo", 0) or record(), status="ready")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert store.get("demo", 0) is not None and store.get("demo", 0).status == "ready"  # type: ignore[union-attr]


def test_records_have_no_place_for_secrets(tmp_path: Path) -> None:
    fields = set(DeploymentState.__dataclass_fields__)
    assert not {f for f in fields if "key" in f or "secret" in f or "env" in f or "argv" in f}


def test_claim_refuses_a_live_duplicate_but_replaces_a_stale_one(tmp_path: Path) -> None:
    store = StateStore(tmp_path)
    store.claim(record())
    with pytest.raises(AlreadyRunning):
        store.claim(record(run_id="other"))
    store.path_for("demo", 0).unlink()
    store.claim(record(pid=dead_pid()))
    store.claim(record(run_id="fresh"))  # the dead one was stale: replaced
    assert store.get("demo", 0).run_id == "fresh"  # type: ignore[union-attr]


def test_stale_entries_are_cleaned_when_listed(tmp_path: Path) -> None:
    store = StateStore(tmp_path)
    store.claim(record("alive"))
    store.claim(record("dead", pid=dead_pid()))
    (store.deployments_dir / "garbage.node0.json").write_text("{not json")
    names = [e.state.name for e in store.entries()]
    assert names == ["alive"]
    assert sorted(p.name for p in store.deployments_dir.iterdir()) == [
        "alive.node0.json",
        "garbage.node0.json",
    ]  # a bad record is kept (and warned about)


def test_reused_pid_is_not_mistaken_for_the_supervisor(tmp_path: Path) -> None:
    store = StateStore(tmp_path)
    start = process_start_time(os.getpid())
    assert start is not None
    store.claim(record(supervisor_start=start + 1))  # same pid, another process start time
    assert store.entries() == []


def test_orphaned_engine_is_kept_and_reported(tmp_path: Path) -> None:
    engine = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], start_new_session=True)
    try:
        store = StateStore(tmp_path)
        store.claim(record(pid=dead_pid(), engine_pid=engine.pid, engine_pgid=engine.pid))
        [entry] = store.entries()
        assert entry.orphaned and not entry.supervisor_alive
        assert terminate_group(engine.pid, 5.0) == "terminated"
        engine.wait(5)
        assert store.entries() == []
    finally:
        engine.kill()
        engine.wait()


def test_remove_only_deletes_its_own_run(tmp_path: Path) -> None:
    store = StateStore(tmp_path)
    mine = record(run_id="mine")
    store.claim(mine)
    store.remove(record(run_id="someone-else"))
    assert store.get("demo", 0) is not None
    store.remove(mine)
    assert store.get("demo", 0) is None


def test_liveness_ignores_zombies() -> None:
    proc = subprocess.Popen([sys.executable, "-c", "pass"], start_new_session=True)
    deadline = time.monotonic() + 10
    while Path(f"/proc/{proc.pid}/stat").exists() and time.monotonic() < deadline:
        if Path(f"/proc/{proc.pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z":
            break
        time.sleep(0.02)
    assert not pid_alive(proc.pid)  # a zombie (not reaped yet) is not alive
    assert group_members(proc.pid) == []
    proc.wait()


def test_names_are_plain(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        StateStore(tmp_path).path_for("../etc", 0)
