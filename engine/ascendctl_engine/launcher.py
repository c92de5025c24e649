"""Start one `EngineCommand` as a process group of its own, and stream what it prints.

- argv[0] `vllm` (the logical program) becomes the engine environment's executable; never a shell.
- The environment is the inherited one, then the command's `env`, then its secrets resolved from their
  `SecretRef`s at this moment (values live only in memory and in the child's environment). An engine started
  for a recorded run also gets `ASCENDCTL_RUN_ID=<run id>`, set last and placed first: `stop` signals a
  recorded engine only when its `/proc/<pid>/environ` shows it (`ascendctl_engine.state.carries_run_id`).
- The child starts a new session (`setsid`): its pid is its process group id, the whole engine tree (API
  server → EngineCore → workers, as tests/e2e/test_supervisor_kill.py and
  tests/fixtures/vllm_logs/cpu-0.32.0-eager-startup.log show) shares that group, and a Ctrl-C in the
  terminal reaches only the supervisor, which decides how to stop the group.
- stdout and stderr are merged into one pipe (keeps tracebacks in order with log lines); every line is
  redacted (secret values replaced), prefixed on the console and appended to the deployment's log file.
- Nothing of the engine outlives its supervisor, however the supervisor dies (SIGKILL, OOM killer):
  * the leader is started through a tiny exec guard (`python -c`, no `preexec_fn`, which is unsafe with
    threads) that sets `PR_SET_PDEATHSIG` to SIGKILL and then execs the engine, so the kernel kills the
    leader when the supervisor goes; the guard refuses to exec if the supervisor died before it was armed;
  * the parent-death signal reaches only the leader, and vLLM's engine-core and worker processes are its
    children in the same group: a watchdog process (its own session, not in the group) holds the read end
    of a pipe whose write end only the supervisor has. When the supervisor dies the pipe reaches EOF and
    the watchdog SIGKILLs the whole group, if it is still the group it was given (leader start time) or
    what is left of it. It stands down when told, and exits by itself once the group is gone.
  The parent-death signal fires when the *thread* that started the engine ends: start it from the thread
  that supervises it (the supervisor does).
"""

from __future__ import annotations

import collections
import contextlib
import datetime as dt
import errno
import fcntl
import os
import shutil
import signal
import stat
import subprocess
import sys
import termios
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import IO

from ascendctl_engine.jsonio import JsonReadError, read_bytes
from ascendctl_engine.paths import HomeError, expand_user
from ascendctl_engine.redaction import redact, secret_needles, too_short
from ascendctl_engine.spec import EngineCommand, SecretRef
from ascendctl_engine.state import RUN_ID_ENV, process_start_time

LOG_ROTATE_BYTES = 64 * 1024 * 1024
TAIL_LINES = 200


class LaunchError(Exception):
    """The command could not be started (missing secret, missing executable, failing pre-command)."""


class InvalidSecret(LaunchError):
    """A secret's value cannot be handed to the engine at all (a NUL byte, which no environment variable can carry):
    the key file is wrong, not the launch. `ascendctl` reports it as invalid input (exit 2)."""


# Run as `python -I -S -c _EXEC_GUARD SUPERVISOR_PID PROGRAM ARG...`: arm the parent-death signal, check the
# supervisor is still the parent (it may have died before the prctl), then become PROGRAM (same pid, same
# process start time, so the recorded leader identity holds).
_EXEC_GUARD = """
import os, sys
try:
    import ctypes
    ctypes.CDLL(None, use_errno=True).prctl(1, 9, 0, 0, 0)  # PR_SET_PDEATHSIG = 1, SIGKILL = 9
except Exception:
    pass
if os.getppid() != int(sys.argv[1]):
    os._exit(70)
try:
    os.execvp(sys.argv[2], sys.argv[2:])
except OSError as exc:
    sys.stderr.write("cannot start %s: %s\\n" % (sys.argv[2], exc.strerror or exc))
    os._exit(127)
"""

