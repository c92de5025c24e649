"""`ascendctl bench`: measure a running deployment with the engine environment's own `vllm bench serve`.

The API (also driven by `ascendctl tune`):

- `deployment_for_bench(profile_path, overrides, url=..., ...)`: the running deployment of a profile (found
  through its state), or `url`, or one started here (`serve --detach`) and stopped on exit; yields the plan, a
  `BenchTarget` (where load goes, which client sends it) and whether it was started here.
- `run_point(target, point, seed, work_dir, goodput=...)`: one `vllm bench serve` run of one workload point,
  read back from its `--save-result --save-detailed` JSON into a `PointResult`.
- `bench_document(profile_path, overrides, plan, workload, results, host_facts)`: the JSON document
  (`schema` 1, documented in docs/guides/bench-and-tune.md).

Modules: `client` (the client's argv, environment, flag check), `results` (reading the saved JSON),
`target` (which deployment), `document` (the report document).
"""

from __future__ import annotations

from ascendctl.run.bench.client import (
    BenchTarget,
    ClientFlags,
    bench_argv,
    check_client,
    check_goodput,
    client_env,
    run_point,
)
from ascendctl.run.bench.document import (
    BENCH_SCHEMA,
    bench_document,
    document_bytes,
    host_summary,
    profile_digest,
    read_bench_document,
    write_file_atomic,
)
from ascendctl.run.bench.results import Metrics, PointResult, metrics_from_result, read_point_result
from ascendctl.run.bench.target import deployment_for_bench

__all__ = [
    "BENCH_SCHEMA",
    "BenchTarget",
    "ClientFlags",
    "Metrics",
    "PointResult",
    "bench_argv",
    "bench_document",
    "check_client",
    "check_goodput",
    "client_env",
    "deployment_for_bench",
    "document_bytes",
    "host_summary",
    "metrics_from_result",
    "profile_digest",
    "read_bench_document",
    "read_point_result",
    "run_point",
    "write_file_atomic",
]
