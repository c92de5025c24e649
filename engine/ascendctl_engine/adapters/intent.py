"""The engine's own input: the profile's validated sections as they are, plus what the planner resolved.

`ascendctl`'s planner fills an `EngineIntent` from a resolved deployment (profile × matrix × host); the
era adapters (`ascendctl_engine.adapters`) turn it into the argv and env one vLLM(-Ascend) release
understands. The profile's sections (`ascendctl_engine.sections`) travel unchanged — every default is
declared there, once, and a field added to a section reaches every adapter without being copied here.
What the intent adds is what no profile says: the release pins, the model as it will be loaded, the
hardware's traits, the node layout and the provenance of each value (`sources`: dotted profile path →
text such as "user: engine.parallel.tensor"), so the adapters can explain the flags they emit.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import field
from typing import Any, get_type_hints

from ascendctl_engine.pd import KvTransfer
from ascendctl_engine.records import record
from ascendctl_engine.sections.deployment import (
    EngineSpec,
    ModelSpec,
    NetworkSpec,
    NodeNetwork,
    RuntimeSpec,
    ServerSpec,
    TargetSpec,
)
from ascendctl_engine.sections.serving import ServingSpec
from ascendctl_engine.spec import SecretRef, Supervision
from ascendctl_engine.vocab import Backend, ModelArch
from ascendctl_engine.vocab import HardwareFamily as Hardware


@record
class LoadedModel:
    """The model as the engine will load it: what the planner resolved from `model` and the model's files."""

    source: str  # what vLLM loads: hub id or local directory (argv[2]); `prepared:NAME` resolved
    quant_method: str | None = None  # the `--quantization` method it loads with (`ascend`, ...); None: float
    arch: ModelArch = "dense"
    multimodal: bool = False
    num_heads: int | None = None  # from config.json when known
    num_experts: int | None = None


@record
class NodeIntent:
    """One node of the layout, with the profile's per-node overrides (`network.nodes[i]`) when it has any."""

    index: int
    address: str | None = None
    interface: str | None = None
    overrides: NodeNetwork | None = None

    @property
    def device_utilization(self) -> float | None:
        """This node's memory fraction; wins over `engine.memory.device_utilization`."""
        return self.overrides.device_utilization if self.overrides else None

    @property
    def env(self) -> Mapping[str, str]:
        return self.overrides.env if self.overrides else {}

    @property
    def extra_args(self) -> tuple[str, ...]:
        """Appended after `engine.extra_args` on this node."""
        return tuple(self.overrides.extra_args) if self.overrides else ()


@record
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


# The profile sections an intent carries unchanged (the names of `EngineIntent`'s section fields).
SECTIONS = ("model", "target", "engine", "network", "server", "serving", "runtime")


@record
class EngineIntent:
    vllm: str  # upstream vLLM version the release pins (pip form, e.g. "0.13.0")
    model: ModelSpec
    target: TargetSpec
    engine: EngineSpec = field(default_factory=EngineSpec)
    network: NetworkSpec = field(default_factory=NetworkSpec)
    server: ServerSpec = field(default_factory=ServerSpec)
    serving: ServingSpec = field(default_factory=ServingSpec)
    runtime: RuntimeSpec = field(default_factory=RuntimeSpec)
    loaded: LoadedModel | None = None  # None: `model.source` (its location), float weights, a dense model
    traits: HardwareTraits = field(default_factory=HardwareTraits)  # of `target.hardware` (defaults: no limits)
    vllm_ascend: str | None = None  # vllm-ascend version (tag or pip form), npu only
    cann: str | None = None  # CANN version: the host's when known, else the release row's
    driver: str | None = None  # Ascend HDK/driver version seen on the host (None: not probed)
    nodes: tuple[NodeIntent, ...] = (NodeIntent(0),)
    cpu_cores: int | None = None  # logical CPUs of the host, when probed (CPU backend thread binding)
    supervision: Supervision | None = None  # carried onto every command (the planner fills it from the profile)
    kv_transfer: KvTransfer | None = None  # set on the instances of a prefill/decode deployment
    sources: Mapping[str, str] = field(default_factory=dict)

    @property
    def backend(self) -> Backend:
        return self.target.backend

    @property
    def hardware(self) -> Hardware | None:
        return self.target.hardware

    @property
    def load(self) -> LoadedModel:
        """The model as it will be loaded (`loaded`, or the profile's source without its hub scheme)."""
        return self.loaded or LoadedModel(self.model.location)

    @property
    def node_count(self) -> int:
        return len(self.nodes)

    def source(self, path: str, default: str = "profile default") -> str:
        """Provenance of an intent value (dotted path as the planner recorded it)."""
        return self.sources.get(path, default)

    def explicit(self, path: str) -> bool:
        """Whether the profile wrote `path` (a dotted section path such as `server.shutdown_timeout`), so an
        adapter emits the flag even when the value equals vLLM's default."""
        *parents, name = path.split(".")
        section: object = self
        for part in parents:
            section = getattr(section, part)
        fields_set: set[str] = getattr(section, "model_fields_set", set())
        return name in fields_set


def layout_nodes(target: TargetSpec, network: NetworkSpec) -> tuple[NodeIntent, ...]:
    """The nodes of a deployment: `target.nodes` of them, each with its `network.nodes[i]` entry when there is
    one (its address, its NIC or the profile-wide one, its overrides)."""
    out = []
    for i in range(target.nodes):
        entry = network.nodes[i] if i < len(network.nodes) else None
        interface = (entry.interface if entry else None) or network.interface
        out.append(NodeIntent(i, entry.address if entry else None, interface, overrides=entry))
    return tuple(out)


def intent_from_sections(document: Mapping[str, Any], **resolved: Any) -> EngineIntent:
    """An intent from profile sections as an operator writes them (`{"model": {...}, "engine": {...}}`),
    each validated by its section model; `resolved` gives the rest (`vllm`, `loaded`, `traits`, ...). For
    samples and tests that state intent the way a profile does: no section is restated field by field."""
    hints = get_type_hints(EngineIntent)
    sections = {name: hints[name].model_validate(document.get(name, {})) for name in SECTIONS}
    unknown = set(document) - set(SECTIONS)
    if unknown:
        raise ValueError(f"not an engine section: {', '.join(sorted(unknown))}")
    resolved.setdefault("nodes", layout_nodes(sections["target"], sections["network"]))
    return EngineIntent(**sections, **resolved)


def secret_ref(source: object) -> SecretRef:
    """A profile secret source (`{env: VAR}` / `{file: PATH}`) as the command carries it."""
    return SecretRef(env=getattr(source, "env", None), file=getattr(source, "file", None))
