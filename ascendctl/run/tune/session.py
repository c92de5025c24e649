"""One tune, end to end: parse and check everything (the grid, the goal, the SLOs, the workload, where the outputs
go, every engine setting planned) before any engine starts; then the trials; then the tuned profile and the report.

The engine and the planner come in as arguments (`EngineStarter`, `PlanFn`), so the whole flow runs in tests with
fakes; `ascendctl tune` passes `bench_runner.BenchStarter` and bench's `plan_for_bench`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ascendctl.core.errors import UserInputError
from ascendctl.plan.types import Plan
from ascendctl.plan.workload import Workload, parse_workload
from ascendctl.run.tune.goal import Goal, Slo, goal_named, parse_slos
from ascendctl.run.tune.grid import Assignment, Axis, EngineGroup, label, ordered, parse_grid
from ascendctl.run.tune.prepare import PlanFn, plan_grid
from ascendctl.run.tune.trials import EngineStarter, Progress, TuneOutcome, run_trials
from ascendctl.run.tune.tuned import outputs_for, tune_document, write_report, write_tuned
from ascendctl_engine.records import record


@record
class TuneRequest:
    profile_path: Path
    grid: tuple[str, ...]
    goal: str = "throughput"
    slos: tuple[str, ...] = ()
    workload: str = "quick"
    budget_min: float | None = None
    out: Path | None = None
    overrides: tuple[str, ...] = ()  # `--set` for every trial (kept in the tuned profile)


@record
class Prepared:
    """A tune checked and planned, nothing started yet."""

    request: TuneRequest
    axes: tuple[Axis, ...]
    groups: tuple[EngineGroup, ...]
    goal: Goal
    slos: tuple[Slo, ...]
    workload: Workload
    tuned_path: Path
    report_path: Path
    plans: dict[Assignment, Plan]

    @property
    def name(self) -> str:
        """The deployment's name (every engine setting plans the same profile, so the same name)."""
        return next(iter(self.plans.values())).deployment.name


@record
class TuneReport:
    document: dict[str, Any]
    outcome: TuneOutcome
    tuned: Path | None  # None: no trial won, nothing written
    report: Path


def prepare(request: TuneRequest, plan: PlanFn) -> Prepared:
    """Everything a user can get wrong, found before anything runs (exit 2)."""
    if request.budget_min is not None and not request.budget_min > 0:
        raise UserInputError(f"--budget-min {request.budget_min:g}: minutes above 0")
    axes = parse_grid(request.grid)
    goal = goal_named(request.goal)
    slos = parse_slos(request.slos)
    workload = parse_workload(request.workload)
    tuned_path, report_path = outputs_for(request.profile_path, request.out)
    groups = ordered(axes)
    plans = plan_grid(request.profile_path, request.overrides, axes, groups, plan)
    return Prepared(request, axes, groups, goal, slos, workload, tuned_path, report_path, plans)


def _plans_json(prepared: Prepared) -> dict[str, Any]:
    """Per engine setting: the release and node 0's argv it planned (what each start ran)."""
    out: dict[str, Any] = {}
    for assignment, p in prepared.plans.items():
        out[label(assignment)] = {"release": p.deployment.release.version, "argv": list(p.commands[0].argv)}
    return out


def run(
    prepared: Prepared,
    start: EngineStarter,
    *,
    progress: Progress | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> TuneReport:
    """The trials, then the tuned profile (when a trial won) and the report (always)."""
    request = prepared.request
    budget_s = None if request.budget_min is None else request.budget_min * 60
    outcome = run_trials(
        prepared.groups, prepared.workload, prepared.goal, prepared.slos, start,
        budget_s=budget_s, clock=clock, progress=progress,
    )  # fmt: skip
    tuned: Path | None = None
    if outcome.winner is not None:
        write_tuned(request.profile_path, request.overrides, outcome, prepared.goal, prepared.slos, prepared.tuned_path)
        tuned = prepared.tuned_path
    document = tune_document(
        request.profile_path, request.overrides, prepared.axes, prepared.workload, prepared.goal, prepared.slos,
        request.budget_min, outcome, tuned, _plans_json(prepared),
    )  # fmt: skip
    write_report(prepared.report_path, document)
    return TuneReport(document, outcome, tuned, prepared.report_path)


def trial_rows(outcome: TuneOutcome, goal: Goal) -> list[dict[str, str]]:
    """The console table's rows, in measured order (skipped trials last)."""
    rows: list[dict[str, str]] = []
    for t in outcome.trials:
        won = outcome.winner is not None and t.spec.index == outcome.winner.spec.index
        rows.append(
            {
                "#": str(t.spec.index),
                "settings": t.spec.label,
                "restart": "yes" if t.spec.restart else "",
                goal.metric: "-" if t.score is None else f"{t.score:.2f}",
                "verdict": "WINNER" if won else ("candidate" if t.candidate else (t.reason or "").splitlines()[0]),
            }
        )
    for s in outcome.skipped:
        restart = "yes" if s.restart else ""
        verdict = "skipped: over the --budget-min"
        rows.append({"#": str(s.index), "settings": s.label, "restart": restart, goal.metric: "-", "verdict": verdict})
    return rows


__all__ = ["Prepared", "TuneReport", "TuneRequest", "prepare", "run", "trial_rows"]
