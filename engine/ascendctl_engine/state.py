"""Where running deployments are recorded: one JSON file per deployment (and node) in a private directory.

Layout under the state directory (0700): `deployments/<key>.json` (0600), `logs/<key>.log` (0600) and
`locks/<key>.lock`, where the key is `<name>.node<N>`, or `<name>@<instance>.node<N>` for one instance (or the
router) of a prefill/decode deployment on host N (`@` is not allowed in names, so no two keys collide). A record
holds what `ps`, `logs` and `stop` need: the supervisor's
pid and process start time, the engine's process group and its leader's start time, the endpoint, the start
time, the log path. Secrets are never written: there is no field for them, and `EngineCommand.secret_env`
values never reach this module.

One supervisor per deployment and node: `claim` takes an exclusive `flock` on the deployment's lock file and
keeps it for the supervisor's life (the kernel drops it when the process dies, however it dies), so two
`serve` started at the same instant cannot both run; the loser gets `AlreadyRunning`. Records are written
atomically (a temporary file renamed over the record), so a reader never sees half a record.

Records are read as hostile input: through the bounded JSON reader (`ascendctl_engine.jsonio`), then every
field is checked for its type and range. A record that fails is skipped with one warning naming the file
and how to clear it, never deleted (it may be the only trace of a running engine), and never stops the
other deployments from being listed, followed or stopped.

Entries whose supervisor died are *stale* and are removed when listed, unless their engine process group
is still alive (then the entry is reported as `orphaned` so `stop` can end it). Liveness checks ignore
zombies and detect pid reuse by the process start time in `/proc` (field 22 of `/proc/<pid>/stat`).

A pid and a start time prove nothing on their own: anyone can read them from `/proc` and write them into a
record. Before a recorded process is signalled it must also show what only ascendctl gives its own processes:
the supervisor holds the deployment's lock file open (`holds_open`), and the engine's group leader was started
with the record's random run id in its environment, `ASCENDCTL_RUN_ID=<run_id>` (`carries_run_id`). The
supervisor is proved by its lock and not by its environment because a foreground `serve` *is* the supervisor: its
environment was fixed before the run id existed. See `Listed.supervisor_verified` and `Listed.engine_verified`.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import math
import os
import re
import shlex
import signal
import sys
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, field, replace
from pathlib import Path
from typing import Any

from ascendctl_engine.jsonio import JsonReadError, read_json_file
from ascendctl_engine.paths import home_dir, user_home
from ascendctl_engine.records import record

STATE_VERSION = 1
MAX_RECORD_BYTES = 256 * 1024
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
STATUSES = ("starting", "ready", "running", "restarting", "stopping", "failed")
_MAX_PID = 2**31 - 1
RUN_ID_ENV = "ASCENDCTL_RUN_ID"  # in the engine's environment: the record's run id (see `carries_run_id`)
# reading a process's environment or open files is bounded: a recorded pid may be any process
MAX_ENVIRON_BYTES = 1024 * 1024
MAX_OPEN_FILES = 65536


class StateError(Exception):
    """The state directory cannot be used (it is a file, it cannot be created or written); one line."""


def state_dir(environ: Mapping[str, str] | None = None) -> Path:
    """`$ASCENDCTL_HOME/state` if set, else `$XDG_STATE_HOME/ascendctl`, else `~/.local/state/ascendctl`."""
    env = os.environ if environ is None else environ
    ascendctl_home = home_dir(env)  # raises HomeError for a home that is a file
    if ascendctl_home is not None:
        return ascendctl_home / "state"
    if env.get("XDG_STATE_HOME"):
        return Path(env["XDG_STATE_HOME"]) / "ascendctl"
    return user_home(env) / ".local" / "state" / "ascendctl"


def ensure_private_dir(path: Path) -> Path:
    """Create `path` (and parents) and make it 0700, also when it already existed with looser modes."""
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    if path.stat().st_mode & 0o777 != 0o700:
        path.chmod(0o700)
    return path


def key_for(name: str, node: int, instance: str | None = None) -> str:
    if not _NAME.match(name):
        raise ValueError(f"invalid deployment name {name!r}")
    if instance is None:
        return f"{name}.node{node}"
    if not _NAME.match(instance):
        raise ValueError(f"invalid instance name {instance!r}")
    return f"{name}@{instance}.node{node}"


class RecordError(ValueError):
    """A deployment record that cannot be used: unreadable, not JSON, or a field of the wrong type."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason

    def warning(self) -> str:
        """The one line shown for it: which file, why, how to clear it."""
        return (
            f"warning: skipped the deployment record {self.path}: {self.reason}; if that deployment is not "
            f"running, remove the file: rm {shlex.quote(str(self.path))}"
        )


