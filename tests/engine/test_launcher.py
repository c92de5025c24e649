"""The launcher's pure steps (argv, env, secrets), the command's listen address, its pre-commands and log sink."""

from __future__ import annotations

import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ascendctl_engine.launcher import (
    EngineProcess,
    LaunchError,
    LogSink,
    build_env,
    resolve_argv,
    resolve_secrets,
    run_pre_commands,
)
from ascendctl_engine.spec import EngineCommand, Listen, SecretRef

LOOPBACK = Listen("127.0.0.1", 8000)


def cmd(*argv: str, listen: Listen | None = LOOPBACK, **kw: object) -> EngineCommand:
    return EngineCommand(node=0, role="head", argv=argv, listen=listen, **kw)  # type: ignore[arg-type]


def test_logical_vllm_becomes_the_engine_executable() -> None:
    assert resolve_argv(("vllm", "serve", "m"), "/envs/cpu/bin/vllm") == ["/envs/cpu/bin/vllm", "serve", "m"]
    assert resolve_argv(("python3", "-V"), "/envs/cpu/bin/vllm") == ["python3", "-V"]
    with pytest.raises(LaunchError):
        resolve_argv((), "/x")


def test_env_layers_inherited_then_planned_then_secrets() -> None:
    command = cmd("vllm", env={"A": "planned", "VLLM_API_KEY": "not-a-secret-slot"})
    env = build_env(command, {"A": "inherited", "B": "inherited", "PYTHONUNBUFFERED": "0"}, {"VLLM_API_KEY": "s3"})
    assert env == {"A": "planned", "B": "inherited", "PYTHONUNBUFFERED": "0", "VLLM_API_KEY": "s3"}
    assert build_env(cmd("vllm"), {}, {})["PYTHONUNBUFFERED"] == "1"


def test_secrets_from_env_and_file(tmp_path: Path) -> None:
    key_file = tmp_path / "key"
    key_file.write_text("sk-file-0123\nsecond line ignored\n")
    refs = {"A": SecretRef(env="MY_KEY"), "B": SecretRef(file=str(key_file))}
    assert resolve_secrets(refs, {"MY_KEY": "sk-env-0123"}) == {"A": "sk-env-0123", "B": "sk-file-0123"}
    with pytest.raises(LaunchError, match="env:MY_KEY is not set"):
        resolve_secrets({"A": SecretRef(env="MY_KEY")}, {})
    with pytest.raises(LaunchError, match="cannot read the secret file"):
        resolve_secrets({"A": SecretRef(file=str(tmp_path / "absent"))}, {})
    (tmp_path / "empty").write_text("")
    with pytest.raises(LaunchError, match="is empty"):
        resolve_secrets({"A": SecretRef(file=str(tmp_path / "empty"))}, {})


def test_listen_address_and_endpoint_are_fields_not_argv() -> None:
    # the command says where it listens; nothing reads --host/--port back out of the argv
    wild = cmd("vllm", "serve", "m", "--port", "1", listen=Listen("0.0.0.0", 8123))
    assert (wild.listen.host, wild.listen.port) == ("0.0.0.0", 8123)  # type: ignore[union-attr]
    assert wild.endpoint == "http://127.0.0.1:8123" and wild.health_url == "http://127.0.0.1:8123/health"
    assert cmd("vllm", listen=Listen("::1", 9)).endpoint == "http://[::1]:9"
    headless = cmd("vllm", "serve", "m", "--headless", listen=None)
    assert headless.endpoint is None and headless.health_url is None


