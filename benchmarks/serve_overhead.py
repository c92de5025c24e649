"""What `ascendctl serve` costs next to starting the same engine command by hand (real vLLM CPU engine).

    .venv/bin/python benchmarks/serve_overhead.py                 # or: make bench-serve
    .venv/bin/python benchmarks/serve_overhead.py --reps 3 --num-prompts 128 --json

Two arms, the same planned command: "ascendctl" runs `ascendctl serve PROFILE` (CLI start, profile load,
planning, pre-flight checks, supervisor with log streaming and health polling) and stops it with
`ascendctl stop NAME`; "by hand" takes the argv + env of the same plan (`ascendctl.plan.planner.plan_profile`, with
`vllm` resolved to the installed engine environment) and starts it with subprocess in its own process group,
stopped by PID. Both are timed by the same poller, from process start to the first `/health` 200. Then each
arm serves the same load (random prompts, fixed seed, `ignore_eos`), after the same warm-up. The arms
alternate (A B, B A, ...) so that drift on a noisy machine hits both alike. Clients talk straight to vLLM in
both arms (ascendctl is no proxy), so the throughput ratio should be ~1.0 and the time-to-ready difference is
ascendctl's own start-up work.

The model is the tiny random one (`ascendctl model prepare tiny-random`), eager mode, 1 GiB KV cache, all on
127.0.0.1 with a fresh free port per start; state files go to a temporary XDG_STATE_HOME.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path

from servebench import (
    AscendctlServer,
    BenchError,
    LoadSpec,
    ManualServer,
    Server,
    check_preconditions,
    free_port,
    plan_node,
    run_load,
    running,
    tail,
)

NAME = "bench-overhead"
PROFILE = """\
# Written by benchmarks/serve_overhead.py: the tiny random model, eager, on 127.0.0.1.
apiVersion: ascendctl/v1
kind: Profile
metadata:
  name: {name}
  description: serve-overhead benchmark (temporary)
model:
  source: {source}
  served_name: tiny
  max_model_len: 512
target:
  backend: cpu
engine:
  graph:
    mode: eager
  scheduler:
    max_num_seqs: {concurrency}
  memory:
    cpu_kv_cache_gib: 1
server:
  host: 127.0.0.1
  port: 8000
  shutdown_timeout: 10
runtime:
  ready_timeout: {ready_timeout}
