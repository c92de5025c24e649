"""`plan.pd.*` rules: a prefill/decode deployment as a whole (every instance's `PlanFacts` carries the same
`PdFacts`; the planner keeps one finding per distinct message).

- ports: on each host no two instances (nor the router) share a port or a port range: API, data-parallel RPC, the
  KV ports an instance binds (Mooncake: `kv_port` … `kv_port + devices`, vllm-ascend PR #6455 and
  v0.25.1rc1:docs/source/tutorials/features/pd_disaggregation_mooncake_multi_node.md:"kv_port Configuration Guide"),
  LLMDataDist's RPC ports (its base + the instance's ranks);
- Mooncake's transport picks random ports in [20000, 20000 + 1000 × NPUs per node): KV ports must stay above it
  (same guide: kv_port ≥ 28000 on 8-NPU, ≥ 36000 on 16-NPU nodes);
- speculative tokens across roles: 1 on prefill and ≥ 1 on decode; equal for hybrid linear-attention models
  (same guide, the note under run_dp_template.sh);
- every instance runs on a contiguous device range;
- no `server.api_key` in front of a router that checks no client key (the era's `auth` trait).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from ascendctl.core.findings import Outcome, passed, problem, rule, skipped
from ascendctl.plan.pd_facts import PdFacts
from ascendctl.plan.plan_rules import PlanFacts
from ascendctl.schema.instances import Placement
from ascendctl_engine.adapters.kv_transfer import ROUTER_AUTH_SOURCE, VLLM_ROUTER_SOURCE
from ascendctl_engine.pd import SIZED, rpc_port_span

PD_GUIDE = "v0.25.1rc1:docs/source/tutorials/features/pd_disaggregation_mooncake_multi_node.md"
MOONCAKE_RANDOM_BASE = 20000  # AscendDirectTransport's random ports start here …
MOONCAKE_RANDOM_PER_NPU = 1000  # … and span this many per NPU of the node (vllm-ascend PR #6455)


def _pd(f: PlanFacts) -> PdFacts | None:
    return f.pd


def pd_bindings(
    connector: str, placements: Sequence[Placement], router_port: int, metrics_port: int | None = None
) -> dict[int, list[tuple[str, int, int]]]:
    """Profile node → (who, first port, last port) of everything a prefill/decode layout binds there: the one
    statement of it (`plan.pd.ports` checks it for clashes, `check --fabric` bind-tests this node's share).
    `metrics_port`: the router's metrics, where its program serves them."""
    out: dict[int, list[tuple[str, int, int]]] = {0: [("the router", router_port, router_port)]}
    if metrics_port is not None:
        out[0].append(("the router's metrics", metrics_port, metrics_port))
    for p in placements:
        head = p.hosts[0]
        out.setdefault(head, []).append((f"{p.name} API", p.port, p.port))
        out[head].append((f"{p.name} data-parallel RPC", p.dp_rpc_port, p.dp_rpc_port))
        for host in p.hosts:
            if connector in SIZED:
                out.setdefault(host, []).append((f"{p.name} KV", p.kv_port, p.kv_port + p.devices))
            elif connector == "llmdatadist":
                last = p.rpc_port + rpc_port_span(p.devices) - 1
                out.setdefault(host, []).append((f"{p.name} LLMDataDist RPC", p.rpc_port, last))
    return out


def _bindings(pd: PdFacts) -> dict[int, list[tuple[str, int, int]]]:
    return pd_bindings(pd.connector, pd.placements, pd.router_port, pd.router_metrics_port)


@rule(
    "plan.pd.router-metrics",
    "warn",
    "The router metrics port is one the release's router serves",
    source=VLLM_ROUTER_SOURCE,
)
def router_metrics(f: PlanFacts) -> Outcome:
    pd = _pd(f)
    if pd is None or pd.router_metrics_asked is None:
        return skipped("no disaggregation.router.metrics_port")
    if pd.router_metrics_port is None:
        return problem(
            f"disaggregation.router.metrics_port {pd.router_metrics_asked}: this release's router serves no metrics, "
            "so the port is not used",
            "remove disaggregation.router.metrics_port",
            at=("disaggregation", "router", "metrics_port"),
        )
    return passed(f"the router serves its metrics on port {pd.router_metrics_port}")


@rule(
    "plan.pd.api-key",
    "error",
    "A prefill/decode deployment asks for an API key only where its router checks one",
    source=ROUTER_AUTH_SOURCE,
    clause="known-failure",
)
def api_key(f: PlanFacts) -> Outcome:
    pd = _pd(f)
    if pd is None:
        return skipped("not disaggregated")
    if f.profile.server.api_key is None:
        return skipped("no server.api_key")
    if pd.router_auth is None:
        return passed("the plan runs no router: the one in front of the instances is yours to configure")
    return problem(
        f"server.api_key on a prefill/decode deployment: {pd.router_auth}, so the router's port would serve anyone "
        "who reaches it while the instances refuse what it forwards",
        "leave server.api_key unset and put an authenticating gateway in front of the router's port "
        "(server.host: 127.0.0.1 keeps that port on the host)",
        at=("server", "api_key"),
    )


@rule("plan.pd.ports", "error", "No two instances on a host share a port", source=PD_GUIDE, clause="placement")
def ports(f: PlanFacts) -> Outcome:
    pd = _pd(f)
    if pd is None:
        return skipped("not disaggregated")
    clashes = []
    for host, bound in sorted(_bindings(pd).items()):
        ordered = sorted(bound, key=lambda b: b[1])
        for (a, _, a_last), (b, b_first, _) in itertools.pairwise(ordered):
            if b_first <= a_last:
                clashes.append(f"node {host}: {a} and {b} both use port {b_first}")
    if clashes:
        return problem(
            "; ".join(clashes),
            "give the groups distinct first ports (disaggregation.<role>.port / dp_rpc_port), or leave them unset "
            "for the planned ones",
            at=("disaggregation",),
        )
    return passed(f"{sum(len(b) for b in _bindings(pd).values())} ports and ranges, none shared on a host")


# The guide's claim (a collision now and then), not a start-up refusal, and upstream's own nightly launch on
# 16-NPU A3 nodes uses kv_port 30000/30100 (v0.25.1rc1:tests/e2e/nightly/multi_node/internal_dp/config/
# Qwen3-235B-disagg-pd.yaml): it warns (docs/refusal-policy.md).
@rule("plan.pd.kv-port-range", "warn", "Mooncake KV ports stay above the transport's random range", source=PD_GUIDE)
def kv_port_range(f: PlanFacts) -> Outcome:
    pd = _pd(f)
    if pd is None or pd.connector not in SIZED:
        return skipped("no Mooncake connector")
    floor = MOONCAKE_RANDOM_BASE + MOONCAKE_RANDOM_PER_NPU * pd.devices_per_node
    low = min(p.kv_port for p in pd.placements)
    if low < floor:
        return problem(
            f"disaggregation.kv_port {low}: Mooncake's AscendDirectTransport picks random ports in "
            f"[{MOONCAKE_RANDOM_BASE}, {floor}) on {pd.devices_per_node}-NPU nodes, so a KV port there collides now "
            "and then ('zmq.error.ZMQError: Address already in use')",
            f"set disaggregation.kv_port to {floor} or more",
            at=("disaggregation", "kv_port"),
        )
    return passed(f"KV ports from {low}, above Mooncake's random range (< {floor})")


# the PD guide says so (a document): it warns (docs/refusal-policy.md)
@rule("plan.pd.speculative", "warn", "Speculative tokens agree across prefill and decode", source=PD_GUIDE)
def speculative(f: PlanFacts) -> Outcome:
    pd = _pd(f)
    if pd is None:
        return skipped("not disaggregated")
    by_role: dict[str, int] = {}
    for p in pd.placements:
        spec = pd.profiles[p.name].engine.speculative
        by_role.setdefault(p.role, spec.num_tokens if spec is not None else 0)
    pre, dec = by_role.get("prefill", 0), by_role.get("decode", 0)
    if not pre and not dec:
        return skipped("no speculative decoding")
    at = ("disaggregation",)
    if pd.hybrid:
        if pre != dec:
            return problem(
                f"speculative tokens: prefill {pre}, decode {dec}; a hybrid linear-attention model needs the same "
                "number on both roles",
                "set the same engine.speculative.num_tokens for prefill and decode",
                at=at,
            )
        return passed(f"{pre} speculative tokens on both roles (hybrid model)")
    if pre != 1 or dec < 1:
        return problem(
            f"speculative tokens: prefill {pre}, decode {dec}; prefill proposes exactly 1 and decode at least 1",
            "set disaggregation.prefill.engine.speculative.num_tokens: 1 and decode's to 1 or more",
            at=at,
        )
    return passed(f"prefill 1, decode {dec} speculative tokens")


@rule("plan.pd.devices", "error", "Each instance runs on a contiguous device range", clause="placement")
def contiguous_devices(f: PlanFacts) -> Outcome:
    pd = _pd(f)
    if pd is None:
        return skipped("not disaggregated")
    broken = []
    for p in pd.placements:
        mask = pd.profiles[p.name].target.visible_devices
        if mask and mask != list(range(mask[0], mask[0] + len(mask))):
            broken.append(f"{p.name} on devices {mask}")
    if broken:
        return problem(
            f"{'; '.join(broken)}: an instance's devices must be one contiguous range (its ranks talk over "
            "neighbouring links)",
            "list target.visible_devices in order without gaps, or size the groups' devices to fall on contiguous ids",
            at=("target", "visible_devices"),
        )
    return passed(f"{len(pd.placements)} instances, each on contiguous devices")
