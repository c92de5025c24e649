"""The real `EngineStarter`: each engine setting started with `ascendctl bench`'s own engine start
(`deployment_for_bench`: `serve --detach`, stopped on exit) and each point measured with its `run_point`
(`vllm bench serve`), read back into tune's `PointOutcome`.

A tune measures only engines it starts: a deployment of the profile already running here would carry other
settings than a trial's, so the tune refuses to begin (exit 2, stop it first) and a trial whose engine turns out to
be one it did not start is a failed start.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from ascendctl.core.errors import OperationFailed, UserInputError
from ascendctl.plan.workload import WorkloadPoint
from ascendctl.run.bench import PointResult, deployment_for_bench, run_point
from ascendctl.run.bench.results import LATENCY_METRICS, LATENCY_STATS
from ascendctl.run.deployments import listed
from ascendctl.run.tune.goal import OUTPUT_TOKENS_PER_S, REQUESTS_PER_S, PointOutcome
from ascendctl.run.tune.trials import PointRunner
from ascendctl_engine.state import StateStore

MAX_ERRORS = 3  # failure messages kept per point (the bench document keeps them all)


def outcome_of(result: PointResult) -> PointOutcome:
    """tune's view of one measured point: the metrics by their SLO names."""
    m = result.metrics
    metrics: dict[str, float | None] = {
        f"{metric}_{stat}_ms": m.latency_ms.get(metric, {}).get(stat)
        for metric in LATENCY_METRICS
        for stat in LATENCY_STATS
    }
    metrics[OUTPUT_TOKENS_PER_S] = m.output_tok_s
    metrics[REQUESTS_PER_S] = m.req_s
    errors = tuple(f"{message} (x{count})" if count > 1 else message for message, count in result.errors[:MAX_ERRORS])
    return PointOutcome(result.point, metrics, m.completed, m.failed, errors)


def refuse_running(name: str, store: StateStore | None = None) -> None:
    """Exit 2 when a deployment named `name` runs here: a tune starts and stops its own engines on its port."""
    if listed(store or StateStore(), name):
        raise UserInputError(
            f"{name} is running here; a tune starts the engine with each setting itself: stop it first "
            f"(ascendctl stop {name})"
        )


class BenchStarter:
    """Starts the profile with a trial's `--set` items (after the tune's own) and measures points against it."""

    def __init__(
        self,
        profile_path: Path,
        base_overrides: Sequence[str],
        allow: Sequence[str],
        work_dir: Path,
        seed: int,
        on_status: Callable[[str], None] | None = None,
        timeout_s: float | None = None,
    ) -> None:
        self.profile_path = profile_path
        self.base = list(base_overrides)
        self.allow = tuple(allow)
        self.work_dir = work_dir
        self.seed = seed
        self.on_status = on_status
        self.timeout_s = timeout_s
        self.starts = 0

    @contextmanager
    def __call__(self, overrides: Sequence[str]) -> Iterator[PointRunner]:
        self.starts += 1
        where = self.work_dir / f"start-{self.starts}"
        where.mkdir(parents=True, exist_ok=True)
        runs = 0
        with deployment_for_bench(
            self.profile_path, [*self.base, *overrides], allow=self.allow, on_status=self.on_status
        ) as (_plan, target, started):
            if not started:
                raise OperationFailed("a deployment of this profile was already running; tune measures only its own")

            def run(point: WorkloadPoint) -> PointOutcome:
                nonlocal runs
                runs += 1
                point_dir = where / f"run-{runs}"
                point_dir.mkdir(exist_ok=True)
                return outcome_of(run_point(target, point, self.seed, point_dir, timeout_s=self.timeout_s))

            yield run


__all__ = ["BenchStarter", "outcome_of", "refuse_running"]
