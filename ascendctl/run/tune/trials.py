"""The trial loop: one engine start per engine setting, every benchmark setting of it run within that start, within
the time budget.

The engine and the benchmark sit behind `EngineStarter`: called with a trial's `--set` items it returns a context
that starts the engine with them (and stops it on exit) and yields a `PointRunner` that measures one workload
point. `bench_runner` builds the real one (`ascendctl bench`'s engine start and `vllm bench serve`); the tests
inject fakes. An engine that does not start (`OperationFailed`) makes its trials non-candidates with the reason,
and the tune goes on with the next engine setting; a benchmark run that fails does the same for its trial.

Budget: before each trial, the time it would take is estimated from what was measured so far (the mean trial, and
the mean engine start and stop when the trial needs a restart); when the elapsed time plus that estimate would pass
the budget, no more trials start and the remaining ones are reported as skipped. The first trial always runs
(nothing is measured yet).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from statistics import fmean
from typing import Literal, Protocol

from ascendctl.core.errors import OperationFailed
from ascendctl.plan.workload import Workload, WorkloadPoint
from ascendctl.run.tune.goal import Goal, PointOutcome, Slo, best, judge
from ascendctl.run.tune.grid import EngineGroup, TrialSpec, apply_bench, items
from ascendctl_engine.records import record

TrialStatus = Literal["measured", "engine-failed", "bench-failed"]


class PointRunner(Protocol):
    def __call__(self, point: WorkloadPoint) -> PointOutcome: ...


class EngineStarter(Protocol):
    def __call__(self, overrides: Sequence[str]) -> AbstractContextManager[PointRunner]: ...


@record
class TrialResult:
    spec: TrialSpec
    status: TrialStatus
    outcomes: tuple[PointOutcome, ...]
    score: float | None  # the goal metric at the trial's worst point; None when not measured
    reason: str | None  # why it is not a candidate; None: it is one
    seconds: float  # the benchmark runs (the engine start is `start_seconds` of the group's first trial)
    start_seconds: float | None = None  # the engine start this trial waited for (restart trials only)

    @property
    def candidate(self) -> bool:
        return self.reason is None and self.score is not None

    def to_json(self) -> dict[str, object]:
        return {
            "index": self.spec.index,
            "settings": dict(self.spec.settings),
            "engine_settings": dict(self.spec.engine),
            "bench_settings": dict(self.spec.bench),
            "restart": self.spec.restart,
            "status": self.status,
            "score": self.score,
            "candidate": self.candidate,
            "reason": self.reason,
            "seconds": round(self.seconds, 3),
            "start_seconds": None if self.start_seconds is None else round(self.start_seconds, 3),
            "points": [o.to_json() for o in self.outcomes],
        }


@record
class TuneOutcome:
    trials: tuple[TrialResult, ...]  # in measured order
    skipped: tuple[TrialSpec, ...]  # not started: the budget ran out
    engine_starts: int  # engine starts attempted (failed ones included)
    winner: TrialResult | None
    seconds: float


Progress = Callable[[str], None]


class _Budget:
    """Elapsed time against the budget, with estimates from the measured trials and engine starts."""

    def __init__(self, budget_s: float | None, clock: Callable[[], float]) -> None:
        self.budget_s = budget_s
        self.clock = clock
        self.began = clock()
        self.trials: list[float] = []
        self.engine: list[float] = []  # start + stop of each group that ran

    def elapsed(self) -> float:
        return self.clock() - self.began

    def allows(self, restart: bool) -> bool:
        if self.budget_s is None or not self.trials:
            return True
        estimate = fmean(self.trials) + (fmean(self.engine) if restart and self.engine else 0.0)
        return self.elapsed() + estimate <= self.budget_s


def _measure(spec: TrialSpec, run: PointRunner, workload: Workload) -> tuple[TrialStatus, list[PointOutcome], str]:
    outcomes: list[PointOutcome] = []
    for point in workload.points:
        try:
            outcomes.append(run(apply_bench(point, spec.bench)))
        except OperationFailed as exc:
            return "bench-failed", outcomes, f"the benchmark failed: {exc}"
    return "measured", outcomes, ""


@contextmanager
def _timed_group(start: EngineStarter, group: EngineGroup, budget: _Budget) -> Iterator[PointRunner]:
    """The group's engine, its start and stop time added to the budget's engine estimate."""
    began = budget.clock()
    with start(items(group.engine)) as run:
        started = budget.clock()
        try:
            yield run
        finally:
            stopping = budget.clock()
    budget.engine.append((started - began) + (budget.clock() - stopping))


@dataclass
class _Loop:
    """The state of one tune's trial loop: what to run, what ran, what was skipped."""

    workload: Workload
    goal: Goal
    slos: Sequence[Slo]
    start: EngineStarter
    budget: _Budget
    say: Progress
    total: int
    results: list[TrialResult] = field(default_factory=list)
    skipped: list[TrialSpec] = field(default_factory=list)

    def group(self, group: EngineGroup) -> None:
        """One engine start and the trials within it (or each trial failed with the start's reason)."""
        clock = self.budget.clock
        began = clock()
        ran = 0
        try:
            with _timed_group(self.start, group, self.budget) as run:
                start_s = clock() - began
                for spec in group.trials:
                    if ran and not self.budget.allows(restart=False):
                        self.skipped.extend(group.trials[ran:])
                        break
                    self.record(_trial(spec, run, self, start_s if spec.restart else None))
                    self.budget.trials.append(self.results[-1].seconds)
                    ran += 1
        except OperationFailed as exc:
            if ran:
                raise  # the engine failed while stopping, after its trials ran: not a failed start
            self.budget.engine.append(clock() - began)
            reason = f"the engine did not start: {exc}"
            for spec in group.trials:
                self.record(TrialResult(spec, "engine-failed", (), None, reason, 0.0, clock() - began))

    def record(self, result: TrialResult) -> None:
        self.results.append(result)
        self.say(_progress_line(result, self.total))


