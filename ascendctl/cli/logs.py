"""`ascendctl logs NAME [-f]`: the engine log of a deployment (running, or its last run)."""

from typing import Annotated

import typer


def logs(
    name: Annotated[str, typer.Argument(help="Deployment name (metadata.name of its profile).", show_default=False)],
    follow: Annotated[
        bool, typer.Option("--follow", "-f", help="Keep printing new lines until the deployment stops.")
    ] = False,
    node: Annotated[int | None, typer.Option("--node", min=0, help="Node of a multi-node deployment.")] = None,
    tail: Annotated[int | None, typer.Option("--tail", "-n", min=0, help="Only the last N lines.")] = None,
    instance: Annotated[
        str | None,
        typer.Option("--instance", "-i", help="Process of a prefill/decode deployment (prefill-0, decode-0, router)."),
    ] = None,
) -> None:
    """Print a deployment's log; with -f, follow it while the deployment runs. A line longer than 64 KiB is
    shown by its end only, marked."""
    import errno
    import time

    from ascendctl.core.errors import OperationFailed
    from ascendctl.run.deployments import listed, log_path_for, open_log
    from ascendctl.run.log_tail import LineClipper, stream, tail_offset
    from ascendctl_engine.state import StateStore

    store = StateStore()
    path = log_path_for(name, node, store, instance)
    lines = LineClipper(lambda text: typer.echo(text, nl=False))
    with open_log(path, name) as handle:
        try:  # from the end, in blocks: a log of any size costs one block of memory, one line a bounded output
            offset = stream(handle, tail_offset(handle, tail) if tail is not None else 0, lines)
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
