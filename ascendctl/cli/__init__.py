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


def _version(value: bool) -> None:
    if value:
        typer.echo(f"ascendctl {__version__}")
        raise typer.Exit(0)


def _root(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
    debug: Annotated[bool, typer.Option("--debug", help="Show tracebacks for internal errors.")] = False,
) -> None:
    """ascendctl: one YAML profile in, a correctly running vLLM(-Ascend) engine out."""
    if debug:
        _state["debug"] = True


COMMANDS: dict[str, Any] = {
    "validate": validate_cmd.validate,
    "schema": schema_cmd.schema,
    "engine": engine_cmd.app,
    "model": model_cmd.app,
    "serve": serve_cmd.serve,
    "ps": ps_cmd.ps,
    "logs": logs_cmd.logs,
    "stop": stop_cmd.stop,
    "check": check_cmd.check,
    "matrix": matrix_cmd.matrix,
    "plan": plan_cmd.plan,
    "pin": plan_cmd.pin,
    "render": render_cmd.render,
}


def build_app(only: str | None = None) -> typer.Typer:
    """The app with every command, or with just `only` (see `main`)."""
    built = typer.Typer(
        cls=_HandledGroup,
        name="ascendctl",
        help="Validate, plan, check and serve vLLM deployments on Huawei Ascend NPUs (and CPU / CUDA).",
        no_args_is_help=True,
        pretty_exceptions_enable=False,
        rich_markup_mode=None,
        context_settings={"help_option_names": ["-h", "--help"]},
    )
    built.callback()(_root)
    for name, target in COMMANDS.items():
        if only is not None and name != only:
            continue
        if isinstance(target, typer.Typer):
            built.add_typer(target, name=name)
        else:
            built.command(name)(target)
    return built


app = build_app()


def main(argv: list[str] | None = None) -> int:
    """Console-script entry point."""
    args = sys.argv[1:] if argv is None else argv
    # typer inspects the signature of every registered command each time the app is built (~20 ms of a
    # 0.2 s process); when the command line names one command, build the app with that command alone.
    # Its parsing, help and errors are the same; `ascendctl --help` still lists everything.
    command = next((a for a in args if not a.startswith("-")), None)
    runnable = build_app(command) if command in COMMANDS else app
    try:
        runnable(args=args, prog_name="ascendctl")
    except SystemExit as exc:
        code = exc.code
        return code if isinstance(code, int) else (0 if code is None else 1)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
