"""Tutorial commands of vllm-ascend (its docs/source/tutorials/, at the tag each names) and the helpers
that compare them with planned commands: flags as a set with values, JSON option values parsed.

Placeholders of the tutorials (`your_model_path`, `$local_ip`, `$nic_name`, `<port>`, …) are filled in
with the values the matching fixture profile uses; each command says which.
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures" / "profiles"
PROFILES = REPO / "profiles"

JSON_FLAGS = {
    "--compilation-config",
    "--additional-config",
    "--speculative-config",
    "--hf-overrides",
    "--limit-mm-per-prompt",
    "--structured-outputs-config",
    "--kv-transfer-config",
}
MODEL = "<model>"


def parse_shell(text: str) -> tuple[dict[str, str], list[str]]:
    """`export K=V` lines → env; the `vllm serve …` statement (backslash continuations) → argv. Assignments
    written before the command on its line (`HCCL_OP_EXPANSION_MODE=AIV vllm serve …`) are env too."""
    joined = text.replace("\\\n", " ")
    env: dict[str, str] = {}
    argv: list[str] = []
    for line in _statements(joined):
        if line.startswith("export "):
            name, _, value = line[len("export ") :].partition("=")
            env[name] = shlex.split(value)[0] if value else ""
        elif re.match(r"^(\w+=\S*\s+)*vllm serve", line):
            words = shlex.split(line)
            while words[0] != "vllm":
                name, _, value = words.pop(0).partition("=")
                env[name] = value
            argv = words
    return env, argv


def _statements(text: str) -> list[str]:
    """Lines, with a quoted word that spans lines (a JSON value written over several) kept in one statement."""
    out: list[str] = []
    pending = ""
    for line in text.splitlines():
        pending = f"{pending}\n{line}" if pending else line
        try:
            shlex.split(pending)
        except ValueError:
            continue  # an open quote: the statement goes on
        out.append(pending.strip())
        pending = ""
    return out


def flag_map(argv: list[str] | tuple[str, ...]) -> dict[str, Any]:
    """`vllm serve MODEL --a 1 --b --c '{"x": 1}'` → {"<model>": MODEL, "--a": "1", "--b": True, "--c": {...}}.
    Flag names are normalised (`--max_model_len` → `--max-model-len`, `--x=1` → `--x 1`), and a JSON option's
    dotted keys fold into its object as vLLM folds them (`--limit-mm-per-prompt.video 0` → {"video": 0})."""
    assert list(argv[:2]) == ["vllm", "serve"], argv
    out: dict[str, Any] = {MODEL: argv[2]}
    key: str | None = None
    values: list[str] = []

    def flush() -> None:
        if key is None:
            return
        head, _, path = key.partition(".")
        if path and head in JSON_FLAGS and values:
            node = out.setdefault(head, {})
            *parents, leaf = path.split(".")
            for part in parents:
                node = node.setdefault(part, {})
            node[leaf] = _dotted_value(values[0])
        elif not values:
            out[key] = True
        elif key in JSON_FLAGS:
            out[key] = json.loads(values[0])
        else:
            out[key] = values[0] if len(values) == 1 else tuple(values)

    for token in argv[3:]:
        if token.startswith("--"):
            flush()
            name, eq, value = token.partition("=")
            head, dot, rest = name.partition(".")
            key = head.replace("_", "-") + dot + rest
            values = [value] if eq else []
        else:
            values.append(token)
    flush()
    return out


def _dotted_value(text: str) -> Any:
    """A dotted key's value as vLLM reads it: JSON when it parses, else the string."""
    try:
        return json.loads(text)
    except ValueError:
        return text


def differences(planned: dict[str, Any], documented: dict[str, Any]) -> dict[str, tuple[Any, Any]]:
    """Keys whose values differ (missing on one side counts), as (planned, documented)."""
    keys = sorted(set(planned) | set(documented))
    return {k: (planned.get(k), documented.get(k)) for k in keys if planned.get(k) != documented.get(k)}


# ascendctl always adds these (each with its reason in the plan's provenance); tutorials set a subset.
ASCEND_DEFAULT_ENV = {
    "PYTORCH_NPU_ALLOC_CONF",
    "TASK_QUEUE_ENABLE",
    "OMP_NUM_THREADS",
    "OMP_PROC_BIND",
    "HCCL_OP_EXPANSION_MODE",
    "HCCL_BUFFSIZE",
    "ASCEND_RT_VISIBLE_DEVICES",
    # multi-node: each node's own address, as the GLM5.2 / Kimi-K3 tutorials export it next to HCCL_IF_IP
    # (v0.25.1rc1:docs/source/tutorials/models/GLM5.2.md:970); the others leave vLLM to find it
    "VLLM_HOST_IP",
}
# Flags ascendctl always spells out: the bind address (vLLM's own default binds every interface; the
# profile default is loopback) and the drain timeout where the vLLM has `--shutdown-timeout` (from 0.18.0:
# engine/ascendctl_engine/data/parsers/vllm-0.18.0.json).
ALWAYS_PLANNED_FLAGS = {"--host", "--shutdown-timeout"}


@dataclass(frozen=True)
class Tutorial:
    id: str
    profile: Path
    source: str  # where the command comes from
    text: str  # the documented env exports + command, placeholders filled in
    node: int = 0
    instance: str = "serve"  # which instance of the plan (prefill-0, decode-0, … for a prefill/decode profile)
    # Every other difference, with the reason it is expected: flag or env name → reason.
    expected: dict[str, str] = field(default_factory=dict)
    expected_env: dict[str, str] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()  # substrings that must appear among the plan's warnings
    # engine.ascend switches whose tutorial spelling differs from the one the release's code reads first: `plan
    # --why` says it beside the planned key (the typed switch is the recommended spelling: no warning)
    spelled: tuple[str, ...] = ()


# ----------------------------------------------------------------------------------------------------
# The tutorials (vllm-ascend docs/source/tutorials/). Quoting and line breaks as in the docs; placeholders filled in.

QWEN3_32B_W8A8 = Tutorial(
    id="qwen3-32b-w8a8-tp4-a2",
    profile=PROFILES / "qwen3-32b-w8a8-a2.yaml",
    source="main tutorials/models/Qwen3-Dense.md (Qwen3-32B-W8A8, TP4)",
    text="""
export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3
export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True
export TASK_QUEUE_ENABLE=1
export HCCL_OP_EXPANSION_MODE="AIV"
vllm serve vllm-ascend/Qwen3-32B-W8A8 --served-model-name qwen3 --trust-remote-code --quantization ascend \\
  --distributed-executor-backend mp --tensor-parallel-size 4 --max-model-len 5500 \\
  --max-num-batched-tokens 40960 --compilation-config '{"cudagraph_mode": "FULL_DECODE_ONLY"}' \\
  --port 8000 --gpu-memory-utilization 0.9
""",
    expected={
        "--distributed-executor-backend": "mp is vLLM's default for one node; emitted only when the profile names "
        "engine.parallel.executor",
    },
)

QWEN3_32B_W4A4 = Tutorial(
    id="qwen3-32b-w4a4-tp2-a2",
    profile=FIXTURES / "qwen3-32b-w4a4-a2.yaml",
    source="main tutorials/models/Qwen3-Dense.md (Qwen3-32B-W4A4, TP2)",
    text="""
export ASCEND_RT_VISIBLE_DEVICES=0,1
export VLLM_USE_V1=1
export TASK_QUEUE_ENABLE=1
export HCCL_BUFFSIZE=1024
vllm serve your_model_path --port 8004 --data-parallel-size 1 --tensor-parallel-size 2 --served-model-name qwen3 \\
  --distributed-executor-backend "mp" --max-model-len 40960 --max-num-batched-tokens 16384 --max-num-seqs 64 \\
  --trust-remote-code --gpu-memory-utilization 0.9 --quantization ascend \\
  --compilation-config '{"cudagraph_capture_sizes": [64]}' \\
  --additional-config '{"ascend_compilation_config": {"fuse_norm_quant": false}}'
""",
    expected={
        "--data-parallel-size": "DP 1 is vLLM's default; ascendctl emits parallel sizes above 1 only",
        "--compilation-config": "the tutorial leaves cudagraph_mode at the engine default; graph.mode auto plans "
        "the documented recommendation FULL_DECODE_ONLY (RN v0.12.0rc1) next to the capture sizes",
    },
    expected_env={"VLLM_USE_V1": "vLLM ≥ 0.13 no longer reads VLLM_USE_V1 (vllm/envs.py): not planned for v0.23.0"},
)

QWEN3_8B_W8A8SC_DUO = Tutorial(
    id="qwen3-8b-w8a8sc-300i-duo",
    profile=FIXTURES / "qwen3-8b-w8a8sc-300i-duo.yaml",
    source="main tutorials/models/Qwen3-Dense.md (Atlas 300I DUO, Qwen3-8B-W8A8SC TP1)",
    text="""
export VLLM_USE_MODELSCOPE=True
export ASCEND_RT_VISIBLE_DEVICES=0
vllm serve Eco-Tech/Qwen3-8B-w8a8sc-310-vllm/TP1/Qwen3-8B-w8a8sc-310-vllm-tp1 --host 127.0.0.1 --port 8080 \\
  --tensor-parallel-size 1 --gpu-memory-utilization 0.90 --max-num-seqs 32 --served-model-name qwen3 --dtype float16 \\
  --additional-config '{"ascend_compilation_config": {"enable_npugraph_ex":false}}' \\
  --compilation-config '{"cudagraph_mode": "FULL_DECODE_ONLY", "cudagraph_capture_sizes": [1,2,4,8,16,32]}' \\
  --quantization ascend --max-model-len 20480 --no-enable-prefix-caching --load-format sharded_state
""",
    expected={
        "--tensor-parallel-size": "TP 1 is vLLM's default; ascendctl emits parallel sizes above 1 only",
        "--gpu-memory-utilization": "the same number: the profile's 0.9 is printed as 0.9, the tutorial writes 0.90",
    },
)