def test_log_sink_redacts_prefixes_and_keeps_the_file_private(tmp_path: Path) -> None:
    shown: list[str] = []
    sink = LogSink(tmp_path / "logs" / "x.log", prefix="[x] ", console=shown.append, secrets=["sk-abc"])
    sink.engine_line("args: {'api_key': 'sk-abc'}")
    sink.event("phase: ready")
    sink.close()
    text = (tmp_path / "logs" / "x.log").read_text()
    assert "sk-abc" not in text and "'api_key': '<redacted>'" in text
    assert shown == ["[x] args: {'api_key': '<redacted>'}", "ascendctl: phase: ready"]
    assert "] phase: ready" in text.splitlines()[1] and text.splitlines()[1].startswith("[ascendctl ")
    assert stat.S_IMODE((tmp_path / "logs" / "x.log").stat().st_mode) == 0o600


def test_pre_commands_run_in_order_and_a_failure_stops_the_launch(tmp_path: Path) -> None:
    out = tmp_path / "order"
    write = f"open({str(out)!r}, 'a').write('{{}}\\n'.format(__import__('sys').argv[1]))"
    good = cmd(
        "vllm",
        pre_commands=((sys.executable, "-c", write, "one"), (sys.executable, "-c", write, "two")),
    )
    sink = LogSink(tmp_path / "pre.log")
    run_pre_commands(good, tmp_path / "bin" / "vllm", sink, environ={})
    assert out.read_text().split() == ["one", "two"]
    bad = cmd("vllm", pre_commands=((sys.executable, "-c", "print('ray: no'); raise SystemExit(3)"),))
    with pytest.raises(LaunchError, match="failed with exit status 3"):
        run_pre_commands(bad, tmp_path / "bin" / "vllm", sink, environ={})
    sink.close()
    assert "ray: no" in (tmp_path / "pre.log").read_text()


@pytest.mark.parametrize(
    ("content", "why"),
    [(b"\xff\xfe\x00bad", "not UTF-8 text"), (b"x" * (65 * 1024), "larger than"), (b"", "is empty")],
)
def test_a_secret_file_is_read_bounded_and_decoded(tmp_path: Path, content: bytes, why: str) -> None:
    from ascendctl_engine.launcher import resolve_secret

    key = tmp_path / "key"
    key.write_bytes(content)
    with pytest.raises(LaunchError, match=why):
        resolve_secret(SecretRef(file=str(key)), {})


def test_a_secret_file_that_is_a_fifo_does_not_block(tmp_path: Path) -> None:
    import os

    from ascendctl_engine.launcher import resolve_secret

    fifo = tmp_path / "key"
    os.mkfifo(fifo)
    with pytest.raises(LaunchError, match="cannot read the secret file"):
        resolve_secret(SecretRef(file=str(fifo)), {})


def test_catch_up_returns_once_every_printed_line_is_handled(tmp_path: Path) -> None:
    # The engine prints a burst, then says (outside the pipe) that it has printed it, as vLLM answers /health
    # after logging its phases. A slow line handler leaves most of the burst unread at that moment; once
    # `catch_up` returns every line, the unterminated last one included, has been handled, in order.
    marker = tmp_path / "printed"
    script = (
        "import pathlib, sys, time\n"
        "sys.stdout.write(''.join(f'line {i}\\r\\n' for i in range(300)) + 'progress 1%\\rprogress 9%')\n"
        "sys.stdout.flush()\n"
        f"pathlib.Path({str(marker)!r}).touch()\n"
        "time.sleep(30)\n"
    )
    seen: list[str] = []

    def slow(line: str, _at: float) -> None:
        time.sleep(0.002)
        seen.append(line)

    popen = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, start_new_session=True)
    proc = EngineProcess(popen, LogSink(tmp_path / "burst.log"), slow)
    try:
        deadline = time.monotonic() + 20
        while not marker.exists() and time.monotonic() < deadline:
            time.sleep(0.005)
        assert len(seen) < 300  # the handler is behind: without catching up, lines would be missed
        assert proc.catch_up(timeout=10)
        assert seen == [f"line {i}" for i in range(300)]  # the partial last line waits for its newline
    finally:
        popen.kill()
        popen.wait(5)
    proc.join_reader()
    assert seen[-1] == "progress 9%"  # at end of output the partial line is handled, last redraw kept
