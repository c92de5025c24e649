"""What a tune optimizes and under which bounds: the goal (`--goal`), the SLOs (`--slo NAME=MS`), and which trial
wins.

The SLO names are the benchmark's own latency figures (`ascendctl.run.bench.results`' `LATENCY_METRICS` ×
`LATENCY_STATS`: `ttft_p99_ms`, `tpot_p50_ms`, `e2el_mean_ms`, …), so whatever `ascendctl bench` reports can bound
a tune. A trial
runs every point of the workload; it is a candidate when every request of every point completed and every point
meets every SLO, and its score is its worst point (the lowest throughput, the highest latency): the winner holds
up across the whole workload, not on its easiest point.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import field

from ascendctl.core.errors import UserInputError
from ascendctl.plan.workload import WorkloadPoint
from ascendctl.run.bench.results import LATENCY_METRICS, LATENCY_STATS
from ascendctl_engine.records import record

# The one table of metric names a tune reads: the latency percentiles (milliseconds) and the rates.
SLO_NAMES: tuple[str, ...] = tuple(f"{m}_{stat}_ms" for m in LATENCY_METRICS for stat in LATENCY_STATS)
OUTPUT_TOKENS_PER_S = "output_tok_s"
REQUESTS_PER_S = "req_s"
METRIC_NAMES: tuple[str, ...] = (*SLO_NAMES, OUTPUT_TOKENS_PER_S, REQUESTS_PER_S)


@record
class Goal:
    name: str
    metric: str
    maximize: bool
    means: str  # for the console and the tuned profile's header

    def better(self, a: float, b: float) -> bool:
        return a > b if self.maximize else a < b

    def worst(self, values: Sequence[float]) -> float:
        return min(values) if self.maximize else max(values)


GOALS: dict[str, Goal] = {
    g.name: g
    for g in (
        Goal("throughput", OUTPUT_TOKENS_PER_S, True, "the highest output tokens/s"),
        Goal("ttft", "ttft_p99_ms", False, "the lowest p99 time to first token"),
        Goal("tpot", "tpot_p99_ms", False, "the lowest p99 time per output token"),
    )
}


@record
class Slo:
    metric: str  # one of SLO_NAMES
    limit_ms: float

    @property
    def text(self) -> str:
        return f"{self.metric}<={self.limit_ms:g}"


def goal_named(name: str) -> Goal:
    if name not in GOALS:
        raise UserInputError(f"--goal {name}: expected one of {', '.join(GOALS)}")
    return GOALS[name]


def parse_slo(text: str) -> Slo:
    name, sep, raw = text.partition("=")
    name = name.strip()
    if not sep or name not in SLO_NAMES:
        shown = ", ".join(SLO_NAMES)
        raise UserInputError(f"--slo {text}: expected NAME=MILLISECONDS with NAME one of {shown}")
    try:
        limit = float(raw)
    except ValueError:
        limit = math.nan
    if not (0 < limit < math.inf):
        raise UserInputError(f"--slo {text}: the bound is milliseconds above 0 (e.g. {name}=500)")
    return Slo(name, limit)


def parse_slos(texts: Sequence[str]) -> tuple[Slo, ...]:
    slos = tuple(parse_slo(t) for t in texts)
    names = [s.metric for s in slos]
    twice = [n for i, n in enumerate(names) if n in names[:i]]
    if twice:
        raise UserInputError(f"--slo {twice[0]}: given twice")
    return slos


@record
class PointOutcome:
    """One workload point measured: its metrics by name (`METRIC_NAMES`; None when the run reported none), and
    how many requests completed and failed (with the first failures' messages)."""

    point: WorkloadPoint
    metrics: Mapping[str, float | None]
    completed: int
    failed: int
    errors: tuple[str, ...] = field(default=())

    def to_json(self) -> dict[str, object]:
        return {
            "point": self.point.to_json(),
            "label": self.point.label,
            "metrics": {name: self.metrics.get(name) for name in METRIC_NAMES},
            "completed": self.completed,
            "failed": self.failed,
            "errors": list(self.errors),
        }


def judge(outcomes: Sequence[PointOutcome], goal: Goal, slos: Sequence[Slo]) -> tuple[float | None, str | None]:
    """A measured trial's score (its worst point's goal metric) and why it is not a candidate (None: it is)."""
    if not outcomes:
        return None, "nothing was measured"
    for o in outcomes:
        if o.failed:
            first = f" (first: {o.errors[0]})" if o.errors else ""
            return None, f"{o.failed} of {o.failed + o.completed} requests failed at {o.point.label}{first}"
    values: list[float] = []
    for o in outcomes:
        value = o.metrics.get(goal.metric)
        if value is None:
            return None, f"the benchmark reported no {goal.metric} at {o.point.label}"
        values.append(value)
    score = goal.worst(values)
    for slo in slos:
        for o in outcomes:
            measured = o.metrics.get(slo.metric)
            if measured is None:
                return score, f"the benchmark reported no {slo.metric} at {o.point.label}"
            if measured > slo.limit_ms:
                return score, f"{slo.metric} {measured:.1f} > {slo.limit_ms:g} at {o.point.label}"
    return score, None


def best(scored: Sequence[tuple[int, float]], goal: Goal) -> int | None:
    """The index of the best `(index, score)` candidate; on a tie, the one measured first."""
    winner: tuple[int, float] | None = None
    for index, score in scored:
        if winner is None or goal.better(score, winner[1]):
            winner = (index, score)
    return None if winner is None else winner[0]


__all__ = [
    "GOALS",
    "METRIC_NAMES",
    "SLO_NAMES",
    "Goal",
    "PointOutcome",
    "Slo",
    "best",
    "goal_named",
    "judge",
    "parse_slo",
    "parse_slos",
]
