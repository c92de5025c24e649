"""`ascendctl validate PROFILE...`: exit 0 when every profile is valid, 2 otherwise."""

import json
from pathlib import Path
from typing import Annotated

import typer

from ascendctl.cli import completers
from ascendctl.core.errors import EXIT_INVALID

OverridesOption = Annotated[
    list[str] | None,
    typer.Option(
        "--set",
        metavar="KEY.PATH=VALUE",
        help="Override a profile value before validation (repeatable).",
        autocompletion=completers.profile_paths,
    ),
]


def validate(
    profiles: Annotated[
        list[Path], typer.Argument(metavar="PROFILE", help="Profile YAML files to validate.", show_default=False)
    ],
    overrides: OverridesOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON report instead of text.")] = False,
) -> None:
    """Validate profiles: YAML, schema and cross-field rules, every error as FILE:LINE:COL.

    `--json` prints a list with one object per profile: {"file", "valid", "name" (null when invalid),
    "errors": [{"file", "line", "column", "path", "message"}], "warnings": [same shape]}; "file" of an error
    is "--set ..." when an override is to blame (line and column 0). Warnings never make a profile invalid.
    """
    from ascendctl.core.errors import DocumentError
    from ascendctl.schema.loader import load_profile_with_warnings

    report = []
    failed = False
    for path in profiles:
        try:
            loaded = load_profile_with_warnings(path, overrides or [])
        except DocumentError as exc:
            failed = True
            errors = [i.as_dict() for i in exc.issues]
            report.append({"file": str(path), "valid": False, "name": None, "errors": errors, "warnings": []})
            if not as_json:
                for issue in exc.issues:
                    typer.echo(f"error: {issue.render()}", err=True)
            continue
        profile = loaded.profile
        warnings = [i.as_dict() for i in loaded.warnings]
        report.append(
            {"file": str(path), "valid": True, "name": profile.metadata.name, "errors": [], "warnings": warnings}
        )
        if not as_json:
            typer.echo(f"ok: {path} ({profile.metadata.name})")
            for issue in loaded.warnings:
                typer.echo(f"warning: {issue.render()}", err=True)
    if as_json:
        typer.echo(json.dumps(report, indent=2))
    if failed:
        raise typer.Exit(EXIT_INVALID)
