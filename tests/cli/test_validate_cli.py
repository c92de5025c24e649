"""`ascendctl validate`: exit codes, located errors, --set, --json; broken profiles as real processes."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ascendctl.cli import app

REPO = Path(__file__).resolve().parents[2]
PROFILES = sorted((REPO / "profiles").glob("*.yaml"))
VALID = (
    "apiVersion: ascendctl/v1\n"
    "kind: Profile\n"
    "metadata:\n"
    "  name: demo\n"
    "model:\n"
    "  source: org/model\n"
    "target:\n"
    "  backend: cpu\n"
)


def ascendctl_argv() -> list[str]:
    """The installed console script next to this interpreter, else `python -m ascendctl`."""
    script = Path(sys.executable).with_name("ascendctl")
    return [str(script)] if script.exists() else [sys.executable, "-m", "ascendctl"]


def position(text: str, needle: str) -> tuple[int, int]:
    index = text.index(needle) + len(needle)
    before = text[:index]
    return before.count("\n") + 1, index - (before.rfind("\n") + 1) + 1


# --- the broken-profile matrix, each as a real process --------------------------------------------------


@dataclass(frozen=True)
class Broken:
    name: str
    content: bytes
    line: int
    column: int
    fragment: str  # must appear in the message


def _bomb() -> tuple[bytes, tuple[int, int]]:
    lines = ["engine:", "  additional_config:", "    a0: &a0 [x, x, x, x, x, x, x, x, x]"]
    lines += [f"    a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 9)]
    text = VALID + "\n".join(lines) + "\n"
    # 9**5 nodes pass the cap: the error is at the anchored list of a4
    return text.encode(), position(text, "a4: ")


def _matrix() -> list[Broken]:
    syntax = VALID.replace("backend: cpu", "backend: cpu: npu")
    tab = VALID.replace("  name: demo", "\tname: demo")
    wrong_type = VALID + '  nodes: "2"\n'
    unknown = VALID.replace("  source: org/model\n", "  source: org/model\n  quantisation: w8a8\n")
    bomb, bomb_at = _bomb()
    return [
        Broken("syntax-error", syntax.encode(), *position(syntax, "backend: cpu"), "mapping values are not allowed"),
        Broken("tab-indentation", tab.encode(), 4, 1, "spaces, not tabs"),
        Broken("duplicate-key", (VALID + "kind: Profile\n").encode(), 9, 1, "kind: duplicate key"),
        Broken("alias-bomb", bomb, *bomb_at, "aliases expand to more than"),
        Broken("ten-megabytes", VALID.encode() + b"#" * (10 * 1024 * 1024), 1, 1, "larger than"),
        Broken("binary-png", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) * 8, 1, 1, "not UTF-8"),
        Broken("binary-elf", b"\x7fELF\x02\x01\x01\x00" + bytes(range(128)) * 8, 1, 1, "U+007F"),
        Broken("wrong-type", wrong_type.encode(), 9, 10, "target.nodes: input should be a valid integer"),
        Broken("unknown-key", unknown.encode(), 7, 3, "did you mean 'quantization'?"),
        Broken("wrong-api-version", VALID.replace("/v1", "/v9").encode(), 1, 13, "unsupported apiVersion"),
        Broken("empty-file", b"", 1, 1, "the document is empty"),
        Broken("top-level-list", b"- apiVersion: ascendctl/v1\n- kind: Profile\n", 1, 1, "found a list"),
    ]


BROKEN = _matrix()


@pytest.mark.parametrize("case", BROKEN, ids=[c.name for c in BROKEN])
def test_broken_profile_process(tmp_path: Path, case: Broken) -> None:
    name = f"{case.name}.yaml"
    (tmp_path / name).write_bytes(case.content)
    proc = subprocess.run(
        [*ascendctl_argv(), "validate", name], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout
    assert proc.stdout == ""
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, lines
    match = re.fullmatch(rf"error: {re.escape(name)}:(\d+):(\d+): (.+)", lines[0])
    assert match, lines[0]
    assert (int(match[1]), int(match[2])) == (case.line, case.column)
    assert case.fragment in match[3]


def test_shipped_profiles_process_exit_zero() -> None:
    proc = subprocess.run(
        [*ascendctl_argv(), "validate", *[str(p.relative_to(REPO)) for p in PROFILES]],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    assert [line.split()[1] for line in proc.stdout.splitlines()] == [str(p.relative_to(REPO)) for p in PROFILES]


# --- in process ----------------------------------------------------------------------------------------

runner = CliRunner()


@pytest.fixture
def good(tmp_path: Path) -> Path:
    path = tmp_path / "good.yaml"
    path.write_text(VALID)
    return path


@pytest.fixture
def bad(tmp_path: Path) -> Path:
    path = tmp_path / "bad.yaml"
    path.write_text(VALID + "  nodes: 0\nserver:\n  prot: 1\n")
    return path


def test_valid_profiles_ok_lines() -> None:
    result = runner.invoke(app, ["validate", *map(str, PROFILES)])
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == [f"ok: {p} ({p.stem})" for p in PROFILES]


def test_every_file_reported_even_after_a_bad_one(good: Path, bad: Path) -> None:
    result = runner.invoke(app, ["validate", str(bad), str(good)])
    assert result.exit_code == 2
    assert result.stdout == f"ok: {good} (demo)\n"
    assert result.stderr.splitlines() == [
        f"error: {bad}:9:10: target.nodes: input should be greater than or equal to 1, got 0",
        f"error: {bad}:11:3: server.prot: unknown key 'prot' (did you mean 'port'?)",
    ]


def test_set_override_error_names_override(good: Path) -> None:
    result = runner.invoke(app, ["validate", str(good), "--set", "server.port=99999"])
    assert result.exit_code == 2
    assert result.stderr == ("error: --set server.port: server.port: input should be less than or equal to 65535\n")


def test_set_override_makes_valid(good: Path) -> None:
    result = runner.invoke(app, ["validate", str(good), "--set", "server.port=8123", "--set", "metadata.name=other"])
    assert result.exit_code == 0
    assert result.stdout == f"ok: {good} (other)\n"


def test_malformed_set_is_invalid_input(good: Path) -> None:
    result = runner.invoke(app, ["validate", str(good), "--set", "server.port"])
    assert result.exit_code == 2
    # the argument is not repeated: without `=` it may be a value pasted on its own
    assert (
        result.stderr
        == "error: --set <an argument without `=`>: expected KEY.PATH=VALUE, e.g. --set server.port=8001\n"
    )


def test_missing_file_is_invalid_input(tmp_path: Path) -> None:
    result = runner.invoke(app, ["validate", str(tmp_path / "nope.yaml")])
    assert result.exit_code == 2
    assert result.stderr == f"error: {tmp_path / 'nope.yaml'}: file not found\n"


def test_no_profile_is_usage_error() -> None:
    result = runner.invoke(app, ["validate"])
    assert result.exit_code == 2
    assert "Missing argument" in result.output


def test_json_report_shape(good: Path, bad: Path) -> None:
    result = runner.invoke(app, ["validate", "--json", str(good), str(bad), "--set", "server.host=0.0.0.0"])
    assert result.exit_code == 2
    assert result.stderr == ""
    assert json.loads(result.stdout) == [
        {"file": str(good), "valid": True, "name": "demo", "errors": [], "warnings": []},
        {
            "file": str(bad),
            "valid": False,
            "name": None,
            "errors": [
                {
                    "file": str(bad),
                    "line": 9,
                    "column": 10,
                    "path": "target.nodes",
                    "message": "input should be greater than or equal to 1, got 0",
                },
                {
                    "file": str(bad),
                    "line": 11,
                    "column": 3,
                    "path": "server.prot",
                    "message": "unknown key 'prot' (did you mean 'port'?)",
                },
            ],
            "warnings": [],
        },
    ]


def test_json_report_names_override(good: Path) -> None:
    result = runner.invoke(app, ["validate", "--json", str(good), "--set", "metadata.name.first=x"])
    assert result.exit_code == 2
    assert json.loads(result.stdout)[0]["errors"] == [
        {
            "file": "--set metadata.name.first",
            "line": 0,
            "column": 0,
            "path": "metadata.name",
            "message": "is not a mapping",
        }
    ]


def test_json_all_valid_exit_zero() -> None:
    result = runner.invoke(app, ["validate", "--json", *map(str, PROFILES)])
    assert result.exit_code == 0
    report = json.loads(result.stdout)
    assert [r["valid"] for r in report] == [True] * len(PROFILES)
    assert all(set(r) == {"file", "valid", "name", "errors", "warnings"} for r in report)


def test_validate_help() -> None:
    result = runner.invoke(app, ["validate", "--help"])
    assert result.exit_code == 0
    assert "--set" in result.stdout and "--json" in result.stdout