QWEN3_235B_TP8 = Tutorial(
    id="qwen3-235b-a22b-w8a8-tp8-ep-a2",
    profile=PROFILES / "qwen3-235b-a22b-w8a8-a2.yaml",
    source="main tutorials/models/Qwen3-235B-A22B.md (single node W8A8 TP8)",
    text="""
export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7
export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True
export HCCL_BUFFSIZE=512
export OMP_PROC_BIND=false
export OMP_NUM_THREADS=1
export TASK_QUEUE_ENABLE=1
vllm serve vllm-ascend/Qwen3-235B-A22B-W8A8 --host 127.0.0.1 --port 8000 --tensor-parallel-size 8 \\
  --data-parallel-size 1 --seed 1024 --quantization ascend --served-model-name qwen3 --max-num-seqs 32 \\
  --max-model-len 131072 --max-num-batched-tokens 8096 --enable-expert-parallel --trust-remote-code \\
  --gpu-memory-utilization 0.95 \\
  --hf-overrides '{"rope_parameters": {"rope_type":"yarn","rope_theta":1000000,"factor":4,"original_max_position_embeddings":32768}}' \\
  --compilation-config '{"cudagraph_mode":"FULL_DECODE_ONLY"}'
""",  # noqa: E501 (a documented command, kept on its line)
    expected={"--data-parallel-size": "DP 1 is vLLM's default; ascendctl emits parallel sizes above 1 only"},
)

QWEN3_235B_A3_HYBRID = Tutorial(
    id="qwen3-235b-a22b-w8a8-a3-tp4-dp4",
    profile=FIXTURES / "qwen3-235b-a22b-w8a8-a3-hybrid.yaml",
    source="main tutorials/models/Qwen3-235B-A22B.md (A3 single-node PD-hybrid)",
    text="""
export HCCL_IF_IP=192.0.2.20
export GLOO_SOCKET_IFNAME=enp23s0f3
export TP_SOCKET_IFNAME=enp23s0f3
export HCCL_SOCKET_IFNAME=enp23s0f3
export HCCL_OP_EXPANSION_MODE="AIV"
export HCCL_BUFFSIZE=1024
export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True
export OMP_NUM_THREADS=1
export LD_PRELOAD=/usr/lib/aarch64-linux-gnu/libjemalloc.so.2:$LD_PRELOAD
export TASK_QUEUE_ENABLE=1
vllm serve your_model_path --tensor-parallel-size 4 --data-parallel-size 4 --data-parallel-size-local 4 \\
  --data-parallel-start-rank 0 --data-parallel-address 192.0.2.20 --data-parallel-rpc-port 13389 \\
  --enable-expert-parallel --max-num-seqs 128 --max-model-len 32768 --max-num-batched-tokens 16384 \\
  --gpu-memory-utilization 0.9 --trust-remote-code --quantization ascend --no-enable-prefix-caching \\
  --compilation-config '{"cudagraph_mode": "FULL_DECODE_ONLY"}' \\
  --additional-config '{"enable_cpu_binding":true, "enable_fused_mc2": 1}'
""",
    expected={
        "--data-parallel-size-local": "one node: every DP rank is local; ascendctl emits the multi-node DP "
        "coordinates (local size, start rank, address, RPC port) only when target.nodes > 1",
        "--data-parallel-start-rank": "one node: see --data-parallel-size-local",
        "--data-parallel-address": "one node: see --data-parallel-size-local",
        "--data-parallel-rpc-port": "one node: see --data-parallel-size-local",
        "--port": "the tutorial's <port>: ascendctl plans the profile's server.port explicitly (default 8000)",
    },
    expected_env={
        "LD_PRELOAD": "host-specific jemalloc path (tuning, not correctness); set it in runtime.env when wanted",
        "OMP_PROC_BIND": "an ascendctl default the tutorial does not export",
    },
)

QWEN3_235B_RAY_HEAD = Tutorial(
    id="qwen3-235b-ray-2node-head",
    profile=FIXTURES / "qwen3-235b-a22b-ray-2node-a2.yaml",
    source="main tutorials/features/ray.md (2 nodes × 8 NPUs, PP2 × TP8)",
    text="""
export HCCL_IF_IP=192.0.2.30
export GLOO_SOCKET_IFNAME=eth0
export TP_SOCKET_IFNAME=eth0
export RAY_EXPERIMENTAL_NOSET_ASCEND_RT_VISIBLE_DEVICES=1
export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7
vllm serve Qwen/Qwen3-235B-A22B --distributed-executor-backend ray --pipeline-parallel-size 2 \\
  --tensor-parallel-size 8 --enable-expert-parallel --seed 1024 --max-model-len 8192 --max-num-seqs 25 \\
  --served-model-name qwen --trust-remote-code --gpu-memory-utilization 0.9
""",
    expected={
        "--port": "ascendctl plans the profile's server.port explicitly (default 8000)",
        "--compilation-config": "the fixture states graph mode full-decode-only (the ray tutorial keeps the default)",
    },
    expected_env={
        "HCCL_SOCKET_IFNAME": "ascendctl sets all four per-node NIC variables from network.interface "
        "(as main DeepSeek-R1.md exports them); ray.md lists three",
    },
)

DEEPSEEK_R1_A3 = Tutorial(
    id="deepseek-r1-w8a8-a3-dp4-tp4-mtp",
    profile=FIXTURES / "deepseek-r1-w8a8-a3.yaml",
    source="main tutorials/models/DeepSeek-R1.md (single node A3, validated on v0.13.0)",
    text="""
export HCCL_OP_EXPANSION_MODE="AIV"
export HCCL_IF_IP=192.0.2.40
export GLOO_SOCKET_IFNAME=eth0
export TP_SOCKET_IFNAME=eth0
export HCCL_SOCKET_IFNAME=eth0
export VLLM_ASCEND_BALANCE_SCHEDULING=1
export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True
vllm serve vllm-ascend/DeepSeek-R1-W8A8 --host 0.0.0.0 --port 8000 --data-parallel-size 4 --tensor-parallel-size 4 \\
  --quantization ascend --seed 1024 --served-model-name deepseek_r1 --enable-expert-parallel --max-num-seqs 16 \\
  --max-model-len 16384 --max-num-batched-tokens 4096 --trust-remote-code --gpu-memory-utilization 0.92 \\
  --speculative-config '{"num_speculative_tokens":3,"method":"mtp"}' \\
  --compilation-config '{"cudagraph_mode": "FULL_DECODE_ONLY"}'
""",
)

DEEPSEEK_R1_2NODE = [
    Tutorial(
        id=f"deepseek-r1-w8a8-2node-a2-node{node}",
        profile=PROFILES / "deepseek-r1-w8a8-2node-a2.yaml",
        source="main tutorials/models/DeepSeek-R1.md (two A2 nodes)",
        node=node,
        text=f"""
export HCCL_IF_IP={address}
export GLOO_SOCKET_IFNAME=eth0
export TP_SOCKET_IFNAME=eth0
export HCCL_SOCKET_IFNAME=eth0
export OMP_PROC_BIND=false
export OMP_NUM_THREADS=1
export HCCL_BUFFSIZE=200
export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True
export VLLM_ASCEND_BALANCE_SCHEDULING=1
export HCCL_INTRA_PCIE_ENABLE=1
export HCCL_INTRA_ROCE_ENABLE=0
vllm serve vllm-ascend/DeepSeek-R1-W8A8 --host 0.0.0.0 --port 8000 --data-parallel-size 4 \\
  --data-parallel-size-local 2 --data-parallel-address 192.0.2.10 --data-parallel-rpc-port 13389 \\
  --tensor-parallel-size 4 --quantization ascend --seed 1024 --served-model-name deepseek_r1 \\
  --enable-expert-parallel --max-num-seqs 16 --max-model-len 16384 --max-num-batched-tokens 4096 \\
  --trust-remote-code --gpu-memory-utilization 0.92 \\
  --speculative-config '{{"num_speculative_tokens":3,"method":"mtp"}}' \\
  --compilation-config '{{"cudagraph_mode": "FULL_DECODE_ONLY"}}'{extra}
""",
        expected=(
            {}
            if node == 0
            else {
                "--host": "headless nodes serve no API: ascendctl drops --host/--port there (vLLM cli/serve.py)",
                "--port": "headless nodes serve no API (see --host)",
            }
        ),
        expected_env={
            "HCCL_OP_EXPANSION_MODE": "an ascendctl default (AIV) the tutorial does not export",
            "TASK_QUEUE_ENABLE": "an ascendctl default the tutorial does not export",
            "ASCEND_RT_VISIBLE_DEVICES": "ascendctl pins the devices (0..devices_per_node-1) on every node",
        },
    )
    for node, address, extra in (
        (0, "192.0.2.10", ""),
        (1, "192.0.2.11", " \\\n  --headless --data-parallel-start-rank 2"),
    )
]

DEEPSEEK_V31_TORCHAIR = [
    Tutorial(
        id=f"deepseek-v3.1-torchair-v0.11-node{node}",
        profile=FIXTURES / "deepseek-v3.1-torchair-2node-v0.11.yaml",
        source="v0.11.0 docs/source/tutorials/multi_node.md (DeepSeek-V3.1-W8A8, two nodes)",
        node=node,
        text=f"""
export VLLM_USE_MODELSCOPE=True
export HCCL_IF_IP={address}
export GLOO_SOCKET_IFNAME=eth0
export TP_SOCKET_IFNAME=eth0
export HCCL_SOCKET_IFNAME=eth0
export OMP_PROC_BIND=false
export OMP_NUM_THREADS=10{v1}
export HCCL_BUFFSIZE=1024
vllm serve vllm-ascend/DeepSeek-V3.1-W8A8 --host 0.0.0.0 --port 8004{headless} --data-parallel-size 4 \\
  --data-parallel-size-local 2{start} --data-parallel-address 192.0.2.50 --data-parallel-rpc-port 13389 \\
  --tensor-parallel-size 4 --seed 1024 --served-model-name deepseek_v3.1 --enable-expert-parallel \\
  --max-num-seqs 16 --max-model-len 32768 --quantization ascend --max-num-batched-tokens 4096 \\
  --trust-remote-code --no-enable-prefix-caching --gpu-memory-utilization {util} \\
  --additional-config '{{"ascend_scheduler_config":{{"enabled":true}},"torchair_graph_config":{{"enabled":true}}}}'
""",
        expected=(
            {}
            if node == 0
            else {
                "--host": "headless nodes serve no API: ascendctl drops --host/--port there (vLLM cli/serve.py)",
                "--port": "headless nodes serve no API (see --host)",
                "--gpu-memory-utilization": "the tutorial uses 0.92 on node 1 and 0.9 on node 0; a profile states "
                "one value for every node",
            }
        ),
        expected_env={
            "HCCL_OP_EXPANSION_MODE": "an ascendctl default (AIV) the tutorial does not export",
            "TASK_QUEUE_ENABLE": "an ascendctl default the tutorial does not export",
            "PYTORCH_NPU_ALLOC_CONF": "an ascendctl default the tutorial does not export",
            "ASCEND_RT_VISIBLE_DEVICES": "ascendctl pins the devices (0..devices_per_node-1) on every node",
            **(
                {}
                if node == 0
                else {
                    "VLLM_USE_V1": "v0.11.0 runs the V1 engine by default (RN v0.9.2rc1); the tutorial exports it "
                    "on node 1 only"
                }
            ),
        },
        warnings=("server.shutdown_timeout",) if False else (),
    )
    for node, address, v1, headless, start, util in (
        (0, "192.0.2.50", "", "", "", "0.9"),
        (1, "192.0.2.51", "\nexport VLLM_USE_V1=1", " --headless", " --data-parallel-start-rank 2", "0.92"),
    )
]

