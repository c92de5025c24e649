"""The profile's sections (schema v1): one strict pydantic model per section, each field declared once with its
default and description. The planner validates a profile into these and the era adapters read them as they
are (`ascendctl_engine.adapters.intent.EngineIntent` carries them); `ascendctl.schema.profile.Profile` composes
them into the document an operator writes.

A profile states *intent* (graph mode, parallel layout, EPLB, scheduler limits). It holds no defaults that
depend on the host or the release: the planner turns intent into the flags of a given release.
"""

from typing import Annotated, Any, ClassVar, Literal

from pydantic import AfterValidator, Field, JsonValue, field_validator, model_validator

from ascendctl_engine import defaults
from ascendctl_engine.argv_items import ArgItem, parse_args
from ascendctl_engine.secret_names import API_KEY_VAR, POSIX_NAME_TEXT, is_posix_name, is_switch
from ascendctl_engine.sections.ascend import AscendSpec
from ascendctl_engine.sections.base import (
    Backend,
    DType,
    EplbMode,
    GraphMode,
    HardwareFamily,
    Quantization,
    StrictModel,
    Task,
)
from ascendctl_engine.sections.fields import (
    ARGV_WORD,
    HUB_ID,
    INT32_MAX,
    MAX_DEVICES_PER_NODE,
    MAX_NODES,
    MAX_PARALLEL,
    MAX_PORT,
    MAX_TIMEOUT_S,
    ArgvLine,
    BindHost,
    EnvName,
    IpAddress,
    NicName,
    NonEmptyLine,
    SingleLine,
)
from ascendctl_engine.sections.secret_source import SecretSource
from ascendctl_engine.spec import REDACTED, is_secret_name
from ascendctl_engine.vocab import (
    SPECULATIVE_DRAFT_METHODS,
    SPECULATIVE_MODEL_FREE,
    EplbImplementation,
    Executor,
    KvCacheDtype,
    SpeculativeMethod,
)

Port = Annotated[int, Field(ge=1, le=MAX_PORT)]
# Every count reaches an int32 somewhere (a vLLM flag, a Kubernetes field): bounded here, once.
PositiveInt = Annotated[int, Field(ge=1, le=INT32_MAX)]
Count = Annotated[int, Field(ge=0, le=INT32_MAX)]
ParallelSize = Annotated[int, Field(ge=1, le=MAX_PARALLEL)]


def _flags_or_values(value: list[str]) -> list[str]:
    parse_args(value)  # a token that is neither a flag nor a value of one is a located profile error
    return value


# `vllm serve` arguments as a profile gives them (`engine.extra_args`, `network.nodes[i].extra_args`)
ServeArgs = Annotated[list[SingleLine], AfterValidator(_flags_or_values)]


# `model.source` schemes naming a model hub: the id after them is what vLLM loads and what every consumer (the
# matrix family lookup, the model caches, the served name) sees (`ModelSpec.location`).
HubScheme = Literal["hf", "modelscope"]
HUB_SCHEMES: tuple[HubScheme, ...] = ("hf", "modelscope")