@record
class DeploymentState:
    name: str
    node: int
    role: str  # head | worker
    run_id: str  # unique per `serve` invocation
    supervisor_pid: int
    supervisor_start: int | None  # process start time (clock ticks since boot) for pid-reuse detection
    started_at: float  # epoch seconds
    log_path: str
    endpoint: str | None  # e.g. http://127.0.0.1:8000 (None for a headless worker)
    health_url: str | None
    shutdown_timeout: float
    status: str = "starting"  # starting | ready | running | restarting | stopping | failed
    engine_pid: int | None = None
    engine_pgid: int | None = None
    engine_start: int | None = None  # the engine leader's process start time: `stop` signals only a match
    restarts: int = 0
    last_restart_reason: str | None = None
    phases: list[dict[str, object]] = field(default_factory=list)
    version: int = STATE_VERSION
    instance: str | None = None  # prefill/decode deployments: the instance (or `router`) this process is
    instance_role: str | None = None  # prefill | decode | router

    @property
    def key(self) -> str:
        return key_for(self.name, self.node, self.instance)

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=2, sort_keys=True)

    @classmethod
    def from_dict(cls, data: Mapping[str, object]) -> DeploymentState:
        """A record from parsed JSON; raises ValueError naming the first field that is missing or wrong."""
        values = {name: check(name, data.get(name, _ABSENT)) for name, check in _FIELDS.items()}
        known = {k: v for k, v in values.items() if v is not _ABSENT}
        return cls(**known)


# -- field checks: each returns the value (or _ABSENT for an optional field left out) or raises ValueError

_ABSENT: Any = object()


