"""`ascendctl lock PROFILE [-o ascendctl.lock]`: record what this profile runs with on this host (release and pins,
the engine environment's packages, image, model identity, per-node argv/env hash, profile hash), so `check
PROFILE --lock` and `serve PROFILE --locked` can list what drifted. The shape: `ascendctl.plan.lock`."""

import json
from pathlib import Path
from typing import Annotated

import typer

from ascendctl.cli import completers


def lock(
    profile: Annotated[Path, typer.Argument(help="Profile YAML file to lock.", show_default=False)],
    overrides: Annotated[
        list[str] | None,
        typer.Option(
            "--set",
            metavar="KEY.PATH=VALUE",
            help="Override a profile value (repeatable).",
            autocompletion=completers.profile_paths,
        ),
    ] = None,
    output: Annotated[
        Path,
        typer.Option("--output", "-o", metavar="FILE", help="Where to write the lock (`.json`: JSON, else YAML)."),
    ] = Path("ascendctl.lock"),
    engine_python: Annotated[
        str | None,
        typer.Option(
            "--engine-python",
            metavar="PATH",
            help="Interpreter of the engine environment (default: $ASCENDCTL_ENGINE_PYTHON, the release's engine "
            "venv, or this Python).",
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the lock document as JSON (schema 1).")] = False,
) -> None:
    """Lock a profile: write the release, pins, engine packages, model identity and plan hashes to a file."""
    from ascendctl.run.lock import take_lock

    doc = take_lock(profile, overrides or [], output, engine_python=engine_python)
    if as_json:
        typer.echo(json.dumps(doc, indent=2))
        return
    release, engine, model = doc["release"], doc["engine"], doc["model"]
    typer.echo(f"wrote {output}")
    typer.echo(f"  release   {release['version']} ({release['backend']}, vLLM {release['vllm']})")
    if doc["image"]:
        typer.echo(f"  image     {doc['image']}")
    digest = engine["packages_sha256"][:12]
    typer.echo(f"  engine    {engine['interpreter']}: {len(engine['packages'])} packages (sha256 {digest})")
    hashes = f" (config {model['config_sha256'][:12]})" if model["config_sha256"] else " (not found here: no hash)"
    typer.echo(f"  model     {model['resolved']}{hashes}")
    typer.echo(f"  commands  {len(doc['commands'])} (argv/env sha256 each)")
    typer.echo(f"next: ascendctl check {profile} --lock {output}   or   ascendctl serve {profile} --locked {output}")