class ModelSpec(StrictModel):
    source: Annotated[
        ArgvLine,
        Field(
            description=(
                "What to serve: a hub id (`org/name`, or `hf:org/name`: the same, from Hugging Face), "
                "`modelscope:org/name` (the engine downloads it from ModelScope, `VLLM_USE_MODELSCOPE=True`; "
                "the plan reads config.json from the ModelScope cache), a local directory, or `prepared:NAME` for "
                "a model made by `ascendctl model prepare NAME`."
            ),
        ),
    ]
    architecture: Annotated[
        str | None,
        Field(
            pattern=r"^[A-Za-z_][A-Za-z0-9_]{0,127}$",
            description=(
                "The Hugging Face `architectures` name (e.g. `DeepseekV3ForCausalLM`): says what the model is "
                "(dense / MoE / MLA) when its config.json cannot be read; config.json wins when it can."
            ),
        ),
    ] = None
    served_name: Annotated[
        ArgvLine | None, Field(description="Name clients use in the OpenAI API (`--served-model-name`).")
    ] = None
    revision: Annotated[ArgvLine | None, Field(description="Hub revision (branch, tag or commit) to load.")] = None
    dtype: Annotated[DType, Field(description="Weight/activation dtype; 300I Duo supports float16 only.")] = "auto"
    quantization: Annotated[
        Quantization,
        Field(
            description=(
                "Weight quantization of the checkpoint: `none` (float), `auto` (detect from the model "
                "directory), or a ModelSlim type such as `w8a8`, `w8a8_dynamic`, `w4a8_dynamic`, `w4a4`."
            )
        ),
    ] = "none"
    max_model_len: Annotated[PositiveInt | None, Field(description="Longest context (prompt + output) in tokens.")] = (
        None
    )
    allow_long_context: Annotated[
        bool,
        Field(
            description=(
                "Let max_model_len exceed the context the model's config.json gives (`VLLM_ALLOW_LONG_MAX_MODEL_LEN=1`"
                "; vLLM refuses to start otherwise). Only for models whose positions reach that far (e.g. RoPE "
                "scaling set in hf_overrides): beyond them outputs are garbage. `plan` suggests it when "
                "max_model_len is above config.json's length."
            )
        ),
    ] = False
    trust_remote_code: Annotated[
        bool, Field(description="Allow the model's own Python code from its repository to run.")
    ] = False
    task: Annotated[
        Task, Field(description="What the model serves: `generate` (chat/completions), `embed` or `rerank`.")
    ] = "generate"
    hf_overrides: Annotated[
        dict[str, JsonValue] | None,
        Field(description="Overrides merged into the model's Hugging Face config (`--hf-overrides`)."),
    ] = None
    tokenizer_mode: Annotated[
        Annotated[str, ARGV_WORD] | None,
        Field(
            pattern=r"^[a-z][a-z0-9_]{0,63}$",
            description=(
                "How vLLM loads the tokenizer (`--tokenizer-mode`): `auto`, `slow`, `mistral`, `custom` up to vLLM "
                "0.11 (its parser's choices); from 0.12 `hf`, `deepseek_v32`, … or a registered tokenizer name. "
                "Unset: vLLM's `auto`."
            ),
        ),
    ] = None
    load_strategy: Annotated[
        Literal["lazy", "eager", "prefetch", "torchao"] | None,
        Field(
            description=(
                "How the safetensors weights are read (`--safetensors-load-strategy`, vLLM ≥ 0.10.2): `lazy` "
                "(memory-mapped), `eager` (each file read whole first: faster from network file systems, more host "
                "RAM), `prefetch` (into the page cache first, vLLM ≥ 0.18) or `torchao` (vLLM ≥ 0.12). Unset: "
                "vLLM's default."
            )
        ),
    ] = None

    @field_validator("source")
    @classmethod
    def _a_hub_scheme_names_a_hub_id(cls, value: str) -> str:
        scheme, sep, rest = value.partition(":")
        if sep and scheme in HUB_SCHEMES and not HUB_ID.match(rest):
            raise ValueError(f"`{scheme}:` takes a hub id ORG/NAME (e.g. `{scheme}:Qwen/Qwen3-8B`)")
        return value

    @property
    def scheme(self) -> HubScheme | None:
        """The hub `source` names explicitly (`hf:` / `modelscope:`); None: a hub id, directory or prepared name
        as written (a bare `org/name` is read from the Hugging Face cache first, as `hf:` is)."""
        scheme, sep, _ = self.source.partition(":")
        return scheme if sep and scheme in HUB_SCHEMES else None

    @property
    def location(self) -> str:
        """What `source` names without its hub scheme: `org/name` for `hf:org/name` and `modelscope:org/name`, the
        source as written otherwise. What vLLM loads (after `prepared:NAME` is resolved) and what every consumer
        of the source reads."""
        return self.source.partition(":")[2] if self.scheme else self.source


