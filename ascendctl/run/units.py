"""Serving a prefill/decode deployment on one host: its processes (units) started in order, watched until ready,
followed in the foreground, stopped router first.

Each unit (an instance's command on this host, or the router) runs under its own detached supervisor (the same
re-executed `ascendctl serve ... --internal-run-id ID --internal-unit NAME` as `serve --detach`), recorded under
`<name>@<instance>.node<host>`, so `ps`, `logs` and `stop` see each with its role and a crash of one supervisor
leaves the others supervised. The order is what the protocol needs: every instance ready before the router
starts (a router that starts first answers requests it cannot route), and on stop the router drained before the
engines behind it (in-flight requests finish; no new ones reach an engine that is going away).
"""

from __future__ import annotations

import subprocess
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path

from ascendctl.core.errors import OperationFailed, UserInputError
from ascendctl.plan.types import Plan
from ascendctl.schema.profile import Profile
from ascendctl_engine.envs import EngineEnv
from ascendctl_engine.records import record
from ascendctl_engine.spec import EngineCommand, NodeAddress, Unit
from ascendctl_engine.state import Listed, StateStore, describe_process
from ascendctl_engine.supervisor import DetachedOutcome, StopReport, spawn_detached, stop_deployment, watch_detached

READY_MARGIN = 60.0  # seconds a watcher waits beyond the unit's own ready timeout (the supervisor's start-up)
# `stop` order: the router first (it stops taking requests and finishes the ones in flight), then decode (it
# may still pull KV from prefill for a request in flight), prefill last; plain processes keep their order.
STOP_ORDER = {"router": 0, "decode": 1, "prefill": 2}


@record
class HostTarget:
    """What one host runs of a prefill/decode plan."""

    profile: Profile
    profile_path: Path
    overrides: tuple[str, ...]
    allow: tuple[str, ...]
    node: int  # the profile node (host)
    units: tuple[tuple[Unit, EngineCommand], ...]  # in start order: instances, then the router
    engine: EngineEnv
    plan: Plan

    @property
    def name(self) -> str:
        return self.profile.metadata.name

    def unit(self, instance: str) -> tuple[Unit, EngineCommand]:
        for unit, command in self.units:
            if unit.instance == instance:
                return unit, command
        known = ", ".join(u.instance for u, _ in self.units)
        raise UserInputError(f"node {self.node} of {self.name} runs {known}, not {instance!r}")

    def prefix(self, unit: Unit) -> str:
        return f"[{self.name}/{unit.instance}] "

    @property
    def router(self) -> tuple[Unit, EngineCommand] | None:
        return next((pair for pair in self.units if pair[0].role == "router"), None)


def require_addresses(command: EngineCommand, node: int, hosts: Sequence[int] | None = None) -> None:
    """A command that connects to other nodes needs their addresses (the profile's node list). `hosts` maps an
    instance's own node numbers (what its symbols count) to profile nodes."""
    if command.symbols is not None and command.symbols.unresolved:
        missing = [hosts[n] if hosts is not None else n for n in command.symbols.unresolved]
        raise_missing(node, missing)


def raise_missing(node: int, missing: Sequence[int]) -> None:
    fields = ", ".join(f"network.nodes[{n}].address" for n in sorted(set(missing)))
    raise UserInputError(f"node {node} needs the addresses it connects to: set {fields}")


def require_router_addresses(command: EngineCommand, node: int, hosts: Sequence[int]) -> None:
    """The router's argv names each instance's host; one the profile gives no address is still a placeholder."""
    missing = [h for h in hosts if any(NodeAddress(h).placeholder in word for word in command.argv)]
    if missing:
        raise_missing(node, missing)


def host_target(
    profile: Profile,
    profile_path: Path,
    overrides: tuple[str, ...],
    allow: tuple[str, ...],
    node: int | None,
    engine: EngineEnv,
    plan: Plan,
) -> HostTarget:
    """Host `node`'s share of a prefill/decode plan (`--node` may be left out when one host runs it all)."""
    hosts = sorted({i.host_of(c) for i in plan.instances for c in i.commands})
    if node is None:
        if len(hosts) > 1:
            per_host = "; ".join(f"`--node {h}`: {', '.join(u.instance for u, _ in plan.units_on(h))}" for h in hosts)
            raise UserInputError(
                f"{profile.metadata.name} spans {len(hosts)} hosts: run `ascendctl serve {profile_path} --node N` "
                f"on each ({per_host})"
            )
        node = hosts[0]
    units = plan.units_on(node)
    if not units:
        raise UserInputError(f"--node {node}: {profile.metadata.name} runs on nodes {', '.join(map(str, hosts))}")
    for unit, command in units:
        if unit.role == "router":
            require_router_addresses(command, node, hosts)
        else:
            require_addresses(command, node, [n.index for n in plan.instance(unit.instance).nodes])
    return HostTarget(profile, profile_path, overrides, allow, node, units, engine, plan)


