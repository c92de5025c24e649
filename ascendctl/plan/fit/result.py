"""The memory fit's answer, as data: the per-device budget, KV tokens, concurrency, the verdict and the suggested
changes (`FitResult`, what `estimate` returns and a `Plan` carries). Imports nothing but the fit's own constants.
"""

from __future__ import annotations

from dataclasses import field
from typing import Any, Literal

from ascendctl.plan.fit import budget
from ascendctl_engine.records import record

# `does-not-fit`: the engine would refuse to start; `tight`: it starts, but fewer than two full-length sequences
# fit (or graph capture outgrows the headroom, or a given workload does not fit); `fits` otherwise.
Verdict = Literal["fits", "tight", "does-not-fit"]
# 2: the verdict `low-memory` became `tight` with a new meaning (two full-length sequences); `workload` added.
SCHEMA = 2


@record(eq=False)
class DeviceBudget:
    rank: str
    count: int
    hbm_gib: float | None
    weights_gib: float
    activation_gib: float
    graph_capture_gib: float
    comm_buffers_gib: float
    runtime_reserve_gib: float
    kv_cache_gib: float


@record(eq=False)
class Suggestion:
    sets: tuple[str, ...]  # `--set` assignments (KEY.PATH=VALUE), applied together
    kv_tokens: int
    max_concurrency: float
    verdict: Verdict
    why: str


@record
class PointFit:
    """One workload point against the KV cache: `concurrency` requests of `input + output` tokens at once."""

    label: str
    input_len: int
    output_len: int
    concurrency: int
    tokens_needed: int  # in whole blocks
    fits: bool  # held at once without preemption (and within max_model_len)
    headroom_tokens: int  # KV tokens left over (negative: short by that much)
    headroom_fraction: float  # of the KV cache
    requests_held: float  # requests of this length the KV cache holds at once
    over_max_model_len: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "point": self.label,
            "input_len": self.input_len,
            "output_len": self.output_len,
            "concurrency": self.concurrency,
            "tokens_needed": self.tokens_needed,
            "fits": self.fits,
            "headroom_tokens": self.headroom_tokens,
            "headroom_pct": round(100 * self.headroom_fraction, 1),
            "requests_held": round(self.requests_held, 2),
            "over_max_model_len": self.over_max_model_len,
        }


@record
class WorkloadFit:
    name: str
    points: tuple[PointFit, ...]

    @property
    def fits(self) -> bool:
        return all(p.fits for p in self.points)

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "fits": self.fits, "points": [p.to_json() for p in self.points]}


@record(eq=False)
class FitResult:
    per_device: tuple[DeviceBudget, ...]
    limiting_rank: str
    kv_bytes_per_token: int
    kv_tokens: int
    max_concurrency: float
    verdict: Verdict
    block: int
    graph_headroom_gib: float | None  # memory above the requested share that graph capture may use
    suggested_kv_cache_memory: int | None  # bytes, the worker's own suggestion formula
    suggestions: tuple[Suggestion, ...]
    inputs: dict[str, str]
    max_model_len: int
    max_num_seqs: int
    notes: tuple[str, ...] = ()
    hccl_buffsize_mb: int = budget.HCCL_DEFAULT_BUFFSIZE_MB  # what the MC2 group gets (HCCL_BUFFSIZE or default)
    mc2_need_mb: int | None = None  # what MoE dispatch needs for the planned batch (None: no MC2)
    mc2_tokens_per_rank: int | None = None
    workload: WorkloadFit | None = None  # `fit --workload`
    # the `FitInputs` this answer was estimated from, opaque here (the plan's data imports no planning code) and
    # not part of the JSON: `estimate.with_workload` re-estimates from them
    estimated_from: object | None = field(default=None, repr=False)

    def to_json(self) -> dict[str, Any]:
        return {
            "schema": SCHEMA,
            "per_device": [
                {
                    "rank": d.rank,
                    "count": d.count,
                    "hbm_gib": _round(d.hbm_gib),
                    "weights_gib": _round(d.weights_gib),
                    "activation_gib": _round(d.activation_gib),
                    "graph_capture_gib": _round(d.graph_capture_gib),
                    "comm_buffers_gib": _round(d.comm_buffers_gib),
                    "runtime_reserve_gib": _round(d.runtime_reserve_gib),
                    "kv_cache_gib": _round(d.kv_cache_gib),
                }
                for d in self.per_device
            ],
            "limiting_rank": self.limiting_rank,
            "kv_bytes_per_token": self.kv_bytes_per_token,
            "kv_tokens": self.kv_tokens,
            "max_concurrency": round(self.max_concurrency, 2),
            "verdict": self.verdict,
            "block_size": self.block,
            "graph_headroom_gib": _round(self.graph_headroom_gib),
            "suggested_kv_cache_memory": self.suggested_kv_cache_memory,
            "suggestions": [
                {
                    "set": " ".join(s.sets),
                    "sets": list(s.sets),
                    "kv_tokens": s.kv_tokens,
                    "max_concurrency": round(s.max_concurrency, 2),
                    "verdict": s.verdict,
                    "why": s.why,
                }
                for s in self.suggestions
            ],
            "hccl": {
                "buffsize_mb": self.hccl_buffsize_mb,
                "mc2_need_mb": self.mc2_need_mb,
                "mc2_tokens_per_rank": self.mc2_tokens_per_rank,
            },
            "workload": self.workload.to_json() if self.workload is not None else None,
            "inputs": dict(self.inputs),
            "notes": list(self.notes),
        }


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 2)