class TargetSpec(StrictModel):
    backend: Annotated[Backend, Field(description="Accelerator backend: `npu` (Ascend), `cuda` or `cpu`.")]
    hardware: Annotated[
        HardwareFamily | None,
        Field(description="Ascend hardware family for `npu`: `a2`, `a3`, `300i-duo` or `950`."),
    ] = None
    devices_per_node: Annotated[
        int,
        Field(
            ge=1,
            le=MAX_DEVICES_PER_NODE,
            description="Accelerator devices (NPU chips / GPUs / CPU ranks) used on each node (at most what the "
            "family's largest server has, from the matrix's hardware table).",
        ),
    ] = 1
    nodes: Annotated[int, Field(ge=1, le=MAX_NODES, description="Number of nodes (hosts) the deployment spans.")] = 1
    visible_devices: Annotated[
        list[Annotated[int, Field(ge=0, le=MAX_DEVICES_PER_NODE - 1)]] | None,
        Field(description="Device ids to use on each node (`ASCEND_RT_VISIBLE_DEVICES`); default: 0..N-1."),
    ] = None


class GraphSpec(StrictModel):
    mode: Annotated[
        GraphMode,
        Field(
            description=(
                "Graph capture intent: `eager` (no graphs), `piecewise`, `full`, `full-decode-only`, "
                "`full-and-piecewise`, `auto` (the documented recommendation for model × hardware × release), or "
                "`engine-default` (no graph flag at all: neither `--enforce-eager` nor `cudagraph_mode`; the "
                "engine decides, as a bare `vllm serve` would)."
            )
        ),
    ] = "auto"
    capture_sizes: Annotated[
        list[Annotated[int, Field(ge=1, le=MAX_PARALLEL)]] | None,
        Field(description="Batch sizes to capture graphs for; default: the engine's own list."),
    ] = None


class ParallelSpec(StrictModel):
    tensor: Annotated[ParallelSize, Field(description="Tensor-parallel size (`--tensor-parallel-size`).")] = 1
    pipeline: Annotated[ParallelSize, Field(description="Pipeline-parallel size (`--pipeline-parallel-size`).")] = 1
    data: Annotated[ParallelSize, Field(description="Data-parallel size over all nodes (`--data-parallel-size`).")] = 1
    data_per_node: Annotated[
        ParallelSize | None,
        Field(description="Data-parallel ranks on each node (`--data-parallel-size-local`); default: data / nodes."),
    ] = None
    expert: Annotated[bool, Field(description="Expert parallelism for MoE models (`--enable-expert-parallel`).")] = (
        False
    )
    executor: Annotated[
        Executor,
        Field(description="Distributed executor: `mp` (multiprocessing, default) or `ray` (needs a Ray cluster)."),
    ] = "mp"


class EplbSpec(StrictModel):
    mode: Annotated[
        EplbMode,
        Field(description="Expert load balancing: `off`, `static` (replay an expert map) or `dynamic`."),
    ] = "off"
    redundant_experts: Annotated[
        Count, Field(description="Extra (redundant) expert replicas spread over the EP ranks.")
    ] = 0
    expert_map_path: Annotated[
        NonEmptyLine | None,
        Field(description="Expert map JSON to load (static EPLB, or the starting map for dynamic)."),
    ] = None
    record_path: Annotated[
        NonEmptyLine | None, Field(description="Where to record the expert map observed under load (JSON file).")
    ] = None
    heat_collection_interval: Annotated[
        PositiveInt | None, Field(description="Steps between expert-load (heat) collections (dynamic EPLB).")
    ] = None
    algorithm_interval: Annotated[
        PositiveInt | None, Field(description="Steps between rebalancing decisions (dynamic EPLB).")
    ] = None
    policy_type: Annotated[Count | None, Field(description="vllm-ascend EPLB policy number (`eplb_policy_type`).")] = (
        None
    )
    implementation: Annotated[
        EplbImplementation,
        Field(
            description=(
                "`ascend`: vllm-ascend's own EPLB (`--additional-config`); `upstream`: vLLM's "
                "`--enable-eplb` (model runner v2); `auto`: what the release recommends."
            )
        ),
    ] = "auto"