# Two-node tutorials reproduced command for command on both nodes, with the per-node differences the profile
# says per node (network.nodes[i]: address, device_utilization, env) and the API-server options on the head only.
_ASCENDCTL_ENV = {
    "HCCL_OP_EXPANSION_MODE": "an ascendctl default (AIV) the tutorial does not export",
    "TASK_QUEUE_ENABLE": "an ascendctl default the tutorial does not export",
    "PYTORCH_NPU_ALLOC_CONF": "an ascendctl default the tutorial does not export",
    "ASCEND_RT_VISIBLE_DEVICES": "ascendctl pins the devices (0..devices_per_node-1) on every node",
}
_HEADLESS_NO_API = {
    "--host": "headless nodes serve no API: ascendctl drops the API-server options there (vLLM cli/serve.py)",
    "--port": "headless nodes serve no API (see --host)",
}

TWO_NODE_DEEPSEEK_V31_TORCHAIR = [
    Tutorial(
        id=f"2node-deepseek-v3.1-torchair-v0.11-node{node}",
        profile=FIXTURES / "tut-2node-deepseek-v3.1-torchair-v0110.yaml",
        source=f"v0.11.0:docs/source/tutorials/multi_node.md:{line}",
        node=node,
        text=f"""
export VLLM_USE_MODELSCOPE=True
export HCCL_IF_IP={address}
export GLOO_SOCKET_IFNAME=eth0
export TP_SOCKET_IFNAME=eth0
export HCCL_SOCKET_IFNAME=eth0
export OMP_PROC_BIND=false
export OMP_NUM_THREADS=10{v1}
export HCCL_BUFFSIZE=1024
vllm serve vllm-ascend/DeepSeek-V3.1-W8A8 \\
--host 0.0.0.0 \\
--port 8004 \\{headless}
--data-parallel-size 4 \\
--data-parallel-size-local 2 \\{start}
--data-parallel-address 192.0.2.50 \\
--data-parallel-rpc-port 13389 \\
--tensor-parallel-size 4 \\
--seed 1024 \\
--served-model-name deepseek_v3.1 \\
--enable-expert-parallel \\
--max-num-seqs 16 \\
--max-model-len 32768 \\
--quantization ascend \\
--max-num-batched-tokens 4096 \\
--trust-remote-code \\
--no-enable-prefix-caching \\
--gpu-memory-utilization {util} \\
--additional-config '{{"ascend_scheduler_config":{{"enabled":true}},"torchair_graph_config":{{"enabled":true}}}}'
""",
        expected={} if node == 0 else dict(_HEADLESS_NO_API),
        expected_env=dict(_ASCENDCTL_ENV),
    )
    for node, line, address, v1, headless, start, util in (
        (0, 121, "192.0.2.50", "", "", "", "0.9"),
        (
            1,
            165,
            "192.0.2.51",
            "\nexport VLLM_USE_V1=1",
            "\n--headless \\",
            "\n--data-parallel-start-rank 2 \\",
            "0.92",
        ),
    )
]

TWO_NODE_QWEN3_VL_235B = [
    Tutorial(
        id=f"2node-qwen3-vl-235b-a2-v0.23.0-node{node}",
        profile=FIXTURES / "tut-2node-qwen3-vl-235b-a2-v0230.yaml",
        source=f"v0.23.0:docs/source/tutorials/models/Qwen3-VL-235B-A22B-Instruct.md:{line}",
        node=node,
        text=f"""
export VLLM_USE_MODELSCOPE=True
export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True
export HCCL_IF_IP={address}
export GLOO_SOCKET_IFNAME=eth0
export TP_SOCKET_IFNAME=eth0
export HCCL_SOCKET_IFNAME=eth0
export OMP_PROC_BIND=false
export OMP_NUM_THREADS=1
export HCCL_BUFFSIZE=1024
export TASK_QUEUE_ENABLE=1
export HCCL_OP_EXPANSION_MODE="AIV"
vllm serve Eco-Tech/Qwen3-VL-235B-A22B-Instruct-w8a8-QuaRot \\
  --host 0.0.0.0 \\
  --port 8000 \\
  --quantization ascend \\{role}
  --data-parallel-size 2 \\
  --data-parallel-size-local 1 \\{start}
  --data-parallel-address 192.0.2.80 \\
  --data-parallel-rpc-port 13389 \\
  --seed 1024 \\
  --served-model-name qwen3-vl-235b \\
  --tensor-parallel-size 8 \\
  --enable-expert-parallel \\
  --max-num-seqs 16 \\
  --max-model-len 262144 \\
  --max-num-batched-tokens 4096 \\
  --trust-remote-code \\
  --gpu-memory-utilization 0.9 \\
  --no-enable-prefix-caching \\
  --mm-processor-cache-gb 0 \\
  --limit-mm-per-prompt.image 1 \\
  --limit-mm-per-prompt.video 0 \\
  --compilation-config '{{"cudagraph_mode":"FULL_DECODE_ONLY"}}' \\
  --additional-config '{{"enable_cpu_binding":true,"enable_flashcomm1":true}}'
""",
        expected={} if node == 0 else dict(_HEADLESS_NO_API),
        expected_env={"ASCEND_RT_VISIBLE_DEVICES": _ASCENDCTL_ENV["ASCEND_RT_VISIBLE_DEVICES"]},
        spelled=("engine.ascend.flashcomm1",),
    )
    for node, line, address, role, start in (
        (0, 348, "192.0.2.80", "\n  --api-server-count 2 \\", ""),
        (1, 402, "192.0.2.81", "\n  --headless \\", "\n  --data-parallel-start-rank 1 \\"),
    )
]

TWO_NODE_TUTORIALS = [*TWO_NODE_DEEPSEEK_V31_TORCHAIR, *TWO_NODE_QWEN3_VL_235B]

EPLB_MRV1 = Tutorial(
    id="eplb-dynamic-mrv1",
    profile=FIXTURES / "qwen3-235b-eplb-dynamic-a3.yaml",
    source="main EPLB guide (D node / colocated) + DYNAMIC_EPLB guard",
    text="""
export DYNAMIC_EPLB="true"
vllm serve Qwen/Qwen3-235B-A22 --tensor-parallel-size 16 --enable-expert-parallel \\
  --additional-config '{"eplb_config": {"dynamic_eplb": true, "expert_heat_collection_interval": 600, "algorithm_execution_interval": 50, "eplb_policy_type": 2, "num_redundant_experts": 16}}'
""",  # noqa: E501 (a documented command, kept on its line)
    expected={
        "--port": "ascendctl plans the profile's server.port explicitly (default 8000)",
        "--compilation-config": "graph.mode auto plans the documented recommendation FULL_DECODE_ONLY",
    },
)

EPLB_MRV2 = Tutorial(
    id="eplb-upstream-mrv2",
    profile=FIXTURES / "qwen3-30b-a3b-eplb-upstream-a3.yaml",
    source="main EPLB guide (MRv2 upstream EPLB)",
    text="""
export VLLM_USE_V2_MODEL_RUNNER=1
vllm serve Qwen/Qwen3-30B-A3B --tensor-parallel-size 16 --enable-expert-parallel --enable-eplb \\
  --eplb-config.window_size 50 --eplb-config.step_interval 50 --eplb-config.num_redundant_experts 16 \\
  --eplb-config.use_async false --eplb-config.log_balancedness true --eplb-config.log_balancedness_interval 1 \\
  --additional-config '{"eplb_config":{"load_collection_phase":"all"}}'
""",
    expected={
        "--port": "ascendctl plans the profile's server.port explicitly (default 8000)",
        "--compilation-config": "graph.mode auto plans the documented recommendation FULL_DECODE_ONLY",
        "--additional-config": "main's `load_collection_phase` is read by no tag (EplbConfig raises on it); the "
        "profile spells v0.25.1rc1's `eplb_heat_collection_stage` "
        "(engine/ascendctl_engine/data/ascend_keys/v0.25.1rc1.json)",
    },
    warnings=("engine.eplb.implementation upstream",),
)

QWEN3_VL = Tutorial(
    id="qwen3-vl-8b-a2",
    profile=FIXTURES / "qwen3-vl-8b-a2.yaml",
    source="main tutorials/models/Qwen-VL-Dense.md (A2/A3; $1=0, $2=8000, $3=1, $4=1)",
    text="""
export HCCL_OP_EXPANSION_MODE="AIV"
export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True
export OMP_PROC_BIND=false
export OMP_NUM_THREADS=1
export TASK_QUEUE_ENABLE=1
export ASCEND_RT_VISIBLE_DEVICES=0
vllm serve Qwen/Qwen3-VL-8B-Instruct --host 0.0.0.0 --port 8000 --dtype bfloat16 --served-model-name qwen3vl \\
  --no-enable-prefix-caching --data-parallel-size 1 --tensor-parallel-size 1 --trust-remote-code \\
  --max-num-seqs 128 --max-model-len 32768 --max-num-batched-tokens 16384 --gpu-memory-utilization 0.91 \\
  --async-scheduling --compilation-config '{"cudagraph_mode": "FULL_DECODE_ONLY", "cudagraph_capture_sizes": [1,2,4,8,16,32]}' \\
  --mm-processor-cache-gb 0
""",  # noqa: E501 (a documented command, kept on its line)
    expected={
        "--data-parallel-size": "DP 1 is vLLM's default; ascendctl emits parallel sizes above 1 only",
        "--tensor-parallel-size": "TP 1 is vLLM's default; ascendctl emits parallel sizes above 1 only",
    },
)

