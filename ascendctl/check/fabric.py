"""`check PROFILE --fabric`: what the `host.fabric.*` rules read, gathered once per check.

This node's NPU NICs (`ascendctl_engine.host.hccn`, through the `HostProbe`), the peers' NICs, this node's share of
the port plan (bound briefly through the probe, never left listening) and the NIC the plan names for this node.

The peers' device addresses are not in the profile (it holds the hosts' addresses): each other node runs
`ascendctl check PROFILE --fabric --node N --json > node-N.json` and the files are handed to this node with
`--peer-facts node-N.json` (repeatable). Their `fabric` section gives each peer device's address (pinged from every
local device, as the PD guide's `for i in {0..7}; do hccn_tool -i $i -ping -g address PEER; done` does, bounded by
`ascendctl_engine.host.hccn.ping_plan`), its TLS switch
(compared with this node's) and whether the peer has the NIC the plan names for it. Without peer facts the
cross-node rules say what to run and decide nothing.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ascendctl.check.fabric_view import FabricRequest, FabricView, PeerDevice, PeerFacts
from ascendctl.core.errors import UserInputError
from ascendctl.plan.pd_rules import pd_bindings
from ascendctl.schema.instances import place, router_port
from ascendctl_engine.host.cann import HCCN_CONF
from ascendctl_engine.host.facts import NpuSmiInfo, PortStatus
from ascendctl_engine.host.gather import PortRequest
from ascendctl_engine.host.hccn import PeerTarget, gather_fabric, parse_hccn_conf
from ascendctl_engine.jsonio import JsonReadError, read_json_file
from ascendctl_engine.sections.fields import MAX_DEVICES_PER_NODE, is_ip_address

if TYPE_CHECKING:
    from ascendctl.plan.types import Plan
    from ascendctl.schema.profile import Profile
    from ascendctl_engine.host.probe import HostProbe

MAX_PEER_FACTS_BYTES = 4 * 1024 * 1024


def read_peer_facts(path: Path) -> PeerFacts:
    """A peer's `check --fabric --json` output (bounded reader); exit 2 naming the file when it is not one."""
    try:
        data = read_json_file(path, max_bytes=MAX_PEER_FACTS_BYTES)
    except JsonReadError as exc:
        raise UserInputError(f"--peer-facts {path}: {exc.reason}") from None
    fabric = data.get("fabric") if isinstance(data, dict) else None
    if not isinstance(fabric, dict) or not isinstance(fabric.get("devices"), list):
        raise UserInputError(
            f"--peer-facts {path}: no `fabric.devices` (make it on that node with "
            "`ascendctl check PROFILE --fabric --node N --json`)"
        )
    devices = tuple(_peer_device(path, d) for d in fabric["devices"])
    node = fabric.get("node")
    interface = fabric.get("interface")
    present = fabric.get("interface_present")
    return PeerFacts(
        str(path),
        node if isinstance(node, int) and not isinstance(node, bool) else None,
        devices,
        interface if isinstance(interface, str) else None,
        present if isinstance(present, bool) else None,
        _peer_spod(fabric.get("spod")),
    )


def _peer_spod(items: Any) -> tuple[tuple[str | None, str | None], ...]:
    """The peer's `fabric.spod` items (A3), as (Super Pod ID, SDID); anything else is ignored."""
    if not isinstance(items, list):
        return ()
    text = [{k: v if isinstance(v := i.get(k), str) else None for k in ("super_pod_id", "sdid")} for i in items
            if isinstance(i, dict)]  # fmt: skip
    return tuple((t["super_pod_id"], t["sdid"]) for t in text)


def _peer_device(path: Path, item: Any) -> PeerDevice:
    """One peer device as `check --fabric --json` writes it (`ascendctl_engine.host.hccn`): a device number, IP
    addresses and the TLS switch's digits. The addresses become `hccn_tool … -ping -g ADDRESS` arguments and all of
    it is printed, so anything else is the file's error, not a value passed on (`-h`, a NUL, an escape sequence)."""
    device = item.get("device") if isinstance(item, dict) else None
    if not isinstance(device, int) or isinstance(device, bool) or not 0 <= device < MAX_DEVICES_PER_NODE:
        raise UserInputError(
            f"--peer-facts {path}: a `fabric.devices` item without a device number (0..{MAX_DEVICES_PER_NODE - 1})"
        )
    text = {k: v if isinstance(v := item.get(k), str) else None for k in ("ip", "tls", "vnic")}
    for key, valid in (("ip", is_ip_address), ("vnic", is_ip_address), ("tls", _TLS_SWITCH.fullmatch)):
        value = text[key]
        if value is not None and not valid(value):
            shown = repr(value if len(value) <= 48 else value[:45] + "...")
            raise UserInputError(f"--peer-facts {path}: device {device}: `{key}` {shown} is not what `check` writes")
    return PeerDevice(device, text["ip"], text["tls"], text["vnic"])