# ---------------------------------------------------------------------------------------------------------
# starting


@record
class Started:
    unit: Unit
    command: EngineCommand
    run_id: str
    child: subprocess.Popen[bytes]
    log_path: Path
    log_offset: int


class UnitFailed(OperationFailed):
    """One unit did not become ready; the units this start had begun are stopped again."""

    def __init__(self, who: str, outcome: DetachedOutcome, log_path: Path) -> None:
        super().__init__(f"{who}: {outcome.reason}")
        self.outcome = outcome
        self.log_path = log_path


def spawn_unit(
    target: HostTarget, store: StateStore, unit: Unit, command: EngineCommand, argv: Callable[[str, str], list[str]]
) -> Started:
    """Start one unit's detached supervisor; `argv(run_id, instance)` is its re-executed `serve`."""
    run_id = uuid.uuid4().hex
    log_path = store.log_path(target.name, unit.host, unit.instance)
    offset = log_path.stat().st_size if log_path.exists() else 0
    try:
        child = spawn_detached(argv(run_id, unit.instance), log_path)
    except OSError as exc:  # a symlink or a special file at the log's path, a full disk
        raise OperationFailed(f"cannot open the log {log_path}: {exc.strerror or exc}") from None
    return Started(unit, command, run_id, child, log_path, offset)


def watch_unit(
    target: HostTarget,
    store: StateStore,
    started: Started,
    on_phase: Callable[[Unit, dict[str, object]], None] | None = None,
) -> DetachedOutcome:
    supervision = started.command.supervision
    timeout = (supervision.ready_timeout if supervision is not None else 600.0) + READY_MARGIN
    return watch_detached(
        started.child,
        store,
        name=target.name,
        node=started.unit.host,
        run_id=started.run_id,
        log_path=started.log_path,
        log_offset=started.log_offset,
        timeout=timeout,
        on_phase=(lambda phase: on_phase(started.unit, phase)) if on_phase is not None else None,
        instance=started.unit.instance,
    )


def start_host(
    target: HostTarget,
    store: StateStore,
    argv: Callable[[str, str], list[str]],
    *,
    say: Callable[[str], None],
    on_phase: Callable[[Unit, dict[str, object]], None] | None = None,
) -> list[Started]:
    """Start the host's instances together, wait until each is ready, then the router; a unit that fails stops
    the ones begun here (router first) and raises `UnitFailed`."""
    engines = [pair for pair in target.units if pair[0].role != "router"]
    router = [pair for pair in target.units if pair[0].role == "router"]
    begun: list[Started] = []
    try:
        for wave in (engines, router):
            started = [spawn_unit(target, store, unit, command, argv) for unit, command in wave]
            begun += started
            for one in started:
                say(
                    f"starting {describe_process(target.name, one.unit.host, one.unit.instance)} ({one.unit.role}) "
                    f"in the background (supervisor pid {one.child.pid}), log {one.log_path}"
                )
            for one in started:
                outcome = watch_unit(target, store, one, on_phase)
                if outcome.outcome != "ready":
                    who = describe_process(target.name, one.unit.host, one.unit.instance)
                    raise UnitFailed(who, outcome, one.log_path)
                say(f"{one.unit.instance} ({one.unit.role}) is ready at {one.command.endpoint}")
    except BaseException:
        stop_begun(target, store, begun)
        raise
    return begun


def stop_begun(target: HostTarget, store: StateStore, begun: Sequence[Started]) -> list[StopReport]:
    """Stop what this start began (those runs only, never another run of the same deployment)."""
    ours = {s.run_id for s in begun}
    entries = [e for e in store.find(target.name, target.node) if e.state.run_id in ours]
    reports = stop_in_order(entries)
    for one in begun:  # a supervisor that had not recorded its run yet: it is our child, end it
        if one.child.poll() is None and not any(r.instance == one.unit.instance for r in reports):
            one.child.terminate()
            try:
                one.child.wait(timeout=30)
            except subprocess.TimeoutExpired:
                one.child.kill()
    return reports


# ---------------------------------------------------------------------------------------------------------
# stopping


def stop_key(entry: Listed) -> tuple[int, int]:
    return (STOP_ORDER.get(entry.state.instance_role or "", len(STOP_ORDER)), entry.state.node)


def stop_in_order(entries: Sequence[Listed], timeout: float | None = None) -> list[StopReport]:
    """Stop each recorded process, the router first (see STOP_ORDER), each drained before the next."""
    return [stop_deployment(entry, timeout) for entry in sorted(entries, key=stop_key)]
