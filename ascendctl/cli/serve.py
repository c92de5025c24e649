"""`ascendctl serve PROFILE`: run the profile's engine on this host and supervise it.

Foreground by default (engine lines prefixed on the console, Ctrl-C drains and stops); `--detach` runs the
same supervisor in the background (a re-executed `python -m ascendctl serve ... --internal-run-id ID` in a
session of its own) and returns once the engine is ready or has failed.
"""

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from ascendctl.cli import completers
from ascendctl.cli.plan import AllowIdsOption
from ascendctl.cli.serve_output import print_failure, run_supervised, warmup_request

if TYPE_CHECKING:
    from ascendctl.run.serve import ServeTarget
    from ascendctl_engine.state import StateStore

OverridesOption = Annotated[
    list[str] | None,
    typer.Option(
        "--set",
        metavar="KEY.PATH=VALUE",
        help="Override a profile value (repeatable).",
        autocompletion=completers.profile_paths,
    ),
]

TAIL_SHOWN = 30


def serve(
    profile: Annotated[Path, typer.Argument(help="Profile YAML file to serve.", show_default=False)],
    overrides: OverridesOption = None,
    node: Annotated[
        int | None,
        typer.Option("--node", min=0, help="Run only this node of a multi-node plan (what each host runs)."),
    ] = None,
    detach: Annotated[
        bool, typer.Option("--detach", "-d", help="Run in the background; return once ready (or failed).")
    ] = False,
    warmup: Annotated[bool, typer.Option("--warmup", help="Send one small request once ready.")] = False,
    dry_run: Annotated[
        bool,
        typer.Option("--dry-run", help="Print the plan (argv, env) without starting; probes nothing unless --facts."),
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="With --dry-run: print the plan as JSON.")] = False,
    facts: Annotated[
        Path | None,
        typer.Option("--facts", metavar="FILE", help="With --dry-run: plan against these host facts (`check --json`)."),
    ] = None,
    allow: AllowIdsOption = None,
    locked: Annotated[
        Path | None,
        typer.Option("--locked", metavar="LOCK", help="Refuse to start when anything drifted since this lock."),
    ] = None,
    internal_run_id: Annotated[str | None, typer.Option("--internal-run-id", hidden=True)] = None,
    internal_unit: Annotated[str | None, typer.Option("--internal-unit", hidden=True)] = None,
) -> None:
    """Serve a profile: start the engine, show start-up phases, wait for /health, supervise until stopped."""
    if dry_run and locked is not None:  # a dry run probes nothing, and the lock is checked against this host
        from ascendctl.core.errors import UserInputError

        raise UserInputError(
            f"--locked is checked when serving; to compare this host with it: ascendctl check {profile} --lock {locked}"
        )
    if dry_run:
        from ascendctl.cli.plan import print_dry_run

        print_dry_run(profile, overrides or [], node=node, as_json=as_json, facts=facts, allow=allow)
        return
    if as_json or facts is not None:
        from ascendctl.core.errors import UserInputError

        which = "--json" if as_json else "--facts"
        raise UserInputError(
            f"{which} is only for --dry-run (serve probes this host itself); `ascendctl ps --json` reports running "
            "deployments"
        )

    from ascendctl.run.serve import load_serving, plan_notes, preflight
    from ascendctl.run.units import HostTarget
    from ascendctl_engine.state import StateStore

    if locked is not None and internal_run_id is None:
        _require_locked(profile, overrides or [], locked)
    target = load_serving(profile, overrides or [], node, allow or ())
    store = StateStore()
    if isinstance(target, HostTarget):
        from ascendctl.cli.serve_pd import serve_host

        serve_host(target, store, run_id=internal_run_id, unit=internal_unit, detach=detach, warmup=warmup)
        return
    if internal_run_id is not None:
        _supervise(target, store, run_id=internal_run_id, foreground=False, warmup=False)
        return
    for note in plan_notes(target.plan):
        typer.echo(f"ascendctl: {note}", err=True)
    preflight(target, store)
    if detach:
        _detach(target, store, warmup=warmup)
    else:
        _supervise(target, store, run_id=None, foreground=True, warmup=warmup)


def _require_locked(profile: Path, overrides: list[str], lock_file: Path) -> None:
    """Exit 1, listing every drift, when this host no longer matches `lock_file`."""
    from ascendctl.core.errors import OperationFailed
    from ascendctl.run.lock import lock_drifts

    found = lock_drifts(lock_file, profile, overrides)
    if found:
        for d in found:
            typer.echo(f"ascendctl: drift: {d.line()}", err=True)
        raise OperationFailed(
            f"{len(found)} drift(s) since {lock_file}: not starting (restore them, or re-lock: ascendctl lock "
            f"{profile} -o {lock_file})"
        )
    typer.echo(f"ascendctl: matches {lock_file}", err=True)


