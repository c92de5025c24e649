"""Hostile input, round two (issue 32, item 6): exit codes and strict parsing.

- an invalid deployment name given to `logs` / `stop` is a bad argument (exit 2), not a failed operation;
- an `ASCENDCTL_HOME` that is a file (or a path through one) is exit 2 with one line naming the variable;
- CPU lists are parsed strictly: `5-2`, garbage, non-ASCII digits are unknown (None), never a negative count;
- a variable is set once: an env map and a secret (server.api_key's VLLM_API_KEY, runtime.secrets) never both;
- `check` counts the rules that do not apply and lists them only with `--verbose`.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from ascendctl.cli import app
from ascendctl_engine.host.gather import parse_cpu_list
from ascendctl_engine.paths import HOME_VAR

runner = CliRunner()
HEAD = (
    "apiVersion: ascendctl/v1\nkind: Profile\nmetadata:\n  name: s\nmodel:\n  source: org/m\ntarget:\n  backend: cpu\n"
)


def _one_error_line(result: object) -> str:
    stderr = result.stderr  # type: ignore[attr-defined]
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    assert lines[0].startswith("error: ")
    return lines[0]


# --- deployment names ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("command", ["logs", "stop"])
@pytest.mark.parametrize("name", ["../etc", "a/b", "-x", ".hidden", "", "x\ny", "é", "a" * 200, "x\x00y"])
def test_an_invalid_name_is_exit_2(command: str, name: str) -> None:
    result = runner.invoke(app, [command, "--", name])
    assert result.exit_code == 2, result.output
    assert "is not a deployment name" in _one_error_line(result)


@pytest.mark.parametrize("command", ["logs", "stop"])
def test_a_valid_name_without_a_deployment_is_still_exit_1(command: str) -> None:
    result = runner.invoke(app, [command, "nothing-here"])
    assert result.exit_code == 1, result.output
    _one_error_line(result)


# --- ASCENDCTL_HOME ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("argv", [["ps"], ["logs", "x"], ["stop", "x"], ["engine", "list"], ["model", "list"]])
@pytest.mark.parametrize("through_a_file", [False, True])
def test_a_home_that_is_a_file_is_exit_2_naming_the_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, argv: list[str], through_a_file: bool
) -> None:
    home = tmp_path / "home-file"
    home.write_text("not a directory\n")
    monkeypatch.setenv(HOME_VAR, str(home / "below" if through_a_file else home))
    result = runner.invoke(app, argv)
    assert result.exit_code == 2, result.output
    line = _one_error_line(result)
    assert f"{HOME_VAR}=" in line and "directory" in line


def test_a_missing_home_is_fine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(HOME_VAR, str(tmp_path / "not-yet"))
    assert runner.invoke(app, ["ps"]).exit_code == 0


# --- paths from the environment and the profile that cannot be expanded ------------------------------------------
# `~nosuchuser/x` makes pathlib raise RuntimeError ("Could not determine home directory"): it was exit 3 everywhere a
# cache, data or state directory, a model source or a key file is found.

NOBODY = "~ascendctl-no-such-user/x"


@pytest.mark.parametrize(
    ("variable", "argv"),
    [
        ("HF_HUB_CACHE", ["plan", "{profile}"]),
        ("HUGGINGFACE_HUB_CACHE", ["plan", "{profile}"]),
        ("HF_HOME", ["serve", "{profile}", "--dry-run"]),
        ("XDG_CACHE_HOME", ["plan", "{profile}"]),
        ("MODELSCOPE_CACHE", ["plan", "{profile}"]),
        (HOME_VAR, ["ps"]),
        (HOME_VAR, ["model", "list"]),
        ("XDG_DATA_HOME", ["engine", "list"]),
    ],
)
def test_a_path_variable_naming_no_home_is_exit_2_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, variable: str, argv: list[str]
) -> None:
    profile = tmp_path / "p.yaml"
    profile.write_text(HEAD.replace("org/m", "Qwen/Qwen3-8B"))
    for name in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "HF_HOME", HOME_VAR):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv(variable, NOBODY)
    result = runner.invoke(app, [a.format(profile=profile) for a in argv])
    assert result.exit_code == 2, result.output
    line = _one_error_line(result)
    fix = "write the path out in full"
    assert line == f"error: {variable}={NOBODY}: ~ascendctl-no-such-user names no home directory here; {fix}"


@pytest.mark.parametrize("home", ["relative/home", NOBODY])
def test_a_home_that_is_not_absolute_is_exit_2(monkeypatch: pytest.MonkeyPatch, home: str) -> None:
    # HOME=relative would put ascendctl's data under whatever directory a command runs in
    monkeypatch.delenv(HOME_VAR, raising=False)
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    monkeypatch.setenv("HOME", home)
    result = runner.invoke(app, ["engine", "list"])
    assert result.exit_code == 2, result.output
    assert _one_error_line(result) == f"error: HOME={home}: not an absolute path; set HOME to your home directory"


def test_a_model_source_naming_no_home_is_exit_2(tmp_path: Path) -> None:
    profile = tmp_path / "p.yaml"
    profile.write_text(HEAD.replace("org/m", NOBODY))
    result = runner.invoke(app, ["plan", str(profile)])
    assert result.exit_code == 2, result.output
    assert _one_error_line(result).startswith(f"error: model.source={NOBODY}: ")


def test_a_key_file_naming_no_home_is_a_launch_error_not_a_crash() -> None:
    from ascendctl_engine.launcher import LaunchError, resolve_secret
    from ascendctl_engine.spec import SecretRef

    with pytest.raises(LaunchError, match=r"^the secret file ~ascendctl-no-such-user/k: ~ascendctl-no-such-user names"):
        resolve_secret(SecretRef(file="~ascendctl-no-such-user/k"), {})


# --- CPU lists --------------------------------------------------------------------------------------------------


def _as_list(cpus: set[int]) -> str:
    """`cpus` written the way the kernel writes a CPU list: ascending ranges and singles."""
    parts: list[str] = []
    ordered = sorted(cpus)
    start = prev = ordered[0]
    for cpu in [*ordered[1:], None]:
        if cpu is not None and cpu == prev + 1:
            prev = cpu
            continue
        parts.append(f"{start}-{prev}" if prev > start else str(start))
        if cpu is not None:
            start = prev = cpu
    return ",".join(parts)


@settings(max_examples=200, deadline=None)
@given(st.sets(st.integers(min_value=0, max_value=4095), min_size=1, max_size=64))
def test_a_cpu_list_counts_its_cpus(cpus: set[int]) -> None:
    assert parse_cpu_list(_as_list(cpus) + "\n") == len(cpus)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=30))
def test_any_text_is_a_count_or_unknown_never_negative(text: str) -> None:
    count = parse_cpu_list(text)
    assert count is None or count > 0


@pytest.mark.parametrize(
    "text", ["5-2", "0-3,5-2", "garbage", "0-", "-3", "0,,1", "1-2-3", "²", "0-9999999999", "0x1", " , "]
)
def test_what_is_not_a_cpu_list_is_unknown(text: str) -> None:
    assert parse_cpu_list(text) is None


def test_overlapping_ranges_count_once() -> None:
    assert parse_cpu_list("0-3,8") == 5
    assert parse_cpu_list("0-3,2-5") == 6


# --- a variable is set once -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "named"),
    [
        (
            "server:\n  api_key: {env: SRC}\nruntime:\n  env:\n    VLLM_API_KEY: '1'\n",
            ("server.api_key", "runtime.env"),
        ),
        (
            "runtime:\n  env:\n    HF_TOKEN: '0'\n  secrets:\n    HF_TOKEN: {env: SRC}\n",
            ("runtime.secrets.HF_TOKEN", "runtime.env"),
        ),
        (
            "runtime:\n  secrets:\n    HF_TOKEN: {file: /k}\n"
            "network:\n  nodes:\n    - address: 10.0.0.1\n      env: {HF_TOKEN: 'off'}\n",
            ("runtime.secrets.HF_TOKEN", "network.nodes[0].env"),
        ),
    ],
)
def test_a_variable_set_twice_is_refused_naming_both(tmp_path: Path, body: str, named: tuple[str, str]) -> None:
    profile = tmp_path / "p.yaml"
    profile.write_text(HEAD + body)
    for command in ("validate", "plan"):
        result = runner.invoke(app, [command, str(profile)])
        assert result.exit_code == 2, result.output
        line = _one_error_line(result)
        assert all(name in line for name in named), line


def test_node_env_may_still_override_runtime_env(tmp_path: Path) -> None:
    profile = tmp_path / "p.yaml"
    profile.write_text(
        HEAD + "runtime:\n  env: {OMP_X: '1'}\nnetwork:\n  nodes:\n    - address: 10.0.0.1\n      env: {OMP_X: '2'}\n"
    )
    assert runner.invoke(app, ["validate", str(profile)]).exit_code == 0


# --- check: not-applicable rules are counted ---------------------------------------------------------------------


def test_check_counts_not_applicable_rules(fixture_host) -> None:  # type: ignore[no-untyped-def]
    host = fixture_host("a2-910b3x8")
    argv = ["check", "--root", str(host.root), "--engine-python", str(host.engine_python)]
    plain = runner.invoke(app, argv, env=host.cli_env())
    verbose = runner.invoke(app, [*argv, "--verbose"], env=host.cli_env())
    report = json.loads(runner.invoke(app, [*argv, "--json"], env=host.cli_env()).stdout)
    skipped = [r["id"] for r in report["results"] if r["status"] == "skip"]
    assert plain.exit_code == verbose.exit_code and skipped
    assert f"{len(skipped)} rules not applicable here (--verbose lists them)" in plain.stdout
    assert "not applicable:" not in plain.stdout and not any(rule in plain.stdout for rule in skipped)
    listed = " ".join(verbose.stdout.split("not applicable:", 1)[1].split())  # rich wraps the list
    assert all(rule in listed.replace(" ", "") for rule in skipped)
