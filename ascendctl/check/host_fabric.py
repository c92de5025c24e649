"""`host.fabric.*`: the multi-node NPU fabric preflight of `check PROFILE --fabric` (vllm-ascend's "Verify Multi-Node
Communication" checklist, run instead of read). Every rule skips unless `--fabric` gathered `ctx.fabric`
(`ascendctl/check/fabric.py`); each failure's fix is the guide's own step, cited by tag and path.
"""

from __future__ import annotations

from ascendctl.check.context import CheckContext
from ascendctl.check.fabric_view import FabricView
from ascendctl.core.findings import Outcome, passed, problem, rule, skipped, undecided
from ascendctl_engine.host.cann import HCCN_CONF
from ascendctl_engine.host.hccn import MAX_PINGS_PER_KIND, DeviceFabric, SpodInfo, same_subnet

_GUIDE = "v0.25.1rc1:docs/source/installation.md"
_PD_GUIDE = "v0.25.1rc1:docs/source/tutorials/features/pd_disaggregation_mooncake_multi_node.md"
_EACH_NODE = f"{_GUIDE}:522 (each node: the results must all be `success` and the status `UP`)"
_SHOWN_PINGS = 12  # a dead peer NIC fails every local device's ping: name a few, count the rest
_PEERS = "--peer-facts FILE from each other node's `ascendctl check PROFILE --fabric --node N --json`"


def _not_gathered(ctx: CheckContext) -> Outcome:
    if ctx.profile is not None and ctx.profile.target.nodes <= 1:
        return skipped("single node: the fabric checks apply to multi-node profiles")
    return skipped("run `check PROFILE --fabric` on each node of a multi-node profile")


def _view(ctx: CheckContext) -> FabricView | Outcome:
    """The fabric facts, or why the rule does not apply / cannot run."""
    if ctx.fabric is None:
        return _not_gathered(ctx)
    if ctx.fabric.facts.tool is None:
        return undecided("hccn_tool was not found (see host.fabric.tool)")
    return ctx.fabric


def _devices(view: FabricView, key: str, bad: str) -> list[str]:
    """`dev N: value` for each device whose `key` is not the good value (or was not read)."""
    out = []
    for d in view.facts.devices:
        value = getattr(d, key)
        if value is None:
            out.append(f"dev {d.device}: {d.errors.get(key, 'not read')}")
        elif bad and value != bad:
            out.append(f"dev {d.device}: {value}")
    return out


@rule(
    "host.fabric.tool",
    "error",
    "hccn_tool available for the fabric checks",
    source=f"{_GUIDE}:528-538",
    clause="placement",
)
def tool(ctx: CheckContext) -> Outcome:
    if ctx.fabric is None:
        return _not_gathered(ctx)
    if ctx.fabric.facts.tool is None:
        return problem(
            "hccn_tool is neither on PATH nor at /usr/local/Ascend/driver/tools/hccn_tool: the NPU NICs cannot be read",
            "install the Ascend driver (it ships hccn_tool); in a container mount it: "
            "-v /usr/local/Ascend/driver/tools/hccn_tool:/usr/local/Ascend/driver/tools/hccn_tool "
            f"({_GUIDE}:364)",
        )
    return passed(f"{ctx.fabric.facts.tool}, {len(ctx.fabric.devices)} devices checked")


@rule("host.fabric.link", "error", "Every NPU NIC link is UP", source=f"{_GUIDE}:530; {_EACH_NODE}", clause="placement")
def link(ctx: CheckContext) -> Outcome:
    view = _view(ctx)
    if isinstance(view, Outcome):
        return view
    down = _devices(view, "link", "UP")
    if down:
        return problem(
            f"link not UP: {'; '.join(down)}",
            "check the optical modules and cables of those ports and the switch side (`hccn_tool -i N -lldp -g`), "
            f"then `hccn_tool -i N -link -g` must say UP ({_GUIDE}:517-530)",
        )
    return passed(f"{len(view.facts.devices)} links UP")