QWEN3_EMBEDDING = Tutorial(
    id="qwen3-embedding-a2",
    profile=FIXTURES / "qwen3-embedding-a2.yaml",
    source="main tutorials/models/Qwen3-Embedding.md (A2/A3)",
    text="""
vllm serve Qwen/Qwen3-Embedding-0.6B --served-model-name Qwen/Qwen3-Embedding-0.6B --runner pooling \\
  --port 8000 --max-model-len 1024
""",
)

QWEN3_RERANKER = Tutorial(
    id="qwen3-reranker-a2",
    profile=FIXTURES / "qwen3-reranker-a2.yaml",
    source="main tutorials/models/Qwen3-Reranker.md",
    text="""
vllm serve Qwen/Qwen3-Reranker-0.6B --served-model-name Qwen/Qwen3-Reranker-0.6B --runner pooling \\
  --hf_overrides '{"architectures": ["Qwen3ForSequenceClassification"],"classifier_from_token": ["no", "yes"],"is_original_qwen3_reranker": true}' \\
  --port 8000 --max-model-len 1024
""",  # noqa: E501 (a documented command, kept on its line)
)

# ----------------------------------------------------------------------------------------------------
# Serving options as typed fields (profile `serving`): tool-call / reasoning parsers, chat template,
# multimodal limits and processor cache. The fixtures state them without engine.extra_args,
# engine.additional_config or runtime.env. `source` is TAG:path:LINE (the `vllm serve` line).

SERVE_QWEN3_VL_RERANKER = Tutorial(
    id="serve-qwen3-vl-reranker-chat-template",
    profile=FIXTURES / "tut-serve-qwen3-vl-reranker-a2.yaml",
    source="v0.23.0:docs/source/tutorials/models/Qwen3-VL-Reranker.md:169",
    text="""
vllm serve Qwen/Qwen3-VL-Reranker-2B \\
  --served-model-name Qwen/Qwen3-VL-Reranker-2B \\
  --runner pooling \\
  --hf_overrides '{"architectures": ["Qwen3VLForSequenceClassification"],"classifier_from_token": ["no", "yes"],"is_original_qwen3_reranker": true}' \\
  --chat-template ./qwen3_vl_reranker.jinja \\
  --port 8000 \\
  --max-model-len 1024
""",  # noqa: E501 (a documented command, kept on its line)
    warnings=("serving.chat_template './qwen3_vl_reranker.jinja' is a relative path",),
)

SERVE_QWEN3_VL_30B_V014 = Tutorial(
    id="serve-qwen3-vl-30b-video-off-v0.14",
    profile=FIXTURES / "tut-serve-qwen3-vl-30b-v0.14.yaml",
    source="v0.14.0rc1:docs/source/tutorials/Qwen3-VL-30B-A3B-Instruct.md:86 (env: lines 62-65)",
    text="""
export VLLM_USE_MODELSCOPE=True
export PYTORCH_NPU_ALLOC_CONF=max_split_size_mb:256
vllm serve Qwen/Qwen3-VL-30B-A3B-Instruct \\
--tensor-parallel-size 2 \\
--enable-expert-parallel \\
--limit-mm-per-prompt.video 0 \\
--max-model-len 128000
""",
    expected={
        "--port": "ascendctl plans the profile's server.port explicitly (default 8000)",
        "--compilation-config": "graph.mode auto plans the documented recommendation FULL_DECODE_ONLY "
        "(RN v0.12.0rc1); the tutorial keeps the engine default",
    },
)

SERVE_QWEN3_VL_30B_A3 = Tutorial(
    id="serve-qwen3-vl-30b-image-only-a3",
    profile=FIXTURES / "tut-serve-qwen3-vl-30b-a3.yaml",
    source="v0.25.1rc1:docs/source/tutorials/models/Qwen3-VL-30B-A3B-Instruct.md:180",
    text="""
export VLLM_USE_MODELSCOPE=True
export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True
export HCCL_OP_EXPANSION_MODE="AIV"
export HCCL_BUFFSIZE=1024
export OMP_NUM_THREADS=1
export OMP_PROC_BIND=false
export TASK_QUEUE_ENABLE=1
export VLLM_ASCEND_ENABLE_FLASHCOMM1=1
export VLLM_ASCEND_ENABLE_FUSED_MC2=1
vllm serve Qwen/Qwen3-VL-30B-A3B-Instruct \\
  --host 0.0.0.0 \\
  --port 8000 \\
  --served-model-name qwen3-vl-30b \\
  --data-parallel-size 1 \\
  --tensor-parallel-size 2 \\
  --enable-expert-parallel \\
  --seed 1024 \\
  --max-num-seqs 32 \\
  --max-model-len 32768 \\
  --max-num-batched-tokens 16384 \\
  --gpu-memory-utilization 0.9 \\
  --no-enable-prefix-caching \\
  --mm-processor-cache-gb 0 \\
  --limit-mm-per-prompt.image 1 \\
  --limit-mm-per-prompt.video 0 \\
  --compilation-config '{"cudagraph_mode":"FULL_DECODE_ONLY","cudagraph_capture_sizes":[1,2,4,8,16,24,32]}'
""",
    expected={"--data-parallel-size": "DP 1 is vLLM's default; ascendctl emits parallel sizes above 1 only"},
    expected_env={
        "VLLM_ASCEND_ENABLE_FLASHCOMM1": "an Ascend feature switch (not a serving option): the fixture leaves the "
        "script's performance switches to the engine.ascend fields",
        "VLLM_ASCEND_ENABLE_FUSED_MC2": "an Ascend feature switch: see VLLM_ASCEND_ENABLE_FLASHCOMM1",
    },
)

SERVE_HY3_PREVIEW = Tutorial(
    id="serve-hy3-preview-parsers-a3",
    profile=FIXTURES / "tut-serve-hy3-preview-a3.yaml",
    source="v0.23.0:docs/source/tutorials/models/Hy3-preview.md:85 (`${MODEL_PATH}` filled in from line 82)",
    text="""
HCCL_OP_EXPANSION_MODE=AIV \\
vllm serve /models/Hy3-preview \\
  --served-model-name hy3-preview \\
  --tensor-parallel-size 16 \\
  --speculative-config.method mtp \\
  --speculative-config.num_speculative_tokens 1 \\
  --enable-expert-parallel \\
  --enable-ep-weight-filter \\
  --tool-call-parser hy_v3 \\
  --reasoning-parser hy_v3 \\
  --enable-auto-tool-choice \\
  --max-model-len 32768 \\
  --max-num-seqs 8 \\
  --host 0.0.0.0 \\
  --port 8000
""",
    expected={
        "--speculative-config": "MTP speculative decoding is engine.speculative, not a serving option: this "
        "fixture tests the parsers and leaves it out",
        "--compilation-config": "graph.mode auto plans the documented recommendation FULL_DECODE_ONLY "
        "(RN v0.12.0rc1); the tutorial keeps ACL graph's default mode",
    },
)

# ----------------------------------------------------------------------------------------------------
# engine.ascend switches: tutorials of v0.23.0 / v0.25.1rc1 whose profiles say every switch as a typed field.

_JEMALLOC_ENV = (
    "the tutorial's `:$LD_PRELOAD` appends the inherited preloads in a shell; the plan's env is literal, so it "
    "preloads the one library of engine.ascend.jemalloc"
)

ASCEND_QWEN3_235B_A3_HYBRID = Tutorial(
    id="ascend-qwen3-235b-a3-hybrid-v0.25.1rc1",
    profile=FIXTURES / "tut-ascend-qwen3-235b-a3-hybrid-v0251.yaml",
    source="v0.25.1rc1:docs/source/tutorials/models/Qwen3-235B-A22B.md:768",
    text="""
export HCCL_IF_IP=192.0.2.60
export GLOO_SOCKET_IFNAME=enp23s0f3
export TP_SOCKET_IFNAME=enp23s0f3
export HCCL_SOCKET_IFNAME=enp23s0f3
export HCCL_OP_EXPANSION_MODE="AIV"
export HCCL_BUFFSIZE=1024
export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True
export OMP_NUM_THREADS=1
export LD_PRELOAD=/usr/lib/aarch64-linux-gnu/libjemalloc.so.2:$LD_PRELOAD
export TASK_QUEUE_ENABLE=1
vllm serve your_model_path \\
    --served-model-name qwen3 \\
    --host 0.0.0.0 \\
    --port 8000 \\
    --async-scheduling \\
    --tensor-parallel-size 4 \\
    --data-parallel-size 4 \\
    --data-parallel-size-local 4 \\
    --data-parallel-start-rank 0 \\
    --data-parallel-address 192.0.2.60 \\
    --data-parallel-rpc-port 13389 \\
    --enable-expert-parallel \\
    --max-num-seqs 128 \\
    --max-model-len 32768 \\
    --max-num-batched-tokens 16384 \\
    --gpu-memory-utilization 0.9 \\
    --trust-remote-code \\
    --quantization ascend \\
    --no-enable-prefix-caching \\
    --compilation-config '{"cudagraph_mode": "FULL_DECODE_ONLY"}' \\
    --additional-config '{"enable_cpu_binding":true, "enable_flashcomm1": true, "enable_fused_mc2": 1}'
""",
    expected={
        "--data-parallel-size-local": "one node: every DP rank is local; ascendctl emits the multi-node DP "
        "coordinates (local size, start rank, address, RPC port) only when target.nodes > 1",
        "--data-parallel-start-rank": "one node: see --data-parallel-size-local",
        "--data-parallel-address": "one node: see --data-parallel-size-local",
        "--data-parallel-rpc-port": "one node: see --data-parallel-size-local",
    },
    expected_env={"LD_PRELOAD": _JEMALLOC_ENV},
    spelled=(
        "engine.ascend.flashcomm1",
        "engine.ascend.fused_mc2",
    ),
)

