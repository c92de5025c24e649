"""The bench report: one JSON document per `ascendctl bench` run (`schema` 1; its shape is listed in
docs/guides/bench-and-tune.md, "Benchmark a deployment", and pinned by tests/test_bench_document.py).

It says what was measured (the profile file's sha256 and the `--set` overrides, the plan: release pin,
backend, every command's argv and env with secrets redacted, the services in front), where (a summary of the
host facts, the endpoint, the client), with which load (the workload) and what came out (per point: the
point, its figures, the failed requests' messages). `bench --compare` reads these documents back.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ascendctl import __version__
from ascendctl.core.errors import UserInputError
from ascendctl.outputs.bench_report import (
    BENCH_SCHEMA,
    DOCUMENT_KIND,
    document_bytes,
    now_iso,
    read_bench_document,
    write_file_atomic,
)
from ascendctl.plan.types import Plan
from ascendctl.plan.workload import Workload
from ascendctl.run.bench.client import PERCENTILE_METRICS, PERCENTILES, BenchTarget
from ascendctl.run.bench.results import PointResult
from ascendctl_engine.host.facts import HostFacts


def profile_digest(path: Path) -> str:
    """sha256 of the profile file as it is on disk (the `--set` overrides are listed beside it)."""
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError as exc:
        raise UserInputError(f"{path}: cannot read: {exc.strerror or exc}") from None


def host_summary(facts: HostFacts | None) -> dict[str, Any] | None:
    """What about the host bears on the figures: accelerator, driver and CANN, CPU and memory."""
    if facts is None:
        return None
    return {
        "backend": facts.backend,
        "family": facts.family,
        "soc_version": facts.soc_version,
        "device_count": len(facts.devices),
        "driver": facts.driver.version,
        "cann": facts.cann.version,
        "cuda_driver": facts.cuda.driver_version,
        "gpu_count": len(facts.cuda.gpus),
        "cpu": facts.cpu.to_dict(),
    }


def plan_summary(plan: Plan) -> dict[str, Any]:
    """The plan as run: release pin, backend, each command's argv and env (secrets as `<redacted>`)."""
    dep = plan.deployment
    commands = [
        {
            "instance": instance.name,
            "role": instance.role,
            "node": command.node,
            "argv": list(command.argv),
            "env": dict(sorted(command.display_env().items())),
        }
        for instance in plan.instances
        for command in instance.commands
    ]
    services = [{"name": s.name, "kind": s.kind, "port": s.port, "argv": list(s.command)} for s in plan.services]
    return {
        "name": dep.name,
        "backend": dep.backend,
        "hardware": dep.hardware,
        "release": dep.release.to_json(),
        "model": dep.model.resolved,
        "commands": commands,
        "services": services,
    }


def bench_document(
    profile_path: Path,
    overrides: Sequence[str],
    plan: Plan,
    workload: Workload,
    results: Sequence[PointResult],
    host_facts: HostFacts | None,
    *,
    target: BenchTarget | None = None,
    started_here: bool | None = None,
    started_at: str | None = None,
    goodput: Sequence[str] = (),
) -> dict[str, Any]:
    """The JSON document of one bench run (schema `BENCH_SCHEMA`)."""
    return {
        "schema": BENCH_SCHEMA,
        "kind": DOCUMENT_KIND,
        "tool": {"name": "ascendctl", "version": __version__},
        "started_at": started_at or now_iso(),
        "finished_at": now_iso(),
        "profile": {
            "path": str(profile_path),
            "sha256": profile_digest(profile_path),
            "overrides": list(overrides),
        },
        "plan": plan_summary(plan),
        "host": host_summary(host_facts),
        "target": {
            "base_url": target.base_url if target else None,
            "served_name": target.served_name if target else None,
            "client": str(target.client) if target else None,
            "started_here": started_here,
        },
        "benchmark": {
            "client": "vllm bench serve",
            "dataset": "random",
            "endpoint": "/v1/completions",
            "ignore_eos": True,
            "percentile_metrics": list(PERCENTILE_METRICS),
            "percentiles": list(PERCENTILES),
            "goodput": list(goodput),
        },
        "workload": workload.to_json(),
        "points": [r.to_json() for r in results],
    }


__all__ = [
    "BENCH_SCHEMA",
    "DOCUMENT_KIND",
    "bench_document",
    "document_bytes",
    "host_summary",
    "now_iso",
    "plan_summary",
    "profile_digest",
    "read_bench_document",
    "write_file_atomic",
]
