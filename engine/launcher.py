"""Start one `EngineCommand` as a process group of its own, and stream what it prints.

- argv[0] `vllm` (the logical program) becomes the engine environment's executable; never a shell.
- The environment is the inherited one, then the command's `env`, then its secrets resolved from their
  `SecretRef`s at this moment (values live only in memory and in the child's environment).
- The child starts a new session (`setsid`): its pid is its process group id, the whole engine tree (API
  server → EngineCore → workers, `../shared/reference/cpu-engine.md`) shares that group, and a Ctrl-C in the
  terminal reaches only the supervisor, which decides how to stop the group.
- stdout and stderr are merged into one pipe (keeps tracebacks in order with log lines); every line is
  redacted (secret values replaced), prefixed on the console and appended to the deployment's log file.
"""

from __future__ import annotations

import collections
import contextlib
import datetime as dt
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import IO

from ascendctl_engine.spec import REDACTED, EngineCommand, SecretRef

LOG_ROTATE_BYTES = 64 * 1024 * 1024
TAIL_LINES = 200


class LaunchError(Exception):
    """The command could not be started (missing secret, missing executable, failing pre-command)."""


# ---------------------------------------------------------------------------------------------------------
# argv and env


def resolve_argv(argv: Sequence[str], executable: str | Path) -> list[str]:
    """Replace the logical program `vllm` with the engine environment's executable; other bare programs
    (e.g. `ray` on a Ray worker node) are taken from the same environment's bin directory when there."""
    if not argv:
        raise LaunchError("empty engine command")
    head = argv[0]
    if head == "vllm":
        head = str(executable)
    elif "/" not in head and (Path(executable).parent / head).exists():
        head = str(Path(executable).parent / head)
    return [head, *argv[1:]]


def resolve_secret(ref: SecretRef, environ: Mapping[str, str]) -> str:
    if ref.env:
        value = environ.get(ref.env, "")
        if not value:
            raise LaunchError(f"the secret from env:{ref.env} is not set; export {ref.env}=... before serving")
        return value
    if ref.file:
        path = Path(ref.file).expanduser()
        try:
            value = path.read_text().splitlines()[0].strip() if path.stat().st_size else ""
        except OSError as exc:
            raise LaunchError(f"cannot read the secret file {path}: {exc.strerror or exc}") from None
        if not value:
            raise LaunchError(f"the secret file {path} is empty")
        return value
    raise LaunchError("a secret reference names neither an env variable nor a file")


def resolve_secrets(secret_env: Mapping[str, SecretRef], environ: Mapping[str, str]) -> dict[str, str]:
    return {name: resolve_secret(ref, environ) for name, ref in secret_env.items()}


def build_env(cmd: EngineCommand, inherited: Mapping[str, str], secrets: Mapping[str, str]) -> dict[str, str]:
    env = dict(inherited)
    env.setdefault("PYTHONUNBUFFERED", "1")  # lines reach the log as they are printed
    env.update(cmd.env)
    env.update(secrets)
    return env


# ---------------------------------------------------------------------------------------------------------
# log sink


class LogSink:
    """Thread-safe writer of engine lines and supervisor events to the console and the log file."""

    def __init__(
        self,
        path: Path,
        *,
        prefix: str = "",
        console: Callable[[str], None] | None = None,
        secrets: Sequence[str] = (),
    ) -> None:
        self.path = path
        self.prefix = prefix
        self.console = console
        self._secrets = sorted((s for s in secrets if s), key=len, reverse=True)
        self._lock = threading.Lock()
        path.parent.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(OSError):
            if path.stat().st_size > LOG_ROTATE_BYTES:
                path.replace(path.with_name(path.name + ".1"))
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        self._file: IO[str] = os.fdopen(fd, "a", encoding="utf-8", errors="replace")

    def redact(self, text: str) -> str:
        for secret in self._secrets:
            text = text.replace(secret, REDACTED)
        return text

    def engine_line(self, line: str) -> str:
        line = self.redact(line)
        with self._lock:
            self._file.write(line + "\n")
            self._file.flush()
            if self.console is not None:
                self.console(f"{self.prefix}{line}")
        return line

    def event(self, message: str, *, echo: bool = True) -> None:
        message = self.redact(message)
        stamp = dt.datetime.now().astimezone().isoformat(timespec="seconds")
        with self._lock:
            self._file.write(f"[ascendctl {stamp}] {message}\n")
            self._file.flush()
            if echo and self.console is not None:
                self.console(f"ascendctl: {message}")

    def close(self) -> None:
        with self._lock:
            self._file.close()


