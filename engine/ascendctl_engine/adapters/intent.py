"""The engine's own input: what to run, stated once, with no release-specific spelling in it.

`ascendctl`'s planner fills an `EngineIntent` from a resolved deployment (profile × matrix × host); the
era adapters (`ascendctl_engine.adapters`) turn it into the argv and env one vLLM(-Ascend) release
understands. Every value here is already validated; `sources` says where each one came from (dotted
intent path → provenance text such as "user: engine.parallel.tensor") so the adapters can explain
the flags they emit.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ascendctl_engine import defaults
from ascendctl_engine.spec import SecretRef, Supervision
from ascendctl_engine.vocab import (
    Backend,
    EplbImplementation,
    EplbMode,
    Executor,
    GraphMode,
    KvCacheDtype,
    ModelArch,
    SpeculativeMethod,
    Task,
)
from ascendctl_engine.vocab import HardwareFamily as Hardware


@dataclass(frozen=True)
class ModelIntent:
    source: str  # what vLLM loads: hub id or local directory (argv[2])
    served_name: str | None = None
    revision: str | None = None
    dtype: str = "auto"
    quantization: str = "none"  # the profile's Quantization name (`none`, `auto`, `w8a8`, ...)
    quant_method: str | None = None  # the `--quantization` method it loads with (`ascend`, ...); None: float
    max_model_len: int | None = None
    trust_remote_code: bool = False
    task: Task = "generate"
    hf_overrides: Mapping[str, Any] | None = None
    arch: ModelArch = "dense"
    multimodal: bool = False
    num_heads: int | None = None  # from config.json when known
    num_experts: int | None = None


@dataclass(frozen=True)
class ParallelIntent:
    tensor: int = 1
    pipeline: int = 1
    data: int = 1
    data_per_node: int | None = None  # DP ranks per node; None: data // nodes
    expert: bool = False
    executor: Executor = "mp"
    executor_explicit: bool = False  # the profile names the executor (emit the flag even when default)


@dataclass(frozen=True)
class EplbIntent:
    mode: EplbMode = "off"
    implementation: EplbImplementation = "auto"
    redundant_experts: int = 0
    expert_map_path: str | None = None
    record_path: str | None = None
    heat_collection_interval: int | None = None
    algorithm_interval: int | None = None
    policy_type: int | None = None


@dataclass(frozen=True)
class SchedulerIntent:
    max_num_seqs: int | None = None
    max_num_batched_tokens: int | None = None
    prefix_caching: bool | None = None
    chunked_prefill: bool | None = None
    async_scheduling: bool | None = None


@dataclass(frozen=True)
class SpeculativeIntent:
    method: SpeculativeMethod
    num_tokens: int
    model: str | None = None
    draft_tensor_parallel: int | None = None  # None: vLLM's default (the target's tensor-parallel size)
    draft_eager: bool | None = None  # None: the drafter follows the target's graph mode


@dataclass(frozen=True)
class LoraIntent:
    adapters: tuple[tuple[str, str], ...] = ()  # (name, path) loaded at start; () = loaded later via the API
    max_rank: int | None = None
    max_loras: int | None = None


@dataclass(frozen=True)
class ServingIntent:
    """What the API server does with requests (profile `serving`); spelled by `adapters.serving`."""

    tool_call_parser: str | None = None
    auto_tool_choice: bool = False
    reasoning_parser: str | None = None
    chat_template: str | None = None  # a path, never the template text
    limit_mm_per_prompt: Mapping[str, int] = field(default_factory=dict)
    mm_processor_cache_gb: float | None = None
    lora: LoraIntent | None = None  # None: LoRA off
    prefill_context_parallel: int | None = None
    decode_context_parallel: int | None = None
    structured_outputs_backend: str | None = None


@dataclass(frozen=True)
class AscendIntent:
    """vllm-ascend feature switches and host tuning (profile `engine.ascend`; spelled by `adapters.ascend_switches`).
    A switch is on (True), off (False) or None: the release's own default, nothing emitted."""

    flashcomm1: bool | None = None
    cpu_binding: bool | None = None
    multistream_overlap_shared_expert: bool | None = None
    mlapo: bool | None = None
    fused_mc2: bool | None = None
    balance_scheduling: bool | None = None
    weight_prefetch: bool | None = None
    recompute_scheduler: bool | None = None
    shared_expert_dp: bool | None = None
    dsa_cp: bool | None = None
    reduce_sample: bool | None = None
    mc2_hierarchy_comm: bool | None = None
    multistream_dsa_preprocess: bool | None = None
    dp_allreduce_on_npu: bool | None = None
    prefetch_mlp: bool | None = None
    topk_optimize: bool | None = None
    jemalloc: str | None = None  # the jemalloc library to preload (`LD_PRELOAD`), a path on the host