ASCEND_QWEN36_35B = Tutorial(
    id="ascend-qwen3.6-35b-a3b-v0.23.0",
    profile=FIXTURES / "tut-ascend-qwen3.6-35b-a3b-v0230.yaml",
    source="v0.23.0:docs/source/tutorials/models/Qwen3.6-35B-A3B.md:202",
    text="""
export VLLM_USE_MODELSCOPE=True
export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True
export HCCL_OP_EXPANSION_MODE="AIV"
export HCCL_BUFFSIZE=1024
export OMP_NUM_THREADS=1
export TASK_QUEUE_ENABLE=1
export LD_PRELOAD=/usr/lib/aarch64-linux-gnu/libjemalloc.so.2:$LD_PRELOAD
vllm serve Eco-Tech/Qwen3.6-35B-A3B-w8a8 \\
  --host 0.0.0.0 \\
  --port 8000 \\
  --data-parallel-size 1 \\
  --tensor-parallel-size 2 \\
  --enable-expert-parallel \\
  --seed 1024 \\
  --quantization ascend \\
  --served-model-name qwen3.6 \\
  --max-num-seqs 128 \\
  --max-model-len 262144 \\
  --max-num-batched-tokens 16384 \\
  --trust-remote-code \\
  --gpu-memory-utilization 0.90 \\
  --enable-prefix-caching \\
  --compilation-config '{"cudagraph_mode":"FULL_DECODE_ONLY"}' \\
  --additional-config '{"enable_cpu_binding":true, "enable_flashcomm1":true, "multistream_overlap_shared_expert": true}' \\
  --async-scheduling
""",  # noqa: E501 (a documented command, kept on its line)
    expected={
        "--data-parallel-size": "DP 1 is vLLM's default; ascendctl emits parallel sizes above 1 only",
        "--gpu-memory-utilization": "the same number: the profile's 0.9 is printed as 0.9, the tutorial writes 0.90",
    },
    expected_env={"LD_PRELOAD": _JEMALLOC_ENV},
    spelled=("engine.ascend.flashcomm1",),
)

ASCEND_DEEPSEEK_R1_A3 = Tutorial(
    id="ascend-deepseek-r1-a3-v0.25.1rc1",
    profile=FIXTURES / "tut-ascend-deepseek-r1-a3-v0251.yaml",
    source="v0.25.1rc1:docs/source/tutorials/models/DeepSeek-R1.md:146",
    text="""
export HCCL_OP_EXPANSION_MODE="AIV"
export HCCL_IF_IP=192.0.2.70
export GLOO_SOCKET_IFNAME=eth0
export TP_SOCKET_IFNAME=eth0
export HCCL_SOCKET_IFNAME=eth0
export VLLM_ASCEND_BALANCE_SCHEDULING=1
export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True
vllm serve vllm-ascend/DeepSeek-R1-W8A8 \\
  --host 0.0.0.0 \\
  --port 8000 \\
  --data-parallel-size 4 \\
  --tensor-parallel-size 4 \\
  --quantization ascend \\
  --seed 1024 \\
  --served-model-name deepseek_r1 \\
  --enable-expert-parallel \\
  --max-num-seqs 16 \\
  --max-model-len 16384 \\
  --max-num-batched-tokens 4096 \\
  --trust-remote-code \\
  --gpu-memory-utilization 0.92 \\
  --speculative-config '{"num_speculative_tokens":3,"method":"mtp"}' \\
  --compilation-config '{"cudagraph_mode": "FULL_DECODE_ONLY"}'
""",
    expected={
        "--additional-config": "engine.ascend.balance_scheduling: v0.25.1rc1's code reads "
        "`scheduler_config.enable_balance_scheduling` first and keeps the tutorial's variable only as a deprecated "
        "fallback (v0.25.1rc1:vllm_ascend/ascend_config.py:909-921): the plan spells the key",
    },
    expected_env={
        "VLLM_ASCEND_BALANCE_SCHEDULING": "spelled as the `scheduler_config` key instead (see --additional-config)"
    },
    spelled=("engine.ascend.balance_scheduling",),
)

ASCEND_QWEN3_235B_TP8 = Tutorial(
    id="ascend-qwen3-235b-tp8-v0.25.1rc1",
    profile=FIXTURES / "tut-ascend-qwen3-235b-tp8-v0251.yaml",
    source="v0.25.1rc1:docs/source/tutorials/models/Qwen3-235B-A22B.md:214",
    text="""
export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7
export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True
export HCCL_BUFFSIZE=512
export OMP_PROC_BIND=false
export OMP_NUM_THREADS=1
export TASK_QUEUE_ENABLE=1
vllm serve your_model_path \\
    --host 0.0.0.0 \\
    --port 8000 \\
    --tensor-parallel-size 8 \\
    --data-parallel-size 1 \\
    --seed 1024 \\
    --quantization ascend \\
    --served-model-name qwen3 \\
    --max-num-seqs 32 \\
    --max-model-len 131072 \\
    --max-num-batched-tokens 8096 \\
    --enable-expert-parallel \\
    --trust-remote-code \\
    --gpu-memory-utilization 0.95 \\
    --hf-overrides '{"rope_parameters": {"rope_type":"yarn","rope_theta":1000000,"factor":4,"original_max_position_embeddings":32768}}' \\
    --compilation-config '{"cudagraph_mode":"FULL_DECODE_ONLY"}' \\
    --additional-config '{"enable_flashcomm1": true}' \\
    --async-scheduling
""",  # noqa: E501 (a documented command, kept on its line)
    expected={"--data-parallel-size": "DP 1 is vLLM's default; ascendctl emits parallel sizes above 1 only"},
    spelled=("engine.ascend.flashcomm1",),
)

ASCEND_DEEPSEEK_V32_A3 = Tutorial(
    id="ascend-deepseek-v3.2-a3-v0.25.1rc1",
    profile=FIXTURES / "tut-ascend-deepseek-v3.2-a3-v0251.yaml",
    source="v0.25.1rc1:docs/source/tutorials/models/DeepSeek-V3.2.md:134",
    text="""
export HCCL_OP_EXPANSION_MODE="AIV"
export OMP_PROC_BIND=false
export OMP_NUM_THREADS=10
export VLLM_USE_V1=1
export HCCL_BUFFSIZE=200
export VLLM_ASCEND_ENABLE_MLAPO=1
export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True
export VLLM_ASCEND_ENABLE_FLASHCOMM1=1
vllm serve /root/.cache/modelscope/hub/models/vllm-ascend/DeepSeek-V3.2-W8A8 \\
--host 0.0.0.0 \\
--port 8000 \\
--data-parallel-size 2 \\
--tensor-parallel-size 8 \\
--quantization ascend \\
--seed 1024 \\
--served-model-name deepseek_v3_2 \\
--enable-expert-parallel \\
--max-num-seqs 16 \\
--max-model-len 8192 \\
--max-num-batched-tokens 4096 \\
--trust-remote-code \\
--no-enable-prefix-caching \\
--gpu-memory-utilization 0.92 \\
--compilation-config '{"cudagraph_mode": "FULL_DECODE_ONLY"}' \\
--speculative-config '{"num_speculative_tokens": 3, "method": "deepseek_mtp"}'
""",
    expected={
        "--additional-config": "engine.ascend.mlapo and .flashcomm1: v0.25.1rc1's code reads `enable_mlapo` / "
        "`enable_flashcomm1` first and keeps the tutorial's variables only as fallbacks marked for removal "
        "(v0.25.1rc1:vllm_ascend/ascend_config.py:290): the plan spells the keys",
        "--speculative-config": "from vLLM 0.11 `deepseek_mtp` is an alias of `mtp`, which the profile's method "
        "is spelled as",
    },
    expected_env={
        "VLLM_ASCEND_ENABLE_MLAPO": "spelled as the `enable_mlapo` key instead (see --additional-config)",
        "VLLM_ASCEND_ENABLE_FLASHCOMM1": "spelled as the `enable_flashcomm1` key instead (see --additional-config)",
        "VLLM_USE_V1": "vLLM ≥ 0.13 no longer reads VLLM_USE_V1 (vllm/envs.py): not planned for v0.25.1rc1",
    },
    spelled=(
        "engine.ascend.mlapo",
        "engine.ascend.flashcomm1",
    ),
)

ASCEND_TUTORIALS = [
    ASCEND_QWEN3_235B_A3_HYBRID,
    ASCEND_QWEN36_35B,
    ASCEND_DEEPSEEK_R1_A3,
    ASCEND_QWEN3_235B_TP8,
    ASCEND_DEEPSEEK_V32_A3,
]

# ----------------------------------------------------------------------------------------------------
# Speculative decoding as typed fields (engine.speculative: method, model, num_tokens, draft_eager): the fixtures
# state the speculative part without engine.extra_args, engine.additional_config or runtime.env. `source` is
# TAG:path:LINE (the `--speculative-config` line). The tutorials' vllm-ascend switches (engine.ascend) are left
# out of these fixtures and listed as differences.

SPEC_QWEN3_32B_EAGLE3 = Tutorial(
    id="spec-qwen3-32b-eagle3-draft-eager-a3",
    profile=FIXTURES / "tut-spec-qwen3-32b-eagle3-a3-v0230.yaml",
    source="v0.23.0:docs/source/tutorials/models/Qwen3-Dense.md:636",
    text="""
export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7
export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True
export TASK_QUEUE_ENABLE=1
export HCCL_OP_EXPANSION_MODE="AIV"

vllm serve vllm-ascend/Qwen3-32B-W8A8 \\
  --served-model-name qwen3 \\
  --trust-remote-code \\
  --distributed-executor-backend mp \\
  --tensor-parallel-size 8 \\
  --max-model-len 5500 \\
  --max-num-batched-tokens 40960 \\
  --no-enable-prefix-caching \\
  --async-scheduling \\
  --quantization ascend \\
  --compilation-config '{"cudagraph_mode": "FULL_DECODE_ONLY","cudagraph_capture_sizes":[1,2,4,8,16,32,64,72,76,80,96,100,120,140,144,160,192,216,240,252,288,320,336,360,384,400,408,416,420,432,480,540,576,600]}' \\
  --speculative-config '{"method": "eagle3", "model":"/models/Qwen3-32B-eagle3", "enforce_eager": true, "num_speculative_tokens": 3}' \\
  --port 8000 \\
  --block-size 128 \\
  --gpu-memory-utilization 0.9
""",  # noqa: E501 (a documented command, kept on its line)
)