# Run as `python -I -S -c _WATCHDOG PGID LEADER_START` with stdin the read end of the supervisor's pipe.
_WATCHDOG = """
import os, select, signal, sys
for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
    signal.signal(sig, signal.SIG_IGN)
pgid, start = int(sys.argv[1]), sys.argv[2]
def fields(pid):
    try:
        with open("/proc/%d/stat" % pid, "rb") as handle:
            parts = handle.read(4096).decode("ascii", "replace").rsplit(")", 1)[-1].split()
    except OSError:
        return None
    return parts if len(parts) > 19 else None
def ours():
    leader = fields(pgid)
    if leader is not None and leader[0] != "Z":
        return leader[19] == start and leader[2] == str(pgid)
    for name in os.listdir("/proc"):
        if name.isdigit():
            member = fields(int(name))
            if member is not None and member[0] != "Z" and member[2] == str(pgid):
                return True
    return False
while True:
    readable = select.select([0], [], [], 1.0)[0]
    if readable:
        try:
            data = os.read(0, 64)
        except OSError:
            data = b""
        if data:
            if b"x" in data:
                sys.exit(0)
            continue
        if ours():
            try:
                os.killpg(pgid, signal.SIGKILL)
            except OSError:
                pass
        sys.exit(0)
    if not ours():
        sys.exit(0)
"""


def _guarded() -> bool:
    """Whether the exec guard and watchdog apply here (Linux with /proc and a real interpreter)."""
    return sys.platform.startswith("linux") and bool(sys.executable) and Path("/proc").is_dir()


class Watchdog:
    """The supervisor's end of an engine's watchdog: closing it (or dying) without `stand_down` kills the group."""

    def __init__(self, pgid: int, leader_start: int) -> None:
        read_end, self._write_end = os.pipe()  # both non-inheritable: the engine never holds the write end
        try:
            self.popen: subprocess.Popen[bytes] | None = subprocess.Popen(
                [sys.executable, "-I", "-S", "-c", _WATCHDOG, str(pgid), str(leader_start)],
                stdin=read_end,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,  # no terminal signals, and not a member of the group it guards
                close_fds=True,
            )
        except OSError:
            os.close(self._write_end)
            self._write_end = -1
            self.popen = None
        finally:
            os.close(read_end)

    def stand_down(self) -> None:
        """The group is gone (or ours to leave): let the watchdog exit without killing, and reap it."""
        if self._write_end >= 0:
            with contextlib.suppress(OSError):
                os.write(self._write_end, b"x")
            os.close(self._write_end)
            self._write_end = -1
        if self.popen is not None:
            try:
                self.popen.wait(5)
            except subprocess.TimeoutExpired:
                self.popen.kill()
                self.popen.wait()
            self.popen = None


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


_NUL_PROBLEM = "holds a NUL byte, which no environment variable can carry"


def resolve_secret(ref: SecretRef, environ: Mapping[str, str]) -> str:
    value = _read_secret(ref, environ)
    if "\0" in value:  # the file's own check names its path; this is any other source's
        raise InvalidSecret(f"the secret from {ref.describe()} {_NUL_PROBLEM}")
    problem = too_short(value)
    if problem is not None:
        # refused, not logged: every occurrence of a short value would be replaced in the log, which shows it
        raise LaunchError(f"the secret from {ref.describe()} {problem}")
    return value


def _read_secret(ref: SecretRef, environ: Mapping[str, str]) -> str:
    if ref.env:
        value = environ.get(ref.env, "")
        if not value:
            raise LaunchError(f"the secret from env:{ref.env} is not set; export {ref.env}=... before serving")
        return value
    if ref.file:
        try:
            path = expand_user(ref.file, "the secret file")
        except HomeError as exc:
            raise LaunchError(str(exc)) from None
        try:
            # a key file is small and regular: a FIFO must not block the start, a huge file not be slurped
            raw = read_bytes(path, max_bytes=64 * 1024)
            lines = raw.decode("utf-8-sig").splitlines()
        except JsonReadError as exc:
            raise LaunchError(f"cannot read the secret file {path}: {exc.reason}") from None
        except UnicodeDecodeError:
            raise LaunchError(f"the secret file {path} is not UTF-8 text") from None
        value = lines[0].strip() if lines else ""
        if not value:
            raise LaunchError(f"the secret file {path} is empty")
        if "\0" in value:  # the environment is a C string: `execve` could not take it (never the value shown)
            raise InvalidSecret(f"the secret file {path} {_NUL_PROBLEM}; write the secret alone on its first line")
        return value
    raise LaunchError("a secret reference names neither an env variable nor a file")


