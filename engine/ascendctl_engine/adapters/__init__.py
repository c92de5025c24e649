"""Era adapters: an `EngineIntent` in, one `EngineCommand` per node out, for exactly the release pinned.

    from ascendctl_engine.adapters import EngineIntent, plan_commands
    result = plan_commands(intent)      # AdapterResult: commands, provenance, warnings, unsupported, eras

Each topic (graph mode, parallelism, EPLB, quantization, …) is a table of eras keyed by version ranges
(`eras.REGISTRY`); `plan_commands` picks one era per topic and runs it. Every emitted flag, JSON key,
`--additional-config` key and `VLLM_ASCEND_*` variable is checked against what the release accepts
(`acceptance.acceptance_for`: the real-parser snapshot of its vLLM pin and the vllm-ascend tag's key table).
"""

from __future__ import annotations

from collections.abc import Mapping

from ascendctl_engine.adapters import ascend_switches as _ascend_switches
from ascendctl_engine.adapters import env as _env
from ascendctl_engine.adapters import eplb as _eplb
from ascendctl_engine.adapters import graph as _graph
from ascendctl_engine.adapters import install as _install
from ascendctl_engine.adapters import kv_cache as _kv_cache
from ascendctl_engine.adapters import kv_transfer as _kv_transfer
from ascendctl_engine.adapters import model as _model
from ascendctl_engine.adapters import parallel as _parallel
from ascendctl_engine.adapters import scheduler as _scheduler
from ascendctl_engine.adapters import serving as _serving
from ascendctl_engine.adapters import speculative as _speculative
from ascendctl_engine.adapters import weight_nz as _weight_nz
from ascendctl_engine.adapters.acceptance import ReleaseAcceptance, acceptance_for
from ascendctl_engine.adapters.builder import AdapterResult, CommandBuilder
from ascendctl_engine.adapters.eras import REGISTRY, TOPICS, Era, EraError, era_for_release, select
from ascendctl_engine.adapters.intent import EngineIntent, HardwareTraits, LoadedModel, NodeIntent
from ascendctl_engine.records import record
from ascendctl_engine.sections.deployment import ModelSpec, TargetSpec

# The topic modules register their eras on import.
_TOPIC_MODULES = (
    _model,
    _graph,
    _parallel,
    _eplb,
    _scheduler,
    _speculative,
    _kv_cache,
    _kv_transfer,
    _serving,
    _env,
    _ascend_switches,
    _weight_nz,
    _install,
)

__all__ = [
    "REGISTRY",
    "TOPICS",
    "AdapterResult",
    "EngineIntent",
    "Era",
    "EraError",
    "HardwareTraits",
    "LoadedModel",
    "NodeIntent",
    "QuantRule",
    "ReleaseAcceptance",
    "acceptance_for",
    "eras_for",
    "plan_commands",
    "quantization_argv",
    "quantization_rule",
]


@record
class QuantRule:
    """How ModelSlim (`--quantization ascend`) weights are switched on in one release — the quantization era's
    own traits, so `matrix --explain`, the docs and the plan give one answer."""

    flag: str  # required | optional (planned explicitly, detected anyway) | none | unavailable
    auto_detect: bool  # the engine detects the method from the model directory
    packages: Mapping[str, str]  # extra packages the era needs (v0.7.3: MindIE Turbo)
    era: str  # the era's label
    source: str


def quantization_rule(backend: str, vllm: str, vllm_ascend: str | None) -> QuantRule:
    """The quantization era of a release, as data (see `QuantRule`)."""
    chosen = era_for_release("quantization", backend, vllm, vllm_ascend)
    if chosen is None:
        raise EraError(f"no quantization era for {backend}")
    traits = chosen.traits
    return QuantRule(
        flag=str(traits.get("flag", "none")),
        auto_detect=bool(traits.get("auto_detect", False)),
        packages=dict(traits.get("packages") or {}),
        era=chosen.label,
        source=chosen.source,
    )


def quantization_argv(
    backend: str, vllm: str, vllm_ascend: str | None, quantization: str, method: str
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(the `vllm serve` arguments the quantization era plans for these weights, what it cannot do) — exactly
    what `plan_commands` emits for the quantization topic, for `matrix --explain` to print."""
    intent = EngineIntent(
        vllm=vllm,
        vllm_ascend=vllm_ascend,
        model=ModelSpec(source="model", quantization=quantization),  # type: ignore[arg-type]
        target=TargetSpec(backend=backend),  # type: ignore[arg-type]
        loaded=LoadedModel("model", quant_method=method),
    )
    builder = CommandBuilder(intent, acceptance_for(backend, vllm, vllm_ascend))
    chosen = select("quantization", intent)
    if chosen is not None:
        chosen.apply(intent, builder)
    argv = tuple(t for arg in builder.args.values() for t in (arg.flag, *(builder.text(w) for w in arg.words)))
    return argv, tuple(builder.unsupported)


def eras_for(intent: EngineIntent) -> dict[str, Era]:
    """The era chosen for each topic that applies to this intent's backend."""
    out: dict[str, Era] = {}
    for topic in TOPICS:
        chosen = select(topic, intent)
        if chosen is not None:
            out[topic] = chosen
    return out


def plan_commands(intent: EngineIntent, accepted: ReleaseAcceptance | None = None) -> AdapterResult:
    """Run every topic's era for `intent` and assemble the per-node commands."""
    accepted = accepted or acceptance_for(intent.backend, intent.vllm, intent.vllm_ascend)
    builder = CommandBuilder(intent, accepted)
    for topic, chosen in eras_for(intent).items():
        builder.eras[topic] = chosen.label
        builder.topic = topic
        before = builder.state()
        chosen.apply(intent, builder)
        if builder.state() != before:
            builder.decisive.append(topic)
    builder.topic = ""
    return builder.finish()
