"""Which deployment `ascendctl bench` measures: one recorded running here (a state record, a /health that answers,
an "engine" process whose command line ends with the planned argv), refused when it runs other settings or is
not healthy; one started here is stopped on the way out, also when the benchmark fails. Processes and HTTP are
local stand-ins; the real engine is in tests/e2e/test_serve_e2e.py."""

from __future__ import annotations

import http.server
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from ascendctl.core.errors import OperationFailed
from ascendctl.run.bench import deployment_for_bench
from ascendctl.run.bench import target as bench_target
from ascendctl.run.bench.target import plan_for_bench
from ascendctl.schema.loader import load_profile
from ascendctl_engine.state import DeploymentState, StateStore, process_start_time

REPO = Path(__file__).resolve().parents[1]
DEMO = REPO / "profiles" / "cpu-demo.yaml"
CLIENT = Path("/env/bin/vllm")  # never run here: only the target is built


class _Health(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200 if self.path == "/health" else 404)
        self.end_headers()

    def log_message(self, *_args: object) -> None:
        pass


@pytest.fixture
def health() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Health)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture
def engine() -> Iterator[subprocess.Popen[bytes]]:
    """A process whose command line ends with cpu-demo's planned `vllm serve` arguments (Python ignores them)."""
    plan = plan_for_bench(load_profile(DEMO))
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)", *plan.commands[0].argv[1:]])
    time.sleep(0.2)
    yield proc
    proc.kill()
    proc.wait()


def write_record(
    endpoint: str, engine_pid: int | None, name: str = "cpu-demo", instance: str | None = None, role: str | None = None
) -> None:
    store = StateStore()
    store.ensure()
    state = DeploymentState(
        name=name,
        node=0,
        role="head",
        run_id=f"run-bench-{instance}",
        supervisor_pid=os.getpid(),
        supervisor_start=process_start_time(os.getpid()),
        started_at=time.time(),
        log_path=str(store.log_path(name, 0, instance)),
        endpoint=endpoint,
        health_url=f"{endpoint}/health",
        shutdown_timeout=5.0,
        status="ready",
        engine_pid=engine_pid,
        instance=instance,
        instance_role=role,
    )
    store.path_for(name, 0, instance).write_text(state.to_json())


def test_the_recorded_deployment_is_measured(health: str, engine: subprocess.Popen[bytes]) -> None:
    write_record(health, engine.pid)
    with deployment_for_bench(DEMO, [], client=CLIENT) as (plan, target, started):
        assert (target.base_url, started) == (health, False)
        assert target.served_name == "smollm2" and target.client == CLIENT
        assert target.tokenizer == plan.deployment.model.resolved
        assert target.api_key_env == {}


def test_a_deployment_running_other_settings_is_refused(health: str, engine: subprocess.Popen[bytes]) -> None:
    write_record(health, engine.pid)
    with (
        pytest.raises(OperationFailed, match="running with other settings"),
        deployment_for_bench(DEMO, ["engine.scheduler.max_num_seqs=2"], client=CLIENT),
    ):
        pass


def test_an_unhealthy_deployment_is_refused() -> None:
    write_record("http://127.0.0.1:9", None)
    with pytest.raises(OperationFailed, match="not healthy"), deployment_for_bench(DEMO, [], client=CLIENT):
        pass


def test_url_skips_the_state_and_the_key_comes_from_its_source(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BENCH_KEY", "s3cret-value")
    overrides = ["server.api_key.env=BENCH_KEY"]
    with deployment_for_bench(DEMO, overrides, url="http://127.0.0.1:8123/v1", client=CLIENT) as (_, target, started):
        assert (target.base_url, started) == ("http://127.0.0.1:8123", False)
        assert target.api_key_env == {"OPENAI_API_KEY": "s3cret-value"}
    monkeypatch.delenv("BENCH_KEY")
    with (
        pytest.raises(OperationFailed, match="BENCH_KEY is not set"),
        deployment_for_bench(DEMO, overrides, url="http://127.0.0.1:8123", client=CLIENT),
    ):
        pass


def test_a_deployment_started_here_is_stopped_even_when_the_benchmark_fails(
    health: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    events: list[str] = []

    def start(*_args: object) -> None:
        events.append("start")
        write_record(health, None)

    def stop(name: str, _status: object) -> None:
        events.append(f"stop {name}")

    monkeypatch.setattr(bench_target, "_start", start)
    monkeypatch.setattr(bench_target, "_stop", stop)
    with pytest.raises(RuntimeError, match="boom"), deployment_for_bench(DEMO, [], client=CLIENT) as (_, t, started):
        assert started and t.base_url == health
        raise RuntimeError("boom")
    assert events == ["start", "stop cpu-demo"]


_SIGNALLED = """
import sys, time
from pathlib import Path
from ascendctl.run.bench import target as t

log, slow_start = Path(sys.argv[1]), sys.argv[2] == "slow-start"

def note(text):
    with log.open("a") as f:
        f.write(text + "\\n")

def start(*_args):
    note("start")
    if slow_start:
        time.sleep(60)

t._start = start
t._stop = lambda name, _status: note(f"stop {name}")
urls = iter([None, "http://127.0.0.1:9"])
t._running_url = lambda *_args: next(urls)
with t.deployment_for_bench(Path(sys.argv[3]), [], client=Path("/env/bin/vllm")):
    note("ready")
    time.sleep(60)
"""


@pytest.mark.parametrize("when", ["benchmarking", "slow-start"])
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_sigterm_stops_the_deployment_started_here(tmp_path: Path, when: str, signum: int) -> None:
    # `tune` under `timeout` (SIGTERM) left its trial deployment running: the default action ended the process
    # before the `finally` that stops it
    log = tmp_path / "log"
    log.write_text("")
    proc = subprocess.Popen(
        [sys.executable, "-c", _SIGNALLED, str(log), when, str(DEMO)], stderr=subprocess.DEVNULL, cwd=REPO
    )
    waited_for = "start" if when == "slow-start" else "ready"
    deadline = time.monotonic() + 60
    while waited_for not in log.read_text().split() and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signum)
    assert proc.wait(timeout=60) != 0
    expected = ["start", "stop cpu-demo"] if when == "slow-start" else ["start", "ready", "stop cpu-demo"]
    assert log.read_text().splitlines() == expected


PD = """apiVersion: ascendctl/v1
kind: Profile
metadata:
  name: pd-demo
model:
  source: prepared:smollm2-135m-instruct
  architecture: LlamaForCausalLM
  served_name: smollm2
target:
  backend: cpu
  devices_per_node: 2
server:
  host: 127.0.0.1
disaggregation:
  connector: shared-storage
  shared_storage_path: {kv}
  router:
    port: 18000
  prefill:
    devices: 1
    port: 18001
  decode:
    devices: 1
    port: 18002
"""


def test_a_prefill_decode_deployment_is_entered_through_its_router(health: str, tmp_path: Path) -> None:
    profile = tmp_path / "pd-demo.yaml"
    profile.write_text(PD.format(kv=tmp_path / "kv"))
    write_record("http://127.0.0.1:18001", None, "pd-demo", "prefill-0", "prefill")
    write_record("http://127.0.0.1:18002", None, "pd-demo", "decode-0", "decode")
    write_record(health, None, "pd-demo", "router", "router")
    with deployment_for_bench(profile, [], client=CLIENT) as (plan, target, started):
        assert plan.disaggregated and (target.base_url, started) == (health, False)