class SchedulerSpec(StrictModel):
    max_num_seqs: Annotated[PositiveInt | None, Field(description="Most sequences in one batch.")] = None
    max_num_batched_tokens: Annotated[PositiveInt | None, Field(description="Most tokens scheduled in one step.")] = (
        None
    )
    prefix_caching: Annotated[
        bool | None, Field(description="Automatic prefix caching on/off; unset keeps the engine default.")
    ] = None
    chunked_prefill: Annotated[
        bool | None, Field(description="Chunked prefill on/off; unset keeps the engine default.")
    ] = None
    async_scheduling: Annotated[
        bool | None, Field(description="Overlap scheduling with execution (`--async-scheduling`).")
    ] = None
    policy: Annotated[
        Literal["fcfs", "priority"] | None,
        Field(
            description=(
                "Which waiting request runs first (`--scheduling-policy`): `fcfs` (arrival order) or `priority` "
                "(the request's `priority` field, then arrival); unset keeps the engine default (fcfs)."
            )
        ),
    ] = None


class SpeculativeSpec(StrictModel):
    method: Annotated[
        SpeculativeMethod,
        Field(
            description=(
                "Speculative decoding method (`--speculative-config` `method`): `mtp` (the model's own multi-token "
                "prediction layers; spelled `deepseek_mtp` for releases before vLLM 0.11), a model-specific MTP "
                "name such as `qwen3_5_mtp`, `eagle`, `eagle3`, `ngram`, `suffix`, `draft_model`, `medusa`, "
                "`dflash`, … Each release runs its own set; one it does not run is an error naming the first "
                "release that does."
            )
        ),
    ]
    num_tokens: Annotated[PositiveInt, Field(description="Tokens proposed per step (`num_speculative_tokens`).")]
    model: Annotated[
        NonEmptyLine | None,
        Field(
            description=(
                "Draft / EAGLE / MTP weights (path or hub id): required by eagle, eagle3, medusa, mlp_speculator, "
                "draft_model and dflash; MTP defaults to the target model's own layers, dspark to the drafter "
                "shipped in the target checkpoint (DeepSeek-V4-Flash-DSpark) unless a separate one is given."
            )
        ),
    ] = None
    draft_tensor_parallel: Annotated[
        ParallelSize | None,
        Field(
            description=(
                "Tensor-parallel size of the drafter (`draft_tensor_parallel_size`): 1 or engine.parallel.tensor "
                "(the only sizes vLLM accepts); unset: the target's size."
            )
        ),
    ] = None
    draft_eager: Annotated[
        bool | None,
        Field(
            description=(
                "Run the drafter eagerly (`enforce_eager` inside `--speculative-config`, vLLM ≥ 0.11 / vllm-ascend "
                "≥ v0.11.0rc0) while the target keeps its graphs; unset: the drafter follows the target's graph mode."
            )
        ),
    ] = None

    @model_validator(mode="after")
    def _draft_options_fit_the_method(self) -> "SpeculativeSpec":
        # Release-independent facts of the methods (which ones load weights of their own); what a release runs is
        # checked by the planner.
        if self.method in SPECULATIVE_DRAFT_METHODS and self.model is None:
            raise ValueError(f"method `{self.method}` drafts with its own weights: set `model`")
        if self.method in SPECULATIVE_MODEL_FREE:
            given = [n for n in ("model", "draft_tensor_parallel", "draft_eager") if getattr(self, n) is not None]
            if given:
                raise ValueError(f"method `{self.method}` drafts without a model: remove {', '.join(given)}")
        return self


