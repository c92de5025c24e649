"""`--json` means JSON on stdout, errors included (`ascendctl.cli.json_errors` holds the contract).

Every command that has a `--json` option is found by walking the built app, so a new one is covered here without
a change: each gets an unknown option (click's usage error), and the known ones one error of their own
(`DOMAIN_ERRORS`). A command without `--json`, and `--json` given as a value or after `--`, keep text errors.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NoReturn

import pytest
import typer
from typer.main import get_command
from typer.testing import CliRunner

import ascendctl.schema.loader
from ascendctl.cli import build_app, main
from ascendctl.cli.json_errors import KINDS, error_document, requested
from ascendctl.core.errors import Issue

runner = CliRunner()
APP = build_app()
PROFILE = str(Path(__file__).resolve().parents[2] / "profiles" / "cpu-demo.yaml")
KEYS = {"exit", "kind", "message", "where", "issues"}


def _leaves(command: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    subs = getattr(command, "commands", None)
    if subs:
        for name, sub in sorted(subs.items()):
            yield from _leaves(sub, (*path, name))
    else:
        yield path, command


def _has_json(command: Any) -> bool:
    return any("--json" in getattr(p, "opts", ()) for p in command.params)


ALL = list(_leaves(get_command(APP)))
JSON_COMMANDS = [path for path, command in ALL if _has_json(command)]
TEXT_COMMANDS = [path for path, command in ALL if not _has_json(command)]

# One error of each command's own (not click's); the exit code each has without --json.
DOMAIN_ERRORS: dict[str, tuple[list[str], int]] = {
    "bench": (["bench"], 2),
    "check": (["check", "--lock", "x.lock"], 2),
    "diagnose": (["diagnose", "missing.log"], 2),
    "engine install": (["engine", "install", "--backend", "bogus"], 2),
    "fit": (["fit", "missing.yaml"], 2),
    "import": (["import", "x.sh", "--release", "v0.9.0"], 2),
    "init": (["init", "org/m", "--hardware", "bogus"], 2),
    "lock": (["lock", "missing.yaml"], 2),
    "matrix": (["matrix", "bogusview"], 2),
    "model config": (["model", "config", "::bad"], 2),
    "model identity": (["model", "identity", "/nonexistent/model"], 1),
    "model prepare": (["model", "prepare", "nosuchmodel"], 2),
    "model pull": (["model", "pull", "::bad"], 2),
    "pin": (["pin", "missing.yaml"], 2),
    "plan": (["plan", PROFILE, "--set", "bogus.key=1"], 2),
    "serve": (["serve", "missing.yaml", "--dry-run"], 2),
    "status": (["status", "--interval", "0"], 2),
    "tune": (["tune", "missing.yaml"], 2),
    "validate": (["validate"], 2),  # a missing argument (its own errors are its report)
}


def error_of(result: Any) -> dict[str, Any]:
    """The one error document on stdout, checked against the contract and the exit code."""
    document = json.loads(result.stdout)
    assert set(document) == {"error"}, result.stdout
    error = document["error"]
    assert set(error) == KEYS
    assert error["exit"] == result.exit_code != 0
    assert error["kind"] == KINDS[result.exit_code]
    assert isinstance(error["message"], str) and error["message"]
    assert error["where"] is None or isinstance(error["where"], str)
    assert isinstance(error["issues"], list)
    return error  # type: ignore[no-any-return]


def test_the_commands_are_found() -> None:
    assert {"plan", "status", "ps", "import", "validate", "engine list", "model identity"} <= {
        " ".join(p) for p in JSON_COMMANDS
    }
    assert ("logs",) in TEXT_COMMANDS and ("render",) in TEXT_COMMANDS


@pytest.mark.parametrize("path", JSON_COMMANDS, ids=" ".join)
def test_a_usage_error_under_json(path: tuple[str, ...]) -> None:
    result = runner.invoke(APP, [*path, "--json", "--no-such-option"])
    assert result.exit_code == 2
    error = error_of(result)
    assert error["kind"] == "invalid-input"
    assert error["message"] == "No such option: --no-such-option"
    assert "No such option" in result.stderr  # click's text stays on stderr


@pytest.mark.parametrize("name", sorted(DOMAIN_ERRORS))
def test_an_error_of_the_command_under_json(name: str, tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.chdir(tmp_path)
    args, code = DOMAIN_ERRORS[name]
    plain = runner.invoke(APP, args)
    result = runner.invoke(APP, [*args, "--json"])
    assert (plain.exit_code, result.exit_code) == (code, code), result.output
    assert error_of(result)["message"] in plain.stderr
    assert plain.stdout == ""  # without --json the error is text on stderr only
    assert plain.stderr == result.stderr  # stderr is the same with --json


def test_the_listed_errors_are_of_commands_with_json() -> None:
    # `ps`, `engine list` and `model list` take no input to get wrong: see test_a_home_that_is_a_file_under_json
    assert set(DOMAIN_ERRORS) <= {" ".join(p) for p in JSON_COMMANDS}


# --- the three cases of the issue -------------------------------------------------------------------------------


def test_status_json_with_nothing_running_is_its_document() -> None:
    result = runner.invoke(APP, ["status", "--json"])
    assert result.exit_code == 0
    document = json.loads(result.stdout)
    assert document["instances"] == [] and document["schema"] == 1


def test_ps_json_with_nothing_running_is_an_empty_list() -> None:
    result = runner.invoke(APP, ["ps", "--json"])
    assert (result.exit_code, json.loads(result.stdout)) == (0, [])


def test_serve_json_without_dry_run() -> None:
    result = runner.invoke(APP, ["serve", PROFILE, "--json"])
    assert result.exit_code == 2
    assert error_of(result)["message"].startswith("--json is only for --dry-run")


def test_a_bad_set_under_json() -> None:
    result = runner.invoke(APP, ["plan", PROFILE, "--json", "--set", "bogus.key=1"])
    assert result.exit_code == 2
    error = error_of(result)
    assert "unknown key 'bogus'" in error["message"]
    assert error["where"] is None  # an override has no line
    assert error["issues"][0]["file"] == "--set bogus.key"


@pytest.mark.parametrize(
    "argv", [["ps", "--json"], ["status", "--json"], ["engine", "list", "--json"], ["model", "list", "--json"]]
)
def test_a_home_that_is_a_file_under_json(argv: list[str], tmp_path: Path, monkeypatch: Any) -> None:
    home = tmp_path / "home"
    home.write_text("")
    monkeypatch.setenv("ASCENDCTL_HOME", str(home))
    result = runner.invoke(APP, argv)
    assert result.exit_code == 2
    assert "is a file, not a directory" in error_of(result)["message"]
    assert result.stderr.startswith("error: ASCENDCTL_HOME=")


# --- the document's fields ----------------------------------------------------------------------------------------


def test_a_located_document_error(tmp_path: Path, valid_profile_text: str) -> None:
    profile = tmp_path / "p.yaml"
    profile.write_text(valid_profile_text + "server:\n  port: nope\nbogus: 1\n")
    result = runner.invoke(APP, ["plan", str(profile), "--json"])
    assert result.exit_code == 2
    error = error_of(result)
    first = next(i for i in error["issues"] if i["line"] > 0)
    assert error["where"] == f"{first['file']}:{first['line']}:{first['column']}"
    assert error["where"].startswith(f"{profile}:")
    assert len(error["issues"]) >= 2
    rendered = [Issue(i["file"], i["line"], i["column"], i["path"], i["message"]).render() for i in error["issues"]]
    assert error["message"] == "\n".join(rendered)  # the lines stderr shows, without "error: "
    assert result.stderr == "".join(f"error: {line}\n" for line in rendered)


def test_error_document_shape() -> None:
    assert error_document(1, "boom") == {
        "error": {"exit": 1, "kind": "failed", "message": "boom", "where": None, "issues": []}
    }
    issues = [Issue("p.yaml", 0, 0, "", "gone"), Issue("p.yaml", 3, 5, "a", "bad")]
    document = error_document(2, "x", issues)["error"]
    assert document["where"] == "p.yaml:3:5"  # type: ignore[index]
    assert document["issues"] == [i.as_dict() for i in issues]  # type: ignore[index]
    assert {code: error_document(code, "m")["error"]["kind"] for code in (1, 2, 3, 130)} == {  # type: ignore[index]
        1: "failed",
        2: "invalid-input",
        3: "internal",
        130: "interrupted",
    }


def _raising(exc: BaseException) -> Any:
    def load(*args: object, **kwargs: object) -> NoReturn:
        raise exc

    return load


@pytest.mark.parametrize(
    ("exc", "code", "message"),
    [(RuntimeError("boom"), 3, "RuntimeError: boom"), (KeyboardInterrupt(), 130, "interrupted")],
)
def test_a_bug_and_an_interrupt_under_json(monkeypatch: Any, exc: BaseException, code: int, message: str) -> None:
    monkeypatch.setattr(ascendctl.schema.loader, "load_profile_with_warnings", _raising(exc))
    monkeypatch.setattr(ascendctl.schema.loader, "load_profile", _raising(exc))
    result = runner.invoke(APP, ["plan", PROFILE, "--json"])
    assert result.exit_code == code
    assert error_of(result)["message"] == message
    assert "Traceback" not in result.output


def test_the_console_entry_point(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--debug", "fit", "missing.yaml", "--json"]) == 2
    out, err = capsys.readouterr()
    assert json.loads(out)["error"]["message"] == "missing.yaml: file not found"
    assert err == "error: missing.yaml: file not found\n"


# --- when not to switch -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "argv",
    [
        ["plan", "missing.yaml", "--set", "--json"],  # --json is the value of --set
        ["plan", "--", "missing.yaml", "--json"],  # after the separator: an argument
        ["plan", "missing.yaml"],
    ],
)
def test_json_only_where_the_command_line_asks(argv: list[str]) -> None:
    result = runner.invoke(APP, argv)
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr.startswith(("error:", "Usage:"))


@pytest.mark.parametrize("path", TEXT_COMMANDS, ids=" ".join)
def test_a_command_without_json_keeps_text_errors(path: tuple[str, ...]) -> None:
    result = runner.invoke(APP, [*path, "--json"])
    assert result.exit_code == 2
    assert result.stdout == ""
    assert "No such option: --json" in result.stderr


@pytest.mark.parametrize("argv", [["logs", "nothing-here"], ["stop", "nothing-here"], ["logs", "--", "--json"]])
def test_a_failing_command_without_json_prints_text(argv: list[str]) -> None:
    result = runner.invoke(APP, argv)
    assert result.exit_code in (1, 2)
    assert result.stdout == ""
    assert result.stderr.startswith("error: ")


def test_requested_reads_the_command_line_like_click() -> None:
    root = get_command(APP)
    ctx = root.make_context("ascendctl", ["ps"])

    def asks(*args: str) -> bool:
        return requested(root, ctx, list(args))  # type: ignore[arg-type]

    assert asks("plan", "p.yaml", "--json")
    assert asks("plan", "--bogus", "x", "--json")  # unknown options are skipped
    assert asks("engine", "list", "--json")
    assert not asks("plan", "p.yaml", "--set", "--json")
    assert not asks("plan", "--", "--json")
    assert not asks("engine", "--json", "list")  # the group has no --json
    assert not asks("logs", "--json")
    assert not asks("nosuch", "--json")
    assert not asks()


def test_a_document_printed_before_a_failure_stays_the_only_one(capsys: pytest.CaptureFixture[str]) -> None:
    from ascendctl.cli.json_errors import failed_after_document

    exit_ = failed_after_document("2 request(s) failed")
    assert isinstance(exit_, typer.Exit) and exit_.exit_code == 1
    assert capsys.readouterr() == ("", "error: 2 request(s) failed\n")