def resolve_secrets(secret_env: Mapping[str, SecretRef], environ: Mapping[str, str]) -> dict[str, str]:
    return {name: resolve_secret(ref, environ) for name, ref in secret_env.items()}


def build_env(
    cmd: EngineCommand, inherited: Mapping[str, str], secrets: Mapping[str, str], *, run_id: str | None = None
) -> dict[str, str]:
    env = dict(inherited)
    env.setdefault("PYTHONUNBUFFERED", "1")  # lines reach the log as they are printed
    env.update(cmd.env)
    env.update(secrets)
    # Only this run's marker, never one inherited or written in a profile: it is how `stop` tells its own engine.
    env.pop(RUN_ID_ENV, None)
    if run_id is not None:
        env = {RUN_ID_ENV: run_id, **env}  # first, where a bounded read of /proc/<pid>/environ finds it
    return env


# ---------------------------------------------------------------------------------------------------------
# log sink


def open_log_append(path: Path) -> int:
    """The engine log opened for appending (created 0600), never through a symbolic link (`O_NOFOLLOW`: a link
    planted at the log's path could point out of the state directory, at a file the user can write) and only as a
    regular file (a FIFO or a device is refused; `O_NONBLOCK` so a FIFO never blocks the open). Raises `OSError`
    with a message that says which."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK | os.O_NOCTTY
    try:
        fd = os.open(path, flags, 0o600)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            reason = "is a symbolic link: the engine log is never opened through one (remove the link)"
            raise OSError(errno.ELOOP, reason, str(path)) from None
        raise
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise OSError(errno.EINVAL, "is not a regular file: the engine log must be one (remove it)", str(path))
    os.set_blocking(fd, True)
    return fd


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
        self._secrets = secret_needles(secrets)  # each value whole and each of its lines
        self._lock = threading.Lock()
        path.parent.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(OSError):
            found = path.lstat()  # never through a link: a symlinked log is refused below, not rotated
            if stat.S_ISREG(found.st_mode) and found.st_size > LOG_ROTATE_BYTES:
                path.replace(path.with_name(path.name + ".1"))
        fd = open_log_append(path)
        self._file: IO[str] = os.fdopen(fd, "a", encoding="utf-8", errors="replace")

    def redact(self, text: str) -> str:
        return redact(text, self._secrets)

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
        # Read before anything can reap it (an exited, unreaped child keeps its pid and /proc entry): what
        # `stop` later compares before signalling the group.
        self.start_time = process_start_time(self.pid)
        self.watchdog: Watchdog | None = None
        self.tail: collections.deque[str] = collections.deque(maxlen=TAIL_LINES)
        self._sink = sink
        self._on_line = on_line
        self._blocked = threading.Event()
        self._reader = threading.Thread(target=self._read, name=f"engine-log-{self.pid}", daemon=True)
        self._reader.start()

    def _read(self) -> None:
        # Raw reads on the pipe's descriptor (no userspace buffer of our own but `pending`, the last partial
        # line): whatever the engine wrote and this thread has not handled is then either in the kernel pipe
        # (counted by FIONREAD) or being handled, which is what `catch_up` needs to know.
        stream = self.popen.stdout
        assert stream is not None
        fd = stream.fileno()
        pending = b""
        while True:
            self._blocked.set()
            chunk = os.read(fd, 65536)
            self._blocked.clear()
            if not chunk:
                break
            *complete, pending = (pending + chunk).split(b"\n")
            for raw in complete:
                self._handle(raw)
        if pending:
            self._handle(pending)
        stream.close()

    def _handle(self, raw: bytes) -> None:
        text = raw.decode("utf-8", errors="replace").rstrip("\r")
        # progress bars redraw with '\r': keep the last state of the line
        parts = [p for p in text.split("\r") if p.strip()]
        line = parts[-1] if parts else text
        line = self._sink.engine_line(line)
        self.tail.append(line)
        if self._on_line is not None:
            self._on_line(line, time.monotonic())

    def catch_up(self, timeout: float = 1.0) -> bool:
        """Wait (at most `timeout`) until every line the engine has printed so far has been handled.

        The engine logs a phase and then answers /health; the supervisor learns of the answer on its own
        thread and must not mark `ready` while the line before it still sits in the pipe (the phase would
        then be lost as out of order). Caught up = the reader is blocked in `read` with nothing unread, seen
        twice in a row (the reader may have just returned from `read` without having cleared its flag yet).
        """
        deadline = time.monotonic() + timeout
        settled = 0
        while self._reader.is_alive():
            if self._blocked.is_set() and _unread_bytes(self.popen.stdout) == 0:
                settled += 1
                if settled == 2:
                    return True
            else:
                settled = 0
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.01)
        return True

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

    def guard(self) -> None:
        """Start the watchdog that kills this group if the supervisor dies (see the module docstring)."""
        if self.watchdog is None and self.start_time is not None and _guarded():
            self.watchdog = Watchdog(self.pgid, self.start_time)

    def release(self) -> None:
        """The group has been stopped and checked empty: stand the watchdog down."""
        if self.watchdog is not None:
            self.watchdog.stand_down()
            self.watchdog = None

    def join_reader(self, timeout: float = 5.0) -> None:
        # The pipe closes when every process holding it has exited; a stray grandchild keeping it open
        # must not block us for ever.
        self._reader.join(timeout)


def _unread_bytes(stream: IO[bytes] | None) -> int:
    """Bytes waiting in a pipe (FIONREAD); 0 once it is closed."""
    if stream is None:
        return 0
    buf = bytearray(4)
    try:
        fcntl.ioctl(stream.fileno(), termios.FIONREAD, buf)
    except (OSError, ValueError):
        return 0
    return int.from_bytes(buf, sys.byteorder)


def launch(
    cmd: EngineCommand,
    executable: str | Path,
    sink: LogSink,
    *,
    environ: Mapping[str, str] | None = None,
    secrets: Mapping[str, str] | None = None,
    on_line: Callable[[str, float], None] | None = None,
    cwd: Path | None = None,
    run_id: str | None = None,
) -> EngineProcess:
    """Start `cmd` (never through a shell) in a new session with the merged environment, guarded so that it
    dies with the calling thread's process (parent-death signal on the leader, a watchdog for the group).
    `run_id`: the recorded run it belongs to, put in its environment as `ASCENDCTL_RUN_ID`."""
    inherited = os.environ if environ is None else environ
    resolved = resolve_secrets(cmd.secret_env, inherited) if secrets is None else dict(secrets)
    argv = resolve_argv(cmd.argv, executable)
    env = build_env(cmd, inherited, resolved, run_id=run_id)
    proc = EngineProcess(_spawn(argv, env, cwd, what=argv[0], guard=True), sink, on_line)
    proc.guard()
    return proc


def _spawn(
    argv: Sequence[str], env: Mapping[str, str], cwd: Path | None, *, what: str, guard: bool = False
) -> subprocess.Popen[bytes]:
    """Start `argv` (never through a shell) in its own session, output merged into one pipe; with `guard`,
    through the exec guard (the program is looked up first, so a missing one is still a `LaunchError`)."""
    command = list(argv)
    if guard and _guarded():
        program = command[0]
        if "/" in program:
            found = Path(program).is_file() and os.access(program, os.X_OK)
        else:
            found = shutil.which(program, path=env.get("PATH", os.defpath)) is not None
        if not found:
            why = "Permission denied" if "/" in program and Path(program).exists() else "No such file or directory"
            raise LaunchError(f"cannot start {what}: {why}")
        command = [sys.executable, "-I", "-S", "-c", _EXEC_GUARD, str(os.getpid()), *command]
    try:
        return subprocess.Popen(
            command,
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