@dataclass(frozen=True)
class NodeIntent:
    """One node; the fields after `interface` are the profile's per-node overrides (`network.nodes[i]`)."""

    index: int
    address: str | None = None
    interface: str | None = None
    device_utilization: float | None = None  # wins over EngineIntent.device_utilization on this node
    env: Mapping[str, str] = field(default_factory=dict)  # set after user_env
    extra_args: tuple[str, ...] = ()  # appended after EngineIntent.extra_args


@dataclass(frozen=True)
class ServerIntent:
    host: str = defaults.SERVER_HOST
    port: int = defaults.SERVER_PORT
    api_server_count: int | None = None  # `--api-server-count` (head only); None: vLLM's default
    api_key: SecretRef | None = None
    shutdown_timeout: int = defaults.SHUTDOWN_TIMEOUT_S
    shutdown_timeout_explicit: bool = False


@dataclass(frozen=True)
class HardwareTraits:
    """What the target hardware family can do. The planner fills it from the support matrix's hardware table
    (the one owner of hardware limits); adapters read traits, never family names."""

    dtypes: tuple[str, ...] = ("bfloat16", "float16")  # weight dtypes the family runs
    npugraph_ex: bool = True  # whether the npugraph_ex graph optimisation may stay on
    max_capture_sizes: int | None = None  # most graph capture sizes the platform keeps (None: no cap)
    graph_min_cann: str | None = None  # oldest CANN with which graph compilation works
    few_streams: bool = False  # few streams: capture few sizes by default
    hccl_aiv: bool = True  # HCCL may run on the AI vector cores (HCCL_OP_EXPANSION_MODE=AIV)
    label: str = ""  # the family's name, for messages


@dataclass(frozen=True)
class EngineIntent:
    backend: Backend
    vllm: str  # upstream vLLM version the release pins (pip form, e.g. "0.13.0")
    model: ModelIntent
    hardware: Hardware | None = None
    traits: HardwareTraits = field(default_factory=HardwareTraits)  # of `hardware` (defaults: no limits)
    vllm_ascend: str | None = None  # vllm-ascend version (tag or pip form), npu only
    cann: str | None = None  # CANN version: the host's when known, else the release row's
    driver: str | None = None  # Ascend HDK/driver version seen on the host (None: not probed)
    graph_mode: GraphMode = "auto"
    capture_sizes: tuple[int, ...] | None = None
    parallel: ParallelIntent = field(default_factory=ParallelIntent)
    nodes: tuple[NodeIntent, ...] = (NodeIntent(0),)
    devices_per_node: int = 1
    visible_devices: tuple[int, ...] | None = None
    dp_rpc_port: int = defaults.DP_RPC_PORT
    ray_port: int = defaults.RAY_PORT
    eplb: EplbIntent = field(default_factory=EplbIntent)
    scheduler: SchedulerIntent = field(default_factory=SchedulerIntent)
    speculative: SpeculativeIntent | None = None
    ascend: AscendIntent = field(default_factory=AscendIntent)
    serving: ServingIntent = field(default_factory=ServingIntent)
    device_utilization: float | None = None
    cpu_kv_cache_gib: float | None = None
    kv_cache_dtype: KvCacheDtype = "auto"  # `auto`: the engine's own choice (the model dtype)
    cpu_cores: int | None = None  # logical CPUs of the host, when probed (CPU backend thread binding)
    seed: int | None = None
    server: ServerIntent = field(default_factory=ServerIntent)
    supervision: Supervision | None = None  # carried onto every command (the planner fills it from the profile)
    extra_args: tuple[str, ...] = ()
    additional_config: Mapping[str, Any] = field(default_factory=dict)
    user_env: Mapping[str, str] = field(default_factory=dict)
    secret_env: Mapping[str, SecretRef] = field(default_factory=dict)  # runtime.secrets: variable → its source
    sources: Mapping[str, str] = field(default_factory=dict)

    @property
    def node_count(self) -> int:
        return len(self.nodes)

    def source(self, path: str, default: str = "profile default") -> str:
        """Provenance of an intent value (dotted path as the planner recorded it)."""
        return self.sources.get(path, default)
