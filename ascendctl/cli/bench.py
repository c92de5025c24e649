"""`ascendctl bench PROFILE`: measure a deployment with the engine environment's own `vllm bench serve`, one run
per workload point, and report TTFT / TPOT / ITL / E2E latency and throughput (`--json`: the bench document,
schema 1). `ascendctl bench --compare A.json B.json ...`: those runs side by side, ratios against the first,
the settings that differ; `-o DIR` adds a PNG and a self-contained HTML page of TTFT and TPOT per point.
"""

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ascendctl.cli.plan import AllowIdsOption
from ascendctl.cli.serve import OverridesOption

if TYPE_CHECKING:
    from rich.console import Console

    from ascendctl.outputs.bench_report import TextTable
    from ascendctl.plan.workload import Workload
    from ascendctl.run.bench import BenchTarget, PointResult

PLOT_HINT = "pip install 'ascendctl[plot]'"


def bench(
    paths: Annotated[
        list[Path] | None,
        typer.Argument(
            metavar="PROFILE | BENCH.json...",
            help="The profile to benchmark; with --compare, the bench documents to compare.",
            show_default=False,
        ),
    ] = None,
    overrides: OverridesOption = None,
    url: Annotated[
        str | None,
        typer.Option("--url", metavar="URL", help="Benchmark this endpoint instead of the profile's own deployment."),
    ] = None,
    client: Annotated[
        Path | None,
        typer.Option(
            "--client",
            metavar="PATH",
            help="The `vllm` executable that sends the load (default: the profile's engine environment's).",
        ),
    ] = None,
    workload: Annotated[
        str,
        typer.Option(
            "--workload",
            "-w",
            metavar="NAME|FILE|I:O:C|launch:CASE[@TAG]",
            help="Named workload, a workload file, INPUT:OUTPUT:CONCURRENCY (e.g. 2k:256:16), or launch:CASE[@TAG] "
            "(upstream CI's measured load of that launch case, newest tag by default; /HARDWARE after the tag where "
            "it differs by hardware).",
        ),
    ] = "quick",
    goodput: Annotated[
        list[str] | None,
        typer.Option(
            "--goodput",
            metavar="KEY:MS",
            help="Goodput SLO passed to the client: ttft, tpot or e2el in milliseconds (repeatable).",
        ),
    ] = None,
    seed: Annotated[
        int | None, typer.Option("--seed", min=0, help="Seed of the random prompts (default: the workload's).")
    ] = None,
    timeout: Annotated[
        float | None, typer.Option("--timeout", min=1, help="Seconds one point may run (default 1800).")
    ] = None,
    compare: Annotated[bool, typer.Option("--compare", help="Compare bench documents instead of running.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the bench (or comparison) document as JSON.")] = False,
    out_dir: Annotated[
        Path | None,
        typer.Option(
            "--output",
            "-o",
            metavar="DIR",
            help="Write the document and the client's raw results (with "
            "--compare: the comparison, a PNG and an HTML page) here.",
        ),
    ] = None,
    allow: AllowIdsOption = None,
) -> None:
    """Benchmark a deployment (TTFT, TPOT, ITL, E2E latency, throughput per workload point), or compare runs."""
    from ascendctl.core.errors import UserInputError

    files = paths or []
    if compare:
        if len(files) < 2:
            raise UserInputError("--compare needs two or more bench documents (BENCH.json files)")
        used = [name for name, value in (("--url", url), ("--client", client), ("--set", overrides)) if value]
        if used:
            raise UserInputError(f"{', '.join(used)}: not used with --compare")
        _compare(files, as_json=as_json, out_dir=out_dir)
        return
    if len(files) != 1:
        raise UserInputError("expected one PROFILE (or --compare BENCH.json BENCH.json ...)")
    _bench(
        files[0],
        overrides or [],
        url=url,
        client=client,
        workload_text=workload,
        goodput=goodput or [],
        seed=seed,
        timeout=timeout,
        as_json=as_json,
        out_dir=out_dir,
        allow=allow or [],
    )


def _stderr() -> "Console":
    from rich.console import Console

    return Console(stderr=True, highlight=False)


