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
from ascendctl_engine.vocab import Backend, EplbImplementation, EplbMode, Executor, GraphMode, ModelArch, Task
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
    method: str
    num_tokens: int
    model: str | None = None


@dataclass(frozen=True)
class NodeIntent:
    index: int
    address: str | None = None
    interface: str | None = None


@dataclass(frozen=True)
class ServerIntent:
    host: str = defaults.SERVER_HOST
    port: int = defaults.SERVER_PORT
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
    device_utilization: float | None = None
    cpu_kv_cache_gib: float | None = None
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
