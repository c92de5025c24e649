"""`ascendctl logs NAME [-f] [--run N | --all | --list]`: the engine log of a deployment — its latest run by default
(running, or the last one); the log file keeps every run of the name (`ascendctl.run.log_runs`)."""

from typing import TYPE_CHECKING, Annotated, BinaryIO

import typer

from ascendctl.cli import completers

if TYPE_CHECKING:
    from ascendctl.run.log_runs import LogRun


def logs(
    name: completers.DeploymentName,
    follow: Annotated[
        bool, typer.Option("--follow", "-f", help="Keep printing new lines until the deployment stops.")
    ] = False,
    node: Annotated[int | None, typer.Option("--node", min=0, help="Node of a multi-node deployment.")] = None,
    tail: Annotated[int | None, typer.Option("--tail", "-n", min=0, help="Only the last N lines.")] = None,
    instance: Annotated[
        str | None,
        typer.Option("--instance", "-i", help="Process of a prefill/decode deployment (prefill-0, decode-0, router)."),
    ] = None,
    run: Annotated[
        int | None, typer.Option("--run", min=1, help="This run of the name (numbered by --list, 1 = the oldest).")
    ] = None,
    every: Annotated[bool, typer.Option("--all", help="Every run of the name in the log, oldest first.")] = False,
    listing: Annotated[bool, typer.Option("--list", help="List the runs in the log, numbered, and exit.")] = False,
) -> None:
    """Print a deployment's log — its latest run, unless --run N or --all; with -f, follow it while the deployment
    runs. A line longer than 64 KiB is shown by its end only, marked."""
    import errno
    import time

    from ascendctl.core.errors import OperationFailed, UserInputError
    from ascendctl.run.deployments import listed, log_path_for, open_log
    from ascendctl.run.log_runs import log_runs
    from ascendctl.run.log_tail import LineClipper, stream
    from ascendctl_engine.state import StateStore

    if sum((run is not None, every, listing)) > 1:
        raise UserInputError("--run, --all and --list choose what to print: give one of them")
    store = StateStore()
    path = log_path_for(name, node, store, instance)
    lines = LineClipper(lambda text: typer.echo(text, nl=False))
    with open_log(path, name) as handle:
        try:  # in blocks: a log of any size costs one block of memory, one line a bounded output
            if listing:
                _print_runs(log_runs(handle))
                return
            first, end = _part(handle, name, run=run, every=every, follow=follow, tail=tail)
            offset = stream(handle, first, lines, end=end)
        except OSError as exc:
            if exc.errno in (errno.EPIPE, errno.ENOSPC):  # stdout's, reported by the top-level handler
                raise
            raise OperationFailed(f"cannot read the log of {name!r}: {path}: {exc.strerror or exc}") from None
        if not follow:
            lines.flush()
            return
        while True:
            running = [e for e in listed(store, name, node) if instance is None or e.state.instance == instance]
            offset = stream(handle, offset, lines)  # what was written meanwhile (all of it, once it has stopped)
            if not running:
                lines.flush()
                return
            time.sleep(0.2)


def _print_runs(runs: "list[LogRun]") -> None:
    for r in runs:
        when = f"started {r.started}" if r.started else "before runs were marked"
        typer.echo(f"{r.number:>3}  run {r.run_id or '-':<8}  {when}  ({r.end - r.start:,} bytes)")


def _part(
    handle: "BinaryIO", name: str, *, run: int | None, every: bool, follow: bool, tail: int | None
) -> tuple[int, int | None]:
    """Where to print from and to (None: to the end, also as it grows): the latest run, read backwards only as far as
    needed, by default; run N or every run when asked; the last `tail` lines of that."""
    from ascendctl.core.errors import UserInputError
    from ascendctl.run.log_runs import latest_run_start, log_runs
    from ascendctl.run.log_tail import tail_offset

    if run is None and not every:
        floor = tail_offset(handle, tail) if tail is not None else 0
        start = latest_run_start(handle, floor=floor)
        return (floor if start is None else start), None
    runs = log_runs(handle)
    if run is not None and run > len(runs):
        raise UserInputError(f"--run {run}: the log of {name!r} holds {len(runs)} run(s) (`--list`)")
    if follow and run is not None and run != len(runs):
        raise UserInputError(f"--follow follows the latest run ({len(runs)}), not run {run}")
    chosen = runs[run - 1] if run is not None else None  # None: --all
    first, end = (chosen.start, chosen.end) if chosen is not None else (0, None)
    if chosen is not None and chosen.number == len(runs):
        end = None  # the latest run goes on to the end of the file, also while it grows
    if tail is not None:
        first = tail_offset(handle, tail, start=first, end=end)
    return first, end
