"""The typer app: registers one command per module, global options, and the single error handler.

Command modules stay thin (parse options → call one core function → hand the result to `ui`) and import
anything heavy inside the command body, so `ascendctl --help` stays fast: this package is the one place
where imports are deferred into functions (tests/test_layers.py refuses them everywhere else).

Command modules do not postpone their annotations (no `from __future__ import annotations`): typer reads every
command's parameters from its annotations at each start, and a postponed annotation is text that is compiled and
evaluated each time (2-4 ms a command). Names imported only for type checking are quoted where they are used.

May import: every stage of `ascendctl` and `ascendctl_engine`.
"""

import contextlib
import errno
import gc
import importlib
import os
import sys
import traceback
from typing import Annotated, Any

import typer
from typer._click.exceptions import ClickException
from typer.core import TyperGroup

from ascendctl import __version__
from ascendctl.cli import coercion, metavars, pydantic_plugins
from ascendctl.core.errors import (
    EXIT_FAILED,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_INVALID,
    AscendctlError,
    DocumentError,
    Issue,
)
from ascendctl_engine.paths import HomeError

# Writing the output failed, not ascendctl: a reader that went away (`| head`), a full disk (`> /dev/full`), an I/O
# error on the terminal or file. Exit 1 with one line on stderr, never a traceback.
_OUTPUT_ERRNOS = frozenset({errno.EPIPE, errno.ENOSPC, errno.EIO, errno.EDQUOT, errno.EFBIG})


def _debug_from_env() -> bool:
    return os.environ.get("ASCENDCTL_DEBUG", "") not in ("", "0")


_state = {"debug": _debug_from_env()}


class _HandledGroup(TyperGroup):
    """Maps every exception to one exit code and a message without a traceback (unless --debug); under a
    command's `--json`, stdout also gets the error as one JSON document (`ascendctl.cli.json_errors`)."""

    def invoke(self, ctx: Any) -> Any:
        _state["debug"] = _debug_from_env()  # each invocation starts clean; the root callback reads --debug
        args = [*ctx._protected_args, *ctx.args]  # the command line after the root's options (read back on error)

        def as_json(exit_code: int, message: str, issues: "list[Issue] | None" = None) -> None:
            from ascendctl.cli import json_errors  # read only on an error

            if json_errors.requested(self, ctx, args):
                with contextlib.suppress(OSError):  # stdout failing too: `main` reports it when it flushes
                    json_errors.print_error(exit_code, message, issues or [])

        try:
            return super().invoke(ctx)
        except _PASS_THROUGH:
            raise
        except ClickException as exc:  # a usage error: click reports it on stderr (exit 2), as without --json
            as_json(exc.exit_code, exc.format_message())
            raise
        except AscendctlError as exc:
            lines = exc.lines()
            for line in lines:
                typer.echo(f"error: {line}" if not line.startswith(("error", "warning")) else line, err=True)
            as_json(exc.exit_code, "\n".join(lines), exc.issues if isinstance(exc, DocumentError) else None)
            raise typer.Exit(exc.exit_code) from None
        except HomeError as exc:  # $ASCENDCTL_HOME is not a directory: the environment is the user's input
            typer.echo(f"error: {exc}", err=True)
            as_json(EXIT_INVALID, str(exc))
            raise typer.Exit(EXIT_INVALID) from None
        except KeyboardInterrupt:
            typer.echo("interrupted", err=True)
            as_json(EXIT_INTERRUPTED, "interrupted")
            raise typer.Exit(EXIT_INTERRUPTED) from None
        except OSError as exc:
            if exc.errno not in _OUTPUT_ERRNOS:
                as_json(EXIT_INTERNAL, _bug(exc))
                raise _internal(exc) from None
            _output_failed(exc)  # the output itself failed: nothing more is written to it
            raise typer.Exit(EXIT_FAILED) from None
        except Exception as exc:  # a bug
            as_json(EXIT_INTERNAL, _bug(exc))
            raise _internal(exc) from None


def _bug(exc: Exception) -> str:
    return f"{type(exc).__name__}: {exc}"


