"""`ascendctl init MODEL [--hardware HW] [--devices N] [--nodes K] [--release TAG] [--max-model-len L]
[--workload W] [--variant NAME] [--list] [-o FILE] [--json]`: a verified, fit-checked profile for a model.

It starts from what upstream's CI runs on hardware for the model (`ascendctl.init`), adapts it to the devices and
release asked with the memory fit, and writes `NAME.yaml` (or `-o FILE`), whose header says where each choice comes
from. Exit 0 with the profile written; 1 when nothing fits (nothing written; the alternatives that do, each with
its command); 2 for bad input (an unknown release, hardware or variant; an existing file `-o` does not name).
"""

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from ascendctl.cli import completers

if TYPE_CHECKING:
    from ascendctl_engine.host.facts import HostFacts


def init(
    model: Annotated[str, typer.Argument(help="The model, spelled as model.source is (hub id, path, prepared:NAME).")],
    hardware: Annotated[
        str | None,
        typer.Option(
            "--hardware",
            help="a2, a3, 300i-duo or 950 (default: this host's NPUs, else CPU).",
            autocompletion=completers.hardware_ids,
        ),
    ] = None,
    devices: Annotated[int | None, typer.Option("--devices", min=1, max=64, help="Devices per node (1 to 64).")] = None,
    nodes: Annotated[int, typer.Option("--nodes", min=1, max=64, help="Nodes (1 to 64).")] = 1,
    release: Annotated[
        str, typer.Option("--release", help="vllm-ascend tag or pin.", autocompletion=completers.releases)
    ] = "latest-stable",
    max_model_len: Annotated[int | None, typer.Option("--max-model-len", min=1, help="Context length.")] = None,
    workload: Annotated[
        str | None, typer.Option("--workload", help="The load to leave KV room for (as `fit --workload`).")
    ] = None,
    variant: Annotated[str | None, typer.Option("--variant", help="Which upstream variant (see --list).")] = None,
    list_variants: Annotated[bool, typer.Option("--list", help="List the variants upstream runs, then exit.")] = False,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", metavar="FILE", help="Write the profile here.")
    ] = None,
    facts: Annotated[
        Path | None,
        typer.Option("--facts", metavar="FILE", help="A host-facts JSON file instead of this host's (check --json)."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
) -> None:
    """Write a profile for MODEL on this (or the named) hardware, from what upstream verified, fit-checked."""
    import json

    from ascendctl.cli.profile_files import write_profile
    from ascendctl.core.errors import EXIT_FAILED, UserInputError
    from ascendctl.init.build import InitRequest, init_profile
    from ascendctl.plan.workload import parse_workload

    request = InitRequest(
        model, hardware, devices, nodes, release, max_model_len, parse_workload(workload) if workload else None, variant
    )
    result = init_profile(request, _host(facts, hardware))
    if list_variants:
        rows = [v.to_json() for v in result.variants]
        if as_json:
            typer.echo(json.dumps(rows, indent=2))
        for row in [] if as_json else rows:
            typer.echo(f"{row['name']}: {row['layout']}, {row['verdict']} ({row['source']})")
        if not rows and not as_json:
            typer.echo("no upstream launch of this model: `init` derives the profile from its traits")
        return
    path = output or Path(f"{result.document['metadata']['name']}.yaml")
    written = None
    if result.fits:
        if output is None and path.exists():
            raise UserInputError(f"{path} exists: name the file to write with -o (it is then replaced)")
        write_profile(path, result.yaml_text())
        written = str(path)
    if as_json:
        typer.echo(json.dumps(result.to_json(written), indent=2, default=str))
    else:
        for line in result.header:
            typer.echo(line, err=True)
        typer.echo(f"wrote {path}" if written else "nothing fits: no profile written", err=True)
        for alt in result.alternatives:
            typer.echo(f"  instead: {alt.name}: {alt.trial.verdict()}\n    {alt.command}", err=True)
    if not result.fits:
        raise typer.Exit(EXIT_FAILED)


def _host(facts: Path | None, hardware: str | None) -> "HostFacts | None":
    """The host's facts where `init` asks them: a file, else a probe of this host (not when --hardware says)."""
    if hardware is not None:
        return None
    if facts is not None:
        from ascendctl.cli.facts import read_facts_file

        return read_facts_file(facts)
    from ascendctl.run.bench.target import host_facts_here

    return host_facts_here()
