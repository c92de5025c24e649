"""The memory fit's answer, as data: the per-device budget, KV tokens, concurrency, the verdict and the suggested
changes (`FitResult`, what `estimate` returns and a `Plan` carries). Imports nothing but the fit's own constants.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from ascendctl.plan.fit import budget

Verdict = Literal["fits", "low-memory", "does-not-fit"]
SCHEMA = 1


@dataclass(frozen=True, eq=False)
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


@dataclass(frozen=True, eq=False)
class Suggestion:
    sets: tuple[str, ...]  # `--set` assignments (KEY.PATH=VALUE), applied together
    kv_tokens: int
    max_concurrency: float
    verdict: Verdict
    why: str


@dataclass(frozen=True, eq=False)
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
            "inputs": dict(self.inputs),
            "notes": list(self.notes),
        }


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 2)