SPEC_QWEN35_27B_MTP = Tutorial(
    id="spec-qwen3.5-27b-qwen3_5_mtp-draft-eager-v0.18",
    profile=FIXTURES / "tut-spec-qwen3.5-27b-mtp-v0180.yaml",
    source="v0.18.0:docs/source/tutorials/models/Qwen3.5-27B.md:119",
    text="""
export VLLM_USE_MODELSCOPE=True
export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True
export HCCL_BUFFSIZE=512
export OMP_PROC_BIND=false
export OMP_NUM_THREADS=1
export TASK_QUEUE_ENABLE=1

vllm serve Eco-Tech/Qwen3.5-27B-w8a8-mtp \\
--host 0.0.0.0 \\
--port 8000 \\
--data-parallel-size 1 \\
--tensor-parallel-size 2 \\
--seed 1024 \\
--quantization ascend \\
--served-model-name qwen3.5 \\
--max-num-seqs 32 \\
--max-model-len 133000 \\
--max-num-batched-tokens 8096 \\
--trust-remote-code \\
--gpu-memory-utilization 0.90 \\
--no-enable-prefix-caching \\
--speculative_config '{"method": "qwen3_5_mtp", "num_speculative_tokens": 3, "enforce_eager": true}' \\
--compilation-config '{"cudagraph_mode":"FULL_DECODE_ONLY"}' \\
--additional-config '{"enable_cpu_binding":true}' \\
--async-scheduling
""",
    expected={
        "--data-parallel-size": "DP 1 is vLLM's default; ascendctl emits parallel sizes above 1 only",
        "--gpu-memory-utilization": "the same number: the profile's 0.9 is printed as 0.9, the tutorial writes 0.90",
        "--additional-config": "enable_cpu_binding is a vllm-ascend switch (engine.ascend.cpu_binding, another "
        "field); this fixture covers the speculative part and leaves it out",
    },
)

SPEC_GLM47_MTP = Tutorial(
    id="spec-glm-4.7-mtp-draft-eager-dp2-tp8-a3",
    profile=FIXTURES / "tut-spec-glm-4.7-mtp-a3-v0230.yaml",
    source="v0.23.0:docs/source/tutorials/models/GLM4.x.md:155",
    text="""
export HCCL_BUFFSIZE=512
export OMP_PROC_BIND=false
export OMP_NUM_THREADS=1
export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True
export HCCL_OP_EXPANSION_MODE=AIV
export VLLM_ASCEND_BALANCE_SCHEDULING=1
export VLLM_ASCEND_ENABLE_TOPK_OPTIMIZE=1

vllm serve Eco-Tech/GLM-4.7-W8A8-floatmtp \\
  --data-parallel-size 2 \\
  --tensor-parallel-size 8 \\
  --enable-expert-parallel \\
  --seed 1024 \\
  --served-model-name glm \\
  --max-model-len 133000 \\
  --max-num-batched-tokens 8192 \\
  --max-num-seqs 16 \\
  --quantization ascend \\
  --trust-remote-code \\
  --gpu-memory-utilization 0.9 \\
  --speculative-config '{"num_speculative_tokens": 3, "method":"mtp", "enforce_eager": true}' \\
  --compilation-config '{"cudagraph_capture_sizes": [1,2,4,8,16,32,64,128,256,512], "cudagraph_mode": "FULL_DECODE_ONLY"}' \\
  --additional-config '{"enable_shared_expert_dp": true, "ascend_fusion_config": {"fusion_ops_gmmswigluquant": false}}'
""",  # noqa: E501 (a documented command, kept on its line)
    expected={
        "--port": "ascendctl plans the profile's server.port explicitly (default 8000)",
        "--additional-config": "shared-expert DP and the GmmSwigluQuant fusion pass are vllm-ascend switches "
        "(engine.ascend, another field); this fixture covers the speculative part and leaves them out",
    },
    expected_env={
        "VLLM_ASCEND_BALANCE_SCHEDULING": "a vllm-ascend switch (engine.ascend.balance_scheduling, another field), "
        "left out of this fixture",
        "VLLM_ASCEND_ENABLE_TOPK_OPTIMIZE": "a vllm-ascend switch (engine.ascend.topk_optimize, another field), "
        "left out of this fixture",
    },
)

SPECULATIVE_TUTORIALS = [SPEC_QWEN3_32B_EAGLE3, SPEC_QWEN35_27B_MTP, SPEC_GLM47_MTP]

# ----------------------------------------------------------------------------------------------------
# Curated profiles (profiles/*.yaml) for today's models, each reproducing the tutorial its header cites, on the
# release of the A3 fixture host (v0.23.0). `source` is TAG:path:LINE (the `vllm serve` line). Every option a
# typed field says is said by it; what is left in engine.extra_args / additional_config / runtime.env has no
# typed field yet (the profile's comment says which).

_SWITCH_KEYS = (
    "engine.ascend switches: v0.23.0's code reads the `--additional-config` keys first and keeps the tutorial's "
    "VLLM_ASCEND_* variables only as fallbacks marked for removal (v0.23.0:vllm_ascend/ascend_config.py:361): "
    "the plan spells the keys"
)
_DEEPSEEK_MTP = "from vLLM 0.11 `deepseek_mtp` is an alias of `mtp`, which the profile's method is spelled as"

CURATED_DEEPSEEK_V32 = Tutorial(
    id="curated-deepseek-v3-2-w8a8-mtp-a3",
    profile=PROFILES / "deepseek-v3-2-w8a8-mtp-a3.yaml",
    source="v0.23.0:docs/source/tutorials/models/DeepSeek-V3.2.md:149",
    text="""
export HCCL_OP_EXPANSION_MODE="AIV"
export OMP_PROC_BIND=false
export OMP_NUM_THREADS=10
export VLLM_USE_V1=1
export HCCL_BUFFSIZE=200
export VLLM_ASCEND_ENABLE_MLAPO=1
export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True
export VLLM_ASCEND_ENABLE_FLASHCOMM1=1

vllm serve /root/.cache/modelscope/hub/models/vllm-ascend/DeepSeek-V3.2-W8A8 \\
--host 0.0.0.0 \\
--port 8000 \\
--data-parallel-size 2 \\
--tensor-parallel-size 8 \\
--quantization ascend \\
--seed 1024 \\
--served-model-name deepseek_v3_2 \\
--enable-expert-parallel \\
--max-num-seqs 16 \\
--max-model-len 8192 \\
--max-num-batched-tokens 4096 \\
--trust-remote-code \\
--no-enable-prefix-caching \\
--gpu-memory-utilization 0.92 \\
--compilation-config '{"cudagraph_mode": "FULL_DECODE_ONLY"}' \\
--speculative-config '{"num_speculative_tokens": 3, "method": "deepseek_mtp"}'
""",
    expected={
        "--additional-config": _SWITCH_KEYS + " (enable_mlapo, enable_flashcomm1)",
        "--speculative-config": _DEEPSEEK_MTP,
    },
    expected_env={
        "VLLM_ASCEND_ENABLE_MLAPO": "spelled as the `enable_mlapo` key instead (see --additional-config)",
        "VLLM_ASCEND_ENABLE_FLASHCOMM1": "spelled as the `enable_flashcomm1` key instead (see --additional-config)",
        "VLLM_USE_V1": "vLLM ≥ 0.13 no longer reads VLLM_USE_V1 (vllm/envs.py): not planned for v0.23.0",
    },
    spelled=(
        "engine.ascend.mlapo",
        "engine.ascend.flashcomm1",
    ),
)

CURATED_GLM5_W4A8 = Tutorial(
    id="curated-glm-5-w4a8-mtp-a3",
    profile=PROFILES / "glm-5-w4a8-mtp-a3.yaml",
    source="v0.23.0:docs/source/tutorials/models/GLM5.md:277",
    text="""
export HCCL_OP_EXPANSION_MODE="AIV"
export OMP_PROC_BIND=false
export OMP_NUM_THREADS=1
export HCCL_BUFFSIZE=200
export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True
export VLLM_ASCEND_BALANCE_SCHEDULING=1
export VLLM_ASCEND_ENABLE_FLASHCOMM1=1

vllm serve /root/.cache/modelscope/hub/models/vllm-ascend/GLM5-w4a8 \\
--host 0.0.0.0 \\
--port 8077 \\
--data-parallel-size 1 \\
--tensor-parallel-size 16 \\
--enable-expert-parallel \\
--seed 1024 \\
--served-model-name glm-5 \\
--max-num-seqs 16 \\
--max-model-len 200000 \\
--max-num-batched-tokens 4096 \\
--trust-remote-code \\
--gpu-memory-utilization 0.95 \\
--quantization ascend \\
--enable-chunked-prefill \\
--enable-prefix-caching \\
--additional-config '{"multistream_overlap_shared_expert": true}' \\
--compilation-config '{"cudagraph_mode": "FULL_DECODE_ONLY"}' \\
--hf-overrides '{"use_index_cache": true, "index_topk_freq": 4}' \\
--speculative-config '{"num_speculative_tokens": 3, "method": "deepseek_mtp", "enforce_eager": true}'
""",
    expected={
        "--data-parallel-size": "DP 1 is vLLM's default; ascendctl emits parallel sizes above 1 only",
        "--additional-config": _SWITCH_KEYS + " (enable_balance_scheduling, enable_flashcomm1) next to the "
        "tutorial's multistream_overlap_shared_expert",
        "--speculative-config": _DEEPSEEK_MTP,
    },
    expected_env={
        "VLLM_ASCEND_BALANCE_SCHEDULING": "spelled as the `enable_balance_scheduling` key instead "
        "(see --additional-config)",
        "VLLM_ASCEND_ENABLE_FLASHCOMM1": "spelled as the `enable_flashcomm1` key instead (see --additional-config)",
    },
    spelled=(
        "engine.ascend.balance_scheduling",
        "engine.ascend.flashcomm1",
    ),
)