_TLS_SWITCH = re.compile(r"[0-9]{1,4}")  # `hccn_tool -tls -g`'s switch, as parse_tls reads it


def _interface(profile: Profile, node: int) -> str | None:
    nodes = profile.network.nodes
    if node < len(nodes) and nodes[node].interface:
        return nodes[node].interface
    return profile.network.interface


def port_share(profile: Profile, plan: Plan | None, node: int) -> list[PortRequest]:
    """Every port the plan binds on profile node `node`. Prefill/decode: this node's share of `pd_bindings` (the
    layout `plan.pd.ports` checks: APIs, data-parallel RPC, KV / LLMDataDist ranges, the router on node 0 and, given
    the plan, the router's metrics).
    Otherwise: the API of each instance headed here and the data-parallel RPC port when it runs data-parallel."""
    host = "0.0.0.0"  # noqa: S104 (a bind test: the engines listen on every address of the node)
    if profile.disaggregation is not None:
        metrics = plan.services[0].metrics_port if plan is not None and plan.services else None
        bound = pd_bindings(profile.disaggregation.connector, place(profile), router_port(profile), metrics).get(
            node, []
        )
        return [PortRequest(host, port, who) for who, first, last in bound for port in range(first, last + 1)]
    out: list[PortRequest] = []
    if plan is not None:
        for instance in plan.instances:
            for command in instance.commands:
                if instance.host_of(command) == node and command.listen is not None:
                    out.append(PortRequest(host, command.listen.port, f"{instance.name} API"))
    if node == 0 and profile.engine.parallel.data > 1:
        out.append(PortRequest(host, profile.network.dp_rpc_port, "data-parallel RPC"))
    return out


def _bind(probe: HostProbe, req: PortRequest) -> PortStatus:
    try:
        return PortStatus(req.host, req.port, req.purpose, probe.port_in_use(req.host, req.port))
    except OSError as exc:
        return PortStatus(req.host, req.port, req.purpose, None, f"{type(exc).__name__}: {exc}")


def gather_view(
    probe: HostProbe,
    profile: Profile,
    plan: Plan | None,
    request: FabricRequest,
    nics: Sequence[str] | None,
    npu_smi: NpuSmiInfo | None = None,
) -> FabricView:
    """Probe this node's fabric for `profile` (the peers' files were read by the caller's `read_peer_facts`);
    on A3 the superpod identity of each chip `npu_smi` (`npu-smi info`) listed is read too."""
    if not 0 <= request.node < profile.target.nodes:
        raise UserInputError(f"--node {request.node}: the profile has nodes 0 … {profile.target.nodes - 1}")
    peers = tuple(read_peer_facts(p) for p in request.peer_facts)
    devices = tuple(range(profile.target.devices_per_node))
    a3 = profile.target.hardware == "a3"
    targets = [
        PeerTarget(peer.source, d.device, d.ip) for peer in peers for d in peer.devices if d.ip and d.device in devices
    ]
    if a3:
        targets += [
            PeerTarget(peer.source, d.device, d.vnic, "hccs_ping")
            for peer in peers
            for d in peer.devices
            if d.vnic and d.device in devices
        ]
    chips = [(d.npu, d.chip) for d in npu_smi.devices] if npu_smi is not None else []
    conf_text = probe.read_text(HCCN_CONF)
    interface = _interface(profile, request.node)
    seen: dict[int, PortRequest] = {}
    for req in port_share(profile, plan, request.node):
        seen.setdefault(req.port, req)
    return FabricView(
        node=request.node,
        devices=devices,
        facts=gather_fabric(probe, devices, targets, a3=a3, chips=chips),
        peers=peers,
        hccn_conf=parse_hccn_conf(conf_text) if conf_text is not None else None,
        interface=interface,
        interface_present=None if nics is None or interface is None else interface in nics,
        ports=tuple(_bind(probe, r) for r in seen.values()),
        a3=a3,
    )
