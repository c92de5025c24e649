"""Prefill/decode disaggregation as plain data: what one instance's part in it is (`KvTransfer`, filled by the planner,
spelled per release by `ascendctl_engine.adapters.kv_transfer`) and the connector facts both sides ask. No adapter
is imported here, so profile validation (which places the instances) stays light."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import field
from typing import Any

from ascendctl_engine.records import record
from ascendctl_engine.vocab import KvConnectorKind, PdRole

# Each Ascend connector family → the name its releases register it under (`kv_connector`).
ASCEND_CONNECTOR_NAMES: dict[KvConnectorKind, str] = {
    "mooncake": "MooncakeConnectorV1",
    "mooncake-layerwise": "MooncakeLayerwiseConnector",
    "mooncake-hybrid": "MooncakeHybridConnector",
    "llmdatadist": "LLMDataDistCMgrConnector",
}
# The families whose connector checks the prefill/decode sizes in `kv_connector_extra_config`.
SIZED = frozenset({"mooncake", "mooncake-layerwise", "mooncake-hybrid"})


def rpc_port_span(devices: int) -> int:
    """How many ports an LLMDataDist instance may bind from its RPC base: its ranks plus a TP offset, at most twice
    its devices (v0.11.0:vllm_ascend/distributed/llmdatadist_c_mgr_connector.py:190,366); at least 20, the step the
    tutorials use."""
    return max(20, 2 * devices)


@record
class GroupSizes:
    """One role group's parallel sizes as the connector checks them (`kv_connector_extra_config.prefill/decode`)."""

    dp: int
    tp: int
    pp: int = 1


@record
class KvTransfer:
    """This instance's part in a prefill/decode deployment: what the planner derived from `disaggregation` (the
    adapters spell it per release, `adapters/kv_transfer.py`)."""

    role: PdRole
    connector: KvConnectorKind
    engine_id: str  # unique per instance: the connectors refuse a peer with their own id ("Conflict engine id")
    kv_port: int
    prefill: GroupSizes
    decode: GroupSizes
    rank_table: str | None = None  # LLMDataDist's rank table path
    rpc_port: int | None = None  # LLMDataDist's first RPC port for this instance
    shared_storage_path: str | None = None  # shared-storage's directory
    extra_config: Mapping[str, Any] = field(default_factory=dict)  # `disaggregation.connector_extra_config`
    why: str = "disaggregation"
