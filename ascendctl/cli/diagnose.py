"""`ascendctl diagnose LOGFILE [--release R] [--json]`: known engine failures found in a log file."""

from pathlib import Path
from typing import Annotated

import typer

from ascendctl.cli import completers

MAX_LOG_BYTES = 64 * 1024 * 1024  # the log is read whole, never more than this


def diagnose(
    logfile: Annotated[
        Path, typer.Argument(help="An engine log (e.g. from `ascendctl logs NAME`).", show_default=False)
    ],
    release: Annotated[
        str | None,
        typer.Option(
            "--release",
            help="vllm-ascend release the log came from (skips entries for other releases).",
            autocompletion=completers.releases,
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the matches as JSON.")] = False,
) -> None:
    """Match a log against the catalog of known failures; exit 1 when something matched, 0 when nothing did."""
    import json

    from packaging.version import InvalidVersion

    from ascendctl.core.errors import EXIT_FAILED, UserInputError
    from ascendctl_engine.jsonio import JsonReadError, read_bytes
    from ascendctl_engine.phases import PHASE_LABELS, failure_phase
    from ascendctl_engine.phases import diagnose as run_catalog
    from ascendctl_engine.redaction import redact_key_material

    try:
        data = read_bytes(logfile, MAX_LOG_BYTES)
    except JsonReadError as exc:
        raise UserInputError(f"cannot read the log {exc.path}: {exc.reason}") from None
    lines = data.decode("utf-8", errors="replace").splitlines()
    phase = failure_phase(lines)  # where the last engine start in the log got to: some entries apply to one phase
    try:
        found = run_catalog(lines, release, phase)
    except InvalidVersion:
        raise UserInputError(f"--release {release!r} is not a version (e.g. v0.13.0rc1)") from None
    if as_json:
        matches = [
            {
                "id": d.key,
                "cause": d.summary,
                "fix": d.fix,
                "source": d.source,
                "line_no": d.line_no,
                "line": redact_key_material(d.line),  # a log we did not write may carry keys: never printed
            }
            for d in found
        ]
        typer.echo(json.dumps({"schema": 1, "release": release, "phase": phase, "matches": matches}, indent=2))
    elif not found:
        typer.echo(f"no known failure pattern matched in {logfile} ({len(lines)} lines)")
    else:
        typer.echo(f"failed in: {PHASE_LABELS[phase]} (phase {phase})")
        for d in found:
            typer.echo(f"{d.key}  (line {d.line_no})")
            typer.echo(f"  cause:  {d.summary}")
            typer.echo(f"  fix:    {d.fix}")
            typer.echo(f"  source: {d.source}")
            typer.echo(f"  line:   {redact_key_material(d.line)}")
    if found:
        raise typer.Exit(EXIT_FAILED)
