"""The load client: the engine environment's own `vllm bench serve`, one run per workload point.

Every run is the same measurement: the random dataset (prompts of exactly `input_len` token ids drawn with a
fixed seed, `--random-range-ratio` left at its default 0, so lengths do not vary), `--ignore-eos` so every
request generates exactly `output_len` tokens, at most `concurrency` requests in flight, a bounded
`--num-prompts`, streamed `/v1/completions`, and the result saved as JSON with every request's record
(`--save-result --save-detailed`), which `results` reads. Traffic stays on loopback (no proxy) and nothing is
looked up on the Hugging Face hub (the tokenizer is the deployment's local model directory).

Flag names, the goodput keys and the `OPENAI_API_KEY` the client sends as a bearer token: vLLM
`v0.32.0:vllm/benchmarks/serve.py` (`add_cli_args`, `check_goodput_args`),
`v0.32.0:vllm/benchmarks/datasets/datasets.py` (`--seed`, `--num-prompts`, `--dataset-name`, `--random-*`),
`v0.32.0:vllm/benchmarks/lib/endpoint_request_func.py` (`OPENAI_API_KEY`). Which flags the installed client
really has is read from its own `--help` (`flags`), once per client executable.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import field
from pathlib import Path

from ascendctl.core.errors import OperationFailed, UserInputError
from ascendctl.plan.workload import WorkloadPoint
from ascendctl.run.bench.flags import ClientFlags, check_client
from ascendctl.run.bench.results import PointResult, read_point_result
from ascendctl_engine.records import record

# The metrics and percentiles every point reports (the document's `metrics` keys follow them).
PERCENTILE_METRICS = ("ttft", "tpot", "itl", "e2el")
PERCENTILES = (50, 90, 99)
# `--goodput KEY:VALUE` keys the client accepts (milliseconds): vLLM v0.32.0:vllm/benchmarks/serve.py
# `check_goodput_args` VALID_NAMES.
GOODPUT_KEYS = ("ttft", "tpot", "e2el")
ENDPOINT = "/v1/completions"
DEFAULT_POINT_TIMEOUT_S = 1800.0  # one point's run, client start-up included, when the caller gives none
LOG_TAIL_LINES = 15


@record
class BenchTarget:
    """Where load goes and which client sends it."""

    base_url: str  # http://127.0.0.1:8000 (no path)
    served_name: str  # the `model` every request names
    tokenizer: str  # a local model directory (or the model id when the client may look it up)
    client: Path  # the engine environment's `vllm` executable
    # OPENAI_API_KEY for the client when the deployment has a key; never printed (repr hides it).
    api_key_env: Mapping[str, str] = field(default_factory=dict, repr=False)


def check_goodput(pairs: Sequence[str]) -> list[str]:
    """`--goodput ttft:500` pairs, checked the way the client checks them (so a typo fails before any run)."""
    checked: list[str] = []
    for pair in pairs:
        key, sep, value = pair.partition(":")
        try:
            number = float(value)
        except ValueError:
            number = -1.0
        if not sep or key not in GOODPUT_KEYS or not number >= 0:
            keys = ", ".join(GOODPUT_KEYS)
            raise UserInputError(f"--goodput {pair}: expected KEY:MILLISECONDS with KEY one of {keys} (e.g. ttft:500)")
        checked.append(f"{key}:{value}")
    return checked


def bench_argv(
    target: BenchTarget,
    point: WorkloadPoint,
    seed: int,
    result_dir: Path,
    result_file: str,
    *,
    goodput: Sequence[str] = (),
    warmups: int = 0,
) -> list[str]:
    """The `vllm bench serve` argv of one point (an argv list; nothing passes through a shell)."""
    argv = [
        str(target.client),
        "bench",
        "serve",
        "--backend",
        "vllm",
        "--base-url",
        target.base_url,
        "--endpoint",
        ENDPOINT,
        "--model",
        target.served_name,
        "--tokenizer",
        target.tokenizer,
        "--dataset-name",
        "random",
        "--random-input-len",
        str(point.input_len),
        "--random-output-len",
        str(point.output_len),
        "--ignore-eos",
        "--num-prompts",
        str(point.requests),
        "--max-concurrency",
        str(point.concurrency),
        "--seed",
        str(seed),
        "--percentile-metrics",
        ",".join(PERCENTILE_METRICS),
        "--metric-percentiles",
        ",".join(str(p) for p in PERCENTILES),
        "--save-result",
        "--save-detailed",
        "--result-dir",
        str(result_dir),
        "--result-filename",
        result_file,
    ]
    if point.request_rate is not None:
        argv += ["--request-rate", f"{point.request_rate:g}"]
    if warmups:
        argv += ["--num-warmups", str(warmups)]
    if goodput:
        argv += ["--goodput", *goodput]
    return argv


_PROXY_VARS = ("http_proxy", "https_proxy", "all_proxy")


def client_env(target: BenchTarget, inherited: Mapping[str, str] | None = None) -> dict[str, str]:
    """The client's environment: no proxy (loopback traffic), no hub look-ups, the deployment's key if any."""
    base = os.environ if inherited is None else inherited
    env = {k: v for k, v in base.items() if k.lower() not in _PROXY_VARS and k != "OPENAI_API_KEY"}
    env["NO_PROXY"] = env["no_proxy"] = "127.0.0.1,localhost,::1"
    env["HF_HUB_OFFLINE"] = "1"
    env["TRANSFORMERS_OFFLINE"] = "1"
    env.update(target.api_key_env)
    return env


def require_flags(argv: Sequence[str], flags: ClientFlags) -> None:
    """Every flag of `argv` must be one the installed client accepts (else one line naming them)."""
    missing = [token for token in argv[3:] if token.startswith("--") and token not in flags.options]
    if missing:
        raise OperationFailed(
            f"{flags.client} bench serve does not accept {', '.join(missing)} (its vLLM is older than the "
            "client ascendctl bench drives); pass --client with a newer vLLM's `vllm` executable"
        )


def run_point(
    target: BenchTarget,
    point: WorkloadPoint,
    seed: int,
    work_dir: Path,
    *,
    goodput: Sequence[str] = (),
    timeout_s: float | None = None,
) -> PointResult:
    """Run `vllm bench serve` for one point (own process group, killed after `timeout_s`) and read its saved
    JSON; the raw result and the client's log stay in `work_dir`."""
    goodput = check_goodput(goodput)
    work_dir.mkdir(parents=True, exist_ok=True)
    stem = point_stem(point)
    result_file = f"{stem}.json"
    argv = bench_argv(target, point, seed, work_dir, result_file, goodput=goodput)
    require_flags(argv, check_client(target.client))
    result_path = work_dir / result_file
    with contextlib.suppress(FileNotFoundError):
        result_path.unlink()  # a stale result must never be read as this run's
    log_path = work_dir / f"{stem}.log"
    limit = DEFAULT_POINT_TIMEOUT_S if timeout_s is None else timeout_s
    code = _run_client(argv, client_env(target), log_path, limit)
    if code != 0 or not result_path.is_file():
        raise OperationFailed(
            f"vllm bench serve failed for point {point.label} (exit {code}); its log: {log_path}{_tail(log_path)}"
        )
    return read_point_result(point, result_path)


