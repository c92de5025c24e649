"""`ascendctl stop NAME`: drain and stop a deployment started with `ascendctl serve` on this host."""

from __future__ import annotations

from typing import Annotated

import typer


def stop(
    name: Annotated[str, typer.Argument(help="Deployment name (metadata.name of its profile).", show_default=False)],
    node: Annotated[int | None, typer.Option("--node", min=0, help="Stop only this node (default: all here).")] = None,
    timeout: Annotated[
        float | None,
        typer.Option(
            "--timeout", min=0, help="Seconds to wait for the drain before SIGKILL (default: drain timeout + 20)."
        ),
    ] = None,
) -> None:
    """Stop a deployment: its supervisor drains the engine (SIGTERM), SIGKILL only after the timeout."""
    from ascendctl.deployments import find_running
    from ascendctl_engine.supervisor import stop_deployment

    for entry in find_running(name, node):
        report = stop_deployment(entry, timeout)
        how = {
            "drained": "stopped",
            "forced": "killed (did not stop within the timeout)",
            "orphan": "stopped its orphaned engine",
        }[report.how]
        typer.echo(f"{report.name} (node {report.node}): {how} in {report.seconds:.1f}s")
