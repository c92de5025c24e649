"""Reading the deployments recorded on this host, for `ps`, `logs` and `stop` (the state store is the one
boundary; health probes run against 127.0.0.1-style endpoints recorded by the supervisor)."""

from __future__ import annotations

import time
from pathlib import Path

from ascendctl.errors import OperationFailed
from ascendctl_engine.state import Listed, StateStore


def health_of(entry: Listed) -> str:
    from ascendctl_engine.health import probe

    state = entry.state
    if entry.orphaned:
        return "orphaned"
    if state.health_url is None:
        return "n/a"
    result = probe(state.health_url, timeout=1.0)
    if result.ok:
        return "ok"
    return f"unhealthy ({result.status})" if result.status is not None else "down"


def deployment_rows(store: StateStore | None = None) -> list[dict[str, object]]:
    """One row per recorded deployment. The `--json` shape of `ascendctl ps` (pinned by tests)."""
    store = store or StateStore()
    now = time.time()
    rows: list[dict[str, object]] = []
    for entry in store.entries():
        state = entry.state
        rows.append(
            {
                "name": state.name,
                "node": state.node,
                "role": state.role,
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


def find_running(name: str, node: int | None, store: StateStore | None = None) -> list[Listed]:
    store = store or StateStore()
    found = store.find(name, node)
    if not found:
        where = "" if node is None else f" (node {node})"
        raise OperationFailed(f"no running deployment named {name!r}{where}; see `ascendctl ps`")
    return found


def log_path_for(name: str, node: int | None, store: StateStore | None = None) -> Path:
    """The log of a running deployment, or of the last run of a stopped one."""
    store = store or StateStore()
    running = store.find(name, node)
    if running:
        return Path(running[0].state.log_path)
    try:
        path = store.log_path(name, node or 0)
    except ValueError:
        raise OperationFailed(f"{name!r} is not a deployment name") from None
    if not path.exists():
        raise OperationFailed(f"no logs for {name!r}{'' if node is None else f' (node {node})'}; see `ascendctl ps`")
    return path
