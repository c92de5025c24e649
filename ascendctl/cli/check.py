"""`ascendctl check [PROFILE]`: can this host run the engine (or this profile)? Exit 0 ok, 1 a check failed."""

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from ascendctl.cli import completers
from ascendctl.core.errors import EXIT_FAILED, UserInputError

if TYPE_CHECKING:
    from rich.console import Console

    from ascendctl.check.report import CheckReport
    from ascendctl.plan.lock import LockComparison
    from ascendctl_engine.host.facts import HostFacts, NpuDevice


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
        typer.Option(
            "--set",
            metavar="KEY.PATH=VALUE",
            help="Override a profile value (repeatable).",
            autocompletion=completers.profile_paths,
        ),
    ] = None,
    lock_file: Annotated[
        Path | None,
        typer.Option("--lock", metavar="LOCK", help="Also list what drifted since this lock (`ascendctl lock`)."),
    ] = None,
    verbose: Annotated[
        bool, typer.Option("--verbose", "-v", help="Also list the rules that do not apply to this host or profile.")
    ] = False,
    fabric: Annotated[
        bool,
        typer.Option("--fabric", help="Multi-node profiles: also check the NPU fabric (hccn_tool), NIC and ports."),
    ] = False,
    node: Annotated[
        int, typer.Option("--node", metavar="N", help="With --fabric: which profile node this host is.")
    ] = 0,
    peer_facts: Annotated[
        list[Path] | None,
        typer.Option(
            "--peer-facts",
            metavar="FILE",
            help="With --fabric: another node's `check PROFILE --fabric --node N --json` (repeatable).",
        ),
    ] = None,
) -> None:
    """Probe this host (NPUs, driver, CANN, engine packages, env, ports) and report what blocks a deployment."""
    if (fabric or peer_facts) and profile is None:
        raise UserInputError("--fabric checks a multi-node PROFILE: give the profile")
    if peer_facts and not fabric:
        raise UserInputError("--peer-facts is read by --fabric: add --fabric")
    if lock_file is not None and profile is None:
        raise UserInputError("--lock needs the PROFILE the lock was taken of")
    if profile is None and not overrides:  # the host alone: neither the profile loader nor the planner is loaded
        from ascendctl.check.host_check import check_host

        report = check_host(root=root, engine_python=engine_python)
    else:
        from ascendctl.check.fabric_view import FabricRequest
        from ascendctl.check.service import run_check

        wanted = FabricRequest(node, tuple(peer_facts or ())) if fabric else None
        against = _lock_comparison(profile, overrides or [], lock_file, engine_python)
        report = run_check(
            profile, overrides or [], root=root, engine_python=engine_python, fabric=wanted, lock=against
        )
    if as_json:
        typer.echo(json.dumps(report.to_dict(strict), indent=2))
    else:
        _render(report, strict, verbose)
        if fabric and report.fabric is None:
            typer.echo("fabric: the profile runs on one node; the fabric checks apply to multi-node profiles")
    if not report.ok(strict):
        raise typer.Exit(EXIT_FAILED)


def _lock_comparison(
    profile: Path | None, overrides: list[str], lock_file: Path | None, engine_python: str | None
) -> "LockComparison | None":
    """What drifted since `lock_file` (None without `--lock`): the `host.lock` rule reports it."""
    from ascendctl.run.lock import compare_lock

    if lock_file is None or profile is None:
        return None
    return compare_lock(lock_file, profile, overrides, engine_python=engine_python)


_STYLE = {"pass": ("ok", "green"), "warn": ("WARN", "yellow"), "fail": ("FAIL", "bold red"), "skip": ("skip", "dim")}


def _host_lines(report: "CheckReport") -> list[tuple[str, str]]:
    f = report.facts
    lines = [_backend_line(f)]
    optional = (_npu_line(f), _driver_line(f), _cann_line(f), _gpu_line(f), _engine_line(f), _cpu_line(f))
    lines += [line for line in optional if line is not None]
    return lines


def _backend_line(f: "HostFacts") -> tuple[str, str]:
    """The backend, hardware family, SoC and where the host files were read."""
    fam = f" — {f.family}" if f.family else ""
    soc = f", SOC_VERSION {f.soc_version}" if f.soc_version else ""
    root = f" (files under {f.root})" if f.root != "/" else ""
    return ("backend", f"{f.backend}{fam}{soc}{root}")


def _devices_text(devices: "tuple[NpuDevice, ...]") -> str:
    """`8 × 910B3, 65536 MB each (health: all OK)`."""
    names = "/".join(sorted({d.name for d in devices}))
    hbm = sorted({d.hbm_total_mb for d in devices if d.hbm_total_mb})
    bad = [d for d in devices if not d.healthy]
    health = "all OK" if not bad else f"{len(bad)} not OK"
    hbm_text = f", {'/'.join(map(str, hbm))} MB each" if hbm else ""
    return f"{len(devices)} × {names}{hbm_text} (health: {health})"