@rule(
    "host.fabric.health",
    "error",
    "Every NPU NIC reports net health Success",
    source=f"{_GUIDE}:532; {_EACH_NODE}",
    clause="placement",
)
def health(ctx: CheckContext) -> Outcome:
    view = _view(ctx)
    if isinstance(view, Outcome):
        return view
    bad = [x for x in _devices(view, "net_health", "") if x] + [
        f"dev {d.device}: {d.net_health}"
        for d in view.facts.devices
        if d.net_health is not None and d.net_health.lower() != "success"
    ]
    if bad:
        return problem(
            f"net health not Success: {'; '.join(bad)}",
            "the device cannot reach its detect address: check `hccn_tool -i N -netdetect -g` and `-gateway -g` and "
            f"the cabling ({_GUIDE}:532-536)",
        )
    return passed("net health Success on every device")


@rule("host.fabric.detect", "warn", "Every NPU NIC has a detect address and a gateway", source=f"{_GUIDE}:534-536")
def detect(ctx: CheckContext) -> Outcome:
    view = _view(ctx)
    if isinstance(view, Outcome):
        return view
    missing = _devices(view, "netdetect", "") + _devices(view, "gateway", "")
    if missing:
        return problem(
            f"not configured: {'; '.join(missing)}",
            "set them as the cluster network needs (`hccn_tool -i N -netdetect -s address <ip>`, "
            f"`hccn_tool -i N -gateway -s gateway <ip>`); the guide checks both with `-g` ({_GUIDE}:534-536)",
        )
    return passed("detect address and gateway set on every device")


def _ip_problems(view: FabricView) -> list[str]:
    problems = _devices(view, "ip", "")
    seen: dict[str, int] = {}
    for d in view.facts.devices:
        if d.ip is None:
            continue
        if d.ip in seen:
            problems.append(f"dev {d.device} and dev {seen[d.ip]} share {d.ip}")
        seen.setdefault(d.ip, d.device)
        written = (view.hccn_conf or {}).get(d.device, {}).get("address")
        if written is not None and written != d.ip:
            problems.append(f"dev {d.device}: {d.ip}, but {HCCN_CONF} says {written}")
    problems += _peer_subnets(view)
    return problems


def _peer_subnets(view: FabricView) -> list[str]:
    local = {d.device: d for d in view.facts.devices}
    out = []
    for peer in view.peers:
        for p in peer.devices:
            mine: DeviceFabric | None = local.get(p.device)
            if mine is None or mine.ip is None or p.ip is None:
                continue
            if same_subnet(mine.ip, mine.netmask, p.ip) is False:
                out.append(f"dev {p.device}: {mine.ip}/{mine.netmask} and {peer.source}'s {p.ip} are not on one subnet")
    return out


@rule(
    "host.fabric.ip",
    "error",
    "Every NPU NIC has its own address, as configured",
    source=f"{_GUIDE}:538,565",
    clause="placement",
)
def ip(ctx: CheckContext) -> Outcome:
    view = _view(ctx)
    if isinstance(view, Outcome):
        return view
    problems = _ip_problems(view)
    if problems:
        return problem(
            "; ".join(problems),
            "give each device its address on the cluster's NPU subnet: `hccn_tool -i N -ip -s address <ip> netmask "
            f"<mask>` (written to {HCCN_CONF}); check with `hccn_tool -i N -ip -g` ({_GUIDE}:538,565)",
        )
    shown = ", ".join(f"{d.device}={d.ip}" for d in view.facts.devices)
    return passed(f"addresses: {shown}")


def _pings(view: FabricView, kind: str, fix: str) -> Outcome:
    """The pings of one kind to the peers' devices: every one answered, or which did not."""
    if not view.peers:
        return undecided(f"no peer addresses: give {_PEERS}")
    done = [p for p in view.facts.pings if p.kind == kind]
    if not done:
        return undecided("the peer facts list no device address to ping")
    failed = [p for p in done if not p.ok]
    if failed:
        shown = "; ".join(
            f"dev {p.device} → {p.address} ({p.peer} dev {p.peer_device}): "
            + (p.error or f"{p.received}/{p.sent} replies")
            for p in failed[:_SHOWN_PINGS]
        )
        more = f"; … {len(failed) - _SHOWN_PINGS} more" if len(failed) > _SHOWN_PINGS else ""
        return problem(f"no reply ({len(failed)} of {len(done)} pings): {shown}{more}", fix)
    targets = len({(p.peer, p.address) for p in done})
    pairs = view.facts.ping_pairs.get(kind, len(done))
    bound = f" ({len(done)} of {pairs} device pairs: bounded at {MAX_PINGS_PER_KIND})" if pairs > len(done) else ""
    return passed(f"{targets} peer devices answered every local device{bound}")