def _bench(
    profile: Path,
    overrides: list[str],
    *,
    url: str | None,
    client: Path | None,
    workload_text: str,
    goodput: list[str],
    seed: int | None,
    timeout: float | None,
    as_json: bool,
    out_dir: Path | None,
    allow: list[str],
) -> None:
    import json
    import tempfile

    from ascendctl.cli.json_errors import failed_after_document
    from ascendctl.core.errors import OperationFailed, UserInputError
    from ascendctl.plan.workload import SEED_MAX, parse_workload
    from ascendctl.run.bench import bench_document, check_goodput, deployment_for_bench
    from ascendctl.run.bench.document import document_bytes, now_iso, write_file_atomic
    from ascendctl.run.bench.target import host_facts_here

    if seed is not None and seed > SEED_MAX:
        raise UserInputError(f"--seed {seed}: at most {SEED_MAX} (the load client seeds numpy with it)")
    load = parse_workload(workload_text)
    slo = check_goodput(goodput)
    err = _stderr()
    started_at = now_iso()
    stamp = started_at.replace(":", "").replace("-", "").split("+")[0]
    with tempfile.TemporaryDirectory(prefix="ascendctl-bench.") as scratch:
        with deployment_for_bench(
            profile, overrides, url=url, allow=allow, client=client, on_status=lambda t: err.print(f"ascendctl: {t}")
        ) as (plan, target, started):
            name = plan.deployment.name
            raw_dir = out_dir / f"bench-{name}-{stamp}" if out_dir is not None else Path(scratch)
            results = _run_points(target, load, load.seed if seed is None else seed, raw_dir, slo, timeout, err)
        document = bench_document(
            profile,
            overrides,
            plan,
            load,
            results,
            host_facts_here(),
            target=target,
            started_here=started,
            started_at=started_at,
            goodput=slo,
        )
    if out_dir is not None:
        path = out_dir / f"bench-{name}-{stamp}.json"
        write_file_atomic(path, document_bytes(document))
        err.print(f"ascendctl: wrote {path} (raw client results in {raw_dir})")
    if as_json:
        typer.echo(json.dumps(document, indent=2))
    else:
        _print_run(document)
    failed = sum(int(p["metrics"]["failed"]) for p in document["points"])
    if failed:
        message = f"{failed} request(s) failed; their messages are in the report"
        if as_json:  # the document says so: stdout stays that one document
            raise failed_after_document(message)
        raise OperationFailed(message)


def _run_points(
    target: "BenchTarget",
    load: "Workload",
    seed: int,
    raw_dir: Path,
    goodput: list[str],
    timeout: float | None,
    err: "Console",
) -> "list[PointResult]":
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from ascendctl.run.bench import run_point

    results: list[PointResult] = []
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=err, transient=True) as progress:
        task = progress.add_task(f"bench {load.name}", total=len(load.points))
        for point in load.points:
            progress.update(task, description=f"bench {load.name}: {point.label} ({point.requests} requests)")
            results.append(run_point(target, point, seed, raw_dir, goodput=goodput, timeout_s=timeout))
            progress.advance(task)
            if not err.is_terminal:
                err.print(f"ascendctl: point {point.label} done")
    return results


def _print_table(table: "TextTable") -> None:
    from rich.console import Console
    from rich.table import Table

    shown = Table(title=table.title, title_justify="left")
    for i, column in enumerate(table.columns):
        shown.add_column(column, justify="left" if i == 0 else "right")
    for row in table.rows:
        shown.add_row(*row)
    console = Console(highlight=False)
    console.print(shown)
    for note in table.notes:
        console.print(note, markup=False, soft_wrap=True)


def _print_run(document: dict[str, Any]) -> None:
    from ascendctl.outputs.bench_report import point_table

    plan = document["plan"]
    typer.echo(
        f"{plan['name']} ({plan['backend']}, release {plan['release'].get('version')}) at "
        f"{document['target']['base_url']}, workload {document['workload']['name']}"
    )
    for point in document["points"]:
        _print_table(point_table(point))
    # after the figures, where a reader compares them: a launch workload's numbers are not upstream's
    caveat = document["workload"].get("caveat")
    if caveat:
        typer.echo(caveat)


def _compare(files: list[Path], *, as_json: bool, out_dir: Path | None) -> None:
    import json

    from ascendctl.outputs.bench_report import (
        compare,
        compare_tables,
        differences_table,
        now_iso,
        read_bench_document,
        run_names,
        write_file_atomic,
    )

    docs = [read_bench_document(path) for path in files]
    comparison = compare(docs, run_names([path.stem for path in files]))
    if out_dir is not None:
        plot = _plotting()
        stamp = now_iso().replace(":", "").replace("-", "").split("+")[0]
        png = plot.plot_png(comparison)
        written = [
            (out_dir / f"bench-compare-{stamp}.png", png),
            (out_dir / f"bench-compare-{stamp}.html", plot.html_page(comparison, png).encode("utf-8")),
            (out_dir / f"bench-compare-{stamp}.json", (json.dumps(comparison, indent=2) + "\n").encode("utf-8")),
        ]
        for path, data in written:
            write_file_atomic(path, data)
        _stderr().print("ascendctl: wrote " + ", ".join(str(path) for path, _ in written))
    if as_json:
        typer.echo(json.dumps(comparison, indent=2))
        return
    for table in [*compare_tables(comparison), differences_table(comparison)]:
        _print_table(table)


def _plotting() -> Any:
    """The plotting module, or one line saying how to install the `plot` extra (matplotlib)."""
    from ascendctl.core.errors import OperationFailed

    try:
        from ascendctl.outputs import bench_plot
    except ImportError as exc:
        raise OperationFailed(f"plots need matplotlib ({exc.name} is not installed): {PLOT_HINT}") from None
    return bench_plot
