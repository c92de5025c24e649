"""`ascendctl model prepare|list`: offline models materialised into ascendctl's model cache."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Annotated

import typer

from ascendctl.core.errors import OperationFailed, UserInputError

if TYPE_CHECKING:
    from ascendctl_engine.envs import EngineEnv

app = typer.Typer(
    name="model",
    help="Offline models: prepare them once into the model cache; profiles use `model.source: prepared:NAME`.",
    no_args_is_help=True,
)


class ModelFailure(OperationFailed):
    def __init__(self, message: str, output: list[str], hint: str | None) -> None:
        super().__init__(message)
        self.output = output
        self.hint = hint

    def lines(self) -> list[str]:
        out = [str(self)] + [f"  | {line}" for line in self.output]
        return out + ([f"hint: {self.hint}"] if self.hint else [])


def pick_engine(name: str | None) -> EngineEnv:
    """The engine interpreter that runs the preparation: `--engine NAME`, else the CPU engine of the
    latest-stable CPU row, else any ready CPU engine environment."""
    from ascendctl_engine import envs

    if name is not None:
        env = envs.load_engine(name)
        if env is None:
            raise UserInputError(
                f"--engine {name}: no ready engine environment of that name (see: ascendctl engine list)"
            )
        return env
    from ascendctl.run.engine_envs import engine_spec_for

    spec = engine_spec_for("cpu", "latest-stable")
    env = envs.find_engine(spec.backend, spec.release)
    if env is None:
        ready = [e for e in envs.list_engines() if e.status == "ready" and e.backend == "cpu"]
        env = envs.load_engine(ready[-1].name) if ready else None
    if env is None:
        raise OperationFailed(
            "preparing a model needs the CPU engine environment (its torch and transformers do the work); "
            "install it first: ascendctl engine install --backend cpu"
        )
    return env


@app.command("prepare")
def prepare(
    name: Annotated[str, typer.Argument(help="Model to prepare: smollm2-135m-instruct or tiny-random.")],
    engine: Annotated[
        str | None, typer.Option("--engine", help="Engine environment whose interpreter does the work.")
    ] = None,
    force: Annotated[bool, typer.Option("--force", help="Rebuild even when already prepared.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
) -> None:
    """Materialise an offline model into the model cache (deterministic, with a recorded sha256).

    `--json` prints {"name", "path", "sha256", "size_bytes", "prepared_at", "source"}.
    """
    from ascendctl_engine import prepared_models

    if name not in prepared_models.CATALOG:
        known = ", ".join(sorted(prepared_models.CATALOG))
        raise UserInputError(f"unknown model {name!r} (known: {known})")
    env = pick_engine(engine)
    try:
        result = prepared_models.prepare_model(
            name, env.python, log=lambda line: typer.echo(line, err=True), force=force
        )
    except prepared_models.ModelError as exc:
        raise ModelFailure(str(exc), exc.output, exc.hint) from None
    if as_json:
        typer.echo(json.dumps({**result.as_dict(), "source": f"prepared:{name}"}, indent=2))
        return
    state = "already prepared" if result.already_prepared else f"prepared in {result.seconds:.0f} s"
    typer.echo(f"model {name}: {state}")
    typer.echo(f"  path:   {result.path}")
    typer.echo(f"  sha256: {result.sha256}")
    typer.echo(f"  use it: model.source: prepared:{name}")


@app.command("list")
def list_(as_json: Annotated[bool, typer.Option("--json", help="Print a JSON array.")] = False) -> None:
    """List the models ascendctl can prepare and the ones prepared here.

    `--json` prints an array of {"name", "status" (ready/absent/incomplete), "path", "description",
    "sha256", "size_bytes", "source"}.
    """
    from ascendctl_engine import prepared_models

    listing = prepared_models.list_models()
    if as_json:
        typer.echo(json.dumps([m.as_dict() for m in listing], indent=2))
        return
    for m in listing:
        size = f"{m.size_bytes / 1e6:.0f} MB" if m.size_bytes else "-"
        typer.echo(f"{m.name:<24} {m.status:<10} {size:>8}  {m.description}")
        if m.status == "ready":
            typer.echo(f"{'':<24} {m.path}")
