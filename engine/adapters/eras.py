"""The registry of release eras: (topic, backend, version range) → the adapter piece for that era.

Every release-dependent decision lives in exactly one `Era`: a PEP 440 specifier set over the
vllm-ascend version (`axis="vllm_ascend"`, NPU only) or over the vLLM version (`axis="vllm"`), and the
function that turns intent into flags/env for releases in that range. For a given topic, backend and
version exactly one era matches (the tests walk every release row to prove it); nothing outside this
registry compares versions.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cache
from types import MappingProxyType
from typing import Any, Literal

from packaging.specifiers import SpecifierSet
from packaging.version import Version

from ascendctl_engine.adapters.builder import CommandBuilder
from ascendctl_engine.adapters.intent import EngineIntent, ModelIntent
from ascendctl_engine.versions import parse as version_of

Axis = Literal["vllm", "vllm_ascend"]
Apply = Callable[[EngineIntent, CommandBuilder], None]

# Topic order = the order adapters run (later topics may read what earlier ones decided).
TOPICS: tuple[str, ...] = (
    "model",
    "quantization",
    "pooling",
    "graph",
    "npugraph-ex",
    "capture-sizes",
    "parallel",
    "eplb",
    "scheduler",
    "speculative",  # adapters/speculative.py
    "kv-cache",  # adapters/kv_cache.py
    "serving",  # tool calling, chat template, LoRA, context parallel (adapters/serving.py)
    "reasoning",
    "multimodal",
    "structured-outputs",
    "server",
    "engine-v1",
    "env",
    # vllm-ascend feature switches (engine.ascend): one topic per switch, spelled in adapters/ascend_switches.py
    "ascend.flashcomm1",
    "ascend.cpu_binding",
    "ascend.multistream_overlap_shared_expert",
    "ascend.mlapo",
    "ascend.fused_mc2",
    "ascend.balance_scheduling",
    "ascend.weight_prefetch",
    "ascend.recompute_scheduler",
    "ascend.shared_expert_dp",
    "ascend.dsa_cp",
    "ascend.reduce_sample",
    "ascend.mc2_hierarchy_comm",
    "ascend.multistream_dsa_preprocess",
    "ascend.dp_allreduce_on_npu",
    "ascend.prefetch_mlp",
    "ascend.topk_optimize",
    "ascend.jemalloc",
    "network",
    "install",  # data for the engine environment's install plan (no flags)
)

ALL_BACKENDS = frozenset({"npu", "cuda", "cpu"})


@dataclass(frozen=True)
class Era:
    topic: str
    name: str
    axis: Axis
    spec: str  # "" = every version
    backends: frozenset[str]
    summary: str  # what this era emits, for docs/intent-to-flags.md
    source: str
    apply: Apply
    # Structured facts of the era that others ask instead of keeping a copy (e.g. the quantization topic's
    # `flag`: required / optional / none / unavailable, `auto_detect`, `packages`).
    traits: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))

    def version_of_intent(self, intent: EngineIntent) -> str | None:
        return intent.vllm_ascend if self.axis == "vllm_ascend" else intent.vllm

    def matches(self, intent: EngineIntent) -> bool:
        if intent.backend not in self.backends:
            return False
        version = self.version_of_intent(intent)
        if version is None:
            return False
        parsed = version_of(version)
        if self.axis == "vllm":
            # A vLLM pre-release behaves like its final (vllm-ascend v0.11.0rc0 targets vLLM 0.11.0rc3;
            # "RC releases may use the corresponding vLLM final", vllm-ascend FAQ #7).
            parsed = version_of(parsed.base_version)
        return in_range(self.spec, parsed)

    @property
    def label(self) -> str:
        axis = "vllm-ascend" if self.axis == "vllm_ascend" else "vLLM"
        where = f"{axis} {self.spec}" if self.spec else f"every {axis}"
        return f"{self.name} ({where}; {'/'.join(sorted(self.backends))})"


_COMPARE = {
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b,
    "==": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
}


@cache
def _clauses(spec: str) -> tuple[tuple[str, Version], ...]:
    out = []
    for clause in SpecifierSet(spec):
        if clause.operator not in _COMPARE or "*" in clause.version:
            raise ValueError(f"era ranges use <, <=, >, >=, ==, != on plain versions, got {clause}")
        out.append((clause.operator, Version(clause.version)))
    return tuple(out)


def in_range(spec: str, version: Version) -> bool:
    """Plain version order, unlike PEP 440 specifiers (where `<0.7.3` excludes `0.7.3rc1`): era ranges
    are written as "from this release on" / "before this release"."""
    return all(_COMPARE[op](version, bound) for op, bound in _clauses(spec))


REGISTRY: list[Era] = []


def era(
    topic: str,
    name: str,
    *,
    axis: Axis,
    spec: str = "",
    backends: frozenset[str] | set[str] = ALL_BACKENDS,
    summary: str,
    source: str,
    traits: Mapping[str, Any] | None = None,
) -> Callable[[Apply], Apply]:
    """Register the decorated function as the `topic` adapter for releases in `spec`."""
    if topic not in TOPICS:
        raise ValueError(f"unknown era topic {topic!r}")
    _clauses(spec)  # fail at import on a bad range
    frozen = MappingProxyType(dict(traits or {}))

    def register(fn: Apply) -> Apply:
        REGISTRY.append(Era(topic, name, axis, spec, frozenset(backends), summary, source, fn, frozen))
        return fn

    return register


class EraError(Exception):
    """No era, or more than one, matches an intent (a gap or overlap in the registry)."""


def select(topic: str, intent: EngineIntent) -> Era | None:
    """The one era of `topic` for this intent's backend and version; None when the topic has no era
    for the backend at all (the topic does not apply). Raises `EraError` on a gap or an overlap."""
    candidates = [e for e in REGISTRY if e.topic == topic and intent.backend in e.backends]
    if not candidates:
        return None
    matching = [e for e in candidates if e.matches(intent)]
    if len(matching) == 1:
        return matching[0]
    axis = candidates[0].axis
    version = intent.vllm_ascend if axis == "vllm_ascend" else intent.vllm
    names = ", ".join(e.label for e in matching) or "none"
    raise EraError(f"topic {topic!r}: {len(matching)} eras match {intent.backend} {version}: {names}")


def era_for_release(topic: str, backend: str, vllm: str, vllm_ascend: str | None) -> Era | None:
    """The era of `topic` for a release alone (no deployment intent): for topics whose eras are data, such as
    `quantization` traits and `install`."""
    probe = EngineIntent(backend=backend, vllm=vllm, vllm_ascend=vllm_ascend, model=ModelIntent(source="model"))  # type: ignore[arg-type]
    return select(topic, probe)


def eras_of(topic: str) -> list[Era]:
    return [e for e in REGISTRY if e.topic == topic]
