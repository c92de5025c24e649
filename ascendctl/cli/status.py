"""`ascendctl status [NAME]`: load of each running instance from two scrapes of its `/metrics`.

Exit 0 when every instance answered, 1 when any is down (its reason is shown), 0 on Ctrl-C in `--watch`; 0 when
nothing is running (`--json`: the report with no instances).
"""

import json
from typing import TYPE_CHECKING, Annotated

import typer

from ascendctl.cli import completers
from ascendctl.core.errors import EXIT_FAILED, UserInputError

if TYPE_CHECKING:
    from rich.console import RenderableType

    from ascendctl.run.status import Target


def status(
    name: Annotated[
        str | None,
        typer.Argument(
            help="Deployment name (default: every running deployment).", autocompletion=completers.deployment_names
        ),
    ] = None,
    interval: Annotated[
        float, typer.Option("--interval", help="Seconds between the two scrapes (and between refreshes).")
    ] = 2.0,
    watch: Annotated[bool, typer.Option("--watch", help="Refresh in place until Ctrl-C.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the JSON report (stable shape, `schema`).")] = False,
) -> None:
    """Running and waiting requests, KV-cache use, prompt/generation tokens per second, TTFT and TPOT p50/p99 and
    preemptions over the last interval, per running instance (vLLM's /metrics, scraped twice)."""
    try:
        from ascendctl.run.status import check_interval, refresh, status_report, targets
    except ModuleNotFoundError as exc:  # prometheus-client is a dependency; a broken install says what is missing
        raise UserInputError(f"`status` needs the {exc.name} package: pip install prometheus-client") from None

    if watch and as_json:
        raise UserInputError("--watch refreshes a table; use --json without --watch (one report per run)")
    check_interval(interval)
    found = targets(name)
    if not found:  # nothing to scrape is not an error: --json says so in its own document
        if as_json:
            typer.echo(json.dumps(status_report([], interval), indent=2))
        else:
            typer.echo("no deployments running" if name is None else f"{name} has no instance with an API endpoint")
        return
    if watch:
        _watch(found, interval)
        return
    refresh(found, interval)
    if as_json:
        typer.echo(json.dumps(status_report(found, interval), indent=2))
    else:
        from rich.console import Console

        Console(highlight=False).print(_view(found))
    if any(t.error is not None for t in found):
        raise typer.Exit(EXIT_FAILED)


def _watch(found: "list[Target]", interval: float) -> None:
    from rich.console import Console
    from rich.live import Live

    from ascendctl.run.status import refresh

    try:
        with Live(_view(found), console=Console(highlight=False), auto_refresh=False) as live:
            while True:
                refresh(found, interval)
                live.update(_view(found), refresh=True)
    except KeyboardInterrupt:
        return


COLUMNS = ("INSTANCE", "RUN", "WAIT", "KV%", "PROMPT t/s", "GEN t/s", "TTFT ms p50/p99", "TPOT ms p50/p99", "PREEMPT")


def _number(value: object, digits: int = 1) -> str:
    return "-" if value is None else f"{float(value):.{digits}f}"  # type: ignore[arg-type]


def _view(found: "list[Target]") -> "RenderableType":
    """A table of the instances that answered, then one line per instance that is down (with its reason)."""
    from rich.console import Group
    from rich.markup import escape
    from rich.table import Table
    from rich.text import Text

    table = Table(show_header=True, header_style="bold", expand=False, box=None, pad_edge=False)
    for column in COLUMNS:
        # never cut a header: at 80 columns (and in a pipe, which rich sizes at 80) the two-word headers take two
        # lines and the figures are never wrapped; the instance's label takes what is left and wraps
        if column == "INSTANCE":
            table.add_column(column, overflow="fold", min_width=len(column))
        else:
            table.add_column(column.replace(" ", "\n", 1) if " " in column else column, no_wrap=True)
    down: list[Text] = []
    for t in found:
        label = t.name + (f" {t.instance}" if t.instance else "") + f" (node {t.node})"
        if t.error is not None:
            down.append(Text.from_markup(f"[bold red]down[/bold red] {escape(label)}: {escape(t.error)}"))
            continue
        r = t.result
        if r is None:
            table.add_row(escape(label), "…")
            continue
        table.add_row(
            escape(label),
            _number(r.running, 0),
            _number(r.waiting, 0),
            _number(r.kv_cache_usage_pct),
            _number(r.prompt_tokens_per_s),
            _number(r.generation_tokens_per_s),
            f"{_number(r.ttft_ms.get('p50'))}/{_number(r.ttft_ms.get('p99'))}",
            f"{_number(r.tpot_ms.get('p50'))}/{_number(r.tpot_ms.get('p99'))}",
            _number(r.preemptions, 0),
        )
    return Group(*([table] if table.row_count else []), *down)
