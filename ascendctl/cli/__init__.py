"""The typer app: registers one command per module, global options, and the single error handler.

Command modules stay thin (parse options → call one core function → hand the result to `ui`) and import
anything heavy inside the command body, so `ascendctl --help` stays fast: this package is the one place
where imports are deferred into functions (tests/test_layers.py refuses them everywhere else).

May import: every stage of `ascendctl` and `ascendctl_engine`.
"""

from __future__ import annotations

import gc
import importlib
import os
import sys
import traceback
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from ascendctl import __version__
from ascendctl.core.errors import EXIT_INTERNAL, EXIT_INTERRUPTED, AscendctlError


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


# Command name → (module under ascendctl.cli, attribute): a function, or a `typer.Typer` for a command group.
# The modules are imported when the app is built, and `main` builds it with the one command the command line
# names, so `ascendctl validate` does not import (nor compile) the code of `render`, `check` or `engine`.
COMMANDS: dict[str, tuple[str, str]] = {
    "validate": ("validate", "validate"),
    "schema": ("schema", "schema"),
    "engine": ("engine", "app"),
    "model": ("model", "app"),
    "serve": ("serve", "serve"),
    "ps": ("ps", "ps"),
    "logs": ("logs", "logs"),
    "diagnose": ("diagnose", "diagnose"),
    "stop": ("stop", "stop"),
    "check": ("check", "check"),
    "matrix": ("matrix", "matrix"),
    "plan": ("plan", "plan"),
    "fit": ("fit", "fit"),
    "pin": ("plan", "pin"),
    "render": ("render", "render"),
    "import": ("import_", "import_"),
}


def command_target(name: str) -> Any:
    """The function (or sub-app) registered as command `name`, its module imported on first use."""
    module, attr = COMMANDS[name]
    return getattr(importlib.import_module(f"ascendctl.cli.{module}"), attr)


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
    for name in COMMANDS:
        if only is not None and name != only:
            continue
        target = command_target(name)
        if isinstance(target, typer.Typer):
            built.add_typer(target, name=name)
        else:
            built.command(name)(target)
    return built


_full_app: list[typer.Typer] = []


def full_app() -> typer.Typer:
    """The app with every command (built, and every command module imported, on first use)."""
    if not _full_app:
        _full_app.append(build_app())
    return _full_app[0]


def __getattr__(name: str) -> Any:
    # `from ascendctl.cli import app` (the tests, the typer test runner) gets the full app; building it imports
    # every command module, which a console-script run naming one command does not need (see `main`).
    if name == "app":
        return full_app()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def main(argv: list[str] | None = None) -> int:
    """Console-script entry point."""
    args = sys.argv[1:] if argv is None else argv
    # Building the app imports every command's module and typer inspects each signature; when the command
    # line names one command, build the app with that command alone. Its parsing, help and errors are the
    # same; `ascendctl --help` still lists everything.
    command = next((a for a in args if not a.startswith("-")), None)
    runnable = build_app(command) if command in COMMANDS else full_app()
    try:
        runnable(args=args, prog_name="ascendctl")
    except SystemExit as exc:
        code = exc.code
        status = code if isinstance(code, int) else (0 if code is None else 1)
    else:
        status = 0
    if argv is None:
        _before_exit()
    return status


def _before_exit() -> None:
    """The console script is about to exit: spare the interpreter's final garbage collections.

    At exit CPython runs full collections over every object still alive — each imported module, pydantic
    schema and matrix row, tens of thousands of them — although the process ends right after and the OS
    takes the memory back; for `plan` that is about a tenth of the whole run. Freezing moves those objects out
    of the collector's sight. Everything else about exit is unchanged: atexit handlers run, stdout and stderr
    are flushed, and modules are torn down (objects freed by reference counting as before); only objects kept
    alive by reference cycles at this point are left to the OS instead of being collected.
    """
    gc.freeze()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
