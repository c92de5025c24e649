"""`ascendctl check [PROFILE]`: can this host run the engine (or this profile)? Exit 0 ok, 1 a check failed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from ascendctl.core.errors import EXIT_FAILED

if TYPE_CHECKING:
    from ascendctl.check.report import CheckReport


def check(
    profile: Annotated[
        Path | None,
        typer.Argument(help="Profile to check this host against; omit to check the host against the matrix."),
    ] = None,
    root: Annotated[
        str,
        typer.Option("--root", metavar="DIR", help="Read host files under DIR (a captured host tree)."),
    ] = "/",
    engine_python: Annotated[
        str | None,
        typer.Option(
            "--engine-python",
            metavar="PATH",
            help="Interpreter of the engine environment (default: $ASCENDCTL_ENGINE_PYTHON, the engine venv, "
            "or this Python).",
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the JSON report (stable shape).")] = False,
    strict: Annotated[bool, typer.Option("--strict", help="Warnings fail the check too.")] = False,
    overrides: Annotated[
        list[str] | None,
        typer.Option("--set", metavar="KEY.PATH=VALUE", help="Override a profile value (repeatable)."),
    ] = None,
) -> None:
    """Probe this host (NPUs, driver, CANN, engine packages, env, ports) and report what blocks a deployment."""
    if profile is None and not overrides:  # the host alone: neither the profile loader nor the planner is loaded
        from ascendctl.check.host_check import check_host

        report = check_host(root=root, engine_python=engine_python)
    else:
        from ascendctl.check.service import run_check

        report = run_check(profile, overrides or [], root=root, engine_python=engine_python)
    if as_json:
        typer.echo(json.dumps(report.to_dict(strict), indent=2))
    else:
        _render(report, strict)
    if not report.ok(strict):
        raise typer.Exit(EXIT_FAILED)


_STYLE = {"pass": ("ok", "green"), "warn": ("WARN", "yellow"), "fail": ("FAIL", "bold red"), "skip": ("skip", "dim")}


def _host_lines(report: CheckReport) -> list[tuple[str, str]]:
    f = report.facts
    lines: list[tuple[str, str]] = []
    fam = f" — {f.family}" if f.family else ""
    soc = f", SOC_VERSION {f.soc_version}" if f.soc_version else ""
    root = f" (files under {f.root})" if f.root != "/" else ""
    lines.append(("backend", f"{f.backend}{fam}{soc}{root}"))
    if f.devices:
        names = "/".join(sorted({d.name for d in f.devices}))
        hbm = sorted({d.hbm_total_mb for d in f.devices if d.hbm_total_mb})
        bad = [d for d in f.devices if not d.healthy]
        health = "all OK" if not bad else f"{len(bad)} not OK"
        hbm_text = f", {'/'.join(map(str, hbm))} MB each" if hbm else ""
        lines.append(("NPUs", f"{len(f.devices)} × {names}{hbm_text} (health: {health})"))
    elif f.npu_smi_found:
        lines.append(("NPUs", "none listed by npu-smi"))
    elif f.backend == "npu":
        lines.append(("NPUs", "not listed (npu-smi is not on PATH)"))
    if f.driver.installed or f.driver.version:
        lines.append(("driver", f"{f.driver.version or '?'}" + (f" ({f.driver.source})" if f.driver.source else "")))
    if f.cann.version or f.cann.installed_versions:
        sourced = "sourced" if f.cann.sourced else "not sourced"
        lines.append(("CANN", f"{f.cann.version or '?'} at {f.cann.path or '?'} ({sourced})"))
    for gpu in f.cuda.gpus[:1]:
        lines.append(("GPUs", f"{len(f.cuda.gpus)} × {gpu.name} ({gpu.memory_total_mb} MB)"))
    if f.python is not None:
        if f.python.error:
            lines.append(("engine", f"{f.python.interpreter}: {f.python.error}"))
        else:
            pk = ", ".join(f"{k} {v}" for k, v in sorted(f.packages.items())) or "no engine packages"
            lines.append(("engine", f"{f.python.interpreter} (Python {f.python.version}): {pk}"))
    cpu = f.cpu
    if cpu.cores or cpu.memory_total_mb:
        mem = f"{cpu.memory_total_mb / 1024:.1f} GiB" if cpu.memory_total_mb else "? GiB"
        numa = f", {cpu.numa_nodes} NUMA" if cpu.numa_nodes else ""
        lines.append(("CPU", f"{cpu.arch or '?'}, {cpu.cores or '?'} cores, {mem}{numa}"))
    return lines


def _render(report: CheckReport, strict: bool) -> None:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    console = Console(highlight=False)
    console.print("[bold]Host[/bold]")
    for key, value in _host_lines(report):
        console.print(f"  {key:<8} {escape(value)}")
    if report.profile_path:
        release = f", release {report.release}" if report.release else ""
        console.print(f"[bold]Checking[/bold] {escape(report.profile_path)} ({report.target}{release})")
    else:
        console.print(f"[bold]Checking[/bold] this host for the {report.target} backend against the support matrix")

    table = Table(show_header=True, header_style="bold", expand=False)
    table.add_column("", no_wrap=True)
    table.add_column("check", no_wrap=True)
    table.add_column("result  [dim](→ fix)[/dim]")
    skipped: list[str] = []
    for r in report.results:
        if r.status == "skip":
            skipped.append(r.id)
            continue
        label, style = _STYLE[r.status]
        text = escape(r.message)
        if r.fix and r.status != "pass":
            text += f"\n[cyan]→ {escape(r.fix)}[/cyan]"
        table.add_row(f"[{style}]{label}[/{style}]", r.id, text)
    console.print(table)
    if skipped:
        console.print(f"[dim]not applicable: {', '.join(skipped)}[/dim]")
    counts = report.counts()
    verdict = "[green]ok[/green]" if report.ok(strict) else "[bold red]failed[/bold red]"
    console.print(f"{verdict}: {counts['pass']} passed, {counts['warn']} warnings, {counts['fail']} failed")
    console.print(f"[bold]next:[/bold] {escape(report.next_command(strict))}")
