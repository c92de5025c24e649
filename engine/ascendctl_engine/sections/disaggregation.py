"""The `disaggregation` section: prefill and decode as separate groups of engine instances with KV transfer
between them, and a router in front. Each group inherits the profile's engine settings and overrides only what
it writes (`engine:` inside the group, merged key by key over the profile's `engine`); the connector's JSON, the
engine ids, the KV ports and the prefill/decode sizes the connector checks are derived by the planner, never
typed twice (vllm-project/vllm-ascend#10652 asks for exactly that).
"""

from typing import Annotated

from pydantic import Field, JsonValue, field_validator

from ascendctl_engine.sections.base import StrictModel
from ascendctl_engine.sections.deployment import EngineSpec, Port
from ascendctl_engine.sections.fields import INT32_MAX, MAX_DEVICES_PER_NODE, MAX_NODES, NonEmptyLine
from ascendctl_engine.sections.serving import ServingSpec
from ascendctl_engine.vocab import KvConnectorKind, RouterPolicy

MAX_INSTANCES = 256  # per role group: far above any published PD deployment


class RoleGroup(StrictModel):
    instances: Annotated[
        int, Field(ge=1, le=MAX_INSTANCES, description="How many engine instances of this role (each its own API).")
    ] = 1
    nodes: Annotated[
        int,
        Field(
            ge=1,
            le=MAX_NODES,
            description=(
                "Nodes per instance. An instance over several nodes takes whole nodes (its data-parallel ranks "
                "spread over them); instances of one node share a node when their devices fit."
            ),
        ),
    ] = 1
    devices: Annotated[
        int | None,
        Field(
            ge=1,
            le=MAX_DEVICES_PER_NODE,
            description=(
                "Devices each instance uses per node (a contiguous range, `ASCEND_RT_VISIBLE_DEVICES`); unset: "
                "`target.devices_per_node`. Several one-node instances share a node when their devices fit."
            ),
        ),
    ] = None
    port: Annotated[
        Port | None,
        Field(description="API port of the group's first instance (the next ones count up); unset: planned."),
    ] = None
    dp_rpc_port: Annotated[
        Port | None,
        Field(
            description="Data-parallel RPC port of the group's first instance (the next ones count up); unset: planned."
        ),
    ] = None
    engine: Annotated[
        EngineSpec | None,
        Field(
            description=(
                "Engine settings of this role that differ from the profile's `engine` (parallel layout, scheduler, "
                "memory, graph, speculative, ...): only the keys written here override."
            )
        ),
    ] = None
    serving: Annotated[
        ServingSpec | None,
        Field(
            description=(
                "Serving settings of this role that differ from the profile's `serving` (context parallelism, "
                "parsers, ...): only the keys written here override."
            )
        ),
    ] = None
    max_model_len: Annotated[
        int | None,
        Field(
            ge=1, le=INT32_MAX, description="This role's `model.max_model_len`, where it differs from the profile's."
        ),
    ] = None


class RouterSpec(StrictModel):
    port: Annotated[
        Port | None, Field(description="Port the router listens on (clients' endpoint); unset: `server.port`.")
    ] = None
    policy: Annotated[RouterPolicy, Field(description="How requests are spread over the instances of a role.")] = (
        "round-robin"
    )
    metrics_port: Annotated[
        Port | None,
        Field(
            description=(
                "Port of the router's Prometheus metrics on 127.0.0.1, for a router that serves them (vllm-router, "
                "CPU and CUDA); unset: the router's own default (vllm-router: 29000). Two deployments on one host "
                "need different ones."
            )
        ),
    ] = None


class DisaggregationSpec(StrictModel):
    connector: Annotated[
        KvConnectorKind,
        Field(
            description=(
                "The KV connector family, spelled per release: `mooncake` (MooncakeConnectorV1), "
                "`mooncake-layerwise`, `mooncake-hybrid`, `llmdatadist` (LLMDataDistCMgrConnector, up to v0.11.0), "
                "`shared-storage` (vLLM's connector through a shared directory; cpu/cuda)."
            )
        ),
    ]
    kv_port: Annotated[
        Port,
        Field(
            description=(
                "First KV port: instance i gets kv_port + 100 × i and binds from it one port per device. Mooncake's "
                "transport picks random ports in [20000, 20000 + 1000 × devices per node): keep kv_port above that."
            )
        ),
    ] = 30000
    prefill: Annotated[RoleGroup, Field(description="The prefill group.")] = RoleGroup()
    decode: Annotated[RoleGroup, Field(description="The decode group.")] = RoleGroup()
    router: Annotated[RouterSpec, Field(description="The router in front of the instances.")] = RouterSpec()
    rank_table: Annotated[
        NonEmptyLine | None,
        Field(
            description=(
                "LLMDataDist only: the rank table JSON every instance reads (`DISAGGREGATED_PREFILL_RANK_TABLE_PATH`,"
                " made by the release's gen_ranktable.sh)."
            )
        ),
    ] = None
    rpc_port: Annotated[
        Port,
        Field(description="LLMDataDist only: first RPC port (`VLLM_ASCEND_LLMDD_RPC_PORT`); instances count up by 20."),
    ] = 5959
    shared_storage_path: Annotated[
        NonEmptyLine | None,
        Field(description="shared-storage only: the directory KV blocks pass through; unset: the deployment's state."),
    ] = None
    connector_extra_config: Annotated[
        dict[str, JsonValue],
        Field(
            description=(
                "Escape hatch: keys merged verbatim into the connector's `kv_connector_extra_config` beside the "
                "prefill/decode sizes the planner derives (which it may not name)."
            )
        ),
    ] = {}

    @field_validator("connector_extra_config")
    @classmethod
    def _no_sizes(cls, value: dict[str, JsonValue]) -> dict[str, JsonValue]:
        named = sorted(set(value) & set(DERIVED_EXTRA_KEYS))
        if named:
            raise ValueError(
                f"{', '.join(named)}: the planner derives each group's sizes from its parallel layout; drop them"
            )
        return value


# `kv_connector_extra_config` keys the planner writes itself (the groups' sizes the Mooncake connectors check).
DERIVED_EXTRA_KEYS = ("prefill", "decode")
