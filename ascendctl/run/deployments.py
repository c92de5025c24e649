"""Reading the deployments recorded on this host, for `ps`, `logs` and `stop` (the state store is the one
boundary; health probes run against 127.0.0.1-style endpoints recorded by the supervisor).

The state directory is hostile input here: a record that cannot be used is skipped with a warning by the
store (the others still work), and a state directory that cannot be read at all, or a log that is gone or
not a file, is an `OperationFailed` (exit 1) with one line, never a traceback. The only log a record may name
is its deployment's own, `logs/<key>.log` in the state directory: any other path (`/etc/shadow`,
`/proc/self/environ`) is refused, never opened.
"""

from __future__ import annotations

import glob
import shlex
import time
from pathlib import Path
from typing import BinaryIO

from ascendctl.core.errors import OperationFailed, UserInputError
from ascendctl_engine.health import probe
from ascendctl_engine.jsonio import JsonReadError, open_regular
from ascendctl_engine.state import Listed, StateError, StateStore


def health_of(entry: Listed) -> str:
    state = entry.state
    if entry.orphaned:
        return "orphaned"
    if state.health_url is None:
        return "n/a"
    result = probe(state.health_url, timeout=1.0)
    if result.ok:
        return "ok"
    return f"unhealthy ({result.status})" if result.status is not None else "down"


def listed(store: StateStore, name: str | None = None, node: int | None = None) -> list[Listed]:
    """The store's usable entries (all, or those of `name` / `node`); the state dir failing is exit 1."""
    try:
        return store.entries() if name is None else store.find(name, node)
    except StateError as exc:
        raise OperationFailed(str(exc)) from None


def deployment_rows(store: StateStore | None = None) -> list[dict[str, object]]:
    """One row per recorded deployment. The `--json` shape of `ascendctl ps` (pinned by tests)."""
    store = store or StateStore()
    now = time.time()
    rows: list[dict[str, object]] = []
    for entry in listed(store):
        state = entry.state
        rows.append(
            {
                "name": state.name,
                "node": state.node,
                "role": state.role,
                "instance": state.instance,
                "instance_role": state.instance_role,
                "pid": state.supervisor_pid,
                "engine_pid": state.engine_pid,
                "endpoint": state.endpoint,
                "started_at": state.started_at,
                "uptime_s": round(max(0.0, now - state.started_at), 1),
                "status": "orphaned" if entry.orphaned else state.status,
                "health": health_of(entry),
                "restarts": state.restarts,
                "log": state.log_path,
            }
        )
    return rows


def _check_name(name: str, store: StateStore) -> None:
    try:
        store.path_for(name, 0)
    except ValueError:
        # the argument is wrong, not the operation: exit 2, like every other bad argument
        raise UserInputError(
            f"{name!r} is not a deployment name (metadata.name of a profile: letters, digits, `.`, `_`, `-`)"
        ) from None


def find_running(name: str, node: int | None, store: StateStore | None = None) -> list[Listed]:
    store = store or StateStore()
    _check_name(name, store)
    found = listed(store, name, node)
    if not found:
        where = "" if node is None else f" (node {node})"
        unusable = [str(p) for p in store.bad_records if p.name.startswith((f"{name}.node", f"{name}@"))]
        if unusable:
            raise OperationFailed(
                f"no usable record of a deployment named {name!r}{where}: {', '.join(unusable)} cannot be read "
                "(see the warning above)"
            )
        raise OperationFailed(f"no running deployment named {name!r}{where}; see `ascendctl ps`")
    return found


def log_path_for(name: str, node: int | None, store: StateStore | None = None, instance: str | None = None) -> Path:
    """The log of a running deployment (one process of it: a prefill/decode deployment's `instance`), or of the
    last run of a stopped one."""
    store = store or StateStore()
    _check_name(name, store)
    if instance is not None:
        try:
            store.log_path(name, 0, instance)
        except ValueError:
            raise UserInputError(f"--instance: {instance!r} is not an instance name") from None
    running = [e for e in listed(store, name, node) if instance is None or e.state.instance == instance]
    instances = sorted({e.state.instance for e in running if e.state.instance is not None})
    if instance is None and len(instances) > 1:
        raise UserInputError(
            f"{name} runs {len(instances)} processes here ({', '.join(instances)}): pass --instance NAME"
        )
    if running:
        return _own_log(store, running[0])
    path = store.log_path(name, node or 0, instance)
    if instance is not None and node is None:  # a prefill/decode process is logged under its host
        path = next(iter(sorted(store.logs_dir.glob(f"{glob.escape(name)}@{glob.escape(instance)}.node*.log"))), path)
    if not path.exists() and not path.is_symlink():
        which = "" if instance is None else f" {instance}"
        where = "" if node is None else f" (node {node})"
        raise OperationFailed(f"no logs for {name!r}{which}{where}; see `ascendctl ps`")
    return path


def _own_log(store: StateStore, entry: Listed) -> Path:
    """The record's log, which must be the deployment's own log file in the state directory: a record naming
    any other file is refused (one line naming the record), so `logs` never prints a file it did not write."""
    state = entry.state
    own = store.log_path(state.name, state.node, state.instance).absolute()
    if Path(state.log_path) != own:
        record = entry.path if entry.path is not None else store.path_for(state.name, state.node, state.instance)
        raise OperationFailed(
            f"the record {record} names the log {state.log_path}, not {own}: ascendctl prints only the logs it "
            f"writes; if that deployment is not running, remove the record: rm {shlex.quote(str(record))}"
        )
    return own


def open_log(path: Path, name: str) -> BinaryIO:
    """The log file, opened for reading; a log that was deleted, is not a regular file or is a symbolic link is exit
    1. A link is refused, never followed: the supervisor never writes through one (`open_log_append`), so whatever
    it points at (a private file, `/proc/self/environ`) is not a log ascendctl wrote. Exit 1, not 2: the state
    directory is ascendctl's own record of what it ran, not input given to this command, and what is found there
    fails the operation as a record naming another file does (`_own_log`); only `$ASCENDCTL_HOME` itself, which the
    user sets, is invalid input."""
    if path.is_symlink():
        raise _linked_log(path, name)
    try:
        handle = open_regular(path)
    except JsonReadError as exc:
        if exc.missing:
            raise OperationFailed(f"the log of {name!r} is gone: {path} was deleted") from None
        raise OperationFailed(f"cannot read the log of {name!r}: {path}: {exc.reason}") from None
    if path.is_symlink():  # swapped for a link between the check and the open
        handle.close()
        raise _linked_log(path, name)
    return handle


def _linked_log(path: Path, name: str) -> OperationFailed:
    return OperationFailed(
        f"the log of {name!r} is a symbolic link: {path}; a log is never read through one (remove the link: "
        f"rm {shlex.quote(str(path))})"
    )