def _internal(exc: Exception) -> typer.Exit:
    """A bug: say so plainly, keep the traceback behind --debug."""
    if _state["debug"]:
        traceback.print_exception(exc)
    typer.echo(f"internal error: {_bug(exc)}", err=True)
    if not _state["debug"]:
        typer.echo("This is a bug in ascendctl; rerun with --debug for the traceback.", err=True)
    return typer.Exit(EXIT_INTERNAL)


def _output_failed(exc: OSError) -> None:
    """One line on stderr (if stderr itself is writable); stdout is pointed at /dev/null so that the interpreter's
    final flush of what is still buffered does not fail a second time."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # stdout without a descriptor (a test runner's buffer)
        pass
    where = f" {exc.filename}" if exc.filename else " the output"
    _say(f"error: cannot write{where}: {exc.strerror or exc}")


def _say(line: str) -> None:
    """One line on stderr, where there is a writable one (it may be closed or broken too)."""
    if sys.stderr is None:
        return
    with contextlib.suppress(OSError):
        print(line, file=sys.stderr, flush=True)


_PASS_THROUGH = (typer.Exit, typer.Abort)  # explicit exits: the given code


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
    "status": ("status", "status"),
    "logs": ("logs", "logs"),
    "diagnose": ("diagnose", "diagnose"),
    "stop": ("stop", "stop"),
    "check": ("check", "check"),
    "matrix": ("matrix", "matrix"),
    "plan": ("plan", "plan"),
    "fit": ("fit", "fit"),
    "pin": ("plan", "pin"),
    "lock": ("lock", "lock"),
    "render": ("render", "render"),
    "import": ("import_", "import_"),
    "init": ("init", "init"),
    "bench": ("bench", "bench"),
    "tune": ("tune", "tune"),
}


def command_target(name: str) -> Any:
    """The function (or sub-app) registered as command `name`, its module imported on first use."""
    module, attr = COMMANDS[name]
    return getattr(importlib.import_module(f"ascendctl.cli.{module}"), attr)


def build_app(only: str | None = None) -> typer.Typer:
    """The app with every command, or with just `only` (see `main`)."""
    coercion.enable()  # option values without a pydantic adapter each (ascendctl.cli.coercion)
    pydantic_plugins.disable()  # validation without third-party pydantic plugins (ascendctl.cli.pydantic_plugins)
    metavars.enable()  # help names values as other CLIs do: `PROFILE...`, `--node N` (ascendctl.cli.metavars)
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
    if sys.stdout is None:  # started with descriptor 1 closed (`>&-`): nothing it prints could be written
        _say("error: cannot write the output: standard output is closed")
        return EXIT_FAILED
    if argv is None:
        _spare_startup_collections()
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
        status = _flush_stdout(status)
        _before_exit()
    return status


def _flush_stdout(status: int) -> int:
    """Flush what the command printed while the handler can still report a failed write (a closed pipe, a full
    disk): exit 1 with a message instead of the interpreter's "Exception ignored" at exit."""
    try:
        sys.stdout.flush()
    except OSError as exc:
        if exc.errno not in _OUTPUT_ERRNOS:
            raise
        _output_failed(exc)
        return status or EXIT_FAILED
    return status


# The collector's first-generation threshold for the console script (CPython's default: 700). See
# `_spare_startup_collections`; mypy raises it the same way for its builds (mypy/build.py:
# `gc.set_threshold(200 * 1000, 30, 30)`).
STARTUP_GC_THRESHOLD = 200_000


def _spare_startup_collections() -> None:
    """The console script is starting: let the collector run less often (`STARTUP_GC_THRESHOLD`).

    Start-up creates tens of thousands of objects that live until exit — modules, classes and their generated
    methods, pydantic schemas, matrix rows — and with CPython's default threshold the collector walks the young
    ones about a hundred times during `plan` (some 50 ms, a tenth of the run) and finds nothing to free. With
    the higher threshold an everyday command ends before the first collection; a long-running one (`serve`
    supervising an engine, `bench`, `tune`) still collects, every 200,000 net allocations, so garbage held in
    reference cycles stays bounded. Only the console script does this (see `main`): a caller of `main(argv)` (the
    tests, an embedding program) keeps its own collector settings.
    """
    gc.set_threshold(STARTUP_GC_THRESHOLD, *gc.get_threshold()[1:])


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