@rule("host.fabric.ping", "error", "Every peer's NPU NIC answers a ping from every local NPU",
      source=f"{_GUIDE}:574-578; {_PD_GUIDE}:108-111 (every local device, once per peer address)",
      clause="placement")  # fmt: skip
def ping(ctx: CheckContext) -> Outcome:
    view = _view(ctx)
    if isinstance(view, Outcome):
        return view
    return _pings(
        view,
        "ping",
        "check both ends' links and addresses (`hccn_tool -i N -link -g`, `-ip -g`) and that the switch connects "
        f"those ports; retry `hccn_tool -i N -ping -g address <peer ip>` ({_GUIDE}:574-578)",
    )


@rule(
    "host.fabric.vnic",
    "error",
    "A3: every NPU reports its virtual NPU address",
    source=f"{_PD_GUIDE}:50-51",
    clause="placement",
)
def vnic(ctx: CheckContext) -> Outcome:
    view = _view(ctx)
    if isinstance(view, Outcome):
        return view
    if not view.a3:
        return skipped("not an A3 profile")
    missing = _devices(view, "vnic", "")
    if missing:
        return problem(
            f"no virtual NPU address: {'; '.join(missing)}",
            "check the superpod configuration of those devices; `hccn_tool -i N -vnic -g` must print it "
            f"({_PD_GUIDE}:50-51)",
        )
    return passed(f"{len(view.facts.devices)} virtual NPU addresses")


@rule("host.fabric.hccs-ping", "error", "A3: every peer's virtual NPU address answers every local NPU's superpod ping",
      source=f"{_PD_GUIDE}:61-64", clause="placement")  # fmt: skip
def hccs_ping(ctx: CheckContext) -> Outcome:
    view = _view(ctx)
    if isinstance(view, Outcome):
        return view
    if not view.a3:
        return skipped("not an A3 profile")
    return _pings(
        view,
        "hccs_ping",
        "check that both nodes are in one superpod and their virtual addresses (`hccn_tool -i N -vnic -g`); retry "
        f"`hccn_tool -i N -hccs_ping -g address <peer virtual ip>` ({_PD_GUIDE}:61-64)",
    )


_SHMEM = (
    "https://github.com/hicann/shmem/blob/7eebef5be99348cd9ed2c303e2ae5dd47409f4c8/examples/rma_d2h_demo/README_en.md"
)
_SPOD_SOURCE = (
    f"{_PD_GUIDE}:54-57 (Get superpodid and SDID); {_SHMEM} (the output's fields; the Server Index must be identical "
    "for all NPUs within a single compute node)"
)


def _superpod_problems(view: FabricView, read: list[SpodInfo]) -> list[str]:
    pods = sorted({s.super_pod_id for s in read if s.super_pod_id is not None})
    out = [f"this node's chips report super pod ids {', '.join(pods)}"] if len(pods) > 1 else []
    servers = sorted({s.server_index for s in read if s.server_index is not None})
    if len(servers) > 1:
        out.append(f"this node's chips report server indexes {', '.join(servers)}")
    mine = {s.sdid for s in read if s.sdid is not None}
    for peer in view.peers:
        theirs = sorted({p for p, _ in peer.spod if p is not None})
        if theirs and pods and theirs != pods:
            out.append(f"{peer.source} is in super pod {', '.join(theirs)}, this node in {', '.join(pods)}")
        same = sorted(mine & {sd for _, sd in peer.spod if sd is not None})
        if same:
            out.append(f"SDID {', '.join(same[:4])} on this node and on {peer.source}")
    return out


@rule("host.fabric.superpod", "error", "A3: the nodes share one superpod, each node's chips one server index",
      source=_SPOD_SOURCE, clause="placement")  # fmt: skip
def superpod(ctx: CheckContext) -> Outcome:
    if ctx.fabric is None:
        return _not_gathered(ctx)
    view = ctx.fabric
    if not view.a3:
        return skipped("not an A3 profile")
    read = [s for s in view.facts.spod if s.error is None]
    if not read:
        why = view.facts.spod[0].error if view.facts.spod else "`npu-smi info` listed no chip"
        return undecided(f"no superpod identity read: {why}")
    problems = _superpod_problems(view, read)
    if problems:
        return problem(
            "; ".join(problems),
            "the nodes of one A3 deployment talk over HCCS inside one superpod: check each node's superpod and server "
            "id configuration (`npu-smi info -t spod-info -i N -c C`; a server index is set again after a hardware "
            f"replacement) ({_PD_GUIDE}:54-57; {_SHMEM})",
        )
    pods = ", ".join(sorted({s.super_pod_id or "" for s in read}))
    servers = ", ".join(sorted({s.server_index for s in read if s.server_index is not None})) or "not printed"
    where = "and every peer " if any(p.spod for p in view.peers) else ""
    return passed(f"super pod {pods} {where}({len(read)} chips here, server index {servers})")