def point_stem(point: WorkloadPoint) -> str:
    """A file name stem for one point: `2048-256-16` (`-r8` with a request rate)."""
    rate = f"-r{point.request_rate:g}" if point.request_rate is not None else ""
    return f"{point.input_len}-{point.output_len}-{point.concurrency}{rate}"


def _run_client(argv: list[str], env: dict[str, str], log_path: Path, timeout_s: float) -> int:
    with log_path.open("wb") as log:
        try:
            proc = subprocess.Popen(
                argv, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )
        except OSError as exc:
            raise OperationFailed(f"cannot run {argv[0]}: {exc.strerror or exc}") from None
        try:
            return proc.wait(timeout_s)
        except subprocess.TimeoutExpired:
            _stop_group(proc)
            raise OperationFailed(
                f"vllm bench serve did not finish within {timeout_s:.0f}s (stopped); its log: {log_path}"
            ) from None
        except BaseException:  # Ctrl-C: the client is ours, stop it before going
            _stop_group(proc)
            raise


def _stop_group(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM the client's own process group (it leads it: start_new_session), SIGKILL after 10 s."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    deadline = time.monotonic() + 10.0
    while proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.1)
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def _tail(path: Path) -> str:
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return ""
    shown = [line for line in lines if line.strip()][-LOG_TAIL_LINES:]
    return ("\n" + "\n".join(shown)) if shown else ""


__all__ = [
    "DEFAULT_POINT_TIMEOUT_S",
    "GOODPUT_KEYS",
    "PERCENTILES",
    "PERCENTILE_METRICS",
    "BenchTarget",
    "ClientFlags",
    "bench_argv",
    "check_client",
    "check_goodput",
    "client_env",
    "point_stem",
    "require_flags",
    "run_point",
]
