"""Prefill/decode disaggregation, pure: where each instance runs and the profile each one is planned from.

    placements = place(profile)                  # prefill instances first, then decode, packed onto the nodes
    one = instance_profile(profile, placements[0])   # the profile with that role's overrides, its nodes, its ports
    kv = kv_transfer(profile, placements, placements[0], sizes)

Placement: an instance over several nodes takes whole nodes; one-node instances share a node while their devices
fit, each on a contiguous device range (`target.visible_devices`, i.e. `ASCEND_RT_VISIBLE_DEVICES`). The groups
must fill exactly `target.nodes` nodes. Ports are planned so no two instances collide on any host: API
`server.port + 1 + i` (the router takes `server.port`), data-parallel RPC `network.dp_rpc_port + i`, KV
`kv_port + 100 × i`, LLMDataDist RPC from `rpc_port` in steps wide enough for the instance's ranks — unless a group
names its own first port, which the `plan.pd.ports` rule then checks.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ascendctl.core.errors import UserInputError
from ascendctl.schema.profile import Profile
from ascendctl_engine.mapping import deep_merge
from ascendctl_engine.pd import SIZED, GroupSizes, KvTransfer, rpc_port_span
from ascendctl_engine.records import record
from ascendctl_engine.sections.disaggregation import DisaggregationSpec, RoleGroup
from ascendctl_engine.sections.fields import MAX_PORT
from ascendctl_engine.vocab import PD_ROLES, PdRole

KV_PORT_STEP = 100  # the tutorials' spacing (30000, 30100, 30200): room for 100 devices per instance


@record
class Placement:
    """One instance: its role, which profile nodes it runs on, its devices there and its ports."""

    name: str  # prefill-0, decode-1, ...
    role: PdRole
    index: int  # within its role group
    ordinal: int  # over every instance (its engine id)
    hosts: tuple[int, ...]  # indices into the profile's nodes, its own node 0 first
    first_device: int  # its first device on each of its nodes
    devices: int  # devices per node
    port: int
    dp_rpc_port: int
    kv_port: int
    rpc_port: int  # LLMDataDist's RPC base (unused by other connectors)


class PlacementError(UserInputError):
    """A layout that cannot be placed: the message, and the setting that decides it (`at`, a profile path)."""

    def __init__(self, at: tuple[str, ...], message: str) -> None:
        super().__init__(f"{'.'.join(at)}: {message}")
        self.at = at
        self.message = message


def group(spec: DisaggregationSpec, role: PdRole) -> RoleGroup:
    return spec.prefill if role == "prefill" else spec.decode


def _spec(profile: Profile) -> DisaggregationSpec:
    if profile.disaggregation is None:
        raise ValueError("not a disaggregated profile")
    return profile.disaggregation


def place(profile: Profile) -> tuple[Placement, ...]:
    """Every instance's placement (see the module docstring); a layout that cannot fill the nodes is a located
    input error."""
    spec = _spec(profile)
    per_node = profile.target.devices_per_node
    out: list[Placement] = []
    host, used = 0, 0  # the node being filled and how many of its devices are taken
    for role in PD_ROLES:
        g = group(spec, role)
        devices = g.devices or per_node
        if devices > per_node:
            raise PlacementError(
                ("disaggregation", role, "devices"),
                f"{devices} devices per instance, but target.devices_per_node is {per_node}",
            )
        if g.nodes > 1 and devices != per_node:
            raise PlacementError(
                ("disaggregation", role),
                f"an instance over {g.nodes} nodes takes whole nodes; drop `devices` or set it to "
                f"target.devices_per_node ({per_node})",
            )
        for index in range(g.instances):
            if g.nodes > 1 or used + devices > per_node:
                host, used = (host + 1, 0) if used else (host, 0)
            hosts = tuple(range(host, host + g.nodes))
            first = used
            if g.nodes > 1:
                host, used = host + g.nodes, 0
            else:
                used += devices
                if used == per_node:
                    host, used = host + 1, 0
            ordinal = len(out)
            out.append(_placement(profile, spec, role, g, index, ordinal, hosts, first, devices))
    needed = host + (1 if used else 0)
    if needed != profile.target.nodes:
        layout = ", ".join(f"{p.name} on node{'s' if len(p.hosts) > 1 else ''} {_span(p.hosts)}" for p in out)
        raise PlacementError(
            ("disaggregation",),
            f"the groups fill {needed} node(s) ({layout}) but target.nodes is {profile.target.nodes}",
        )
    for placement in out:
        _refuse_ports_past_the_last(profile, spec, placement)
    return tuple(out)


def _refuse_ports_past_the_last(profile: Profile, spec: DisaggregationSpec, p: Placement) -> None:
    """Each port an instance binds is derived from a first port the profile names (see the module docstring); one
    past TCP's last port is the setting's error, located there, never a plan that names port 65 600."""
    g = group(spec, p.role)
    last_kv = p.kv_port + p.devices if spec.connector in SIZED else None
    last_rpc = p.rpc_port + rpc_port_span(p.devices) - 1 if spec.connector == "llmdatadist" else None
    derived: tuple[tuple[tuple[str, ...], str, int | None], ...] = (
        (("disaggregation", p.role, "port") if g.port is not None else ("server", "port"), "API port", p.port),
        (
            ("disaggregation", p.role, "dp_rpc_port") if g.dp_rpc_port is not None else ("network", "dp_rpc_port"),
            "data-parallel RPC port",
            p.dp_rpc_port,
        ),
        (("disaggregation", "kv_port"), "last KV port", last_kv),
        (("disaggregation", "rpc_port"), "last LLMDataDist RPC port", last_rpc),
    )
    for at, what, port in derived:
        if port is not None and port > MAX_PORT:
            past = f"{p.name}'s {what} would be {port}, past the last TCP port ({MAX_PORT}); lower it"
            raise PlacementError(at, past)


def _span(hosts: Sequence[int]) -> str:
    return str(hosts[0]) if len(hosts) == 1 else f"{hosts[0]}-{hosts[-1]}"


def _placement(
    profile: Profile,
    spec: DisaggregationSpec,
    role: PdRole,
    g: RoleGroup,
    index: int,
    ordinal: int,
    hosts: tuple[int, ...],
    first: int,
    devices: int,
) -> Placement:
    return Placement(
        name=f"{role}-{index}",
        role=role,
        index=index,
        ordinal=ordinal,
        hosts=hosts,
        first_device=first,
        devices=devices,
        port=(g.port + index) if g.port is not None else profile.server.port + 1 + ordinal,
        dp_rpc_port=(g.dp_rpc_port + index) if g.dp_rpc_port is not None else profile.network.dp_rpc_port + ordinal,
        # Mooncake binds kv_port … kv_port + devices per instance; LLMDataDist reads no kv_port (its RPC ports count)
        kv_port=spec.kv_port + (KV_PORT_STEP * ordinal if spec.connector in SIZED else 0),
        rpc_port=spec.rpc_port + rpc_port_span(devices) * ordinal,
    )


def router_port(profile: Profile) -> int:
    spec = _spec(profile)
    return spec.router.port if spec.router.port is not None else profile.server.port


def instance_profile(profile: Profile, placement: Placement) -> Profile:
    """The profile one instance is planned from: its role's `engine` and `serving` overrides merged over the
    profile's (only the keys the group writes) and its `max_model_len`, its nodes and devices, its ports; validated
    like any profile."""
    spec = _spec(profile)
    g = group(spec, placement.role)
    data: dict[str, Any] = profile.model_dump(exclude_unset=True)
    data.pop("disaggregation", None)
    if g.engine is not None:
        data["engine"], _ = deep_merge(data.get("engine", {}), g.engine.model_dump(exclude_unset=True))
    if g.serving is not None:
        data["serving"], _ = deep_merge(data.get("serving", {}), g.serving.model_dump(exclude_unset=True))
    if g.max_model_len is not None:
        data["model"] = {**data["model"], "max_model_len": g.max_model_len}
    target = dict(data["target"])
    target["nodes"] = len(placement.hosts)
    target["devices_per_node"] = placement.devices
    if placement.devices != profile.target.devices_per_node or placement.first_device:
        base = profile.target.visible_devices or list(range(profile.target.devices_per_node))
        target["visible_devices"] = base[placement.first_device : placement.first_device + placement.devices]
    data["target"] = target
    network = dict(data.get("network", {}))
    given = network.get("nodes", [])
    network["nodes"] = [given[h] for h in placement.hosts if h < len(given)]
    network["dp_rpc_port"] = placement.dp_rpc_port
    data["network"] = network
    data["server"] = {**data.get("server", {}), "port": placement.port}
    return Profile.model_validate(data)


def group_sizes(profiles: Mapping[PdRole, Profile]) -> dict[PdRole, GroupSizes]:
    """Each role's data/tensor/pipeline sizes, from its instance profile (what the connector checks)."""
    return {
        role: GroupSizes(p.engine.parallel.data, p.engine.parallel.tensor, p.engine.parallel.pipeline)
        for role, p in profiles.items()
    }


