"""The typer app: registers one command per module, global options, and the single error handler.

Command modules stay thin (parse options → call one core function → hand the result to `ui`) and import
anything heavy inside the command body, so `ascendctl --help` stays fast.
"""

from __future__ import annotations

import os
import sys
import traceback
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from ascendctl import __version__
from ascendctl.cli import check as check_cmd
from ascendctl.cli import engine as engine_cmd
from ascendctl.cli import logs as logs_cmd
from ascendctl.cli import matrix as matrix_cmd
from ascendctl.cli import model as model_cmd
from ascendctl.cli import plan as plan_cmd
from ascendctl.cli import ps as ps_cmd
from ascendctl.cli import render as render_cmd
from ascendctl.cli import schema as schema_cmd
from ascendctl.cli import serve as serve_cmd
from ascendctl.cli import stop as stop_cmd
from ascendctl.cli import validate as validate_cmd
from ascendctl.errors import EXIT_INTERNAL, EXIT_INTERRUPTED, AscendctlError


def _debug_from_env() -> bool:
    return os.environ.get("ASCENDCTL_DEBUG", "") not in ("", "0")


_state = {"debug": _debug_from_env()}


class _HandledGroup(TyperGroup):
    """Maps every exception to one exit code and a message without a traceback (unless --debug)."""

    def invoke(self, ctx: Any) -> Any:
        _state["debug"] = _debug_from_env()  # each invocation starts clean; the root callback reads --debug
        try:
            return super().invoke(ctx)
        except _PASS_THROUGH:
            raise
        except AscendctlError as exc:
            for line in exc.lines():
                typer.echo(f"error: {line}" if not line.startswith(("error", "warning")) else line, err=True)
            raise typer.Exit(exc.exit_code) from None
        except KeyboardInterrupt:
            typer.echo("interrupted", err=True)
            raise typer.Exit(EXIT_INTERRUPTED) from None
        except Exception as exc:  # a bug: say so plainly, keep the traceback behind --debug
            if _state["debug"]:
                traceback.print_exc()
            typer.echo(f"internal error: {type(exc).__name__}: {exc}", err=True)
            if not _state["debug"]:
                typer.echo("This is a bug in ascendctl; rerun with --debug for the traceback.", err=True)
            raise typer.Exit(EXIT_INTERNAL) from None


def _pass_through() -> tuple[type[BaseException], ...]:
    # Usage errors and explicit exits are click's to report (exit 2 / the given code).
    from typer._click.exceptions import ClickException

    return (typer.Exit, typer.Abort, ClickException)


_PASS_THROUGH = _pass_through()


app = typer.Typer(
    cls=_HandledGroup,
    name="ascendctl",
    help="Validate, plan, check and serve vLLM deployments on Huawei Ascend NPUs (and CPU / CUDA).",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"ascendctl {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
    debug: Annotated[bool, typer.Option("--debug", help="Show tracebacks for internal errors.")] = False,
) -> None:
    """ascendctl: one YAML profile in, a correctly running vLLM(-Ascend) engine out."""
    if debug:
        _state["debug"] = True


app.command("validate")(validate_cmd.validate)
app.command("schema")(schema_cmd.schema)
app.add_typer(engine_cmd.app, name="engine")
app.add_typer(model_cmd.app, name="model")
app.command("serve")(serve_cmd.serve)
app.command("ps")(ps_cmd.ps)
app.command("logs")(logs_cmd.logs)
app.command("stop")(stop_cmd.stop)
app.command("check")(check_cmd.check)
app.command("matrix")(matrix_cmd.matrix)
app.command("plan")(plan_cmd.plan)
app.command("pin")(plan_cmd.pin)
app.command("render")(render_cmd.render)


def main(argv: list[str] | None = None) -> int:
    """Console-script entry point."""
    try:
        app(args=argv, prog_name="ascendctl")
    except SystemExit as exc:
        code = exc.code
        return code if isinstance(code, int) else (0 if code is None else 1)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
