"""`ascendctl serve` of a prefill/decode profile with fakes at the process edge: the fake `vllm` for both
instances and a fake `vllm-router` (the same fake server behind the router's argv) in the fake CPU engine
environment. Real processes, supervisors, state records and signals; the real router and KV transfer are the
e2e tests' (tests/e2e/test_serve_e2e.py, tests/e2e/test_pd_router_protocol.py)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from ascendctl_engine.state import StateStore
from tests.conftest import FAKE_VLLM_SCRIPT, pick_free_port


def fake_router(bin_dir: Path) -> None:
    """`vllm-router ... --host H --port P ...` served by the fake engine (it answers /health like the router)."""
    exe = bin_dir / "vllm-router"
    exe.write_text(
        f"#!{sys.executable}\nimport runpy, sys\n"
        "argv = sys.argv[1:]\n"
        "sys.argv = ['vllm', 'serve', 'router', '--host', argv[argv.index('--host') + 1], '--port', "
        "argv[argv.index('--port') + 1]]\n"
        f"runpy.run_path({str(FAKE_VLLM_SCRIPT)!r}, run_name='__main__')\n"
    )
    exe.chmod(0o755)


def pd_profile(tmp_path: Path) -> Path:
    model = tmp_path / "model"
    model.mkdir()
    path = tmp_path / "pd.yaml"
    ports = [pick_free_port() for _ in range(3)]
    path.write_text(
        f"""apiVersion: ascendctl/v1
kind: Profile
metadata:
  name: fakepd
model:
  source: {model}
  served_name: tiny
target:
  backend: cpu
  devices_per_node: 2
engine:
  graph:
    mode: eager
server:
  host: 127.0.0.1
  port: {ports[0]}
  shutdown_timeout: 5
runtime:
  ready_timeout: 30
disaggregation:
  connector: shared-storage
  shared_storage_path: {tmp_path / "kv"}
  prefill: {{devices: 1, port: {ports[1]}}}
  decode: {{devices: 1, port: {ports[2]}}}
"""
    )
    return path


def wait_ready(name: str, count: int, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = StateStore().find(name)
        if len(found) == count and all(e.state.status == "ready" for e in found):
            return
        time.sleep(0.05)
    raise AssertionError(f"{name}: not {count} ready processes within {timeout}s")


@contextlib.contextmanager
def serving(engine_env: Path, tmp_path: Path) -> Iterator[subprocess.Popen[str]]:
    """A foreground `serve` of the PD profile, once its three processes are ready; killed if a test leaves it."""
    fake_router(engine_env / "bin")
    cli = [sys.executable, "-m", "ascendctl", "serve", str(pd_profile(tmp_path))]
    proc = subprocess.Popen(cli, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        wait_ready("fakepd", 3)
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(30)


def test_foreground_serve_starts_instances_then_router_and_sigterm_stops_router_first(
    fake_cpu_engine_env: Path, tmp_path: Path
) -> None:
    with serving(fake_cpu_engine_env, tmp_path) as proc:
        rows = {e.state.instance: e.state.instance_role for e in StateStore().find("fakepd")}
        assert rows == {"prefill-0": "prefill", "decode-0": "decode", "router": "router"}
        time.sleep(0.5)  # the foreground has printed "serving"
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 0, out
    lines = out.splitlines()
    assert out.index("prefill-0 (prefill) is ready") < out.index("starting fakepd router")
    assert out.index("decode-0 (decode) is ready") < out.index("starting fakepd router")
    assert "the router answers at http://127.0.0.1:" in out
    assert any(line.startswith("[fakepd/decode-0] ") for line in lines)  # the instances' logs follow, prefixed
    stops = [line.split(": ")[1] for line in lines if line.startswith("ascendctl: fakepd ") and "drained in" in line]
    assert stops == ["fakepd router (node 0)", "fakepd decode-0 (node 0)", "fakepd prefill-0 (node 0)"], out
    assert StateStore().entries() == []


def test_an_instance_that_dies_stops_the_rest_of_the_node(fake_cpu_engine_env: Path, tmp_path: Path) -> None:
    with serving(fake_cpu_engine_env, tmp_path) as proc:
        [decode] = [e for e in StateStore().find("fakepd") if e.state.instance == "decode-0"]
        assert decode.state.supervisor_pid != proc.pid
        os.kill(decode.state.supervisor_pid, signal.SIGTERM)  # its supervisor drains it and exits: gone
        out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 1, out
    assert "fakepd decode-0 (node 0) stopped on its own" in out
    assert StateStore().entries() == []