CURATED_KIMI_K25 = Tutorial(
    id="curated-kimi-k2-5-w4a8-eagle3-a3",
    profile=PROFILES / "kimi-k2-5-w4a8-eagle3-a3.yaml",
    source="v0.23.0:docs/source/tutorials/models/Kimi-K2.5.md:163",
    text="""
export LD_PRELOAD=/usr/lib/aarch64-linux-gnu/libjemalloc.so.2:$LD_PRELOAD
export HCCL_OP_EXPANSION_MODE="AIV"
export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True
export OMP_PROC_BIND=false
export OMP_NUM_THREADS=1
export TASK_QUEUE_ENABLE=1

export HCCL_BUFFSIZE=800
export VLLM_ASCEND_ENABLE_MLAPO=1
export VLLM_ASCEND_ENABLE_FLASHCOMM1=1
export VLLM_ASCEND_BALANCE_SCHEDULING=1

vllm serve Eco-Tech/Kimi-K2.5-w4a8 \\
  --host 0.0.0.0 \\
  --port 8088 \\
  --quantization ascend \\
  --served-model-name kimi_k25 \\
  --allowed-local-media-path / \\
  --trust-remote-code \\
  --no-enable-prefix-caching \\
  --seed 1024 \\
  --tensor-parallel-size 4 \\
  --data-parallel-size 4 \\
  --enable-expert-parallel \\
  --max-num-seqs 64 \\
  --max-model-len 32768 \\
  --max-num-batched-tokens 16384 \\
  --gpu-memory-utilization 0.9 \\
  --compilation-config '{"cudagraph_mode":"FULL_DECODE_ONLY"}' \\
  --speculative-config '{"method":"eagle3", "model":"lightseekorg/kimi-k2.5-eagle3", "num_speculative_tokens":3}' \\
  --mm-encoder-tp-mode data
""",
    expected={
        "--allowed-local-media-path": "left out of the curated profile on purpose: `/` lets any client make the "
        "server read any local file (the profile's header says how to add a narrow directory)",
        "--additional-config": _SWITCH_KEYS + " (enable_mlapo, enable_flashcomm1, enable_balance_scheduling)",
    },
    expected_env={
        "LD_PRELOAD": _JEMALLOC_ENV,
        "VLLM_ASCEND_ENABLE_MLAPO": "spelled as the `enable_mlapo` key instead (see --additional-config)",
        "VLLM_ASCEND_ENABLE_FLASHCOMM1": "spelled as the `enable_flashcomm1` key instead (see --additional-config)",
        "VLLM_ASCEND_BALANCE_SCHEDULING": "spelled as the `enable_balance_scheduling` key instead "
        "(see --additional-config)",
    },
    warnings=("matrix: W4A8 quantization does not work for multimodal models",),
    spelled=("engine.ascend.mlapo",),
)

CURATED_QWEN3_NEXT = Tutorial(
    id="curated-qwen3-next-80b-a3b-tp4-a3",
    profile=PROFILES / "qwen3-next-80b-a3b-a3.yaml",
    source="v0.23.0:docs/source/tutorials/models/Qwen3-Next.md:133",
    text="""
vllm serve Qwen/Qwen3-Next-80B-A3B-Instruct --served-model-name qwen3_next --tensor-parallel-size 4 --max-model-len 32768 --gpu-memory-utilization 0.8 --max-num-batched-tokens 4096 --compilation-config '{"cudagraph_mode":"FULL_DECODE_ONLY"}'
""",  # noqa: E501 (a documented command, kept on its line)
    expected={"--port": "ascendctl plans the profile's server.port explicitly (default 8000)"},
    warnings=("Qwen3-Next is experimental on a3 in v0.23.0's table",),
)

CURATED_MINIMAX_M27 = Tutorial(
    id="curated-minimax-m2-7-w8a8-tools-a3",
    profile=PROFILES / "minimax-m2-7-w8a8-tools-a3.yaml",
    source="v0.23.0:docs/source/tutorials/models/MiniMax-M2.md:197 (tool-calling flags: lines 243-245; "
    "`/path/to/weight` filled in as /models)",
    text="""
export HCCL_OP_EXPANSION_MODE="AIV"
export HCCL_BUFFSIZE=1024
export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True
export OMP_NUM_THREADS=1
export LD_PRELOAD=/usr/lib/aarch64-linux-gnu/libjemalloc.so.2:$LD_PRELOAD
export TASK_QUEUE_ENABLE=1

export VLLM_ASCEND_BALANCE_SCHEDULING=0

vllm serve /models/MiniMax-M2.7-w8a8-QuaRot \\
    --served-model-name "MiniMax-M2.7" \\
    --host 0.0.0.0 \\
    --port 8000 \\
    --trust-remote-code \\
    --quantization ascend \\
    --compilation-config '{"cudagraph_mode": "FULL_DECODE_ONLY"}' \\
    --async-scheduling \\
    --additional-config '{"enable_cpu_binding":true, "enable_fused_mc2":true, "enable_flashcomm1":true, "weight_nz_mode":true}' \\
    --enable-expert-parallel \\
    --tensor-parallel-size 4 \\
    --data-parallel-size 4 \\
    --max-num-seqs 48 \\
    --max-model-len 40690 \\
    --max-num-batched-tokens 16384 \\
    --gpu-memory-utilization 0.85 \\
    --speculative_config '{"enforce_eager": true, "method": "eagle3", "model": "/models/Eagle3", "num_speculative_tokens": 3}' \\
    --enable-auto-tool-choice \\
    --tool-call-parser minimax_m2 \\
    --reasoning-parser minimax_m2_append_think
""",  # noqa: E501 (a documented command, kept on its line)
    expected={
        "--additional-config": "engine.ascend.fused_mc2 is planned as `enable_fused_mc2: 1` (the mode number the "
        "release reads; the tutorial's `true` is the same mode 1), and balance_scheduling: false as the "
        "`enable_balance_scheduling` key (" + _SWITCH_KEYS + ")",
    },
    expected_env={
        "LD_PRELOAD": _JEMALLOC_ENV,
        "VLLM_ASCEND_BALANCE_SCHEDULING": "spelled as `enable_balance_scheduling: false` instead "
        "(see --additional-config)",
    },
)

CURATED_QWEN3_VL_30B = Tutorial(
    id="curated-qwen3-vl-30b-a3b-image-only-a3",
    profile=PROFILES / "qwen3-vl-30b-a3b-a3.yaml",
    source="v0.23.0:docs/source/tutorials/models/Qwen3-VL-30B-A3B-Instruct.md:267",
    text="""
export VLLM_USE_MODELSCOPE=True
export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True
export HCCL_OP_EXPANSION_MODE="AIV"
export HCCL_BUFFSIZE=1024
export OMP_NUM_THREADS=1
export OMP_PROC_BIND=false
export TASK_QUEUE_ENABLE=1
export VLLM_ASCEND_ENABLE_FLASHCOMM1=1
export VLLM_ASCEND_ENABLE_FUSED_MC2=1

vllm serve Qwen/Qwen3-VL-30B-A3B-Instruct \\
  --host 0.0.0.0 \\
  --port 8000 \\
  --served-model-name qwen3-vl-30b \\
  --data-parallel-size 1 \\
  --tensor-parallel-size 2 \\
  --enable-expert-parallel \\
  --seed 1024 \\
  --max-num-seqs 32 \\
  --max-model-len 32768 \\
  --max-num-batched-tokens 16384 \\
  --gpu-memory-utilization 0.9 \\
  --no-enable-prefix-caching \\
  --mm-processor-cache-gb 0 \\
  --limit-mm-per-prompt.image 1 \\
  --limit-mm-per-prompt.video 0 \\
  --compilation-config '{"cudagraph_mode":"FULL_DECODE_ONLY","cudagraph_capture_sizes":[1,2,4,8,16,24,32]}'
""",
    expected={
        "--data-parallel-size": "DP 1 is vLLM's default; ascendctl emits parallel sizes above 1 only",
        "--additional-config": _SWITCH_KEYS + " (enable_flashcomm1; fused MC2 as its mode number "
        "`enable_fused_mc2: 1`)",
    },
    expected_env={
        "VLLM_ASCEND_ENABLE_FLASHCOMM1": "spelled as the `enable_flashcomm1` key instead (see --additional-config)",
        "VLLM_ASCEND_ENABLE_FUSED_MC2": "spelled as the `enable_fused_mc2` key instead (see --additional-config)",
    },
    spelled=(
        "engine.ascend.flashcomm1",
        "engine.ascend.fused_mc2",
    ),
)

CURATED_TUTORIALS = [
    CURATED_DEEPSEEK_V32,
    CURATED_GLM5_W4A8,
    CURATED_KIMI_K25,
    CURATED_QWEN3_NEXT,
    CURATED_MINIMAX_M27,
    CURATED_QWEN3_VL_30B,
]

# A release's tutorial for a model its own table omits: planned as documented, the tag's caveat note a warning.
QWEN3_NEXT_V0102 = Tutorial(
    id="qwen3-next-tp4-a2-v0.10.2rc1",
    profile=FIXTURES / "qwen3-next-tp4-a2-v0102rc1.yaml",
    source="v0.10.2rc1:docs/source/tutorials/multi_npu_qwen3_next.md:38,89",
    text="""
export VLLM_USE_MODELSCOPE=True
vllm serve Qwen/Qwen3-Next-80B-A3B-Instruct --tensor-parallel-size 4 --max-model-len 4096 \
  --gpu-memory-utilization 0.7 --enforce-eager
""",
    expected={"--port": "ascendctl plans the profile's server.port explicitly (default 8000)"},
    warnings=("doesn't work with this release",),
)


# ----------------------------------------------------------------------------------------------------
# Prefill/decode disaggregation: one profile, an instance per role; each instance's command against the tutorial's.

