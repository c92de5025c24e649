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

# A launch script is a page of shell, not a file to stream: larger is not a launch script.
MAX_SCRIPT_BYTES = 256 * 1024


def import_(
    scripts: Annotated[list[Path], typer.Argument(help="Launch scripts, one per node (or per DP rank), in any order.")],
    release: Annotated[str, typer.Option("--release", help="vllm-ascend tag (or a pin) the scripts run.")],
    hardware: Annotated[
        str | None, typer.Option("--hardware", help="Ascend hardware family: a2, a3, 300i-duo or 950.")
    ] = None,
    backend: Annotated[str, typer.Option("--backend", help="npu (default), cuda or cpu.")] = "npu",
    name: Annotated[
        str | None, typer.Option("--name", help="The profile's metadata.name (default: the first script's name).")
    ] = None,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write the profile here instead of printing it.")
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
    from ascendctl.core.errors import EXIT_FAILED, UserInputError
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
    label = name or _label(scripts[0].stem)
    try:
        result = import_scripts(parsed, release=release, hardware=hardware, backend=backend, name=label)
    except ValueError as exc:
        raise UserInputError(f"{scripts[0]}: {exc}") from None
    text = result.yaml_text()
    if output is not None:
        _write(output, text)
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


def _label(stem: str) -> str:
    """A script's file name as an RFC 1035 label (`Run_Qwen3.sh` → `run-qwen3`); `imported` when none is left."""
    import re

    text = re.sub(r"[^a-z0-9]+", "-", stem.lower()).strip("-")
    text = re.sub(r"^[^a-z]+", "", text)[:63].rstrip("-")
    return text or "imported"


def _write(path: Path, text: str) -> None:
    """Write the whole profile or nothing: a temporary file next to it, then one rename."""
    import os
    import tempfile

    from ascendctl.core.errors import UserInputError

    if path.is_dir():
        raise UserInputError(f"--output {path}: is a directory")
    try:
        fd, tmp = tempfile.mkstemp(prefix=".ascendctl-import.", dir=path.parent if str(path.parent) else ".")
    except OSError as exc:
        raise UserInputError(f"--output {path}: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        Path(tmp).chmod(0o644)
        Path(tmp).replace(path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
