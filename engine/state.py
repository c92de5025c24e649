"""Where running deployments are recorded: one JSON file per deployment (and node) in a private directory.

Layout under the state directory (0700): `deployments/<name>.node<N>.json` (0600) and
`logs/<name>.node<N>.log` (0600). A record holds what `ps`, `logs` and `stop` need: the supervisor's pid,
the engine's process group, the endpoint, the start time, the log path. Secrets are never written: there
is no field for them, and `EngineCommand.secret_env` values never reach this module.

Entries whose supervisor died are *stale* and are removed when listed, unless their engine process group
is still alive (then the entry is reported as `orphaned` so `stop` can end it). Liveness checks ignore
zombies and detect pid reuse by the process start time in `/proc`, so a recycled pid is not mistaken for
the supervisor.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

STATE_VERSION = 1
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")


def state_dir(environ: Mapping[str, str] | None = None) -> Path:
    """`$ASCENDCTL_HOME/state` if set, else `$XDG_STATE_HOME/ascendctl`, else `~/.local/state/ascendctl`."""
    env = os.environ if environ is None else environ
    if env.get("ASCENDCTL_HOME"):
        return Path(env["ASCENDCTL_HOME"]) / "state"
    if env.get("XDG_STATE_HOME"):
        return Path(env["XDG_STATE_HOME"]) / "ascendctl"
    home = env.get("HOME") or str(Path.home())
    return Path(home) / ".local" / "state" / "ascendctl"


def ensure_private_dir(path: Path) -> Path:
    """Create `path` (and parents) and make it 0700, also when it already existed with looser modes."""
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    if path.stat().st_mode & 0o777 != 0o700:
        path.chmod(0o700)
    return path


def key_for(name: str, node: int) -> str:
    if not _NAME.match(name):
        raise ValueError(f"invalid deployment name {name!r}")
    return f"{name}.node{node}"


@dataclass(frozen=True)
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
    restarts: int = 0
    last_restart_reason: str | None = None
    phases: list[dict[str, object]] = field(default_factory=list)
    version: int = STATE_VERSION

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=2, sort_keys=True)

    @classmethod
    def from_dict(cls, data: Mapping[str, object]) -> DeploymentState:
        known = set(cls.__dataclass_fields__)
        return cls(**{k: v for k, v in data.items() if k in known})  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------------------------
# process liveness (Linux /proc with a portable fallback)


def _stat_fields(pid: int) -> list[str] | None:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # the command name (field 2) may hold spaces and parentheses: split after the last ')'
    return text.rsplit(")", 1)[1].split()


def process_start_time(pid: int) -> int | None:
    fields = _stat_fields(pid)
    return int(fields[19]) if fields and len(fields) > 19 else None


def pid_alive(pid: int, start_time: int | None = None) -> bool:
    """True if `pid` runs (not a zombie) and, when `start_time` is given, is the same process as recorded."""
    if pid <= 0:
        return False
    fields = _stat_fields(pid)
    if fields is not None:
        if fields[0] == "Z":
            return False
        return start_time is None or int(fields[19]) == start_time
    if Path("/proc/self/stat").exists():
        return False  # /proc works but has no entry for pid: gone
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


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
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        fields = _stat_fields(int(entry.name))
        if fields and len(fields) > 2 and fields[0] != "Z" and int(fields[2]) == pgid:
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


@dataclass(frozen=True)
class Listed:
    state: DeploymentState
    supervisor_alive: bool
    engine_alive: bool

    @property
    def orphaned(self) -> bool:
        return not self.supervisor_alive and self.engine_alive


class AlreadyRunning(Exception):
    def __init__(self, state: DeploymentState) -> None:
        super().__init__(f"{state.name} (node {state.node}) is already running, supervisor pid {state.supervisor_pid}")
        self.state = state


class StateStore:
    def __init__(self, root: Path | None = None) -> None:
        self.root = root if root is not None else state_dir()

    @property
    def deployments_dir(self) -> Path:
        return self.root / "deployments"

    @property
    def logs_dir(self) -> Path:
        return self.root / "logs"

    def ensure(self) -> None:
        ensure_private_dir(self.root)
        ensure_private_dir(self.deployments_dir)
        ensure_private_dir(self.logs_dir)

    def path_for(self, name: str, node: int) -> Path:
        return self.deployments_dir / f"{key_for(name, node)}.json"

    def log_path(self, name: str, node: int) -> Path:
        return self.logs_dir / f"{key_for(name, node)}.log"

    # -- writing

    def claim(self, state: DeploymentState) -> None:
        """Create the record for a new run; raises `AlreadyRunning` if a live one exists for this name/node."""
        self.ensure()
        path = self.path_for(state.name, state.node)
        for _ in range(2):
            try:
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            except FileExistsError:
                existing = self._read(path)
                if existing is not None and self._listed(existing).supervisor_alive:
                    raise AlreadyRunning(existing) from None
                if existing is not None and group_members(existing.engine_pgid or 0):
                    raise AlreadyRunning(existing) from None
                with contextlib.suppress(FileNotFoundError):
                    path.unlink()
                continue
            with os.fdopen(fd, "w") as handle:
                handle.write(state.to_json())
            return
        raise AlreadyRunning(state)  # pragma: no cover - lost a race twice

    def update(self, state: DeploymentState, **changes: object) -> DeploymentState:
        """Write a new version of the record atomically (0600); returns it."""
        new = replace(state, **changes)  # type: ignore[arg-type]
        path = self.path_for(new.name, new.node)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as handle:
            handle.write(new.to_json())
        tmp.replace(path)
        return new

    def remove(self, state: DeploymentState) -> None:
        """Delete the record if it still belongs to this run."""
        path = self.path_for(state.name, state.node)
        current = self._read(path)
        if current is not None and current.run_id == state.run_id:
            with contextlib.suppress(FileNotFoundError):
                path.unlink()

    # -- reading

    def get(self, name: str, node: int) -> DeploymentState | None:
        return self._read(self.path_for(name, node))

    def entries(self, *, clean: bool = True) -> list[Listed]:
        """Every recorded deployment; stale ones (supervisor and engine gone) are deleted when `clean`."""
        if not self.deployments_dir.is_dir():
            return []
        out: list[Listed] = []
        for path in sorted(self.deployments_dir.glob("*.json")):
            state = self._read(path)
            if state is None:
                if clean:
                    with contextlib.suppress(FileNotFoundError):
                        path.unlink()
                continue
            listed = self._listed(state)
            if not listed.supervisor_alive and not listed.engine_alive:
                if clean:
                    with contextlib.suppress(FileNotFoundError):
                        path.unlink()
                continue
            out.append(listed)
        return out

    def find(self, name: str, node: int | None = None) -> list[Listed]:
        return [e for e in self.entries() if e.state.name == name and (node is None or e.state.node == node)]

    @staticmethod
    def _listed(state: DeploymentState) -> Listed:
        supervisor = pid_alive(state.supervisor_pid, state.supervisor_start)
        engine = bool(state.engine_pgid and group_members(state.engine_pgid))
        return Listed(state, supervisor, engine)

    @staticmethod
    def _read(path: Path) -> DeploymentState | None:
        try:
            data = json.loads(path.read_text())
            return DeploymentState.from_dict(data) if isinstance(data, dict) else None
        except (OSError, ValueError, TypeError):
            return None


def terminate_group(pgid: int, timeout: float) -> str:
    """Stop an engine group without its supervisor: SIGTERM the leader (it drains and stops its children),
    wait up to `timeout`, then SIGTERM/SIGKILL the rest. Returns `gone`, `terminated` or `killed`."""
    if not group_members(pgid):
        return "gone"
    if pid_alive(pgid):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pgid, signal.SIGTERM)
        deadline = time.monotonic() + timeout
        while pid_alive(pgid) and time.monotonic() < deadline:
            time.sleep(0.1)
    if wait_group_gone(pgid, 5.0 if not pid_alive(pgid) else 0.0):
        return "terminated"
    signal_group(pgid, signal.SIGTERM)
    if wait_group_gone(pgid, 5.0):
        return "terminated"
    signal_group(pgid, signal.SIGKILL)
    wait_group_gone(pgid, 5.0)
    return "killed"