def _describe(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def _int(low: int, high: int, *, optional: bool = False, nullable: bool = False) -> Callable[[str, object], Any]:
    def check(name: str, value: object) -> Any:
        if value is _ABSENT:
            if optional:
                return _ABSENT
            raise ValueError(f"field {name!r} is missing")
        if value is None and nullable:
            return None
        if not isinstance(value, int) or isinstance(value, bool):
            raise ValueError(f"field {name!r} must be an integer, not {_describe(value)}")
        if not low <= value <= high:
            raise ValueError(f"field {name!r} is out of range ({value})")
        return value

    return check


def _number(low: float, high: float) -> Callable[[str, object], Any]:
    def check(name: str, value: object) -> Any:
        if value is _ABSENT:
            raise ValueError(f"field {name!r} is missing")
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            raise ValueError(f"field {name!r} must be a number, not {_describe(value)}")
        if not (math.isfinite(value) and low <= value <= high):
            raise ValueError(f"field {name!r} is out of range ({value})")
        return float(value)

    return check


def _text(
    *, optional: bool = False, nullable: bool = False, choices: tuple[str, ...] = (), limit: int = 4096
) -> Callable[[str, object], Any]:
    def check(name: str, value: object) -> Any:
        if value is _ABSENT:
            if optional:
                return _ABSENT
            raise ValueError(f"field {name!r} is missing")
        if value is None and nullable:
            return None
        if not isinstance(value, str):
            raise ValueError(f"field {name!r} must be a string, not {_describe(value)}")
        if len(value) > limit or _CONTROL.search(value):  # printed by `ps`: no terminal control sequences
            raise ValueError(f"field {name!r} holds control characters or is too long")
        if choices and value not in choices:
            raise ValueError(f"field {name!r} is not one of {', '.join(choices)}")
        return value

    return check


def _name(name: str, value: object) -> Any:
    text = _text()(name, value)
    if not _NAME.match(text):
        raise ValueError(f"field {name!r} is not a deployment name")
    return text


def _instance(name: str, value: object) -> Any:
    """Optional and nullable, else a name like the deployment's (it is part of the record's file name)."""
    if value is _ABSENT or value is None:
        return value
    return _name(name, value)


def _path(name: str, value: object) -> Any:
    text = _text()(name, value)
    if not text.startswith("/"):
        raise ValueError(f"field {name!r} is not an absolute path")
    return text


def _url(name: str, value: object) -> Any:
    text = _text(nullable=True, limit=2048)(name, value)
    if text is not None and not text.startswith(("http://", "https://")):
        raise ValueError(f"field {name!r} is not an http(s) URL")
    return text


def _phases(name: str, value: object) -> Any:
    if value is _ABSENT:
        return _ABSENT
    if not isinstance(value, list) or len(value) > 64:
        raise ValueError(f"field {name!r} must be a list of phases, not {_describe(value)}")
    for phase in value:
        if not isinstance(phase, dict):
            raise ValueError(f"field {name!r} must hold objects, not {_describe(phase)}")
        for key in ("phase", "label"):
            if key in phase:
                _text(limit=200)(f"{name}.{key}", phase[key])
        for key in ("at", "took"):
            if key in phase:
                _number(-1e9, 1e9)(f"{name}.{key}", phase[key])
    return [dict(p) for p in value]


_FIELDS: dict[str, Callable[[str, object], Any]] = {
    "name": _name,
    "node": _int(0, 1_000_000),
    "role": _text(limit=32),
    "run_id": _text(limit=128),
    "supervisor_pid": _int(1, _MAX_PID),
    "supervisor_start": _int(0, 2**63, nullable=True),
    "started_at": _number(0, 1e11),
    "log_path": _path,
    "endpoint": _url,
    "health_url": _url,
    "shutdown_timeout": _number(0, 1e7),
    "status": _text(optional=True, choices=STATUSES),
    "engine_pid": _int(1, _MAX_PID, optional=True, nullable=True),
    "engine_pgid": _int(1, _MAX_PID, optional=True, nullable=True),
    "engine_start": _int(0, 2**63, optional=True, nullable=True),
    "restarts": _int(0, 1_000_000, optional=True),
    "last_restart_reason": _text(optional=True, nullable=True),
    "phases": _phases,
    "version": _int(0, 1_000_000, optional=True),
    "instance": _instance,
    "instance_role": _text(optional=True, nullable=True, choices=("prefill", "decode", "router")),
}


# ---------------------------------------------------------------------------------------------------------
# process liveness (Linux /proc with a portable fallback)


def _stat_fields(pid: int) -> list[str] | None:
    """Fields 3.. of `/proc/<pid>/stat` (index 0 is the state, 2 the process group, 19 the start time)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:  # noqa: PTH123 (a /proc file, read in one call)
            text = handle.read(4096).decode("ascii", "replace")
    except OSError:
        return None
    # the command name (field 2) may hold spaces and parentheses: split after the last ')'
    fields = text.rsplit(")", 1)[-1].split()
    return fields if len(fields) > 19 else None


def process_start_time(pid: int) -> int | None:
    """Field 22 of `/proc/<pid>/stat`: when the process started (clock ticks since boot), or None."""
    fields = _stat_fields(pid)
    return int(fields[19]) if fields and fields[19].isdigit() else None


def pid_alive(pid: int, start_time: int | None = None) -> bool:
    """True if `pid` runs (not a zombie) and, when `start_time` is given, is the same process as recorded."""
    if pid <= 0:
        return False
    fields = _stat_fields(pid)
    if fields is not None:
        if fields[0] == "Z":
            return False
        return start_time is None or fields[19] == str(start_time)
    if Path("/proc/self/stat").exists():
        return False  # /proc works but has no entry for pid: gone
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def verified(pid: int | None, start_time: int | None) -> bool:
    """The one test before ascendctl signals a recorded process: it runs and started when recorded. Without a
    recorded start time nothing is verified (a recycled pid would be some other user's process)."""
    return pid is not None and start_time is not None and pid_alive(pid, start_time)


def leader_verified(pgid: int | None, start_time: int | None) -> bool:
    """The engine's group leader runs, started when recorded, and still leads its group `pgid`."""
    if pgid is None or not verified(pgid, start_time):
        return False
    fields = _stat_fields(pgid)
    return fields is not None and fields[2] == str(pgid)


def carries_run_id(pid: int, run_id: str) -> bool:
    """Whether process `pid` was started with exactly `ASCENDCTL_RUN_ID=<run_id>` in its environment.

    `/proc/<pid>/environ` is the environment the process was started with (later changes in the process do
    not show), readable only for the user's own processes: what the launcher put there, which a record naming
    some other process cannot. Unreadable, or not within the first `MAX_ENVIRON_BYTES`: not proved (the
    launcher puts the entry first)."""
    if not run_id:
        return False
    try:
        with open(f"/proc/{pid}/environ", "rb") as handle:  # noqa: PTH123 (a /proc file, read bounded)
            data = handle.read(MAX_ENVIRON_BYTES + 1)
    except OSError:
        return False
    entries = data[:MAX_ENVIRON_BYTES].split(b"\0")
    if len(data) > MAX_ENVIRON_BYTES:
        entries.pop()  # cut at the bound: not a whole entry
    return f"{RUN_ID_ENV}={run_id}".encode() in entries


def holds_open(pid: int, path: Path) -> bool:
    """Whether process `pid` has the file `path` open (a supervisor keeps its deployment's lock file open for its
    whole life). Compared by the link text of `/proc/<pid>/fd/*`, which never opens or stats the target, with
    `path` resolved; unreadable (another user's process, no /proc): not proved."""
    try:
        wanted = path.resolve()
        with os.scandir(f"/proc/{pid}/fd") as fds:
            for count, entry in enumerate(fds):
                if count >= MAX_OPEN_FILES:
                    return False
                with contextlib.suppress(OSError):  # closed since the listing
                    if Path(entry.path).readlink() == wanted:
                        return True
    except OSError:
        return False
    return False


def group_members(pgid: int) -> list[int]:
    """Live (non-zombie) processes of process group `pgid`. Zombies are skipped: where PID 1 does not reap
    orphans (some containers), a finished engine child can linger as a zombie forever."""
    if pgid <= 0:
        return []
    proc = Path("/proc")
    if not proc.is_dir():
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return []
        except PermissionError:
            return [pgid]
        return [pgid]
    members = []
    wanted = str(pgid)
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        fields = _stat_fields(int(entry.name))
        if fields and fields[0] != "Z" and fields[2] == wanted:
            members.append(int(entry.name))
    return members


def signal_group(pgid: int, sig: int) -> bool:
    """Send `sig` to the group; False when the group no longer exists."""
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        return False
    return True


def wait_group_gone(pgid: int, timeout: float, interval: float = 0.1) -> bool:
    deadline = time.monotonic() + timeout
    while group_members(pgid):
        if time.monotonic() >= deadline:
            return False
        time.sleep(interval)
    return True


# ---------------------------------------------------------------------------------------------------------
# the store


@record
class Listed:
    state: DeploymentState
    supervisor_alive: bool  # its pid runs, and matches the recorded start time when there is one
    engine_alive: bool  # its process group has live members
    path: Path | None = None
    lock: Path | None = None  # the deployment's lock file, which its supervisor holds open

    @property
    def orphaned(self) -> bool:
        return not self.supervisor_alive and self.engine_alive

    @property
    def supervisor_verified(self) -> bool:
        """Alive *and* provably the recorded process: start time recorded and matching, and it holds the
        deployment's lock file open (which no process but its supervisor does)."""
        pid = self.state.supervisor_pid
        return self.lock is not None and verified(pid, self.state.supervisor_start) and holds_open(pid, self.lock)

    @property
    def engine_verified(self) -> bool:
        """The engine's group leader runs, started when recorded, leads its group, and was started by this run
        (its environment holds the record's run id)."""
        pgid = self.state.engine_pgid
        return (
            pgid is not None
            and leader_verified(pgid, self.state.engine_start)
            and carries_run_id(pgid, self.state.run_id)
        )


def describe_process(name: str, node: int, instance: str | None = None) -> str:
    """How messages name one supervised process: `NAME (node N)`, `NAME prefill-0 (node N)`."""
    return f"{name} (node {node})" if instance is None else f"{name} {instance} (node {node})"


class AlreadyRunning(Exception):
    def __init__(
        self,
        state: DeploymentState | None,
        *,
        name: str | None = None,
        node: int | None = None,
        instance: str | None = None,
    ) -> None:
        if state is not None:
            who = describe_process(state.name, state.node, state.instance)
        else:
            who = describe_process(str(name), node or 0, instance)
        if state is not None:
            where = f" at {state.endpoint}" if state.endpoint else ""
            detail = f"{where}, supervisor pid {state.supervisor_pid}"
        else:
            detail = " (another `ascendctl serve` holds its lock)"
        stop = state.name if state is not None else name
        super().__init__(f"{who} is already running{detail}; stop it with: ascendctl stop {stop}")
        self.state = state


class RecordUnreadable(AlreadyRunning):
    """The deployment's record exists but cannot be read: whether it runs cannot be told, so nothing starts."""

    def __init__(self, error: RecordError) -> None:
        Exception.__init__(
            self,
            f"cannot tell whether this deployment is running: its record {error.path} is unusable ({error.reason});"
            f" if it is not running, remove the file: rm {shlex.quote(str(error.path))}",
        )
        self.state = None
        self.error = error


# Lock files this process holds (absolute path → fd): a claim in the process that already holds the lock
# (a restarted supervisor object, the tests) falls back to the record's own liveness check.
_HELD: dict[str, int] = {}
_HELD_GUARD = threading.Lock()


def _default_warn(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


class StateStore:
    def __init__(self, root: Path | None = None, *, warn: Callable[[str], None] | None = None) -> None:
        self.root = root if root is not None else state_dir()
        self._warn = warn or _default_warn
        self._warned: set[str] = set()
        self.bad_records: dict[Path, RecordError] = {}  # what the last listing skipped

    @property
    def deployments_dir(self) -> Path:
        return self.root / "deployments"

    @property
    def logs_dir(self) -> Path:
        return self.root / "logs"

    @property
    def locks_dir(self) -> Path:
        return self.root / "locks"

    def ensure(self) -> None:
        """Create the private directories; raises `StateError` (one line) when that cannot be done."""
        for directory in (self.root, self.deployments_dir, self.logs_dir, self.locks_dir):
            try:
                ensure_private_dir(directory)
            except (FileExistsError, NotADirectoryError):
                raise StateError(
                    f"the state directory {directory} (or a folder above it) is a file, not a directory; "
                    "move it away, or point ASCENDCTL_HOME somewhere else"
                ) from None
            except OSError as exc:
                raise StateError(
                    f"cannot use the state directory {directory}: {exc.strerror or exc}; fix its permissions, "
                    "or point ASCENDCTL_HOME somewhere writable"
                ) from None

    def path_for(self, name: str, node: int, instance: str | None = None) -> Path:
        return self.deployments_dir / f"{key_for(name, node, instance)}.json"

    def log_path(self, name: str, node: int, instance: str | None = None) -> Path:
        return self.logs_dir / f"{key_for(name, node, instance)}.log"

    def lock_path(self, name: str, node: int, instance: str | None = None) -> Path:
        return self.locks_dir / f"{key_for(name, node, instance)}.lock"

    # -- writing

    def claim(self, state: DeploymentState) -> None:
        """Take the deployment's lock and write the record of a new run; raises `AlreadyRunning` when a live
        supervisor (or its still-running engine) has it, `StateError` when the state dir is unusable.

        The lock is kept until `remove` (or the process ends): it is what makes two concurrent `serve` of
        the same name and node safe, where reading the record and then creating it would race."""
        self.ensure()
        path = self.path_for(state.name, state.node, state.instance)
        acquired = self._lock(state)
        try:
            try:
                existing = self.read(path)
            except RecordError as exc:
                raise RecordUnreadable(exc) from None
            if existing is not None and existing.run_id != state.run_id:
                listed = self._listed(existing, path)
                # with the lock free, a live recorded supervisor is one that predates locking, and a live
                # group is an engine whose supervisor was killed: either way it is not ours to replace
                if listed.supervisor_alive or listed.engine_alive:
                    raise AlreadyRunning(existing)
            self._write(path, state)
        except BaseException:
            if acquired:
                self._unlock(state)
            raise

    def update(self, state: DeploymentState, **changes: object) -> DeploymentState:
        """Write a new version of the record atomically (0600); returns it."""
        new = replace(state, **changes)  # type: ignore[arg-type]
        self._write(self.path_for(new.name, new.node, new.instance), new)
        return new

    def remove(self, state: DeploymentState) -> None:
        """Delete the record if it still belongs to this run, then let go of the deployment's lock."""
        path = self.path_for(state.name, state.node, state.instance)
        try:
            current = self.read(path)
        except RecordError:
            current = None
        if current is not None and current.run_id != state.run_id:
            return  # another run's record (and lock): not ours to touch
        if current is not None:
            with contextlib.suppress(OSError):
                path.unlink()
        self._unlock(state)

    def _write(self, path: Path, state: DeploymentState) -> None:
        tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
            with os.fdopen(fd, "w") as handle:
                handle.write(state.to_json())
            tmp.replace(path)
        except OSError as exc:
            with contextlib.suppress(OSError):
                tmp.unlink()
            raise StateError(f"cannot write the deployment record {path}: {exc.strerror or exc}") from None

    def _lock(self, state: DeploymentState) -> bool:
        """Hold the deployment's lock; True when taken now, False when this process already held it."""
        lock = str(self.lock_path(state.name, state.node, state.instance).absolute())
        with _HELD_GUARD:
            if lock in _HELD:
                return False
            try:
                fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
            except OSError as exc:
                raise StateError(f"cannot open the lock file {lock}: {exc.strerror or exc}") from None
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                busy = True
            except OSError as exc:
                os.close(fd)
                raise StateError(f"cannot lock {lock}: {exc.strerror or exc}") from None
            else:
                _HELD[lock] = fd
                busy = False
        if busy:
            raise AlreadyRunning(self._holder(state), name=state.name, node=state.node, instance=state.instance)
        return True

    def _holder(self, state: DeploymentState, wait: float = 2.0) -> DeploymentState | None:
        """The record of whoever holds the lock (it writes it right after locking: wait a little for it)."""
        path = self.path_for(state.name, state.node, state.instance)
        deadline = time.monotonic() + wait
        while True:
            try:
                found = self.read(path)
            except RecordError:
                found = None
            if found is not None and found.run_id != state.run_id:
                return found
            if time.monotonic() >= deadline:
                return None
            time.sleep(0.05)

    def _unlock(self, state: DeploymentState) -> None:
        lock = str(self.lock_path(state.name, state.node, state.instance).absolute())
        with _HELD_GUARD:
            fd = _HELD.pop(lock, None)
        if fd is not None:
            os.close(fd)  # closing the only descriptor releases the flock

    # -- reading

    def get(self, name: str, node: int, instance: str | None = None) -> DeploymentState | None:
        """The record of `name`/`node` (/`instance`); None when there is none or it is unusable (warned once)."""
        path = self.path_for(name, node, instance)
        try:
            return self.read(path)
        except RecordError as exc:
            self._skip(exc)
            return None

    def entries(self, *, clean: bool = True) -> list[Listed]:
        """Every usable record; stale ones (supervisor and engine gone) are deleted when `clean`. Unusable
        records are skipped with a warning (see `bad_records`); raises `StateError` when the state directory
        itself cannot be read."""
        self.bad_records = {}
        directory = self.deployments_dir
        try:
            names = sorted(entry.name for entry in directory.iterdir())
        except FileNotFoundError:
            if self.root.exists() and not self.root.is_dir():
                raise StateError(f"the state directory {self.root} is a file, not a directory") from None
            return []
        except NotADirectoryError:
            raise StateError(f"the state directory {directory} (or a folder above it) is not a directory") from None
        except OSError as exc:
            raise StateError(f"cannot read the state directory {directory}: {exc.strerror or exc}") from None
        out: list[Listed] = []
        for entry in names:
            if not entry.endswith(".json") or entry.startswith("."):
                continue
            path = directory / entry
            try:
                state = self.read(path)
            except RecordError as exc:
                self._skip(exc)
                continue
            if state is None:  # deleted since the listing
                continue
            listed = self._listed(state, path)
            if not listed.supervisor_alive and not listed.engine_alive:
                if clean:
                    with contextlib.suppress(OSError):  # a read-only state dir: listed as gone all the same
                        path.unlink()
                continue
            out.append(listed)
        return out

    def find(self, name: str, node: int | None = None) -> list[Listed]:
        return [e for e in self.entries() if e.state.name == name and (node is None or e.state.node == node)]

    def _skip(self, error: RecordError) -> None:
        self.bad_records[error.path] = error
        if str(error.path) not in self._warned:
            self._warned.add(str(error.path))
            self._warn(error.warning())

    def _listed(self, state: DeploymentState, path: Path | None = None) -> Listed:
        supervisor = pid_alive(state.supervisor_pid, state.supervisor_start)
        engine = bool(state.engine_pgid and group_members(state.engine_pgid))
        return Listed(state, supervisor, engine, path, self.lock_path(state.name, state.node, state.instance))

    @staticmethod
    def read(path: Path) -> DeploymentState | None:
        """The record at `path`; None when there is no file; `RecordError` when it cannot be used."""
        try:
            data = read_json_file(path, max_bytes=MAX_RECORD_BYTES)
        except JsonReadError as exc:
            if exc.missing:
                return None
            raise RecordError(path, exc.reason) from None
        if not isinstance(data, dict):
            raise RecordError(path, "not a JSON object")
        try:
            state = DeploymentState.from_dict(data)
        except ValueError as exc:
            raise RecordError(path, str(exc)) from None
        if path.name != f"{state.key}.json":
            raise RecordError(path, f"it describes {state.key}, not {path.stem}")
        return state


def terminate_group(pgid: int, timeout: float, leader_start: int | None = None, run_id: str | None = None) -> str:
    """Stop an engine group without its supervisor: SIGTERM the leader (it drains and stops its children),
    wait up to `timeout`, then SIGTERM/SIGKILL the rest. Returns `gone`, `terminated`, `killed`, or
    `unverified` (with `leader_start` given: the leader is not that process, or, with `run_id` too, was not
    started by that run; nothing was signalled)."""
    if not group_members(pgid):
        return "gone"
    if leader_start is not None and not leader_verified(pgid, leader_start):
        return "unverified"
    if run_id is not None and not carries_run_id(pgid, run_id):
        return "unverified"
    if pid_alive(pgid):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pgid, signal.SIGTERM)
        deadline = time.monotonic() + timeout
        while pid_alive(pgid) and time.monotonic() < deadline:
            time.sleep(0.1)
    # Once verified, the group is watched without a gap: its id cannot be reused while a member lives.
    if wait_group_gone(pgid, 5.0 if not pid_alive(pgid) else 0.0):
        return "terminated"
    signal_group(pgid, signal.SIGTERM)
    if wait_group_gone(pgid, 5.0):
        return "terminated"
    signal_group(pgid, signal.SIGKILL)
    wait_group_gone(pgid, 5.0)
    return "killed"