class MemorySpec(StrictModel):
    device_utilization: Annotated[
        float | None,
        Field(
            gt=0,
            le=1,
            allow_inf_nan=False,
            description="Fraction of device memory the engine may use (`--gpu-memory-utilization`).",
        ),
    ] = None
    cpu_kv_cache_gib: Annotated[
        float | None,
        Field(
            gt=0,
            le=1 << 20,
            allow_inf_nan=False,
            description="CPU backend: KV-cache size in GiB (`VLLM_CPU_KVCACHE_SPACE`).",
        ),
    ] = None
    kv_cache_dtype: Annotated[
        KvCacheDtype,
        Field(
            description=(
                "KV-cache element type: `auto` (the model dtype, nothing emitted), a `--kv-cache-dtype` choice of the "
                "release's vLLM (`fp8`, `fp8_e4m3`, `int8_per_token_head`, …, checked against its parser), or `int8`: "
                "vllm-ascend's int8 (C8) KV cache with ModelSlim C8 weights (`--additional-config` v0.9.2rc1–"
                "v0.12.0rc1, from the weights alone from v0.18.0)."
            )
        ),
    ] = "auto"
    block_size: Annotated[
        PositiveInt | None,
        Field(
            description=(
                "Tokens per KV-cache block (`--block-size`): up to vLLM 0.17 one of its parser's choices (8 … 128, "
                "256 from 0.12), any size from 0.18. Unset: the platform's default (vllm-ascend's is 128, "
                "v0.23.0:vllm_ascend/utils.py:1369-1381)."
            )
        ),
    ] = None
    hccl_buffer_mb: Annotated[
        Literal["auto"] | Annotated[int, Field(ge=1, le=INT32_MAX)],
        Field(
            description=(
                "Ascend: the HCCL buffer in MB (`HCCL_BUFFSIZE`; HCCL's default is 200) of the communicators "
                "that set no size of their own, the MoE dispatch (MC2) group's among them. "
                "`auto`: 1024 with expert parallelism (the MoE dispatch needs more; the tutorials' most common "
                "value), HCCL's default otherwise; `plan` warns when the MoE dispatch of the planned batch needs "
                "more (`plan.moe.hccl-buffsize`)."
            )
        ),
    ] = "auto"


class EngineSpec(StrictModel):
    graph: Annotated[GraphSpec, Field(description="Graph capture intent.")] = GraphSpec()
    parallel: Annotated[ParallelSpec, Field(description="Parallel layout.")] = ParallelSpec()
    eplb: Annotated[EplbSpec, Field(description="Expert-parallel load balancing (MoE).")] = EplbSpec()
    scheduler: Annotated[SchedulerSpec, Field(description="Scheduler limits and switches.")] = SchedulerSpec()
    speculative: Annotated[SpeculativeSpec | None, Field(description="Speculative decoding; unset: off.")] = None
    memory: Annotated[MemorySpec, Field(description="Memory budget.")] = MemorySpec()
    ascend: Annotated[
        AscendSpec,
        Field(description="vllm-ascend feature switches (on / off / release default) and host tuning (jemalloc)."),
    ] = AscendSpec()
    seed: Annotated[int | None, Field(ge=-(2**63), le=2**63 - 1, description="Random seed (`--seed`).")] = None
    weight_nz: Annotated[
        Literal["off", "quantized", "all"] | None,
        Field(
            description=(
                "vllm-ascend's FRACTAL_NZ weight layout at load: `off`, `quantized` (quantized weights only, the "
                "release default) or `all` (bf16/fp16 too); spelled per release (`VLLM_ASCEND_ENABLE_NZ`, then "
                "`weight_nz_mode`); unset: the release's default."
            )
        ),
    ] = None
    extra_args: Annotated[
        ServeArgs,
        Field(description="Escape hatch: extra `vllm serve` arguments appended verbatim (checked per release)."),
    ] = []
    additional_config: Annotated[
        dict[str, JsonValue],
        Field(description="Escape hatch: keys merged verbatim into vllm-ascend's `--additional-config` JSON."),
    ] = {}

    @property
    def arg_items(self) -> tuple[ArgItem, ...]:
        """`extra_args` read into options (`ascendctl_engine.argv_items`): what every consumer asks."""
        return parse_args(self.extra_args)


