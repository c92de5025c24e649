"""Shared pieces of the serving benchmarks (`serve_overhead.py`, `demo_throughput.py`).

- `plan_node`: a profile's engine command from ascendctl's own planner, with `vllm` resolved to the
  installed engine environment's executable (`ascendctl_engine.envs.find_engine`): the argv + env an
  operator would copy from `ascendctl plan PROFILE --json` and start by hand.
- `ManualServer` / `AscendctlServer`: start that command by hand (own process group, stopped by PID) or
  through `ascendctl serve PROFILE` (stopped with `ascendctl stop NAME`); both measured by the same /health
  poller, so their time-to-ready figures are comparable.
- `run_load`: a dependency-free load generator (threads, one streaming `/v1/completions` request each, at most
  `concurrency` in flight) with the metric definitions of `vllm bench serve` (vLLM docs/benchmarking/cli.md):
  TTFT = send → first streamed chunk, TPOT = (E2EL − TTFT) / (output tokens − 1), output tok/s = generated
  tokens / wall time of the whole run. Prompts are random token ids (exactly `input_len` tokens, like
  `--dataset-name random`); `ignore_eos` makes every request generate exactly `output_len` tokens.

Everything binds and talks to 127.0.0.1; request counts and times are bounded.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import random
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any
from urllib.parse import urlsplit

REPO = Path(__file__).resolve().parent.parent
OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # loopback only, never via a proxy
POLL_S = 0.1


class BenchError(Exception):
    """A benchmark precondition failed or a server did not come up."""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def ascendctl_argv() -> list[str]:
    """The `ascendctl` console script next to this interpreter (what users run), else `python -m ascendctl`."""
    script = Path(sys.executable).with_name("ascendctl")
    return [str(script)] if script.exists() else [sys.executable, "-m", "ascendctl"]


# ---------------------------------------------------------------------------------------------------------
# the planned command


@dataclass(frozen=True)
class NodePlan:
    name: str  # metadata.name
    argv: list[str]  # argv[0] resolved to the engine environment's `vllm`
    env: dict[str, str]  # only what the plan sets (merged over the inherited environment at start)
    health_url: str
    base_url: str
    served_name: str
    model_dir: Path


def plan_node(profile_path: Path, overrides: Sequence[str] = ()) -> NodePlan:
    """The single-node plan of `profile_path` as a runnable command (raises BenchError when it cannot run)."""
    from ascendctl.planner import plan_profile
    from ascendctl.profile_loader import load_profile
    from ascendctl_engine.envs import find_engine

    profile = load_profile(profile_path, list(overrides))
    plan = plan_profile(profile)
    if len(plan.commands) != 1:
        raise BenchError(f"{profile_path}: the benchmarks run single-node plans only")
    cmd = plan.commands[0]
    if cmd.secret_env:
        raise BenchError(f"{profile_path}: profiles with an API key are not benchmarked")
    if cmd.health_url is None:
        raise BenchError(f"{profile_path}: the plan has no HTTP endpoint")
    dep = plan.deployment
    engine = find_engine(dep.backend, dep.release.version)
    if engine is None or not engine.vllm_executable.exists():
        raise BenchError(
            f"the {dep.backend} engine environment for {dep.release.version} is not installed; "
            f"run: ascendctl engine install --backend {dep.backend}"
        )
    argv = list(cmd.argv)
    if argv[0] == "vllm":
        argv[0] = str(engine.vllm_executable)
    url = urlsplit(cmd.health_url)
    model_dir = Path(dep.model.resolved)
    if not (model_dir / "config.json").is_file():
        raise BenchError(f"{model_dir} is not a local model directory (prepare it: ascendctl model prepare NAME)")
    return NodePlan(
        name=dep.name,
        argv=argv,
        env=dict(cmd.env),
        health_url=cmd.health_url,
        base_url=f"{url.scheme}://{url.netloc}",
        served_name=profile.model.served_name or dep.model.resolved,
        model_dir=model_dir,
    )


def vocab_size(model_dir: Path) -> int:
    config = json.loads((model_dir / "config.json").read_text(encoding="utf-8"))
    return int(config["vocab_size"])


# ---------------------------------------------------------------------------------------------------------
# health


def health_ok(url: str) -> bool:
    try:
        with OPENER.open(url, timeout=1.0) as resp:
            return bool(resp.status == 200)
    except (urllib.error.URLError, OSError, http.client.HTTPException):
        return False


def wait_ready(url: str, proc: subprocess.Popen[bytes], started: float, timeout: float) -> float:
    """Seconds from `started` (a perf_counter value) to the first /health 200; BenchError if the process
    exits first or the timeout passes."""
    deadline = started + timeout
    while time.perf_counter() < deadline:
        if health_ok(url):
            return time.perf_counter() - started
        if proc.poll() is not None:
            raise BenchError(f"the server exited with code {proc.returncode} before it was ready")
        time.sleep(POLL_S)
    raise BenchError(f"not ready after {timeout:.0f}s")


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def terminate_group(proc: subprocess.Popen[bytes], timeout: float) -> float:
    """SIGTERM the process group led by `proc`, wait for the whole group, SIGKILL it after `timeout`.
    Returns the seconds it took."""
    started = time.perf_counter()
    pgid = proc.pid  # start_new_session=True: the child leads its own group
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pgid, signal.SIGTERM)
    deadline = started + timeout
    while time.perf_counter() < deadline:
        proc.poll()
        if proc.returncode is not None and not _group_alive(pgid):
            return time.perf_counter() - started
        time.sleep(0.1)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pgid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(10)
    print(f"warning: process group {pgid} needed SIGKILL", file=sys.stderr)
    return time.perf_counter() - started


# ---------------------------------------------------------------------------------------------------------
# the two arms


@dataclass
class ManualServer:
    """The planned argv + env started by hand: own process group, output to a file, stopped by PID."""

    plan: NodePlan
    log_path: Path
    label: str = "by hand"
    proc: subprocess.Popen[bytes] | None = None
    _log: IO[bytes] | None = field(default=None, repr=False)

    def start(self) -> float:
        env = {**os.environ, **self.plan.env}
        self._log = self.log_path.open("ab")
        started = time.perf_counter()
        self.proc = subprocess.Popen(
            self.plan.argv,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        return started

    def stop(self, timeout: float) -> float:
        seconds = 0.0
        if self.proc is not None:
            seconds = terminate_group(self.proc, timeout)
        if self._log is not None:
            self._log.close()
        return seconds


@dataclass
class AscendctlServer:
    """`ascendctl serve PROFILE` in the foreground of a child process; stopped with `ascendctl stop NAME`.
    `state_home` keeps its state files away from the user's own deployments."""

    profile_path: Path
    overrides: list[str]
    name: str
    log_path: Path
    state_home: Path
    label: str = "ascendctl"
    proc: subprocess.Popen[bytes] | None = None
    _log: IO[bytes] | None = field(default=None, repr=False)

    def env(self) -> dict[str, str]:
        return {**os.environ, "XDG_STATE_HOME": str(self.state_home)}

    def start(self) -> float:
        argv = [*ascendctl_argv(), "serve", str(self.profile_path)]
        for text in self.overrides:
            argv += ["--set", text]
        self._log = self.log_path.open("ab")
        started = time.perf_counter()
        self.proc = subprocess.Popen(
            argv,
            env=self.env(),
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        return started

    def stop(self, timeout: float) -> float:
        started = time.perf_counter()
        if self.proc is not None and self.proc.poll() is None:
            result = subprocess.run(
                [*ascendctl_argv(), "stop", self.name, "--timeout", str(int(timeout))],
                env=self.env(),
                capture_output=True,
                text=True,
                timeout=timeout + 30,
                check=False,
            )
            if result.returncode != 0:
                print(f"warning: ascendctl stop {self.name}: {result.stderr.strip()}", file=sys.stderr)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                # The supervisor forwards SIGTERM to its engine group and drains before it exits.
                terminate_group(self.proc, timeout)
        if self._log is not None:
            self._log.close()
        return time.perf_counter() - started


Server = ManualServer | AscendctlServer


@contextlib.contextmanager
def running(server: Server, health_url: str, ready_timeout: float, stop_timeout: float = 60.0) -> Iterator[float]:
    """Start `server`, yield its time-to-ready in seconds, stop it on the way out (also on errors)."""
    try:
        started = server.start()
        assert server.proc is not None
        yield wait_ready(health_url, server.proc, started, ready_timeout)
    finally:
        server.stop(stop_timeout)


def tail(path: Path, lines: int = 20) -> str:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    return "\n".join(text.splitlines()[-lines:])


# ---------------------------------------------------------------------------------------------------------
# load generation


@dataclass(frozen=True)
class RequestRecord:
    ok: bool
    ttft: float = 0.0  # seconds
    e2el: float = 0.0  # seconds
    input_tokens: int = 0
    output_tokens: int = 0
    error: str = ""


@dataclass(frozen=True)
class LoadSpec:
    num_prompts: int = 128
    concurrency: int = 32
    input_len: int = 64
    output_len: int = 64
    seed: int = 0
    request_timeout: float = 120.0  # per request (socket timeout)
    max_seconds: float = 300.0  # requests not started by then are skipped


def random_prompts(spec: LoadSpec, vocab: int) -> list[list[int]]:
    """`num_prompts` prompts of exactly `input_len` token ids, reproducible from `seed`. The lowest ids (where
    tokenizers keep their special tokens) are avoided."""
    rng = random.Random(spec.seed)
    low = min(256, vocab // 4)
    return [[rng.randrange(low, vocab) for _ in range(spec.input_len)] for _ in range(spec.num_prompts)]


def parse_sse_line(line: bytes) -> dict[str, Any] | None:
    """One server-sent-events line of a streaming OpenAI response: its JSON payload, or None for blank
    lines, comments and the final `[DONE]`."""
    text = line.decode("utf-8", errors="replace").strip()
    if not text.startswith("data:"):
        return None
    payload = text[len("data:") :].strip()
    if not payload or payload == "[DONE]":
        return None
    data = json.loads(payload)
    return data if isinstance(data, dict) else None


def one_request(base_url: str, model: str, prompt: list[int], spec: LoadSpec) -> RequestRecord:
    url = urlsplit(base_url)
    body = json.dumps(
        {
            "model": model,
            "prompt": prompt,
            "max_tokens": spec.output_len,
            "temperature": 0.0,
            "ignore_eos": True,  # vLLM extension: always generate max_tokens
            "stream": True,
            "stream_options": {"include_usage": True},
        }
    )
    conn = http.client.HTTPConnection(url.hostname or "127.0.0.1", url.port or 80, timeout=spec.request_timeout)
    start = time.perf_counter()
    ttft = 0.0
    chunks = 0
    usage: dict[str, Any] = {}
    try:
        conn.request("POST", "/v1/completions", body=body, headers={"Content-Type": "application/json"})
        resp = conn.getresponse()
        if resp.status != 200:
            return RequestRecord(ok=False, error=f"HTTP {resp.status}: {resp.read(300).decode(errors='replace')}")
        for line in resp:
            data = parse_sse_line(line)
            if data is None:
                continue
            if data.get("choices"):
                chunks += 1
                if ttft == 0.0:
                    ttft = time.perf_counter() - start
            if data.get("usage"):
                usage = data["usage"]
        e2el = time.perf_counter() - start
    except (OSError, http.client.HTTPException, ValueError) as exc:
        return RequestRecord(ok=False, error=f"{type(exc).__name__}: {exc}")
    finally:
        conn.close()
    output = int(usage.get("completion_tokens", chunks))
    if output == 0:
        return RequestRecord(ok=False, error="no tokens streamed")
    return RequestRecord(True, ttft, e2el, int(usage.get("prompt_tokens", len(prompt))), output)


@dataclass(frozen=True)
class LoadResult:
    records: list[RequestRecord]
    duration: float
    skipped: int


def run_load(base_url: str, model: str, prompts: Sequence[list[int]], spec: LoadSpec) -> LoadResult:
    """Send every prompt with at most `spec.concurrency` in flight; bounded by `spec.max_seconds`."""
    deadline = time.perf_counter() + spec.max_seconds
    skipped = 0
    lock = threading.Lock()

    def task(prompt: list[int]) -> RequestRecord | None:
        nonlocal skipped
        if time.perf_counter() > deadline:
            with lock:
                skipped += 1
            return None
        return one_request(base_url, model, prompt, spec)

    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=spec.concurrency) as pool:
        results = list(pool.map(task, prompts))
    duration = time.perf_counter() - started
    return LoadResult([r for r in results if r is not None], duration, skipped)


def warm_up(base_url: str, model: str, vocab: int, spec: LoadSpec, count: int) -> None:
    """A few short untimed requests (first-request effects stay out of the measurement)."""
    if count <= 0:
        return
    small = LoadSpec(count, min(count, spec.concurrency), spec.input_len, 8, spec.seed + 1, spec.request_timeout, 60)
    run_load(base_url, model, random_prompts(small, vocab), small)


# ---------------------------------------------------------------------------------------------------------
# statistics


def percentile(values: Sequence[float], pct: float) -> float:
    """Linear interpolation between closest ranks (numpy's default); NaN for no values."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    pos = (len(ordered) - 1) * pct / 100.0
    lower = int(pos)
    upper = min(lower + 1, len(ordered) - 1)
    return ordered[lower] + (ordered[upper] - ordered[lower]) * (pos - lower)


def summarize(result: LoadResult) -> dict[str, float | int]:
    """The figures of one load run (times in ms), with the definitions of `vllm bench serve`."""
    ok = [r for r in result.records if r.ok]
    ttfts = [r.ttft * 1000 for r in ok]
    tpots = [(r.e2el - r.ttft) * 1000 / (r.output_tokens - 1) for r in ok if r.output_tokens > 1]
    e2els = [r.e2el * 1000 for r in ok]
    out_tokens = sum(r.output_tokens for r in ok)
    in_tokens = sum(r.input_tokens for r in ok)
    duration = result.duration if result.duration > 0 else float("nan")
    return {
        "completed": len(ok),
        "failed": len(result.records) - len(ok),
        "skipped": result.skipped,
        "duration_s": result.duration,
        "input_tokens": in_tokens,
        "output_tokens": out_tokens,
        "request_throughput": len(ok) / duration,
        "output_throughput": out_tokens / duration,
        "total_token_throughput": (in_tokens + out_tokens) / duration,
        "median_ttft_ms": percentile(ttfts, 50),
        "p99_ttft_ms": percentile(ttfts, 99),
        "median_tpot_ms": percentile(tpots, 50),
        "p99_tpot_ms": percentile(tpots, 99),
        "median_e2el_ms": percentile(e2els, 50),
    }


def first_errors(result: LoadResult, limit: int = 3) -> list[str]:
    return [r.error for r in result.records if not r.ok][:limit]


def check_preconditions(models: Mapping[str, str]) -> None:
    """Each prepared model in `models` (name → profile source) must exist; say the exact command otherwise."""
    from ascendctl_engine.models import ModelError, resolve_model_source

    for name, source in models.items():
        try:
            resolve_model_source(source)
        except ModelError:
            raise BenchError(f"the model {name} is not prepared; run: ascendctl model prepare {name}") from None