@rule("host.fabric.tls", "error", "The NPU TLS switch is the same on every device of every node",
      source=f"{_PD_GUIDE}:115-118 (\"The TLS settings should be consistent across all nodes\")",
      clause="placement")  # fmt: skip
def tls(ctx: CheckContext) -> Outcome:
    view = _view(ctx)
    if isinstance(view, Outcome):
        return view
    values: dict[str, list[str]] = {}
    for d in view.facts.devices:
        values.setdefault(d.tls if d.tls is not None else "unread", []).append(f"this node dev {d.device}")
    for peer in view.peers:
        for p in peer.devices:
            values.setdefault(p.tls if p.tls is not None else "unread", []).append(f"{peer.source} dev {p.device}")
    if len(values) > 1:
        shown = "; ".join(
            f"switch {v}: {', '.join(where[:4])}{' …' if len(where) > 4 else ''}" for v, where in values.items()
        )
        return problem(
            f"TLS differs: {shown}",
            "make the TLS switch the same on every NPU of every node, then compare "
            f"`for i in {{0..7}}; do hccn_tool -i $i -tls -g; done | grep switch` on each node ({_PD_GUIDE}:115-118)",
        )
    [value] = values or {"unread": []}
    where = "this node and its peers" if view.peers else f"this node (give {_PEERS} to compare)"
    return passed(f"TLS switch {value} on {where}")


_NIC_SOURCE = f"{_PD_GUIDE}:252-257,307-312 (each node's nic_name → HCCL_SOCKET_IFNAME, GLOO_SOCKET_IFNAME)"


@rule(
    "host.fabric.nic",
    "error",
    "The planned NIC exists on this node and on every peer",
    source=_NIC_SOURCE,
    clause="placement",
)
def nic(ctx: CheckContext) -> Outcome:
    if ctx.fabric is None:
        return _not_gathered(ctx)
    view = ctx.fabric
    if view.interface is None:
        return problem(
            "the plan names no NIC for this node (network.interface / network.nodes[N].interface)",
            "set network.interface to the NIC of the cluster network on every node",
        )
    missing = [f"this node has no {view.interface}"] if view.interface_present is False else []
    missing += [f"{p.source} has no {p.interface}" for p in view.peers if p.interface_present is False and p.interface]
    if missing:
        return problem(
            "; ".join(missing),
            "use the same NIC name on every node (network.interface), or name each node's own in "
            "network.nodes[N].interface (the planner derives HCCL_SOCKET_IFNAME, GLOO_SOCKET_IFNAME from it)",
        )
    if view.interface_present is None:
        return undecided(f"this host's NICs could not be listed to find {view.interface}")
    return passed(f"{view.interface} present" + (" here and on every peer" if view.peers else " here"))


@rule(
    "host.fabric.ports",
    "error",
    "This node's share of the port plan can be bound",
    source="ascendctl/check/fabric.py",
    clause="placement",
)
def ports(ctx: CheckContext) -> Outcome:
    if ctx.fabric is None:
        return _not_gathered(ctx)
    share = ctx.fabric.ports
    if not share:
        return passed(f"node {ctx.fabric.node} binds no port of the plan")
    busy = [p for p in share if p.in_use]
    unknown = [p for p in share if p.in_use is None]
    if busy or unknown:
        shown = [f"{p.port} ({p.purpose}) in use" for p in busy] + [
            f"{p.port} ({p.purpose}): {p.error}" for p in unknown
        ]
        return problem(
            "; ".join(shown),
            f"stop what listens there (`ss -ltnp 'sport = :{(busy or unknown)[0].port}'`) or move the planned port "
            "(server.port, network.dp_rpc_port, disaggregation.<role>.kv_port)",
        )
    return passed(f"{len(share)} ports free on node {ctx.fabric.node}: " + ", ".join(str(p.port) for p in share[:12]))