def _npu_line(f: "HostFacts") -> tuple[str, str] | None:
    """The NPUs npu-smi lists, or why there are none (nothing on a host without npu-smi or NPUs)."""
    if f.devices:
        return ("NPUs", _devices_text(f.devices))
    if f.npu_smi_found:
        return ("NPUs", "none listed by npu-smi")
    if f.backend == "npu":
        return ("NPUs", "not listed (npu-smi is not on PATH)")
    return None


def _driver_line(f: "HostFacts") -> tuple[str, str] | None:
    """The NPU driver's version and where it was read, when there is a driver."""
    if f.driver.installed or f.driver.version:
        return ("driver", f"{f.driver.version or '?'}" + (f" ({f.driver.source})" if f.driver.source else ""))
    return None


def _cann_line(f: "HostFacts") -> tuple[str, str] | None:
    """The CANN toolkit's version, path and whether its environment is sourced, when there is one."""
    if f.cann.version or f.cann.installed_versions:
        sourced = "sourced" if f.cann.sourced else "not sourced"
        return ("CANN", f"{f.cann.version or '?'} at {f.cann.path or '?'} ({sourced})")
    return None


def _gpu_line(f: "HostFacts") -> tuple[str, str] | None:
    """The CUDA GPUs, named after the first, when there are any."""
    if not f.cuda.gpus:
        return None
    gpu = f.cuda.gpus[0]
    return ("GPUs", f"{len(f.cuda.gpus)} × {gpu.name} ({gpu.memory_total_mb} MB)")


def _engine_line(f: "HostFacts") -> tuple[str, str] | None:
    """The engine interpreter and its engine packages (or why it could not be probed), when one was probed."""
    if f.python is None:
        return None
    if f.python.error:
        return ("engine", f"{f.python.interpreter}: {f.python.error}")
    pk = ", ".join(f"{k} {v}" for k, v in sorted(f.packages.items())) or "no engine packages"
    return ("engine", f"{f.python.interpreter} (Python {f.python.version}): {pk}")


def _cpu_line(f: "HostFacts") -> tuple[str, str] | None:
    """CPU architecture, cores, memory and NUMA nodes, when any of cores or memory is known."""
    cpu = f.cpu
    if cpu.cores or cpu.memory_total_mb:
        mem = f"{cpu.memory_total_mb / 1024:.1f} GiB" if cpu.memory_total_mb else "? GiB"
        numa = f", {cpu.numa_nodes} NUMA" if cpu.numa_nodes else ""
        return ("CPU", f"{cpu.arch or '?'}, {cpu.cores or '?'} cores, {mem}{numa}")
    return None


def _render_advice(console: "Console", report: "CheckReport") -> None:
    """The `plan.recipe.*` advice under its own heading, as `plan` prints it (never a failure, never applied)."""
    from rich.markup import escape

    from ascendctl.outputs.plan_text import advice_lines

    lines = advice_lines([r for r in report.results if r.advice])
    for line in lines:
        console.print(f"[cyan]{escape(line)}[/cyan]" if line.startswith("    ") else escape(line), soft_wrap=True)


def _render(report: "CheckReport", strict: bool, verbose: bool = False) -> None:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    console = Console(highlight=False)
    console.print(escape(report.headline), soft_wrap=True)
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
        if r.advice:  # its own heading, below
            continue
        if r.status == "skip":
            skipped.append(r.id)
            continue
        label, style = _STYLE[r.status]
        text = escape(r.message)
        if r.fix and r.status != "pass":
            text += f"\n[cyan]→ {escape(r.fix)}[/cyan]"
        table.add_row(f"[{style}]{label}[/{style}]", r.id, text)
    console.print(table)
    if skipped and verbose:
        console.print(f"[dim]not applicable: {', '.join(skipped)}[/dim]")
    elif skipped:  # a count: dozens of ids (every NPU rule on a CPU host) would bury the results above
        rules = "rule" if len(skipped) == 1 else "rules"
        console.print(f"[dim]{len(skipped)} {rules} not applicable here (--verbose lists them)[/dim]")
    _render_advice(console, report)
    counts = report.counts()
    verdict = "[green]ok[/green]" if report.ok(strict) else "[bold red]failed[/bold red]"
    advice = f", {counts['advice']} advice" if counts["advice"] else ""
    console.print(f"{verdict}: {counts['pass']} passed, {counts['warn']} warnings, {counts['fail']} failed{advice}")
    console.print(f"[bold]next:[/bold] {escape(report.next_command(strict))}")