def _redact_secret_env_values(value: Any) -> Any:
    """A secret-named env entry is refused by `profile.runtime.env-inline-secret`, located at its key; a value of
    the wrong type there would first fail the type check, whose message quotes the value."""
    if isinstance(value, dict):
        return {k: REDACTED if isinstance(k, str) and is_secret_name(k) and not isinstance(v, str)
                and not is_switch(v) else v for k, v in value.items()}  # fmt: skip
    return value


class NodeNetwork(StrictModel):
    """One node. Only these fields may differ between nodes (the address, the NIC, the memory fraction, env
    and extra arguments); everything else in the profile is profile-wide, the same on every node."""

    address: Annotated[IpAddress, Field(description="IP address of this node on the cluster network.")]
    interface: Annotated[
        NicName | None, Field(description="NIC name on this node; default: the profile-wide `network.interface`.")
    ] = None
    device_utilization: Annotated[
        float | None,
        Field(
            gt=0,
            le=1,
            allow_inf_nan=False,
            description=(
                "Per node: fraction of device memory the engine may use on this node (`--gpu-memory-utilization`); "
                "wins over the profile-wide `engine.memory.device_utilization`."
            ),
        ),
    ] = None
    env: Annotated[
        dict[EnvName, SingleLine],
        Field(
            description=(
                "Per node: environment variables for this node's engine, set after `runtime.env` (they win over it "
                "and over every default); the same rules as `runtime.env` (no secret values)."
            )
        ),
    ] = {}
    extra_args: Annotated[
        ServeArgs,
        Field(
            description=(
                "Per node: extra `vllm serve` arguments for this node, appended after `engine.extra_args` (checked "
                "per release); API-server options are refused on a headless node."
            )
        ),
    ] = []

    @field_validator("env", mode="before")
    @classmethod
    def _secret_values_stay_unquoted(cls, value: Any) -> Any:
        return _redact_secret_env_values(value)

    @property
    def arg_items(self) -> tuple[ArgItem, ...]:
        """`extra_args` read into options (`ascendctl_engine.argv_items`): what every consumer asks."""
        return parse_args(self.extra_args)


TimeoutS = Annotated[int, Field(ge=1, le=MAX_TIMEOUT_S)]


class HcclSpec(StrictModel):
    """Ascend's collective communication library (CANN HCCL): read by HCCL itself in every release."""

    connect_timeout_s: Annotated[
        TimeoutS | None,
        Field(
            description=(
                "Seconds HCCL waits for its peers when it sets up links (`HCCL_CONNECT_TIMEOUT`); the multi-node "
                "tutorials raise it (120 … 600). Unset: HCCL's default."
            )
        ),
    ] = None
    exec_timeout_s: Annotated[
        TimeoutS | None,
        Field(
            description=(
                "Seconds a collective may wait for its peers once running (`HCCL_EXEC_TIMEOUT`). Unset: HCCL's default."
            )
        ),
    ] = None
    intra_node: Annotated[
        Literal["auto", "pcie", "roce"],
        Field(
            description=(
                "Links between the NPUs of one node: `auto` (HCCL's choice, nothing set), `pcie` "
                "(`HCCL_INTRA_PCIE_ENABLE=1` and `HCCL_INTRA_ROCE_ENABLE=0`, as the A2 multi-node DeepSeek tutorials "
                "set them; from v0.11.0rc1 vllm-ascend also dispatches MoE hierarchically then, as "
                "engine.ascend.mc2_hierarchy_comm) or `roce` (`HCCL_INTRA_ROCE_ENABLE=1`, RDMA between the two "
                "8-NPU halves)."
            )
        ),
    ] = "auto"