"""

# (label, short column name, key in the summary, unit, decimals): the per-run table and the summary.
METRICS = [
    ("time to ready", "ready", "ready_s", "s", 2),
    ("output throughput", "out", "output_throughput", "tok/s", 0),
    ("request throughput", "rate", "request_throughput", "req/s", 2),
    ("median TTFT", "TTFT", "median_ttft_ms", "ms", 1),
    ("median TPOT", "TPOT", "median_tpot_ms", "ms", 2),
    ("median E2E latency", "E2EL", "median_e2el_ms", "ms", 0),
]


def arm_order(reps: int) -> list[tuple[int, str]]:
    """(repetition, arm) in run order: ascendctl first in odd repetitions, by hand first in even ones."""
    order: list[tuple[int, str]] = []
    for rep in range(1, reps + 1):
        arms = ["ascendctl", "by hand"] if rep % 2 else ["by hand", "ascendctl"]
        order += [(rep, arm) for arm in arms]
    return order


def run_arm(
    arm: str, profile: Path, tmp: Path, run: int, spec: LoadSpec, opts: argparse.Namespace
) -> dict[str, object]:
    port = free_port()
    overrides = [f"server.port={port}"]
    plan = plan_node(profile, overrides)
    log = tmp / f"run{run}-{arm.replace(' ', '-')}.log"
    server: Server
    if arm == "ascendctl":
        server = AscendctlServer(profile, overrides, plan.name, log, tmp / "state")
    else:
        server = ManualServer(plan, log)
    try:
        with running(server, plan.health_url, opts.ready_timeout) as ready_s:
            summary = run_load(plan, spec, tmp, f"run{run}-{arm.replace(' ', '-')}")
    except BenchError as exc:
        raise BenchError(f"{arm} (run {run}): {exc}\n--- last lines of {log} ---\n{tail(log)}") from None
    return {"run": run, "arm": arm, "ready_s": ready_s, **summary}


def fmt(value: object, decimals: int) -> str:
    return f"{value:.{decimals}f}" if isinstance(value, float | int) else "-"


def print_runs(rows: list[dict[str, object]]) -> None:
    head = f"{'run':>3}  {'arm':<9}"
    for _, short, _, unit, _ in METRICS:
        head += f"  {f'{short} {unit}':>11}"
    print(head + "  failed")
    for row in rows:
        line = f"{row['run']!s:>3}  {row['arm']!s:<9}"
        for _, _, key, _, decimals in METRICS:
            line += f"  {fmt(row[key], decimals):>11}"
        print(line + f"  {row['failed']}")


def medians(rows: list[dict[str, object]], arm: str) -> dict[str, float]:
    mine = [r for r in rows if r["arm"] == arm]
    return {key: statistics.median(float(str(r[key])) for r in mine) for _, _, key, _, _ in METRICS}


def print_summary(a: dict[str, float], b: dict[str, float], reps: int) -> None:
    print(f"\nmedian over {reps} run(s) per arm")
    print(f"{'metric':<24}  {'ascendctl':>10}  {'by hand':>10}  {'difference':>11}  {'ratio':>6}")
    for label, _, key, unit, decimals in METRICS:
        diff = a[key] - b[key]
        ratio = a[key] / b[key] if b[key] else float("nan")
        shown = f"{diff:+.{decimals}f}"
        print(
            f"{f'{label} ({unit})':<24}  {a[key]:>10.{decimals}f}  {b[key]:>10.{decimals}f}  {shown:>11}  {ratio:6.3f}"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=2, help="runs per arm (default 2)")
    parser.add_argument("--num-prompts", type=int, default=256, help="requests per run (default 256)")
    parser.add_argument("--concurrency", type=int, default=32, help="requests in flight (default 32)")
    parser.add_argument("--input-len", type=int, default=64, help="prompt tokens (default 64)")
    parser.add_argument("--output-len", type=int, default=64, help="generated tokens per request (default 64)")
    parser.add_argument("--warmup", type=int, default=8, help="untimed requests before each load run (default 8)")
    parser.add_argument("--model", default="tiny-random", help="prepared model name (default tiny-random)")
    parser.add_argument("--ready-timeout", type=float, default=300.0, help="seconds to wait for /health")
    parser.add_argument("--max-seconds", type=float, default=300.0, help="bound on one load run (seconds)")
    parser.add_argument("--json", action="store_true", help="print the rows and the summary as JSON")
    opts = parser.parse_args()
    if opts.reps < 1 or opts.num_prompts < 1 or opts.concurrency < 1:
        parser.error("--reps, --num-prompts and --concurrency must be at least 1")
    spec = LoadSpec(
        opts.num_prompts, opts.concurrency, opts.input_len, opts.output_len, opts.warmup, max_seconds=opts.max_seconds
    )
    source = f"prepared:{opts.model}"
    rows: list[dict[str, object]] = []
    try:
        check_preconditions({opts.model: source})
        with tempfile.TemporaryDirectory(prefix="ascendctl-bench-") as name:
            tmp = Path(name)
            profile = tmp / f"{NAME}.yaml"
            profile.write_text(
                PROFILE.format(
                    name=NAME, source=source, concurrency=opts.concurrency, ready_timeout=int(opts.ready_timeout)
                )
            )
            plan_node(profile)  # fails early (engine not installed, model missing) before anything starts
            if not opts.json:
                print(
                    f"serve overhead: {opts.model}, {opts.reps} run(s) per arm, {opts.num_prompts} requests "
                    f"({opts.input_len} in / {opts.output_len} out tokens) at concurrency {opts.concurrency}",
                    flush=True,
                )
            for run, (rep, arm) in enumerate(arm_order(opts.reps), start=1):
                row = run_arm(arm, profile, tmp, run, spec, opts)
                row["rep"] = rep
                rows.append(row)
                if not opts.json:
                    ready, tput = float(str(row["ready_s"])), float(str(row["output_throughput"]))
                    print(f"  run {run}: {arm:<9} ready {ready:6.2f}s, {tput:6.0f} out tok/s", flush=True)
    except BenchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    a, b = medians(rows, "ascendctl"), medians(rows, "by hand")
    if opts.json:
        print(json.dumps({"rows": rows, "median": {"ascendctl": a, "by hand": b}}, indent=2))
    else:
        print()
        print_runs(rows)
        print_summary(a, b, opts.reps)
        print("\n(failed: failed requests; ratio = ascendctl / by hand)")
    return 1 if any(r["failed"] for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