_LLMDD_TEXT = """
export ASCEND_RT_VISIBLE_DEVICES={device}
export HCCL_IF_IP=192.0.0.1  # node ip
export GLOO_SOCKET_IFNAME="eth0"  # network card name
export TP_SOCKET_IFNAME="eth0"
export HCCL_SOCKET_IFNAME="eth0"
export DISAGGREGATED_PREFILL_RANK_TABLE_PATH="/path/to/your/generated/ranktable.json"
export OMP_PROC_BIND=false
export OMP_NUM_THREADS=10
export VLLM_ASCEND_LLMDD_RPC_PORT={rpc}

vllm serve /model/Qwen2.5-VL-7B-Instruct  \\
  --host 0.0.0.0 \\
  --port {port} \\
  --tensor-parallel-size 1 \\
  --no-enable-prefix-caching \\
  --seed 1024 \\
  --served-model-name qwen25vl \\
  --max-model-len 40000  \\
  --max-num-batched-tokens 40000  \\
  --trust-remote-code \\
  --gpu-memory-utilization 0.9  \\
  --kv-transfer-config  \\
  '{{"kv_connector": "LLMDataDistCMgrConnector",
    "kv_buffer_device": "npu",
    "kv_role": "{role}",
    "kv_parallel_size": 1,
    "kv_port": "20001",
    "engine_id": "0",
    "kv_connector_module_path": "vllm_ascend.distributed.llmdatadist_c_mgr_connector"
  }}'
"""
_LLMDD_KV = (
    "kv_port as the int vLLM's KVTransferConfig.kv_port is (the tutorial's string is coerced); no "
    "kv_connector_module_path: v0.11.0 registers its connectors at start-up (the `ascend_kv_connector` entry point, "
    "v0.11.0:setup.py:396, key table kv_connectors registered_by entry-point)"
)
_OWN_ENGINE_ID = "; engine_id 1: every instance gets its own (the connectors match peers by engine id)"
LLMDATADIST_V0110 = [
    Tutorial(
        id=f"qwen2.5-vl-7b-pd-llmdatadist-{role}-a2-v0.11.0",
        profile=FIXTURES / "qwen2.5-vl-7b-pd-llmdatadist-a2-v0110.yaml",
        source=f"v0.11.0:docs/source/tutorials/single_node_pd_disaggregation_llmdatadist.md:{line}",
        text=_LLMDD_TEXT.format(device=device, rpc=rpc, port=port, role=kv_role),
        instance=f"{role}-0",
        expected={
            "--tensor-parallel-size": "TP 1 is vLLM's default; ascendctl emits parallel sizes above 1 only",
            "--kv-transfer-config": _LLMDD_KV + (_OWN_ENGINE_ID if role == "decode" else ""),
        },
    )
    for role, kv_role, device, rpc, port, line in (
        ("prefill", "kv_producer", 0, 5959, 13700, 77),
        ("decode", "kv_consumer", 1, 5979, 13701, 114),
    )
]

_GLM52_PD_TEXT = """
export HCCL_IF_IP={ip}
export GLOO_SOCKET_IFNAME=eth0
export TP_SOCKET_IFNAME=eth0
export HCCL_SOCKET_IFNAME=eth0

export VLLM_ASCEND_ENABLE_NZ=1
export HCCL_OP_EXPANSION_MODE="AIV"
export OMP_PROC_BIND=false
export OMP_NUM_THREADS=20
export HCCL_BUFFSIZE=768
export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True
export VLLM_WORKER_MULTIPROC_METHOD=spawn
export TASK_QUEUE_ENABLE=1
export VLLM_MOONCAKE_ABORT_REQUEST_TIMEOUT=480

vllm serve /models/GLM-5.2-w8a8 \\
  --seed 1024 \\
  --host 0.0.0.0 \\
  --port {port} \\
  --served-model-name glm-52 \\
  --max-model-len 1024000 \\
  --max-num-batched-tokens {batched} \\
  --gpu-memory-utilization {util} \\
  {server_role_args} \\
  --max-num-seqs {seqs} \\
  --data-parallel-size 4 \\
  --data-parallel-size-local 2 \\
  --data-parallel-start-rank {start} \\
  --data-parallel-address {head} \\
  --data-parallel-rpc-port {rpc} \\
  --pipeline-parallel-size 1 \\
  --tensor-parallel-size 8 \\
  --prefill-context-parallel-size 1 \\
  --decode-context-parallel-size 8 \\
  --cp-kv-cache-interleave-size 128 \\
  {graph} \\
  --additional-config '{additional}' \\
  --speculative-config '{{"num_speculative_tokens": {spec}, "method": "deepseek_mtp", "enforce_eager": true}}' \\
  --quantization ascend \\
  --enable-expert-parallel \\
  --safetensors-load-strategy prefetch \\
  --kv-transfer-config \\
  '{{"kv_connector": "MooncakeConnectorV1",
    "kv_role": "{kv_role}",
    "kv_port": "{kv_port}",
    "engine_id": "{engine_id}",
    "kv_connector_extra_config": {{
      "use_ascend_direct": true,
      "prefill": {{
        "dp_size": 4,
        "tp_size": 8
      }},
      "decode": {{
        "dp_size": 4,
        "tp_size": 8
      }}
    }}
  }}'
"""
_GLM52_KV = (
    "kv_port 36000/36100 instead of the tutorial's 30000/30100: on 16-NPU A3 nodes Mooncake's transport picks random "
    "ports below 36000 (the release's own kv_port guide, rule plan.pd.kv-port-range), and an int as "
    "KVTransferConfig.kv_port is; no use_ascend_direct: v0.25.1rc1 reads no such key (unread since v0.12.0rc1)"
)
_GLM52_ADDITIONAL = (
    "the typed switches' spellings: scheduler_config.recompute_scheduler_enable (v0.25.1rc1 deprecates the top-level "
    "key), fuse_muls_add under ascend_compilation_config (where v0.25.1rc1 reads it); enable_sparse_sfa_c8 and "
    "enable_sparse_li_c8 left out: v0.25.1rc1 reads neither (read by v0.23.0rc1 … v0.23.0.post1 only)"
)


def _glm52_additional(fc1: str) -> str:
    """The tutorial's `--additional-config` (v0.25.1rc1:docs/source/tutorials/models/GLM5.2.md:1300,1371): the same
    keys on both roles, FlashComm1 and DSA context parallel on for prefill only."""
    on = fc1 == "true"
    return json.dumps(
        {
            "enable_flashcomm1": on, "enable_dsa_cp": on,
            "ascend_compilation_config": {"enable_npugraph_ex": True, "enable_static_kernel": False},
            "fuse_muls_add": True, "multistream_overlap_shared_expert": True, "enable_mc2_hierarchy_comm": False,
            "enable_sparse_sfa_c8": True, "enable_sparse_li_c8": True, "enable_cpu_binding": True,
            "recompute_scheduler_enable": True,
        }
    )  # fmt: skip


_FULL_DECODE_ONLY = """--compilation-config '{"cudagraph_mode": "FULL_DECODE_ONLY"}'"""
_GLM52_DEFAULTS = "vLLM's default; ascendctl emits it only when it differs"
GLM52_PD = [
    Tutorial(
        id=f"glm-5.2-pd-{role}-node{node}-a3-v0.25.1rc1",
        profile=PROFILES / "glm-5-2-pd-a3.yaml",
        source=f"v0.25.1rc1:docs/source/tutorials/models/GLM5.2.md:{line}",
        text=_GLM52_PD_TEXT.format(
            ip=ip, port=port, batched=batched, util=util, seqs=seqs, start=2 * node, head=head, rpc=rpc,
            server_role_args="--headless" if node else "--api-server-count 1", graph=graph,
            additional=_glm52_additional(fc1), spec=spec,
            kv_role=kv_role, kv_port=30000 if role == "prefill" else 30100, engine_id=0 if role == "prefill" else 1,
        ),
        node=node,
        instance=f"{role}-0",
        expected={
            "--kv-transfer-config": _GLM52_KV,
            "--additional-config": _GLM52_ADDITIONAL,
            "--pipeline-parallel-size": _GLM52_DEFAULTS,
            "--prefill-context-parallel-size": _GLM52_DEFAULTS,
            "--speculative-config": _DEEPSEEK_MTP,
            **({"--data-parallel-start-rank": "the head's start rank 0 is vLLM's default"} if node == 0 else {}),
            **({"--api-server-count": "one API server is vLLM's default"} if node == 0 else {}),
            **({"--host": "a headless node serves no API", "--port": "a headless node serves no API"} if node else {}),
        },
        expected_env={
            "VLLM_HOST_IP": "each node's own address, which the tutorial leaves vLLM to find",
            "VLLM_ASCEND_ENABLE_NZ": "engine.weight_nz quantized is planned as `weight_nz_mode: 1`: v0.25.1rc1 reads "
            "the key first, the variable only as a fallback to drop (vllm_ascend/ascend_config.py:217-224,283-294)",
        },
    )
    for role, node, ip, head, port, batched, util, seqs, rpc, graph, fc1, spec, kv_role, line in (
        ("prefill", 0, "192.0.2.10", "192.0.2.10", 9081, 16384, 0.75, 8, 16591, "--enforce-eager", "true", 1, "kv_producer", 1261),  # noqa: E501
        ("prefill", 1, "192.0.2.11", "192.0.2.10", 9081, 16384, 0.75, 8, 16591, "--enforce-eager", "true", 1, "kv_producer", 1261),  # noqa: E501
        ("decode", 0, "192.0.2.20", "192.0.2.20", 9900, 128, 0.93, 32, 16600, _FULL_DECODE_ONLY, "false", 3, "kv_consumer", 1332),  # noqa: E501
        ("decode", 1, "192.0.2.21", "192.0.2.20", 9900, 128, 0.93, 32, 16600, _FULL_DECODE_ONLY, "false", 3, "kv_consumer", 1332),  # noqa: E501
    )
]  # fmt: skip

TUTORIALS: list[Tutorial] = [
    QWEN3_32B_W8A8,
    QWEN3_32B_W4A4,
    QWEN3_8B_W8A8SC_DUO,
    QWEN3_235B_TP8,
    QWEN3_235B_A3_HYBRID,
    QWEN3_235B_RAY_HEAD,
    DEEPSEEK_R1_A3,
    *DEEPSEEK_R1_2NODE,
    *DEEPSEEK_V31_TORCHAIR,
    *TWO_NODE_TUTORIALS,
    *SPECULATIVE_TUTORIALS,
    EPLB_MRV1,
    EPLB_MRV2,
    QWEN3_VL,
    QWEN3_EMBEDDING,
    QWEN3_RERANKER,
    *ASCEND_TUTORIALS,
    SERVE_QWEN3_VL_RERANKER,
    SERVE_QWEN3_VL_30B_V014,
    SERVE_QWEN3_VL_30B_A3,
    SERVE_HY3_PREVIEW,
    *CURATED_TUTORIALS,
    QWEN3_NEXT_V0102,
    *LLMDATADIST_V0110,
    *GLM52_PD,
]
