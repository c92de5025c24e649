"""End to end with the real vLLM CPU engine: a supervisor killed with SIGKILL leaves no engine process behind.

vLLM's API server starts its engine-core (and, with more ranks, worker) processes as its own children in the
same process group; none of them is told when ascendctl's supervisor dies. One start of the tiny model
(`serve --detach`), one SIGKILL of the supervisor (no handler runs, no `finally`), then every process of the
engine's group must be gone within 30 s: the leader by its parent-death signal, the rest by the watchdog.
The engine environment and the prepared model come from the session fixtures of tests/conftest.py (skipped
with ASCENDCTL_E2E_NO_INSTALL=1 when absent); the state lives in a temporary ASCENDCTL_HOME.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_sigkilled_supervisor_leaves_no_engine_process(
    tmp_path_factory: pytest.TempPathFactory, engine_data_dir: Path, cpu_engine: object, tiny_model: Path
) -> None:
    from ascendctl_engine.state import StateStore, group_members, leader_verified, verified

    home = tmp_path_factory.mktemp("kill-home")
    (home / "engines").symlink_to(engine_data_dir / "engines")
    (home / "models").symlink_to(engine_data_dir / "models")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("XDG_", "VLLM_"))}
    env["ASCENDCTL_HOME"] = str(home)
    port = free_port()
    profile = home / "e2e-kill.yaml"
    profile.write_text(
        "apiVersion: ascendctl/v1\nkind: Profile\nmetadata:\n  name: e2e-kill\n"
        "model:\n  source: prepared:tiny-random\n  served_name: tiny\n  max_model_len: 512\n"
        "target:\n  backend: cpu\nengine:\n  graph:\n    mode: eager\n  memory:\n    cpu_kv_cache_gib: 1\n"
        f"server:\n  host: 127.0.0.1\n  port: {port}\n  shutdown_timeout: 5\nruntime:\n  ready_timeout: 300\n"
    )
    started = subprocess.run(
        [sys.executable, "-m", "ascendctl", "serve", str(profile), "--detach"],
        env=env,
        capture_output=True,
        text=True,
        timeout=420,
        check=False,
    )
    assert started.returncode == 0, started.stdout + started.stderr

    [entry] = StateStore(home / "state").find("e2e-kill")
    state = entry.state
    pgid = state.engine_pgid
    assert pgid is not None and verified(state.supervisor_pid, state.supervisor_start)
    assert leader_verified(pgid, state.engine_start)
    members = group_members(pgid)
    assert len(members) >= 2, members  # the API server and its engine core, at least

    os.kill(state.supervisor_pid, signal.SIGKILL)  # the supervisor `serve --detach` started, verified above
    deadline = time.monotonic() + 30
    while group_members(pgid) and time.monotonic() < deadline:
        time.sleep(0.2)
    left = group_members(pgid)
    if left and leader_verified(pgid, state.engine_start):
        os.killpg(pgid, signal.SIGKILL)  # do not leave the test's own engine behind, then fail
    elif left:
        for pid in left:  # leader gone: the members are what is left of the group this test started
            os.kill(pid, signal.SIGKILL)
    assert left == [], f"engine processes left running without a supervisor: {left}"
