"""Hostile input, round three (issue 55, item 4): each case one line on stderr, its exit code, nothing left behind.

- a key file whose secret holds a NUL byte (no environment variable can carry one) is exit 2 naming the file, never
  its content, before anything starts: `serve`, `serve --detach` and the detached supervisor itself;
- an engine log that is a symbolic link (a state directory tampered with) is exit 1, never followed: `logs` does not
  print what it points at, `serve` and `serve --detach` do not write to it;
- `ps --json` / `status --json` with `ASCENDCTL_HOME` naming a file print the JSON error document (exit 2);
- SIGTERM / SIGINT / SIGHUP to `render -o DIR` while it writes is exit 130: DIR is as it was, no staging directory.

Every CLI runs as a process of its own, as a user runs it; every process here is started by the test and signalled
or ended by its own pid.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from ascendctl.core.errors import OperationFailed, UserInputError
from ascendctl.run.serve import check_secrets
from ascendctl_engine.launcher import InvalidSecret, LaunchError, resolve_secret
from ascendctl_engine.spec import EngineCommand, SecretRef
from ascendctl_engine.state import StateStore
from ascendctl_engine.supervisor import stop_deployment
from tests.render_dirs import contents, seed

REPO = Path(__file__).resolve().parents[1]
CPU_DEMO = REPO / "profiles" / "cpu-demo.yaml"
SMOLLM2_CONFIG = REPO / "ascendctl" / "facts" / "data" / "model_configs" / "smollm2-135m-instruct.json"
SECRET_HALVES = (b"first-half-of-the-key-7f3a", b"second-half-of-the-key-9c1e")
PRECIOUS = "precious-not-a-log-5d2b\n"


def cli(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ascendctl", *args], capture_output=True, text=True, timeout=timeout, check=False
    )


def one_line(result: subprocess.CompletedProcess[str]) -> str:
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "internal error" not in lines[0] and "Traceback" not in result.stderr
    return lines[0]


@pytest.fixture
def no_deployment_left() -> Iterator[None]:
    yield
    for entry in StateStore().entries():  # a start that should have been refused did not stay running
        stop_deployment(entry, timeout=10)


def serving_profile(tmp_path: Path, port: int, secrets: str = "", name: str = "hostile") -> Path:
    """A CPU profile the fake engine serves; planned without a note or a warning, so stderr holds only the error."""
    model = tmp_path / "model"
    model.mkdir(exist_ok=True)
    (model / "config.json").write_bytes(SMOLLM2_CONFIG.read_bytes())  # the fake engine loads nothing
    profile = tmp_path / f"{name}.yaml"
    profile.write_text(
        f"apiVersion: ascendctl/v1\nkind: Profile\nmetadata: {{name: {name}}}\n"
        f"model: {{source: '{model}', served_name: tiny, max_model_len: 2048}}\n"
        "target: {backend: cpu}\nengine: {graph: {mode: eager}}\n"
        f"server: {{host: 127.0.0.1, port: {port}, shutdown_timeout: 5}}\n"
        "runtime:\n  ready_timeout: 30\n" + secrets
    )
    return profile


# --- a NUL byte in a key file ---------------------------------------------------------------------------------------


def nul_key(tmp_path: Path) -> Path:
    key = tmp_path / "nul.key"
    key.write_bytes(SECRET_HALVES[0] + b"\x00" + SECRET_HALVES[1] + b"\n")
    key.chmod(0o600)  # no "others may read it" warning
    return key


SECRET_PLACES = ("server.api_key", "runtime.secrets")


def keyed_profile(tmp_path: Path, port: int, where: str) -> tuple[Path, Path]:
    key = nul_key(tmp_path)
    if where == "runtime.secrets":
        return serving_profile(tmp_path, port, f"  secrets: {{HF_TOKEN: {{file: '{key}'}}}}\n"), key
    profile = serving_profile(tmp_path, port)
    text = profile.read_text().replace("shutdown_timeout: 5}", f"shutdown_timeout: 5, api_key: {{file: '{key}'}}}}")
    profile.write_text(text)
    return profile, key


def assert_nothing_started(name: str = "hostile") -> None:
    store = StateStore()
    assert store.entries() == []
    assert not store.log_path(name, 0).exists()  # refused before the log was opened, let alone the engine


@pytest.mark.parametrize("where", SECRET_PLACES)
@pytest.mark.parametrize("detach", [False, True])
def test_serve_refuses_a_nul_byte_in_a_key_file(
    fake_cpu_engine_env: Path, tmp_path: Path, free_port: int, no_deployment_left: None, where: str, detach: bool
) -> None:
    profile, key = keyed_profile(tmp_path, free_port, where)
    result = cli("serve", str(profile), *(["--detach"] if detach else []))
    assert result.returncode == 2, result.stderr
    line = one_line(result)
    assert line == (
        f"error: the secret file {key} holds a NUL byte, which no environment variable can carry; write the secret "
        "alone on its first line"
    )
    for half in SECRET_HALVES:
        assert half.decode() not in result.stdout + result.stderr
    assert_nothing_started()


def test_the_detached_supervisor_refuses_a_nul_byte_in_a_key_file(
    fake_cpu_engine_env: Path, tmp_path: Path, free_port: int, no_deployment_left: None
) -> None:
    # what `serve --detach` re-executes in the background, had the key file changed after its own check
    profile, key = keyed_profile(tmp_path, free_port, "server.api_key")
    result = cli("serve", str(profile), "--node", "0", "--internal-run-id", "0123456789abcdef")
    assert result.returncode == 2, result.stderr
    assert one_line(result).startswith(f"error: the secret file {key} holds a NUL byte")
    for half in SECRET_HALVES:
        assert half.decode() not in result.stdout + result.stderr
    assert_nothing_started()


def test_check_reads_no_key_file_content(tmp_path: Path, free_port: int) -> None:
    profile, _ = keyed_profile(tmp_path, free_port, "runtime.secrets")
    result = cli("check", str(profile), "--json")
    assert result.returncode in (0, 1), result.stderr  # the host may lack the engine; never a crash
    assert "internal error" not in result.stderr
    for half in SECRET_HALVES:
        assert half.decode() not in result.stdout + result.stderr


def test_the_launcher_names_the_source_of_a_nul_byte_never_the_value(tmp_path: Path) -> None:
    key = nul_key(tmp_path)
    with pytest.raises(InvalidSecret) as from_file:
        resolve_secret(SecretRef(file=str(key)), {})
    value = "first-half-of-the-env-key\x00second-half-of-it"
    with pytest.raises(InvalidSecret) as from_env:
        resolve_secret(SecretRef(env="HOSTILE_KEY"), {"HOSTILE_KEY": value})
    assert str(from_env.value).startswith("the secret from env:HOSTILE_KEY holds a NUL byte, which no environment")
    assert isinstance(from_file.value, LaunchError)  # callers that catch a failed launch still do
    for message in (str(from_file.value), str(from_env.value)):
        assert "half" not in message


def test_every_process_of_a_host_has_its_secrets_checked_before_any_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # what `preflight_host` runs for a prefill/decode host: one unit's bad key file refuses the whole start
    key = nul_key(tmp_path)
    monkeypatch.setenv("HOSTILE_OK_KEY", "a-long-enough-secret-value")
    fine = EngineCommand(0, "head", ("vllm",), secret_env={"VLLM_API_KEY": SecretRef(env="HOSTILE_OK_KEY")})
    bad = EngineCommand(0, "head", ("vllm",), secret_env={"HF_TOKEN": SecretRef(file=str(key))})
    unset = EngineCommand(0, "head", ("vllm",), secret_env={"HF_TOKEN": SecretRef(env="HOSTILE_UNSET_KEY")})
    check_secrets([fine])
    with pytest.raises(UserInputError, match=f"^the secret file {key} holds a NUL byte") as caught:
        check_secrets([fine, bad])
    assert caught.value.exit_code == 2 and "half" not in str(caught.value)
    with pytest.raises(OperationFailed, match="HOSTILE_UNSET_KEY is not set") as failed:
        check_secrets([unset, fine])
    assert failed.value.exit_code == 1


def test_a_nul_byte_after_the_first_line_is_not_part_of_the_secret(tmp_path: Path) -> None:
    key = tmp_path / "key"
    key.write_bytes(SECRET_HALVES[0] + b"\n\x00 a comment the launcher never reads\n")
    assert resolve_secret(SecretRef(file=str(key)), {}) == SECRET_HALVES[0].decode()


# --- an engine log that is a symbolic link --------------------------------------------------------------------------


def linked_log(tmp_path: Path, name: str, dangling: bool = False) -> tuple[Path, Path]:
    store = StateStore()
    store.ensure()
    log = store.log_path(name, 0)
    log.parent.mkdir(parents=True, exist_ok=True)
    outside = tmp_path / "outside.txt"
    if not dangling:
        outside.write_text(PRECIOUS)
    log.symlink_to(outside)
    return log, outside


@pytest.mark.parametrize("dangling", [False, True])
@pytest.mark.parametrize("args", [[], ["--tail", "1"], ["--all"], ["--list"], ["-f"]])
def test_logs_never_reads_through_a_symlinked_log(tmp_path: Path, dangling: bool, args: list[str]) -> None:
    log, outside = linked_log(tmp_path, "linked", dangling)
    result = cli("logs", "linked", *args)
    assert result.returncode == 1, result.stderr
    assert one_line(result) == (
        f"error: the log of 'linked' is a symbolic link: {log}; a log is never read through one (remove the link: "
        f"rm {log})"
    )
    assert result.stdout == "" and PRECIOUS.strip() not in result.stderr
    assert log.is_symlink() and (dangling or outside.read_text() == PRECIOUS)  # nothing removed, nothing written


@pytest.mark.parametrize("detach", [False, True])
def test_serve_never_writes_through_a_symlinked_log(
    fake_cpu_engine_env: Path, tmp_path: Path, free_port: int, no_deployment_left: None, detach: bool
) -> None:
    profile = serving_profile(tmp_path, free_port)
    log, outside = linked_log(tmp_path, "hostile")
    result = cli("serve", str(profile), *(["--detach"] if detach else []))
    assert result.returncode == 1, result.stderr
    assert one_line(result) == (
        f"error: cannot open the log {log}: is a symbolic link: the engine log is never opened through one (remove "
        "the link)"
    )
    assert outside.read_text() == PRECIOUS and log.is_symlink()
    assert StateStore().entries() == []  # no record of a run left behind


# --- ASCENDCTL_HOME naming a file, under --json ---------------------------------------------------------------------


@pytest.mark.parametrize("command", [["ps", "--json"], ["status", "--json"], ["status", "some-name", "--json"]])
def test_json_listings_print_the_error_document_when_home_is_a_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: list[str]
) -> None:
    home = tmp_path / "home-file"
    home.write_text("not a directory\n")
    monkeypatch.setenv("ASCENDCTL_HOME", str(home))
    result = cli(*command)
    assert result.returncode == 2, result.stderr
    message = f"ASCENDCTL_HOME={home} is a file, not a directory; point ASCENDCTL_HOME at a directory, or unset it"
    assert one_line(result) == f"error: {message}"
    document = json.loads(result.stdout)
    assert document == {"error": {"exit": 2, "kind": "invalid-input", "message": message, "where": None, "issues": []}}
    assert home.read_text() == "not a directory\n"


# --- render -o: a signal from outside while it writes ---------------------------------------------------------------

# `python -m ascendctl render ...` as the user runs it, made slow or signalled at one exact point: the staged writes
# sleep (`slow`), or the process signals itself right after the staging directory is made, before `mkdtemp` has even
# returned its name (`at-stage`: the narrowest window there is).
DRIVER = textwrap.dedent(
    """
    import os, signal, sys, tempfile, time
    from pathlib import Path

    mode, sig = sys.argv[1], int(sys.argv[2])
    if mode == "slow":
        real_write = Path.write_text

        def write_text(self, *args, **kwargs):
            if self.parent.name.startswith(".ascendctl-render."):
                time.sleep(60)  # the test signals meanwhile
            return real_write(self, *args, **kwargs)

        Path.write_text = write_text
    else:
        real_mkdtemp = tempfile.mkdtemp

        def mkdtemp(*args, **kwargs):
            made = real_mkdtemp(*args, **kwargs)
            os.kill(os.getpid(), sig)
            return made

        tempfile.mkdtemp = mkdtemp
    from ascendctl.cli import main

    sys.exit(main(sys.argv[3:]))
    """
)


def previous_render(directory: Path) -> dict[str, str]:
    return seed(directory, {"node0.sh": "old 0\n", "keep.txt": "not rendered\n"})


def render_driver(tmp_path: Path, mode: str, sig: int, out: Path) -> subprocess.Popen[str]:
    driver = tmp_path / "driver.py"
    driver.write_text(DRIVER)
    argv = ["render", str(CPU_DEMO), "--target", "script", "-o", str(out)]
    return subprocess.Popen(
        [sys.executable, str(driver), mode, str(int(sig)), *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # a signal the test sends reaches this process alone
    )


def finished(proc: subprocess.Popen[str]) -> tuple[int, str, str]:
    try:
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
    return proc.returncode, out, err


def test_sigterm_from_outside_while_render_writes_leaves_dir_unchanged(tmp_path: Path) -> None:
    out = tmp_path / "out"
    old = previous_render(out)
    proc = render_driver(tmp_path, "slow", signal.SIGTERM, out)
    try:
        deadline = time.monotonic() + 60
        while not any(p.name.startswith(".ascendctl-render.") for p in out.iterdir()):
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the staging directory never appeared"
            time.sleep(0.01)
        os.kill(proc.pid, signal.SIGTERM)  # the render this test started, by its pid
    finally:
        code, stdout, stderr = finished(proc)
    assert code == 130, stderr
    assert stderr.strip().splitlines() == ["interrupted"] and stdout == ""
    assert contents(out) == old  # no staging directory, no new file, the previous ones as they were


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
@pytest.mark.parametrize("exists", [True, False])
def test_a_signal_as_the_staging_directory_is_made_leaves_nothing(tmp_path: Path, sig: int, exists: bool) -> None:
    out = tmp_path / "out" / "deeper"
    old = previous_render(out) if exists else None
    code, stdout, stderr = finished(render_driver(tmp_path, "at-stage", sig, out))
    assert code == 130, stderr
    assert stderr.strip().splitlines() == ["interrupted"] and stdout == ""
    if old is not None:
        assert contents(out) == old
    else:
        assert not (tmp_path / "out").exists()  # the directories this render made are gone again
