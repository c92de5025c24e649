"""`ascendctl import SCRIPT... --release TAG --hardware HW [-o FILE]`: operators' launch scripts → a profile.

Each SCRIPT is one node's launch script (`export` lines and one `vllm serve` command; a Ray worker's only
`ray start --address …`), in any order: each script's flags say its node's role and rank, and the scripts
together form the deployment (one instance, a prefill/decode set, external data-parallel ranks, a Ray cluster).
The profile uses typed fields wherever one says the script's spelling and escape hatches for the rest (listed in
its header); it is then planned and compared with the scripts, flag by flag and env by env. Exit 0 when every node
is reproduced, 1 when a script's option or variable is missing from the plan or differs (or the plan is refused),
2 for a script that cannot be read. Nothing from a script is executed.
"""

from pathlib import Path
from typing import Annotated

import typer

from ascendctl.cli import completers

# A launch script is a page of shell, not a file to stream: larger is not a launch script.
MAX_SCRIPT_BYTES = 256 * 1024


def import_(
    scripts: Annotated[
        list[Path],
        typer.Argument(metavar="SCRIPT...", help="Launch scripts, one per node (or per DP rank), in any order."),
    ],
    release: Annotated[
        str,
        typer.Option(
            "--release", help="vllm-ascend tag (or a pin) the scripts run.", autocompletion=completers.releases
        ),
    ],
    hardware: Annotated[
        str | None,
        typer.Option(
            "--hardware",
            help="Ascend hardware family: a2, a3, 300i-duo or 950.",
            autocompletion=completers.hardware_ids,
        ),
    ] = None,
    backend: Annotated[str, typer.Option("--backend", help="npu (default), cuda or cpu.")] = "npu",
    name: Annotated[
        str | None, typer.Option("--name", help="The profile's metadata.name (default: the first script's name).")
    ] = None,
    output: Annotated[
        Path | None,
        typer.Option("--output", "-o", metavar="FILE", help="Write the profile here instead of printing it."),
    ] = None,
    as_json: Annotated[
        bool,
        typer.Option(
            "--json",
            help="Print the report as JSON: per node the differences and the plan's additions, the profile (its "
            "path with -o, else its text), the escape hatches and the pass-through variables.",
        ),
    ] = False,
) -> None:
    """Turn launch scripts into a profile, plan it back and print what still differs."""
    from ascendctl.cli.profile_files import write_profile
    from ascendctl.core.errors import EXIT_FAILED, UserInputError
    from ascendctl.core.labels import rfc1035_label
    from ascendctl.importer.run import import_scripts, report_lines
    from ascendctl.importer.script import ScriptError, parse_launch_script
    from ascendctl_engine.jsonio import JsonReadError, read_bytes

    if backend == "npu" and hardware is None:
        raise UserInputError("--hardware is required for --backend npu (a2, a3, 300i-duo or 950)")
    parsed = []
    for path in scripts:
        try:
            text = read_bytes(path, MAX_SCRIPT_BYTES).decode("utf-8")
            parsed.append(parse_launch_script(text, str(path)))
        except (JsonReadError, ScriptError) as exc:
            raise UserInputError(str(exc)) from None
        except UnicodeDecodeError:
            raise UserInputError(f"{path}: not UTF-8 text") from None
    label = name or rfc1035_label(scripts[0].stem, "imported")
    try:
        result = import_scripts(parsed, release=release, hardware=hardware, backend=backend, name=label)
    except ValueError as exc:
        raise UserInputError(f"{scripts[0]}: {exc}") from None
    text = result.yaml_text()
    if output is not None:
        write_profile(output, text)
    if as_json:
        import json

        report = result.to_json(str(output) if output is not None else None)
        typer.echo(json.dumps(report, indent=2, default=str))
    else:
        if output is None:
            typer.echo(text, nl=False)
        else:
            typer.echo(f"wrote {output}", err=True)
        for line in report_lines(result):
            typer.echo(line, err=True)
    if not result.reproduced or result.blocking:
        raise typer.Exit(EXIT_FAILED)
