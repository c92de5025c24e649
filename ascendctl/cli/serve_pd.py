"""`ascendctl serve PROFILE --node N` for a prefill/decode deployment: host N's instances, then (on node 0) the
router, each under its own background supervisor (`ascendctl.run.units`); in the foreground their logs follow
with a prefix each until Ctrl-C, which stops the router first and then the engines."""

from __future__ import annotations

import signal
import time
from pathlib import Path
from types import FrameType

import typer

from ascendctl.core.errors import EXIT_INTERRUPTED, OperationFailed, UserInputError
from ascendctl.run.units import HostTarget, Started, UnitFailed, start_host, stop_begun
from ascendctl_engine.spec import Unit
from ascendctl_engine.state import StateError, StateStore, describe_process

TAIL_SHOWN = 30
FOLLOW_INTERVAL = 0.2


def serve_host(
    target: HostTarget, store: StateStore, *, run_id: str | None, unit: str | None, detach: bool, warmup: bool
) -> None:
    if run_id is not None:
        if unit is None:
            raise UserInputError("--internal-run-id of a prefill/decode deployment needs --internal-unit")
        _supervise_unit(target, store, run_id, unit)
        return
    from ascendctl.cli.serve_output import print_failure, warmup_request
    from ascendctl.run.serve import plan_notes, preflight_host, supervisor_argv

    for note in plan_notes(target.plan):
        typer.echo(f"ascendctl: {note}", err=True)
    preflight_host(target, store)
    try:
        store.ensure()
    except StateError as exc:
        raise OperationFailed(str(exc)) from None

    def argv(run: str, instance: str) -> list[str]:
        return supervisor_argv(target.profile_path, target.overrides, target.allow, target.node, run, instance)

    def on_phase(one: Unit, phase: dict[str, object]) -> None:
        at = float(str(phase.get("at", 0)))
        typer.echo(f"ascendctl: {one.instance}: phase: {phase.get('label')} (at {at:.1f}s)")

    try:
        begun = start_host(target, store, argv, say=lambda m: typer.echo(f"ascendctl: {m}"), on_phase=on_phase)
    except UnitFailed as exc:
        print_failure(exc.outcome.tail[-TAIL_SHOWN:], exc.outcome.diagnoses, exc.log_path)
        raise
    except KeyboardInterrupt:
        typer.echo("ascendctl: interrupted; what had started was stopped", err=True)
        raise typer.Exit(EXIT_INTERRUPTED) from None
    router = target.router
    if router is not None:
        typer.echo(f"ascendctl: {target.name} is ready: the router answers at {router[1].endpoint}")
        from ascendctl.run.serve import curl_example

        typer.echo("try:")
        typer.echo(f"  {curl_example(target.profile, router[1].endpoint)}")
        if warmup:
            warmup_request(target.units[0][1], router[1].endpoint)
    else:
        typer.echo(f"ascendctl: node {target.node} of {target.name} is ready (the router runs on node 0)")
    if detach:
        names = "|".join(u.instance for u, _ in target.units)
        typer.echo(f"ascendctl: logs: ascendctl logs {target.name} --instance {names} -f")
        typer.echo(f"ascendctl: stop: ascendctl stop {target.name}")
        return
    _follow(target, store, begun)


def _supervise_unit(target: HostTarget, store: StateStore, run_id: str, instance: str) -> None:
    """The background supervisor of one unit (what `start_host` spawns)."""
    from ascendctl.cli.serve_output import run_supervised
    from ascendctl_engine.supervisor import Supervisor

    unit, command = target.unit(instance)
    supervisor = Supervisor(
        command,
        target.engine.vllm_executable,
        name=target.name,
        store=store,
        prefix=target.prefix(unit),
        run_id=run_id,
        unit=unit,
    )
    if run_supervised(supervisor).outcome == "interrupted":
        raise typer.Exit(EXIT_INTERRUPTED)


class _Stop(Exception):
    """SIGTERM or SIGHUP to the foreground `serve`: stop like Ctrl-C."""


def _raise_stop(signum: int, frame: FrameType | None) -> None:
    raise _Stop


def _follow(target: HostTarget, store: StateStore, begun: list[Started]) -> None:
    """Print the units' new log lines (prefixed) until Ctrl-C/SIGTERM or one of them stops on its own; then stop
    all of them, router first."""
    typer.echo("ascendctl: serving; press Ctrl-C to drain and stop (the router first)")
    tails = {one.unit.instance: _Tail(one.log_path, one.log_offset) for one in begun}
    previous = {sig: signal.signal(sig, _raise_stop) for sig in (signal.SIGTERM, signal.SIGHUP)}
    gone: Started | None = None
    try:
        while gone is None:
            for one in begun:
                for line in tails[one.unit.instance].new_lines():
                    typer.echo(f"{target.prefix(one.unit)}{line}")
            gone = next((one for one in begun if not _running(store, target, one)), None)
            if gone is None:
                time.sleep(FOLLOW_INTERVAL)
    except (KeyboardInterrupt, _Stop):
        typer.echo("ascendctl: stopping (the router first)")
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    for report in stop_begun(target, store, begun):
        typer.echo(f"ascendctl: {report.who}: {report.how} in {report.seconds:.1f}s")
    if gone is not None:
        who = describe_process(target.name, gone.unit.host, gone.unit.instance)
        raise OperationFailed(f"{who} stopped on its own (see `ascendctl logs {target.name} --instance "
                              f"{gone.unit.instance}`); the rest of the node was stopped")  # fmt: skip


def _running(store: StateStore, target: HostTarget, one: Started) -> bool:
    state = store.get(target.name, one.unit.host, one.unit.instance)
    return state is not None and state.run_id == one.run_id


class _Tail:
    """New complete lines of a log from an offset (a log rotated at start is read from its beginning)."""

    def __init__(self, path: Path, offset: int) -> None:
        self.path = path
        self.offset = offset
        self.pending = b""

    def new_lines(self) -> list[str]:
        try:
            with self.path.open("rb") as handle:
                handle.seek(0, 2)
                if handle.tell() < self.offset:
                    self.offset = 0
                handle.seek(self.offset)
                data = handle.read(1 << 20)
        except OSError:
            return []
        self.offset += len(data)
        *complete, self.pending = (self.pending + data).split(b"\n")
        return [raw.decode("utf-8", errors="replace") for raw in complete]
