"""The single error handler: one exception family, fixed exit codes, tracebacks only with --debug."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path
from typing import NoReturn

import pytest
import typer
from typer.testing import CliRunner

import ascendctl.schema.loader
from ascendctl import __version__
from ascendctl.cli import _HandledGroup, app, main
from ascendctl.core.errors import (
    EXIT_FAILED,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_INVALID,
    EXIT_OK,
    DocumentError,
    Issue,
    OperationFailed,
    UserInputError,
)

runner = CliRunner()
PROFILE = sorted((Path(__file__).resolve().parents[2] / "profiles").glob("*.yaml"))[0]


def raising(exc: BaseException) -> object:
    def load_profile(*args: object, **kwargs: object) -> NoReturn:
        raise exc

    return load_profile


def test_exit_code_values() -> None:
    assert (EXIT_OK, EXIT_FAILED, EXIT_INVALID, EXIT_INTERNAL, EXIT_INTERRUPTED) == (0, 1, 2, 3, 130)
    assert UserInputError("x").exit_code == 2
    assert DocumentError([]).exit_code == 2
    assert OperationFailed("x").exit_code == 1


def test_issue_render_and_dict() -> None:
    issue = Issue("p.yaml", 3, 5, "a.b", "bad")
    assert issue.render() == "p.yaml:3:5: a.b: bad"
    assert Issue("p.yaml", 0, 0, "", "gone").render() == "p.yaml: gone"
    assert issue.as_dict() == {"file": "p.yaml", "line": 3, "column": 5, "path": "a.b", "message": "bad"}
    assert DocumentError([issue, issue]).lines() == ["p.yaml:3:5: a.b: bad"] * 2


def test_ok_is_zero() -> None:
    assert runner.invoke(app, ["validate", str(PROFILE)]).exit_code == 0
    assert main(["validate", str(PROFILE)]) == 0


@pytest.mark.parametrize(
    ("exc", "code", "line"),
    [
        (OperationFailed("the engine exited with status 1"), 1, "error: the engine exited with status 1"),
        (UserInputError("--port: not a number"), 2, "error: --port: not a number"),
        (KeyboardInterrupt(), 130, "interrupted"),
    ],
)
def test_family_maps_to_exit_codes(monkeypatch: pytest.MonkeyPatch, exc: BaseException, code: int, line: str) -> None:
    monkeypatch.setattr(ascendctl.schema.loader, "load_profile_with_warnings", raising(exc))
    result = runner.invoke(app, ["validate", str(PROFILE)])
    assert result.exit_code == code
    assert result.stderr == line + "\n"
    assert main(["validate", str(PROFILE)]) == code


def test_internal_error_hint_and_no_traceback(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ascendctl.schema.loader, "load_profile_with_warnings", raising(RuntimeError("boom")))
    result = runner.invoke(app, ["validate", str(PROFILE)])
    assert result.exit_code == 3
    assert result.stderr.splitlines() == [
        "internal error: RuntimeError: boom",
        "This is a bug in ascendctl; rerun with --debug for the traceback.",
    ]
    assert "Traceback" not in result.output


def test_debug_shows_traceback(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ascendctl.schema.loader, "load_profile_with_warnings", raising(RuntimeError("boom")))
    result = runner.invoke(app, ["--debug", "validate", str(PROFILE)])
    assert result.exit_code == 3
    assert "Traceback (most recent call last)" in result.stderr
    assert "RuntimeError: boom" in result.stderr
    assert "rerun with --debug" not in result.stderr
    # --debug belongs to that one invocation: the next one hides the traceback again
    again = runner.invoke(app, ["validate", str(PROFILE)])
    assert "Traceback" not in again.stderr
    assert "rerun with --debug" in again.stderr


def test_debug_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ascendctl.schema.loader, "load_profile_with_warnings", raising(ValueError("bad")))
    monkeypatch.setenv("ASCENDCTL_DEBUG", "1")
    result = runner.invoke(app, ["validate", str(PROFILE)])
    assert result.exit_code == 3
    assert "Traceback (most recent call last)" in result.stderr


def test_user_errors_never_show_traceback_even_with_debug(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ascendctl.schema.loader, "load_profile_with_warnings", raising(UserInputError("wrong")))
    result = runner.invoke(app, ["--debug", "validate", str(PROFILE)])
    assert result.exit_code == 2
    assert result.stderr == "error: wrong\n"


def test_handler_on_a_fresh_app() -> None:
    """The handler class alone: explicit exits and click usage errors pass through untouched."""
    fresh = typer.Typer(cls=_HandledGroup)

    @fresh.command("fail")
    def fail(kind: str) -> None:
        if kind == "exit5":
            raise typer.Exit(5)
        if kind == "usage":
            raise typer.BadParameter("nope")
        if kind == "document":
            raise DocumentError([Issue("a.yaml", 1, 2, "x", "one"), Issue("a.yaml", 3, 4, "y", "two")])
        raise LookupError(kind)

    @fresh.command("noop")
    def noop() -> None:
        pass

    assert runner.invoke(fresh, ["fail", "exit5"]).exit_code == 5
    usage = runner.invoke(fresh, ["fail", "usage"])
    assert usage.exit_code == 2
    assert "nope" in usage.output
    document = runner.invoke(fresh, ["fail", "document"])
    assert document.exit_code == 2
    assert document.stderr == "error: a.yaml:1:2: x: one\nerror: a.yaml:3:4: y: two\n"
    internal = runner.invoke(fresh, ["fail", "other"])
    assert internal.exit_code == 3
    assert internal.stderr.startswith("internal error: LookupError: other\n")


def test_internal_error_in_a_real_process(tmp_path: Path) -> None:
    code = textwrap.dedent(
        """
        import sys
        import ascendctl.schema.loader as loader
        def broken(*a, **k):
            raise ZeroDivisionError("division by zero")
        loader.load_profile_with_warnings = broken
        from ascendctl.cli import main
        sys.exit(main(sys.argv[1:]))
        """
    )
    for debug, expect_traceback in (([], False), (["--debug"], True)):
        proc = subprocess.run(
            [sys.executable, "-c", code, *debug, "validate", str(PROFILE)],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert proc.returncode == 3
        assert ("Traceback" in proc.stderr) is expect_traceback
        assert "internal error: ZeroDivisionError: division by zero" in proc.stderr


def test_version_in_process() -> None:
    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0
    assert result.stdout == f"ascendctl {__version__}\n"


@pytest.mark.parametrize("how", ["module", "script"])
def test_version_as_process(tmp_path: Path, how: str) -> None:
    script = Path(sys.executable).with_name("ascendctl")
    if how == "script" and not script.exists():
        pytest.skip("the console script is not installed next to this interpreter")
    argv = [sys.executable, "-m", "ascendctl"] if how == "module" else [str(script)]
    proc = subprocess.run([*argv, "--version"], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0
    assert proc.stdout == f"ascendctl {__version__}\n"


def test_help_offers_shell_completion_and_commands() -> None:
    result = runner.invoke(app, ["--help"])
    assert result.exit_code == 0
    for word in ("--install-completion", "--show-completion", "--version", "--debug", "validate", "schema"):
        assert word in result.stdout


def test_no_arguments_shows_help() -> None:
    result = runner.invoke(app, [])
    assert "Usage" in result.output
    assert result.exit_code in (0, 2)  # click's no_args_is_help exit code changed across versions


def test_unknown_command_is_usage_error() -> None:
    result = runner.invoke(app, ["frobnicate"])
    assert result.exit_code == 2
    assert "Traceback" not in result.output
