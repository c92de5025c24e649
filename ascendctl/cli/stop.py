"""`ascendctl stop NAME`: drain and stop a deployment started with `ascendctl serve` on this host."""

from typing import Annotated

import typer

from ascendctl.cli import completers
from ascendctl.core.errors import OperationFailed


class StopRefused(OperationFailed):
    """Some recorded process could not be proved to be ours: it was left alone (one line each)."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems

    def lines(self) -> list[str]:
        return list(self.problems)


def stop(
    name: completers.DeploymentName,
    node: Annotated[int | None, typer.Option("--node", min=0, help="Stop only this node (default: all here).")] = None,
    timeout: Annotated[
        float | None,
        typer.Option(
            "--timeout", min=0, help="Seconds to wait for the drain before SIGKILL (default: drain timeout + 20)."
        ),
    ] = None,
) -> None:
    """Stop a deployment: its supervisor drains the engine (SIGTERM), SIGKILL only after the timeout. A
    prefill/decode deployment's router is drained and stopped first, then decode, then prefill.

    Only processes proved to be the recorded ones are signalled (pid and process start time, and the
    deployment's lock held by its supervisor or its run id in the engine's environment); anything else is left
    alone and reported (exit 1)."""
    from ascendctl.run.deployments import find_running
    from ascendctl.run.units import stop_in_order

    problems: list[str] = []
    for report in stop_in_order(find_running(name, node), timeout):
        if report.how == "unverified":
            problems.append(f"{report.who}: {report.message}")
            continue
        how = {
            "drained": "stopped",
            "forced": "killed (did not stop within the timeout)",
            "orphan": "stopped its orphaned engine",
            "gone": "had already stopped",
        }[report.how]
        typer.echo(f"{report.who}: {how} in {report.seconds:.1f}s")
    if problems:
        raise StopRefused(problems)
