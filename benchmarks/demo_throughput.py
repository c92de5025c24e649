"""Throughput, TTFT and TPOT of the embedded default (SmolLM2-135M-Instruct, profiles/cpu-demo.yaml) at 32
concurrent requests, served by `ascendctl serve` on the real vLLM CPU engine.

    .venv/bin/python benchmarks/demo_throughput.py                # or: make bench-serve
    .venv/bin/python benchmarks/demo_throughput.py --num-prompts 64 --concurrency 1,32 --json

The profile runs as shipped (eager mode, max 32 sequences, 1 GiB KV cache) except for a free port on
127.0.0.1 and the deployment name; state files go to a temporary XDG_STATE_HOME; the server is stopped with
`ascendctl stop`. Load: random prompts of `--input-len` token ids (fixed seed), `--output-len` tokens each
(`ignore_eos`), streamed from /v1/completions, after a few untimed warm-up requests. Metric definitions are
those of `vllm bench serve` (see benchmarks/servebench.py).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from servebench import (
    REPO,
    AscendctlServer,
    BenchError,
    LoadSpec,
    check_preconditions,
    free_port,
    plan_node,
    run_load,
    running,
    tail,
)

NAME = "bench-demo"
ROWS = [
    ("requests completed / failed", None, ""),
    ("benchmark duration", "duration_s", "s"),
    ("request throughput", "request_throughput", "req/s"),
    ("output token throughput", "output_throughput", "tok/s"),
    ("total token throughput", "total_token_throughput", "tok/s"),
    ("median TTFT", "median_ttft_ms", "ms"),
    ("p99 TTFT", "p99_ttft_ms", "ms"),
    ("median TPOT", "median_tpot_ms", "ms"),
    ("p99 TPOT", "p99_tpot_ms", "ms"),
    ("median ITL", "median_itl_ms", "ms"),
    ("median end-to-end latency", "median_e2el_ms", "ms"),
]


def parse_levels(text: str) -> list[int]:
    """`32` or `1,8,32` → concurrency levels (each ≥ 1)."""
    levels = [int(part) for part in text.split(",") if part.strip()]
    if not levels or min(levels) < 1:
        raise ValueError(f"bad concurrency list {text!r}")
    return levels


def print_table(results: list[dict[str, object]], header: str) -> None:
    print(header)
    cols = [f"c={r['concurrency']}" for r in results]
    print(f"{'metric':<34}" + "".join(f"  {c:>10}" for c in cols))
    for label, key, unit in ROWS:
        name = f"{label} ({unit})" if unit else label
        cells = []
        for r in results:
            if key is None:
                cells.append(f"{r['completed']}/{r['failed']}")
            else:
                value = float(str(r[key]))
                cells.append(f"{value:.1f}" if value < 1000 else f"{value:.0f}")
        print(f"{name:<34}" + "".join(f"  {c:>10}" for c in cells))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--profile", type=Path, default=REPO / "profiles" / "cpu-demo.yaml")
    parser.add_argument("--num-prompts", type=int, default=128, help="requests per level (default 128)")
    parser.add_argument("--concurrency", default="32", help="level(s), comma separated (default 32)")
    parser.add_argument("--input-len", type=int, default=64, help="prompt tokens (default 64)")
    parser.add_argument("--output-len", type=int, default=64, help="generated tokens per request (default 64)")
    parser.add_argument("--warmup", type=int, default=8, help="untimed requests before each load run (default 8)")
    parser.add_argument("--ready-timeout", type=float, default=600.0, help="seconds to wait for /health")
    parser.add_argument("--max-seconds", type=float, default=300.0, help="bound on one load run (seconds)")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    opts = parser.parse_args()
    try:
        levels = parse_levels(opts.concurrency)
    except ValueError as exc:
        parser.error(str(exc))
    if opts.num_prompts < 1:
        parser.error("--num-prompts must be at least 1")

    port = free_port()
    overrides = [f"server.port={port}", f"metadata.name={NAME}"]
    results: list[dict[str, object]] = []
    try:
        check_preconditions({"smollm2-135m-instruct": "prepared:smollm2-135m-instruct"})
        plan = plan_node(opts.profile, overrides)
        with tempfile.TemporaryDirectory(prefix="ascendctl-bench-") as name:
            tmp = Path(name)
            log = tmp / "serve.log"
            server = AscendctlServer(opts.profile, overrides, plan.name, log, tmp / "state")
            try:
                with running(server, plan.health_url, opts.ready_timeout) as ready_s:
                    if not opts.json:
                        print(f"{plan.name}: ready in {ready_s:.1f}s at {plan.base_url}", flush=True)
                    for level in levels:
                        spec = LoadSpec(
                            opts.num_prompts,
                            level,
                            opts.input_len,
                            opts.output_len,
                            opts.warmup,
                            max_seconds=opts.max_seconds,
                        )
                        summary = run_load(plan, spec, tmp, f"c{level}")
                        results.append({"concurrency": level, **summary})
            except BenchError as exc:
                raise BenchError(f"{exc}\n--- last lines of {log} ---\n{tail(log)}") from None
    except BenchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    if opts.json:
        print(json.dumps({"profile": str(opts.profile), "ready_s": ready_s, "results": results}, indent=2))
    else:
        header = (
            f"\n{opts.profile.name} ({plan.served_name}): {opts.num_prompts} requests, "
            f"{opts.input_len} in / {opts.output_len} out tokens, /v1/completions streamed"
        )
        print_table(results, header)
    return 1 if any(r["failed"] for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