class NetworkSpec(StrictModel):
    interface: Annotated[
        NicName | None,
        Field(description="NIC used for HCCL/Gloo traffic (`GLOO_SOCKET_IFNAME`, `HCCL_SOCKET_IFNAME`, ...)."),
    ] = None
    nodes: Annotated[
        list[NodeNetwork],
        Field(
            description=(
                "Per-node settings, node 0 first (node 0 is the head / data-parallel address): address, interface, "
                "device_utilization, env and extra_args may differ between nodes; everything else is profile-wide."
            )
        ),
    ] = []
    dp_rpc_port: Annotated[Port, Field(description="Data-parallel RPC port on the head node.")] = defaults.DP_RPC_PORT
    ray_port: Annotated[Port, Field(description="Ray head port, when the executor is `ray`.")] = defaults.RAY_PORT
    hccl: Annotated[
        HcclSpec, Field(description="Ascend HCCL: link-setup and collective timeouts, intra-node links.")
    ] = HcclSpec()


class ApiKeySource(SecretSource):
    """The API key's source: a `SecretSource` (what `ascendctl.schema.declared_secrets.secret_sources` finds) for
    `VLLM_API_KEY`."""

    engine_variable: ClassVar[str | None] = API_KEY_VAR

    env: Annotated[EnvName | None, Field(description="Name of the environment variable holding the API key.")] = None
    file: Annotated[NonEmptyLine | None, Field(description="Path of a file holding the API key (first line).")] = None

    @model_validator(mode="after")
    def _exactly_one_source(self) -> "ApiKeySource":
        if (self.env is None) == (self.file is None):
            raise ValueError("set exactly one of `env` or `file` (API keys are never written inline)")
        return self


class ServerSpec(StrictModel):
    host: Annotated[
        BindHost,
        Field(description="Address the API server binds: an IP address or a host name (default: loopback only)."),
    ] = defaults.SERVER_HOST
    port: Annotated[Port, Field(description="API server port.")] = defaults.SERVER_PORT
    api_server_count: Annotated[
        PositiveInt | None,
        Field(
            description=(
                "API server processes on the head node (`--api-server-count`); headless nodes run none. "
                "Unset: vLLM's default."
            )
        ),
    ] = None
    api_key: Annotated[
        ApiKeySource | None,
        Field(
            description=(
                "Require this API key from clients; read from an env var or a file. Not with `disaggregation`: the "
                "router in front of the instances checks no key (`plan.pd.api-key`)."
            )
        ),
    ] = None
    shutdown_timeout: Annotated[
        int,
        Field(
            ge=0,
            le=MAX_TIMEOUT_S,
            description="Seconds to drain in-flight requests on stop before aborting them.",
        ),
    ] = defaults.SHUTDOWN_TIMEOUT_S

    @field_validator("api_key", mode="before")
    @classmethod
    def _api_key_not_inline(cls, value: Any) -> Any:
        # Refused before the type check: pydantic's "should be a valid dictionary" error would quote the key.
        if value is not None and not isinstance(value, (dict, ApiKeySource)):
            raise ValueError("the API key is never written inline: give {env: VAR} or {file: PATH}")
        return value


class RestartSpec(StrictModel):
    policy: Annotated[
        Literal["never", "on-failure"], Field(description="Restart the engine when it exits with an error?")
    ] = "never"
    max_restarts: Annotated[Count, Field(description="Give up after this many restarts.")] = 3
    backoff_seconds: Annotated[
        float,
        Field(
            gt=0, le=MAX_TIMEOUT_S, allow_inf_nan=False, description="First wait before a restart; doubles each time."
        ),
    ] = 2.0
    backoff_max_seconds: Annotated[
        float, Field(gt=0, le=MAX_TIMEOUT_S, allow_inf_nan=False, description="Cap on the wait between restarts.")
    ] = 60.0


class CpuSpec(StrictModel):
    threads: Annotated[
        PositiveInt | None,
        Field(
            description=(
                "OpenMP (and torch) threads of each engine process (`OMP_NUM_THREADS`). Unset: 1 on Ascend, the "
                "vllm-ascend images' value; elsewhere vLLM's multiprocessing executor picks a count when the "
                "variable is unset."
            )
        ),
    ] = None
    bind: Annotated[
        bool | Literal["close", "spread", "primary"] | None,
        Field(
            description=(
                "OpenMP thread affinity (`OMP_PROC_BIND`): `false` (threads may move), `true`, `close`, `spread` "
                "or `primary`. Unset: `false` on Ascend, as the multi-rank tutorials export it; elsewhere "
                "nothing is set. Binding each NPU worker process to the cores near its device is vllm-ascend's own "
                "switch, engine.ascend.cpu_binding."
            )
        ),
    ] = None