def kv_transfer(
    profile: Profile, placement: Placement, sizes: Mapping[PdRole, GroupSizes], shared_dir: str | None = None
) -> KvTransfer:
    """This instance's KV-transfer intent: role, connector, engine id, ports and both groups' sizes (derived, never
    typed twice)."""
    spec = _spec(profile)
    shared = spec.shared_storage_path or shared_dir
    return KvTransfer(
        role=placement.role,
        connector=spec.connector,
        engine_id=str(placement.ordinal),
        kv_port=placement.kv_port,
        prefill=sizes["prefill"],
        decode=sizes["decode"],
        rank_table=spec.rank_table,
        rpc_port=placement.rpc_port,
        shared_storage_path=shared,
        extra_config=spec.connector_extra_config,
        why=f"disaggregation: {placement.name}",
    )


def placed_settings(profile: Profile, placement: Placement) -> dict[str, str]:
    """Dotted path → why, for the instance-profile values the placement set (not the operator)."""
    why = f"disaggregation: {placement.name}"
    out = {
        "target.nodes": f"{why} runs on {len(placement.hosts)} node(s)",
        "target.devices_per_node": f"{why} uses {placement.devices} device(s) per node",
        "server.port": f"{why} API port"
        + (" (its group's port)" if group(_spec(profile), placement.role).port else ""),
        "network.dp_rpc_port": f"{why} data-parallel RPC port",
        "network.nodes": f"{why} on profile node(s) {', '.join(map(str, placement.hosts))}",
    }
    if placement.devices != profile.target.devices_per_node or placement.first_device:
        out["target.visible_devices"] = f"{why} devices from {placement.first_device} (contiguous)"
    return out