# ---------------------------------------------------------------------------------------------------------
# the running process


class EngineProcess:
    """A started engine: the process group leader plus a reader thread feeding the sink."""

    def __init__(
        self,
        popen: subprocess.Popen[bytes],
        sink: LogSink,
        on_line: Callable[[str, float], None] | None = None,
    ) -> None:
        self.popen = popen
        self.pid = popen.pid
        self.pgid = popen.pid  # start_new_session: the leader's pid is the group id
        self.started = time.monotonic()
        self.tail: collections.deque[str] = collections.deque(maxlen=TAIL_LINES)
        self._sink = sink
        self._on_line = on_line
        self._reader = threading.Thread(target=self._read, name=f"engine-log-{self.pid}", daemon=True)
        self._reader.start()

    def _read(self) -> None:
        stream = self.popen.stdout
        assert stream is not None
        for raw in iter(stream.readline, b""):
            text = raw.decode("utf-8", errors="replace").rstrip("\r\n")
            # progress bars redraw with '\r': keep the last state of the line
            parts = [p for p in text.split("\r") if p.strip()]
            line = parts[-1] if parts else text
            line = self._sink.engine_line(line)
            self.tail.append(line)
            if self._on_line is not None:
                self._on_line(line, time.monotonic())
        stream.close()

    def poll(self) -> int | None:
        return self.popen.poll()

    @property
    def returncode(self) -> int | None:
        return self.popen.returncode

    def wait(self, timeout: float | None = None) -> int | None:
        try:
            return self.popen.wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    def signal_group(self, sig: int) -> bool:
        try:
            os.killpg(self.pgid, sig)
        except ProcessLookupError:
            return False
        return True

    def join_reader(self, timeout: float = 5.0) -> None:
        # The pipe closes when every process holding it has exited; a stray grandchild keeping it open
        # must not block us for ever.
        self._reader.join(timeout)


def launch(
    cmd: EngineCommand,
    executable: str | Path,
    sink: LogSink,
    *,
    environ: Mapping[str, str] | None = None,
    secrets: Mapping[str, str] | None = None,
    on_line: Callable[[str, float], None] | None = None,
    cwd: Path | None = None,
) -> EngineProcess:
    """Start `cmd` (never through a shell) in a new session with the merged environment."""
    inherited = os.environ if environ is None else environ
    resolved = resolve_secrets(cmd.secret_env, inherited) if secrets is None else dict(secrets)
    argv = resolve_argv(cmd.argv, executable)
    env = build_env(cmd, inherited, resolved)
    return EngineProcess(_spawn(argv, env, cwd, what=argv[0]), sink, on_line)


def _spawn(argv: Sequence[str], env: Mapping[str, str], cwd: Path | None, *, what: str) -> subprocess.Popen[bytes]:
    """Start `argv` (never through a shell) in its own session, output merged into one pipe."""
    try:
        return subprocess.Popen(
            list(argv),
            env=dict(env),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            cwd=cwd,
            close_fds=True,
        )
    except OSError as exc:
        raise LaunchError(f"cannot start {what}: {exc.strerror or exc}") from None


def run_pre_commands(
    cmd: EngineCommand,
    executable: str | Path,
    sink: LogSink,
    *,
    environ: Mapping[str, str] | None = None,
    secrets: Mapping[str, str] | None = None,
    timeout: float = 300.0,
) -> None:
    """Run the node's preparatory commands (e.g. `ray start`) to completion, in order, logged like the engine.
    A bare program name is looked up next to the engine executable first (same environment)."""
    inherited = os.environ if environ is None else environ
    env = build_env(cmd, inherited, secrets or {})
    bindir = Path(executable).parent
    for pre in cmd.pre_commands:
        if not pre:
            continue
        program = pre[0]
        if "/" not in program and (bindir / program).exists():
            program = str(bindir / program)
        argv = [program, *pre[1:]]
        sink.event(f"pre-command: {' '.join(argv)}")
        proc = EngineProcess(_spawn(argv, env, None, what=f"pre-command {program}"), sink)
        code = proc.wait(timeout)
        if code is None:
            proc.signal_group(signal.SIGKILL)
            proc.wait(5)
            raise LaunchError(f"pre-command {' '.join(argv)} did not finish within {timeout:.0f}s")
        proc.join_reader()
        if code != 0:
            raise LaunchError(f"pre-command {' '.join(argv)} failed with exit status {code}")