class TimeoutsSpec(StrictModel):
    """vLLM's own timeouts, each spelled as the variable the pinned vLLM reads (in its unit); one it does not read
    is not set, with a warning."""

    engine_ready_s: Annotated[
        TimeoutS | None,
        Field(
            description=(
                "Seconds the API server waits for the engine cores to start (`VLLM_ENGINE_READY_TIMEOUT_S`, "
                "vLLM ≥ 0.14; vLLM's default 600). Unset: vLLM's default."
            )
        ),
    ] = None
    execute_model_s: Annotated[
        TimeoutS | None,
        Field(
            description=(
                "Seconds the multiprocessing executor waits for one model step of its workers "
                "(`VLLM_EXECUTE_MODEL_TIMEOUT_SECONDS`, vLLM ≥ 0.9.2; vLLM's default 300; vllm-ascend v0.23.0 raises "
                "a value under 1836 to 3000). Unset: vLLM's default."
            )
        ),
    ] = None
    rpc_s: Annotated[
        TimeoutS | None,
        Field(
            description=(
                "Seconds the V0 engine's client waits for its engine (`VLLM_RPC_TIMEOUT`, in milliseconds; "
                "vLLM < 0.11, which still has the V0 engine). Unset: vLLM's default (10 s)."
            )
        ),
    ] = None
    engine_iteration_s: Annotated[
        TimeoutS | None,
        Field(
            description=(
                "Seconds one step of the V0 async engine may take (`VLLM_ENGINE_ITERATION_TIMEOUT_S`, vLLM < 0.11). "
                "Unset: vLLM's default (60)."
            )
        ),
    ] = None


class RuntimeSpec(StrictModel):
    env: Annotated[
        dict[EnvName, SingleLine],
        Field(description="Environment variables for the engine; they win over every default ascendctl injects."),
    ] = {}
    ready_timeout: Annotated[
        int,
        Field(
            ge=1,
            le=MAX_TIMEOUT_S,
            description="Seconds to wait for `/health` (model load + graph capture) before failing.",
        ),
    ] = 900
    restart: Annotated[RestartSpec, Field(description="What to do when the engine exits unexpectedly.")] = RestartSpec()
    cpu: Annotated[CpuSpec, Field(description="Host CPU threads of the engine processes.")] = CpuSpec()
    timeouts: Annotated[TimeoutsSpec, Field(description="vLLM's engine timeouts, per release.")] = TimeoutsSpec()
    worker_start: Annotated[
        Literal["spawn", "fork"] | None,
        Field(
            description=(
                "How vLLM starts its worker processes (`VLLM_WORKER_MULTIPROC_METHOD`): `spawn` (what vllm-ascend's "
                "nightly CI runs) or `fork`; unset: vLLM's default (fork, switched to spawn where it must)."
            )
        ),
    ] = None
    secrets: Annotated[
        dict[str, SecretSource],
        Field(
            description=(
                "Secret environment variables for the engine (e.g. `HF_TOKEN`): NAME → `{env: VAR}` or "
                "`{file: PATH}`, read only at launch; plans and rendered files carry references, never values."
            )
        ),
    ] = {}

    @field_validator("env", mode="before")
    @classmethod
    def _secret_values_stay_unquoted(cls, value: Any) -> Any:
        return _redact_secret_env_values(value)

    @field_validator("secrets")
    @classmethod
    def _secret_names_are_valid(cls, value: dict[str, SecretSource]) -> dict[str, SecretSource]:
        # ASCII only: every renderer writes the name unquoted (`export NAME=`, `-e NAME`, a Secret's key).
        for name in value:
            if not is_posix_name(name):
                raise ValueError(f"{name!r} is not a valid environment variable name ({POSIX_NAME_TEXT})")
        return value