def _supervise(
    target: "ServeTarget", store: "StateStore", *, run_id: str | None, foreground: bool, warmup: bool
) -> None:
    from ascendctl.core.errors import EXIT_INTERRUPTED
    from ascendctl_engine.supervisor import Failure, Supervisor, SupervisorReady

    def on_ready(info: SupervisorReady) -> None:
        if info.restarts:
            typer.echo(f"ascendctl: ready again after restart {info.restarts} ({info.seconds:.1f}s)")
            return
        _print_ready(target, info.seconds, background_pid=None)
        if warmup:
            warmup_request(target.command, target.command.endpoint)
        typer.echo("ascendctl: serving; press Ctrl-C to drain and stop")

    supervisor = Supervisor(
        target.command,
        target.engine.vllm_executable,
        name=target.name,
        store=store,
        console=typer.echo if foreground else None,
        prefix=target.prefix,
        on_ready=on_ready if foreground else None,
        run_id=run_id,
    )

    def shown(failure: Failure) -> None:
        print_failure(failure.tail, failure.diagnoses, supervisor.log_path)

    result = run_supervised(supervisor, on_failure=shown if foreground else None)
    if result.outcome == "interrupted":
        if foreground:
            typer.echo("ascendctl: interrupted before the engine was ready", err=True)
        raise typer.Exit(EXIT_INTERRUPTED)
    if foreground:
        note = " (forced with SIGKILL)" if result.escalated else ""
        typer.echo(f"ascendctl: {target.name} stopped{note}")


def _detach(target: "ServeTarget", store: "StateStore", *, warmup: bool) -> None:
    import signal
    import uuid

    from ascendctl.core.errors import EXIT_INTERRUPTED, OperationFailed
    from ascendctl.run.serve import supervisor_argv
    from ascendctl_engine.state import StateError
    from ascendctl_engine.supervisor import spawn_detached, watch_detached

    run_id = uuid.uuid4().hex
    try:
        store.ensure()
    except StateError as exc:
        raise OperationFailed(str(exc)) from None
    log_path = store.log_path(target.name, target.node)
    offset = log_path.stat().st_size if log_path.exists() else 0
    argv = supervisor_argv(target.profile_path, target.overrides, target.allow, target.node, run_id)
    try:
        child = spawn_detached(argv, log_path)
    except OSError as exc:  # a link or a special file at the log's path (the state directory tampered with), a full
        # disk: exit 1 as for a prefill/decode unit (`ascendctl.run.units.spawn_unit`) and the foreground supervisor
        raise OperationFailed(f"cannot open the log {log_path}: {exc.strerror or exc}") from None
    typer.echo(f"ascendctl: starting {target.name} in the background (supervisor pid {child.pid}), log {log_path}")

    def on_phase(phase: dict[str, object]) -> None:
        typer.echo(f"ascendctl: phase: {phase.get('label')} (at {float(str(phase.get('at', 0))):.1f}s)")

    timeout = target.supervision.ready_timeout + 60.0
    try:
        outcome = watch_detached(
            child,
            store,
            name=target.name,
            node=target.node,
            run_id=run_id,
            log_path=log_path,
            log_offset=offset,
            timeout=timeout,
            on_phase=on_phase,
        )
    except KeyboardInterrupt:
        child.send_signal(signal.SIGTERM)
        typer.echo("ascendctl: interrupted; the background supervisor was asked to stop", err=True)
        raise typer.Exit(EXIT_INTERRUPTED) from None
    if outcome.outcome == "already-running":  # lost a race with another `serve` of the same name
        raise OperationFailed(outcome.reason)
    if outcome.outcome != "ready":
        if outcome.outcome == "timeout":
            child.send_signal(signal.SIGTERM)
        engine_lines = outcome.tail
        print_failure(engine_lines[-TAIL_SHOWN:], outcome.diagnoses, log_path)
        raise OperationFailed(outcome.reason)
    seconds = 0.0
    if outcome.state is not None and outcome.state.phases:
        seconds = float(str(outcome.state.phases[-1].get("at", 0.0)))
    _print_ready(target, seconds, background_pid=child.pid)
    if warmup:
        warmup_request(target.command, target.command.endpoint)
    typer.echo(f"ascendctl: logs: ascendctl logs {target.name} -f    stop: ascendctl stop {target.name}")


def _print_ready(target: "ServeTarget", seconds: float, *, background_pid: int | None) -> None:
    from ascendctl.run.serve import curl_example

    endpoint = target.command.endpoint
    if endpoint is None:
        typer.echo(f"ascendctl: node {target.node} ({target.command.role}) is running")
        return
    where = f" (background supervisor pid {background_pid})" if background_pid else ""
    typer.echo(f"ascendctl: ready in {seconds:.1f}s at {endpoint}{where}")
    typer.echo("try:")
    typer.echo(f"  {curl_example(target.profile, endpoint)}")
