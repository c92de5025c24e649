"""Reading one `vllm bench serve --save-result --save-detailed` JSON into the figures a bench report shows.

Key names are the client's (vLLM v0.32.0:vllm/benchmarks/serve.py: `benchmark` builds `result`,
`process_one_metric` adds `mean_/median_/std_/p<N>_<metric>_ms`); `failed` is missing from older clients'
results and is then counted from `num_prompts`. The detailed save adds one `errors` entry per request (an
empty string for a request that succeeded); the messages of the failed ones are kept, de-duplicated with a
count, so a thousand identical timeouts are one line. Numbers the client could not compute (no successful
request) are `null`, never a made-up zero.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ascendctl.core.errors import OperationFailed
from ascendctl.plan.workload import WorkloadPoint
from ascendctl_engine.jsonio import JsonReadError, read_bytes
from ascendctl_engine.records import record

LATENCY_METRICS = ("ttft", "tpot", "itl", "e2el")
LATENCY_STATS = ("mean", "p50", "p90", "p99")
MAX_RESULT_BYTES = 512 * 1024 * 1024  # a detailed save holds every token's timing: large, but bounded
MAX_ERROR_TEXT = 500  # characters of one failure message kept in the report


@record
class Metrics:
    """One point's figures. Latencies in milliseconds, keyed `<metric>` → `<stat>` (LATENCY_STATS)."""

    latency_ms: Mapping[str, Mapping[str, float | None]]
    output_tok_s: float
    total_tok_s: float
    req_s: float
    goodput_req_s: float | None  # None unless --goodput was given
    completed: int
    failed: int
    duration_s: float
    input_tokens: int | None
    output_tokens: int | None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {f"{m}_ms": dict(self.latency_ms[m]) for m in LATENCY_METRICS}
        out.update(
            {
                "output_tok_s": self.output_tok_s,
                "total_tok_s": self.total_tok_s,
                "req_s": self.req_s,
                "goodput_req_s": self.goodput_req_s,
                "completed": self.completed,
                "failed": self.failed,
                "duration_s": self.duration_s,
                "input_tokens": self.input_tokens,
                "output_tokens": self.output_tokens,
            }
        )
        return out


@record
class PointResult:
    """One workload point measured: its figures, the failed requests' messages, where the raw JSON is."""

    point: WorkloadPoint
    metrics: Metrics
    errors: tuple[tuple[str, int], ...]  # (message, how many requests failed with it), most frequent first
    raw_path: Path | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "label": self.point.label,
            "point": self.point.to_json(),
            "metrics": self.metrics.to_json(),
            "errors": [{"message": message, "count": count} for message, count in self.errors],
            "raw_result": self.raw_path.name if self.raw_path is not None else None,
        }


def _number(data: Mapping[str, Any], key: str) -> float | None:
    value = data.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def _required(data: Mapping[str, Any], key: str, source: str) -> float:
    value = _number(data, key)
    if value is None:
        raise OperationFailed(f"{source}: the benchmark result has no number `{key}`")
    return value


def _optional_int(data: Mapping[str, Any], key: str) -> int | None:
    value = _number(data, key)
    return int(value) if value is not None else None


def _stat_key(stat: str, metric: str) -> str:
    return f"{stat}_{metric}_ms"  # mean_ttft_ms, p50_ttft_ms, p99_e2el_ms


def metrics_from_result(data: Mapping[str, Any], source: str = "<result>") -> Metrics:
    """The figures of one saved result (a JSON object)."""
    completed = int(_required(data, "completed", source))
    failed_value = _number(data, "failed")
    if failed_value is None:
        failed_value = (_number(data, "num_prompts") or completed) - completed
    latency = {
        metric: {stat: _number(data, _stat_key(stat, metric)) for stat in LATENCY_STATS} for metric in LATENCY_METRICS
    }
    for metric in LATENCY_METRICS:  # clients that print no p50 still save the median
        if latency[metric]["p50"] is None:
            latency[metric]["p50"] = _number(data, _stat_key("median", metric))
        if completed == 0:  # the client saves 0.0 when no request succeeded: there is no latency to report
            latency[metric] = dict.fromkeys(LATENCY_STATS)
    return Metrics(
        latency_ms=latency,
        output_tok_s=_required(data, "output_throughput", source),
        total_tok_s=_required(data, "total_token_throughput", source),
        req_s=_required(data, "request_throughput", source),
        goodput_req_s=_number(data, "request_goodput"),
        completed=completed,
        failed=int(failed_value),
        duration_s=_required(data, "duration", source),
        input_tokens=_optional_int(data, "total_input_tokens"),
        output_tokens=_optional_int(data, "total_output_tokens"),
    )


def errors_from_result(data: Mapping[str, Any]) -> tuple[tuple[str, int], ...]:
    """The failed requests' messages of a detailed save (`errors`: "" for a success), counted."""
    raw = data.get("errors")
    if not isinstance(raw, list):
        return ()
    counted = Counter(str(e).strip()[:MAX_ERROR_TEXT] for e in raw if e)
    counted.pop("", None)
    return tuple(counted.most_common())


def load_result(path: Path) -> dict[str, Any]:
    """A saved result file: bounded read; NaN/Infinity (which Python's json writes) read as null."""
    try:
        raw = read_bytes(path, MAX_RESULT_BYTES)
    except JsonReadError as exc:
        raise OperationFailed(f"cannot read the benchmark result {exc.path}: {exc.reason}") from None
    try:
        data = json.loads(raw.decode("utf-8", errors="replace"), parse_constant=lambda _name: None)
    except ValueError as exc:
        raise OperationFailed(f"{path}: the benchmark result is not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise OperationFailed(f"{path}: the benchmark result is not a JSON object")
    return data


def read_point_result(point: WorkloadPoint, path: Path) -> PointResult:
    data = load_result(path)
    return PointResult(point, metrics_from_result(data, str(path)), errors_from_result(data), path)


__all__ = [
    "LATENCY_METRICS",
    "LATENCY_STATS",
    "Metrics",
    "PointResult",
    "errors_from_result",
    "load_result",
    "metrics_from_result",
    "read_point_result",
]
