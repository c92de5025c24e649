"""`ascendctl schema`: the JSON Schema of the profile format, for editors and CI."""

from __future__ import annotations

import json


def schema() -> None:
    """Print the JSON Schema of the profile (apiVersion ascendctl/v1) on stdout."""
    import typer

    from ascendctl.schema.profile import profile_json_schema

    typer.echo(json.dumps(profile_json_schema(), indent=2, sort_keys=True))
