"""`ascendctl ps`: the deployments supervised on this host (stale records are cleaned on the way)."""

import json
from typing import Annotated

import typer


def ps(
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON list instead of a table.")] = False,
) -> None:
    """List running deployments: name, node, instance and role (prefill/decode/router, or head/worker), supervisor
    pid, endpoint, uptime, status, health."""
    from ascendctl.run.deployments import deployment_rows

    rows = deployment_rows()
    if as_json:
        typer.echo(json.dumps(rows, indent=2))
        return
    if not rows:
        typer.echo("no deployments running")
        return
    header = ("NAME", "NODE", "INSTANCE", "ROLE", "PID", "ENDPOINT", "UPTIME", "STATUS", "HEALTH", "RESTARTS")
    table = [header] + [
        (
            str(r["name"]),
            str(r["node"]),
            str(r["instance"] or "-"),
            str(r["instance_role"] or r["role"]),
            str(r["pid"]),
            str(r["endpoint"] or "-"),
            _uptime(float(r["uptime_s"])),  # type: ignore[arg-type]
            str(r["status"]),
            str(r["health"]),
            str(r["restarts"]),
        )
        for r in rows
    ]
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    for row in table:
        typer.echo("  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip())


def _uptime(seconds: float) -> str:
    seconds = int(seconds)
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"