def run_trials(
    groups: Sequence[EngineGroup],
    workload: Workload,
    goal: Goal,
    slos: Sequence[Slo],
    start: EngineStarter,
    *,
    budget_s: float | None = None,
    clock: Callable[[], float] = time.monotonic,
    progress: Progress | None = None,
) -> TuneOutcome:
    """Run every trial of every group in order (see the module docstring) and pick the winner."""
    budget = _Budget(budget_s, clock)
    say = progress or (lambda _line: None)
    loop = _Loop(workload, goal, slos, start, budget, say, sum(len(g.trials) for g in groups))
    starts = 0
    for n, group in enumerate(groups, 1):
        if loop.skipped or not budget.allows(restart=True):
            loop.skipped.extend(group.trials)
            continue
        starts += 1
        say(f"engine start {n} of {len(groups)}: {' '.join(items(group.engine)) or 'the profile as written'}")
        loop.group(group)
    results = loop.results
    chosen = best([(i, r.score) for i, r in enumerate(results) if r.candidate and r.score is not None], goal)
    winner = None if chosen is None else results[chosen]
    return TuneOutcome(tuple(results), tuple(loop.skipped), starts, winner, budget.elapsed())


def _trial(spec: TrialSpec, run: PointRunner, loop: _Loop, start_s: float | None) -> TrialResult:
    clock = loop.budget.clock
    began = clock()
    status, outcomes, failure = _measure(spec, run, loop.workload)
    seconds = clock() - began
    if status != "measured":
        return TrialResult(spec, status, tuple(outcomes), None, failure, seconds, start_s)
    score, reason = judge(outcomes, loop.goal, loop.slos)
    return TrialResult(spec, status, tuple(outcomes), score, reason, seconds, start_s)


def _progress_line(result: TrialResult, total: int) -> str:
    head = f"trial {result.spec.index}/{total} {result.spec.label}"
    if result.score is None:
        return f"{head}: {result.reason}"
    verdict = "candidate" if result.candidate else f"not a candidate: {result.reason}"
    return f"{head}: {result.score:.2f} ({verdict})"


__all__ = ["EngineStarter", "PointRunner", "TrialResult", "TuneOutcome", "run_trials"]
