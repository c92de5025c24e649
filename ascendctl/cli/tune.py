"""`ascendctl tune PROFILE --grid KEY=V1,V2 … [--goal G] [--slo NAME=MS …] [--budget-min M]`: benchmark each
combination (one engine start per distinct engine setting), keep the best under the SLOs, write it as
`<stem>.tuned.yaml` with a report of every trial. `--suggest` prints grids worth trying instead.
"""

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ascendctl.cli.plan import AllowIdsOption, OverridesOption

if TYPE_CHECKING:
    from ascendctl.run.tune.goal import Goal
    from ascendctl.run.tune.session import TuneReport

SUGGEST_SCHEMA = 1


def tune(
    profile: Annotated[Path, typer.Argument(help="Profile YAML file to tune.", show_default=False)],
    grid: Annotated[
        list[str] | None,
        typer.Option(
            "--grid",
            metavar="KEY=V1,V2",
            help="Values to try (repeatable): a profile dotted path (one engine start per distinct value) or a "
            "benchmark setting: concurrency, request_rate (no restart).",
        ),
    ] = None,
    goal: Annotated[
        str, typer.Option("--goal", metavar="GOAL", help="throughput (max output tok/s), ttft or tpot (min p99).")
    ] = "throughput",
    slo: Annotated[
        list[str] | None,
        typer.Option("--slo", metavar="NAME=MS", help="A bound each candidate meets: ttft_p99_ms=500 (repeatable)."),
    ] = None,
    budget_min: Annotated[
        float | None,
        typer.Option("--budget-min", metavar="M", help="Start no trial that would end past M minutes (estimated)."),
    ] = None,
    workload: Annotated[
        str, typer.Option("--workload", metavar="W", help="NAME, INPUT:OUTPUT:CONCURRENCY or FILE (as bench).")
    ] = "quick",
    out: Annotated[
        Path | None,
        typer.Option("-o", "--output", metavar="OUT", help="Write the tuned profile here (default <stem>.tuned.yaml)."),
    ] = None,
    overrides: OverridesOption = None,
    allow: AllowIdsOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report (or the suggestions) as JSON.")] = False,
    suggest: Annotated[
        bool, typer.Option("--suggest", help="Print grids worth trying for the profile's backend and release.")
    ] = False,
) -> None:
    """Search settings with the benchmark and write the winning profile (docs/guides/bench-and-tune.md)."""
    if suggest:
        _suggest(profile, overrides or [], allow or [], as_json=as_json)
        return
    import json
    import tempfile

    from ascendctl.cli.json_errors import failed_after_document
    from ascendctl.core.errors import OperationFailed
    from ascendctl.run.bench.target import plan_for_bench
    from ascendctl.run.tune.bench_runner import BenchStarter, refuse_running
    from ascendctl.run.tune.session import TuneRequest, prepare, run

    request = TuneRequest(
        profile, tuple(grid or ()), goal, tuple(slo or ()), workload, budget_min, out, tuple(overrides or ())
    )
    prepared = prepare(request, lambda p: plan_for_bench(p, allow or ()))
    refuse_running(prepared.name)
    trials = sum(len(g.trials) for g in prepared.groups)
    say = _stderr
    say(f"tune {prepared.name}: {trials} trial(s), {len(prepared.groups)} engine start(s), workload {workload}")
    with tempfile.TemporaryDirectory(prefix="ascendctl-tune.") as work:
        starter = BenchStarter(profile, request.overrides, allow or (), Path(work), prepared.workload.seed, say)
        report = run(prepared, starter, progress=say)
    if as_json:
        typer.echo(json.dumps(report.document, indent=2))
    else:
        _print_report(report, prepared.goal)
    if report.tuned is None:
        message = f"no trial met the goal's conditions; every trial and why: {report.report}"
        if as_json:  # the report says so: stdout stays that one document
            raise failed_after_document(message)
        raise OperationFailed(message)


def _stderr(line: str) -> None:
    typer.echo(line, err=True)


def _table(rows: list[dict[str, str]]) -> list[str]:
    if not rows:
        return []
    columns = list(rows[0])
    widths = {c: max(len(c), *(len(r[c]) for r in rows)) for c in columns}
    lines = ["  ".join(c.ljust(widths[c]) for c in columns).rstrip()]
    lines += ["  ".join(r[c].ljust(widths[c]) for c in columns).rstrip() for r in rows]
    return lines


def _print_report(report: "TuneReport", goal: "Goal") -> None:
    from ascendctl.run.tune.session import trial_rows

    outcome = report.outcome
    lines = [*_table(trial_rows(outcome, goal)), "", f"engine starts: {outcome.engine_starts}; {outcome.seconds:.0f}s"]
    winner = outcome.winner
    if winner is not None and winner.score is not None:
        lines.append(f"winner: trial {winner.spec.index}: {winner.spec.label} ({goal.metric} {winner.score:.2f})")
    if report.tuned is not None:
        lines.append(f"tuned profile: {report.tuned}")
    lines.append(f"report: {report.report}")
    typer.echo("\n".join(lines))


def _suggest(profile: Path, overrides: list[str], allow: list[str], *, as_json: bool) -> None:
    import json

    from ascendctl.init.recipe import launch_settings
    from ascendctl.plan.planner import plan_profile, require_startable
    from ascendctl.run.tune.suggest import NO_UPSTREAM, Upstream, prober, suggest_grids
    from ascendctl.schema.loader import load_profile

    def planned(p: Any) -> Any:
        plan = plan_profile(p, allow=allow)  # pure planning, as `ascendctl plan` without --facts
        require_startable(plan)
        return plan

    loaded = load_profile(profile, overrides)
    plan = planned(loaded)
    found = launch_settings(loaded, plan)
    upstream = Upstream(*found) if found is not None else NO_UPSTREAM
    grids = suggest_grids(plan, prober(lambda items: load_profile(profile, [*overrides, *items]), planned), upstream)
    release = plan.deployment.release.version
    if as_json:
        doc = {
            "schema": SUGGEST_SCHEMA,
            "profile": str(profile),
            "backend": plan.deployment.backend,
            "release": release,
            "upstream": upstream.source or None,  # the verified launch whose values are tried first
            "grids": [g.to_json() for g in grids],
        }
        typer.echo(json.dumps(doc, indent=2))
        return
    lines = [f"Grids worth trying for {profile} ({plan.deployment.backend}, release {release}); each value plans:"]
    for g in grids:
        lines += [f"  --grid '{g.text}'", f"      {g.why}"]
    lines.append("Each engine setting costs one engine start; combine a few: the trials are their product.")
    typer.echo("\n".join(lines))
