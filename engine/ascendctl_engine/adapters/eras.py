"""The registry of release eras: (topic, backend, version range) → the adapter piece for that era.

Every release-dependent decision lives in exactly one `Era`: a PEP 440 specifier set over the
vllm-ascend version (`axis="vllm_ascend"`, NPU only) or over the vLLM version (`axis="vllm"`), and the
function that turns intent into flags/env for releases in that range. For a given topic, backend and
version exactly one era matches (the tests walk every release row to prove it); nothing outside this
registry compares versions.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import field
from functools import cache
from types import MappingProxyType
from typing import Any, Literal

from packaging.specifiers import SpecifierSet
from packaging.version import Version

from ascendctl_engine.adapters.builder import CommandBuilder
from ascendctl_engine.adapters.intent import EngineIntent
from ascendctl_engine.adapters.parser_snapshot import ItemSchema
from ascendctl_engine.records import record
from ascendctl_engine.sections.deployment import ModelSpec, TargetSpec
from ascendctl_engine.versions import parse as version_of

Axis = Literal["vllm", "vllm_ascend"]
Apply = Callable[[EngineIntent, CommandBuilder], None]

# Topic order = the order adapters run (later topics may read what earlier ones decided).
TOPICS: tuple[str, ...] = (
    "model",
    "load-strategy",  # model.load_strategy: the safetensors strategies each vLLM's loader knows (adapters/model.py)
    "quantization",
    "quant-description",  # data: the ModelSlim description file a release reads (plan rules ask; no flags)
    "pd-decode-only",  # data: `--additional-config` keys a release refuses outside a PD decode node (no flags)
    "kv-budget",  # data: how the NPU worker sizes the KV cache (ascendctl.plan.fit asks; no flags)
    "kv-tokens-printed",  # data: how vLLM prints its KV token count (ascendctl.plan.fit asks; no flags)
    "pooling",
    "graph",
    "npugraph-ex",
    "capture-sizes",
    "capture-list",  # data: the capture list each release's code builds (adapters/graph.py; plan rules ask; no flags)
    "parallel",
    "eplb",
    "eplb-static",  # data: whether the release's EPLB guide schedules static EPLB for removal (eplb asks; no flags)
    "eplb-models",  # data: the model types a release's dynamic EPLB registers (plan rules ask; no flags)
    "scheduler",
    "speculative",  # adapters/speculative.py
    "kv-cache",  # adapters/kv_cache.py
    "weight-nz",  # engine.weight_nz: FRACTAL_NZ weight layout (adapters/weight_nz.py)
    "serving",  # tool calling, chat template, LoRA, context parallel (adapters/serving.py)
    "pd-router",  # data: the router a release offers in front of prefill/decode instances (adapters/kv_transfer.py)
    "kv-transfer",  # disaggregation: --kv-transfer-config and the connector's env (adapters/kv_transfer.py)
    "kv-extra-keys",  # data: the connector extra keys a release reads besides the sizes (adapters/kv_transfer.py)
    "mooncake-install",  # data: how a release's image installs the Mooncake transfer engine (check asks; no flags)
    "lora-modules",  # data: the JSON object a `--lora-modules` item may be (the argv replay asks; no flags)
    "reasoning",
    "multimodal",
    "structured-outputs",
    "server",
    "engine-v1",
    "env",
    "timeouts",  # runtime.timeouts: the vLLM variables each release reads (adapters/env.py)
    "execute-model-floor",  # data: the execute-model timeout vllm-ascend raises (the timeouts era asks; no flags)
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
    "ascend.fuse_norm_quant",
    "ascend.fuse_qknorm_rope",
    "ascend.fuse_allreduce_rms",
    "ascend.fuse_muls_add",
    "ascend.sparse_sfa_c8",
    "ascend.sparse_li_c8",
    "ascend.npugraph_ex",
    "ascend.static_kernel",
    "ascend.jemalloc",
    "network",
    "install",  # data for the engine environment's install plan (no flags)
    "metrics-names",  # data: the `/metrics` names a vLLM exposes (`ascendctl status` asks; no flags)
)

ALL_BACKENDS = frozenset({"npu", "cuda", "cpu"})


@record
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
# REGISTRY by topic, kept by `era` as it registers: a plan selects some sixty topics, and scanning the whole
# registry for each showed in start-up time.
_BY_TOPIC: dict[str, list[Era]] = {}


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
        registered = Era(topic, name, axis, spec, frozenset(backends), summary, source, fn, frozen)
        REGISTRY.append(registered)
        _BY_TOPIC.setdefault(topic, []).append(registered)
        return fn

    return register


class EraError(Exception):
    """No era, or more than one, matches an intent (a gap or overlap in the registry)."""


def select(topic: str, intent: EngineIntent) -> Era | None:
    """The one era of `topic` for this intent's backend and version; None when the topic has no era
    for the backend at all (the topic does not apply). Raises `EraError` on a gap or an overlap."""
    backend = intent.backend
    candidates = [e for e in _BY_TOPIC.get(topic, ()) if backend in e.backends]
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
    probe = EngineIntent(
        vllm=vllm,
        vllm_ascend=vllm_ascend,
        model=ModelSpec(source="model"),
        target=TargetSpec(backend=backend),  # type: ignore[arg-type]
    )
    return select(topic, probe)


def eras_of(topic: str) -> list[Era]:
    return [e for e in REGISTRY if e.topic == topic]


# --------------------------------------------------------------------------------------------------
# Data topics the plan rules ask (`ascendctl/plan/plan_rules.py`); they plan nothing.


def nothing_to_plan(intent: EngineIntent, b: CommandBuilder) -> None:
    """A data era: its traits answer questions, a serving plan takes nothing from it."""


_NPU = frozenset({"npu"})
MODELSLIM_DESCRIPTION = "quant_model_description.json"

# `quant-description`: trait `filename`, the ModelSlim description the release's `AscendQuantConfig` reads
# (`get_config_filenames`), or None where it reads none (the quant description then comes from config.json's
# `quantization_config`, and a misnamed description file does not matter).
_QUANT_DESCRIPTION: tuple[tuple[str, str, str | None, str], ...] = (
    ("from-config-json", "<0.7.3", None, "v0.7.3rc2:vllm_ascend/quantization/quant_config.py:76 returns []"),
    (
        "description-file-v0.7.3",
        ">=0.7.3,<0.8.0",
        MODELSLIM_DESCRIPTION,
        "v0.7.3:vllm_ascend/quantization/quant_config.py:73; v0.7.3.post1:vllm_ascend/quantization/quant_config.py:73",
    ),
    (
        "from-config-json-v0.8",
        ">=0.8.0,<0.8.5rc1",
        None,
        "v0.8.4rc1:vllm_ascend/quantization/quant_config.py:73 and v0.8.4rc2:…/quant_config.py:71 return []",
    ),
    (
        "description-file",
        ">=0.8.5rc1",
        MODELSLIM_DESCRIPTION,
        "v0.8.5rc1:vllm_ascend/quantization/quant_config.py:70 … "
        "v0.23.0:vllm_ascend/quantization/modelslim_config.py:67 (MODELSLIM_CONFIG_FILENAME)",
    ),
)
for _name, _spec, _file, _source in _QUANT_DESCRIPTION:
    era(
        "quant-description", _name, axis="vllm_ascend", spec=_spec, backends=_NPU,
        summary=f"ModelSlim description read from {_file}" if _file else "no description file read",
        source=_source, traits={"filename": _file},
    )(nothing_to_plan)  # fmt: skip


# `pd-decode-only`: trait `keys`, feature → ((dotted `--additional-config` paths), the engine's error, source) for
# each key the release refuses at start-up unless the node is a PD-disaggregated decode node (kv_role
# kv_consumer); features: `oproj` (o_proj fine-grained TP), `kv_nz` (NZ-format KV cache), `recompute`
# (the recompute scheduler).
_OPROJ_TOP = (
    ("oproj_tensor_parallel_size",),
    "AssertionError: oproj_tensor_parallel_size is only supported in pd scenario and can only be used in D node.",
    "v0.10.2rc1:vllm_ascend/ascend_config.py:80 … v0.11.0:vllm_ascend/ascend_config.py:102",
)
_OPROJ = (
    ("finegrained_tp_config.oproj_tensor_parallel_size",),
    _OPROJ_TOP[1],
    "v0.12.0rc1:vllm_ascend/ascend_config.py:188 … v0.23.0:vllm_ascend/ascend_config.py:559",
)
_KV_NZ = (
    ("enable_kv_nz",),
    "RuntimeError: enable_kv_nz is only supported for mla currently. / NotImplementedError: enable_kv_nz is only "
    "supported in pd scenario and can only be used in D node.",
    "v0.13.0rc2:vllm_ascend/ascend_config.py:147,151 … v0.23.0:vllm_ascend/ascend_config.py:274,277",
)
_RECOMPUTE = (
    ("recompute_scheduler_enable",),
    "ValueError: recompute_scheduler_enable can only be enabled in PD-disaggregated mode … and is not supported "
    "in PD-mixed mode.",
    "v0.18.0:vllm_ascend/platform.py:466 … v0.23.0:vllm_ascend/platform.py:703 (D nodes only)",
)
_RECOMPUTE_V0251 = (
    ("scheduler_config.recompute_scheduler_enable", "recompute_scheduler_enable"),
    _RECOMPUTE[1],
    "v0.25.1rc1:vllm_ascend/platform.py:694; v0.25.1rc1:vllm_ascend/ascend_config.py:875 (scheduler_config, "
    "top-level fallback)",
)
_PD_DECODE_ONLY: tuple[tuple[str, str, Mapping[str, tuple[tuple[str, ...], str, str]]], ...] = (
    ("none", "<0.10.2rc1", {}),
    ("oproj", ">=0.10.2rc1,<0.12.0rc1", {"oproj": _OPROJ_TOP}),
    ("finegrained-oproj", ">=0.12.0rc1,<0.13.0rc2", {"oproj": _OPROJ}),
    ("oproj+kv-nz", ">=0.13.0rc2,<0.18.0", {"oproj": _OPROJ, "kv_nz": _KV_NZ}),
    ("oproj+kv-nz+recompute", ">=0.18.0,<0.25.1rc1", {"oproj": _OPROJ, "kv_nz": _KV_NZ, "recompute": _RECOMPUTE}),
    (
        "oproj+kv-nz+scheduler-config",
        ">=0.25.1rc1",
        {"oproj": _OPROJ, "kv_nz": _KV_NZ, "recompute": _RECOMPUTE_V0251},
    ),
)
for _name, _spec, _keys in _PD_DECODE_ONLY:
    era(
        "pd-decode-only", _name, axis="vllm_ascend", spec=_spec, backends=_NPU,
        summary="refused outside a PD decode node: " + (", ".join(k[0][0] for k in _keys.values()) or "nothing"),
        source="; ".join(k[2] for k in _keys.values()) or "no such check before v0.10.2rc1",
        traits={"keys": MappingProxyType(dict(_keys))},
    )(nothing_to_plan)  # fmt: skip


# `kv-budget`: how vllm-ascend's worker turns device memory into KV cache (ascendctl.plan.fit asks). Traits:
# `accounting` — `whole-device` (requested share minus the torch peak and every non-torch byte the device holds,
# the runtime's own baseline included, clamped at 0) or `increase` (minus weights, the torch peak increase and the
# non-torch *increase* during profiling; may go negative); `workspace_halving` — whether the workers of families
# whose matrix limits say `workspace_kv_halving` (300I Duo) halve the budget for operator workspace;
# `hybrid_pages` — the page rule for attention + linear-attention models; `profile_tokens` — the tokens of the
# profiling forward pass: `batched` (max_num_batched_tokens) or `max-model-len-for-text` (the platform forces
# the Ascend scheduler without chunked prefill on non-MLA text-only models and raises max_num_batched_tokens to
# max_model_len, so the profiling peak grows with the context); `charges_in_use` — whether the halving (300I Duo)
# worker also subtracts the non-torch memory the device held before profiling (other processes' included) from a
# requested share that already left it out: memory another process holds is charged twice.
_KV_BUDGET: tuple[tuple[str, str, str, bool, str, str, bool, str], ...] = (
    (
        "whole-device-v0.9.0", "<0.9.1", "whole-device", False, "v0.13", "batched", False,
        "v0.9.0rc1:vllm_ascend/worker/worker_v1.py; v0.9.1:vllm_ascend/worker/worker_v1.py:163-194",
    ),
    (
        "whole-device+profile-at-max-model-len-v0.9.1", "==0.9.1", "whole-device", False, "v0.13",
        "max-model-len-for-text", False,
        "v0.9.1:vllm_ascend/platform.py:136-157; v0.9.1:vllm_ascend/worker/worker_v1.py:163-194",
    ),
    (
        "whole-device-v0.9.2", ">0.9.1,<0.10.2rc1", "whole-device", False, "v0.13", "batched", False,
        "v0.9.2rc1:vllm_ascend/worker/worker_v1.py; v0.10.1rc1:vllm_ascend/platform.py (no forced scheduler)",
    ),
    (
        "whole-device+profile-at-max-model-len-v0.10.2", ">=0.10.2rc1,<0.11.0rc1", "whole-device", False, "v0.13",
        "max-model-len-for-text", False,
        "v0.10.2rc1:vllm_ascend/platform.py:136-159; v0.11.0rc0:vllm_ascend/platform.py:142-163",
    ),
    (
        "whole-device", ">=0.11.0rc1,<0.15.0rc1", "whole-device", False, "v0.13", "batched", False,
        "v0.14.0rc1:vllm_ascend/worker/worker.py:261-292; v0.11.0:vllm_ascend/core/schedule_config.py:66 (the "
        "Ascend scheduler only on request); v0.13.0:vllm_ascend/patch/platform/patch_mamba_config.py:37-88",
    ),
    (
        "profiled-increase", ">=0.15.0rc1,<0.18.0rc1", "increase", False, "v0.13", "batched", False,
        "v0.15.0rc1:vllm_ascend/worker/worker.py:259,360",
    ),
    (
        "profiled-increase+workspace-halving", ">=0.18.0rc1", "increase", True, "v0.18", "batched", True,
        "v0.18.0rc1:vllm_ascend/_310p/worker_310p.py:76,89-93; v0.23.0:vllm_ascend/_310p/worker_310p.py:90,113-115; "
        "v0.23.0:vllm_ascend/worker/worker.py:527-594; v0.23.0:vllm_ascend/patch/platform/patch_mamba_config.py:58-117",
    ),
)  # fmt: skip
for _name, _spec, _accounting, _halves, _pages, _profile, _in_use, _source in _KV_BUDGET:
    era(
        "kv-budget", _name, axis="vllm_ascend", spec=_spec, backends=_NPU,
        summary=f"KV budget: {_accounting} accounting" + (", workspace halving" if _halves else "")
        + (", profiling at max_model_len (text models)" if _profile != "batched" else ""),
        source=_source,
        traits={
            "accounting": _accounting, "workspace_halving": _halves, "hybrid_pages": _pages,
            "profile_tokens": _profile, "charges_in_use": _in_use, "graph_in_budget": False, "nccl_groups": (),
        },
    )(nothing_to_plan)  # fmt: skip

# `kv-budget` on CUDA, over the vLLM version: the GPU worker charges weights, the torch peak and the non-torch
# increase since its memory snapshot against the requested share; trait `nccl_groups` — the process groups whose
# NCCL communicator and custom all-reduce buffers (created at init for each group of more than one rank) the worker
# charges as non-torch memory because its snapshot predates the distributed environment: the V0 worker
# (v0.6.5:vllm/worker/worker.py:141-150; still in v0.9.2:vllm/worker/worker.py:188-193) and the V1 worker through
# v0.10.2 (v0.9.2:vllm/v1/worker/gpu_worker.py:140,158-160; v0.10.2:vllm/v1/worker/gpu_worker.py:175,193); from
# v0.11.0 the snapshot follows NCCL init (v0.11.0:vllm/v1/worker/gpu_worker.py:165-182), so none. vLLM builds TP and
# PP groups (v0.6.5:vllm/distributed/parallel_state.py:1045-1066), from v0.9.0 DP and EP (TP × DP ranks, with or
# without expert parallelism) groups too (v0.9.0:vllm/distributed/parallel_state.py:1059-1062;
# v0.9.2:vllm/distributed/parallel_state.py:1037-1074). Trait `graph_in_budget` — whether it also charges its CUDA-graph
# memory estimate (VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS, default 0 through v0.19.1, 1 from v0.20.2;
# v0.20.0-v0.20.1 not checked). Traits the NPU eras carry keep their neutral values. Not modelled: the V1 worker of
# v0.8.x-v0.9.0, which charges every non-torch byte on the device (v0.8.5:vllm/v1/worker/gpu_worker.py:194-210;
# v0.9.0:vllm/v1/worker/gpu_worker.py:180-210; v0.9.1 has the snapshot: v0.9.1:vllm/v1/worker/gpu_worker.py:135).
_KV_BUDGET_CUDA: tuple[tuple[str, str, bool, tuple[str, ...], str], ...] = (
    (
        "cuda-baseline-before-nccl-tp-pp", "<0.9.0", False, ("tp", "pp"),
        "v0.6.5:vllm/worker/worker.py:141-150,198-200; v0.6.5:vllm/distributed/parallel_state.py:1045-1066",
    ),
    (
        "cuda-baseline-before-nccl", ">=0.9.0,<0.11.0", False, ("tp", "pp", "dp", "ep"),
        "v0.9.2:vllm/v1/worker/gpu_worker.py:140,158-160,206-228; v0.9.2:vllm/distributed/parallel_state.py:1037-1074; "
        "v0.10.2:vllm/v1/worker/gpu_worker.py:175,193",
    ),
    (
        "cuda-profiled-increase", ">=0.11.0,<0.20.2", False, (),
        "v0.11.0:vllm/v1/worker/gpu_worker.py:165-182,254-280; v0.19.1:vllm/envs.py:1654-1656 (the graph estimate "
        "is opt-in)",
    ),
    (
        "cuda-profiled-increase+graph-estimate", ">=0.20.2", True, (),
        "v0.20.2:vllm/envs.py:1736-1738; v0.20.2:vllm/v1/worker/gpu_worker.py:397-424; "
        "v0.33.0:vllm/v1/worker/gpu_worker.py:718-757",
    ),
)  # fmt: skip
for _name, _spec, _graph, _nccl, _source in _KV_BUDGET_CUDA:
    era(
        "kv-budget", _name, axis="vllm", spec=_spec, backends=frozenset({"cuda"}),
        summary="KV budget: increase accounting" + (", CUDA-graph estimate charged" if _graph else "")
        + (f", NCCL of the {'/'.join(_nccl)} groups charged (snapshot before NCCL init)" if _nccl else ""),
        source=_source,
        traits={
            "accounting": "increase", "workspace_halving": False, "hybrid_pages": "v0.18",
            "profile_tokens": "batched", "charges_in_use": False, "graph_in_budget": _graph, "nccl_groups": _nccl,
        },
    )(nothing_to_plan)  # fmt: skip


# `kv-tokens-printed`: trait `printed`, how vLLM prints "GPU KV cache size: N tokens". Up to 0.20.0 `num_blocks //
# num_groups × min_block_size` (`blocks`: v0.20.0:vllm/v1/core/kv_cache_utils.py:1679-1711; v0.18.0 …:1284-1316);
# from 0.20.1 `int(max_concurrency × max_model_len)` (`concurrency`: v0.20.1:vllm/v1/core/kv_cache_utils.py:1684-1713;
# v0.24.0 …:1788-1798,2142-2146). The fit prints what the release's vLLM prints (ascendctl.plan.fit.cache).
for _name, _spec, _printed, _source in (
    ("blocks", "<0.20.1", "blocks", "v0.20.0:vllm/v1/core/kv_cache_utils.py:1679-1711"),
    ("concurrency", ">=0.20.1", "concurrency", "v0.20.1:vllm/v1/core/kv_cache_utils.py:1684-1713"),
):
    era(
        "kv-tokens-printed", _name, axis="vllm", spec=_spec,
        summary=f"the printed KV token count: {_printed}", source=_source, traits={"printed": _printed},
    )(nothing_to_plan)  # fmt: skip


# `lora-modules`: trait `item`, the JSON object one `--lora-modules` item may be instead of `name=path`. Every pinned
# vLLM's LoRAParserAction reads an item holding `=` and no `,` as name=path and any other as JSON for
# `LoRAModulePath(**item)` (0.7.1:vllm/entrypoints/openai/cli_args.py:40-54 … 0.25.1:…/openai/cli_args.py:49-62,
# 0.33.0:vllm/entrypoints/common/cli_args.py:55-68); the dataclass's fields are the keys. The builder hands the item
# to the argv replay (`ParserSnapshot.check_argv(items=…)`), whose `{}` sample cannot tell a LoRA object.
LORA_ITEM_FLAG = "--lora-modules"
_LORA_BASE = ("name", "path", "base_model_name")
_LORA_ITEMS: tuple[tuple[str, str, tuple[str, ...], str], ...] = (
    (
        "name+path+base_model_name", "<0.22.1", _LORA_BASE,
        "vLLM 0.7.1:vllm/entrypoints/openai/serving_models.py:34-38 … "
        "0.21.0:vllm/entrypoints/openai/models/protocol.py:14-18 (LoRAModulePath)",
    ),
    (
        "adds is_3d_lora_weight", ">=0.22.1", (*_LORA_BASE, "is_3d_lora_weight"),
        "vLLM 0.22.1:vllm/entrypoints/openai/models/protocol.py:14-19 … "
        "0.33.0:vllm/entrypoints/openai/models/protocol.py:14-19 (LoRAModulePath)",
    ),
)  # fmt: skip


def _lora_items(schema: ItemSchema) -> Apply:
    def apply(intent: EngineIntent, b: CommandBuilder) -> None:
        b.item_schemas[LORA_ITEM_FLAG] = schema

    return apply


for _name, _spec, _fields, _source in _LORA_ITEMS:
    _schema = ItemSchema(required=("name", "path"), keys=_fields, source=_source)
    era(
        "lora-modules", _name, axis="vllm", spec=_spec,
        summary=f"`{LORA_ITEM_FLAG}` items: `name=path` or a JSON object of {', '.join(_fields)}",
        source=_source, traits={"item": _schema},
    )(_lora_items(_schema))  # fmt: skip


# `eplb-static`: trait `removal`, the release the tag's EPLB guide schedules static EPLB (loading a recorded expert
# map, `eplb_config.expert_map_path`) to be removed in, or None where the guide schedules nothing; the EPLB adapter
# warns a plan that sets engine.eplb.expert_map_path in such a release. v0.23.0rc1's guide has the section without
# the notice; v0.23.0 adds it, and every later tag (releases/v0.26.0rc and main 182b75ea too) keeps it.
_EPLB_GUIDE = "docs/source/user_guide/feature_guide/expert_parallelism_load_balancer.md"
_EPLB_STATIC: tuple[tuple[str, str, str | None, str], ...] = (
    ("static-eplb", "<0.23.0", None, f"v0.23.0rc1:{_EPLB_GUIDE}:99 (Static EPLB, no removal notice)"),
    (
        "static-eplb-removal-scheduled", ">=0.23.0", "v0.25.1",
        f"v0.23.0:{_EPLB_GUIDE}:174; v0.24.0rc1:{_EPLB_GUIDE}:174; v0.25.1rc1:{_EPLB_GUIDE}:174 "
        "(> Static EPLB is scheduled for removal in v0.25.1.)",
    ),
)  # fmt: skip
for _name, _spec, _removal, _source in _EPLB_STATIC:
    era(
        "eplb-static", _name, axis="vllm_ascend", spec=_spec, backends=_NPU,
        summary=f"the EPLB guide schedules static EPLB for removal in {_removal}" if _removal else "static EPLB kept",
        source=_source, traits={"removal": _removal},
    )(nothing_to_plan)  # fmt: skip


# `eplb-models`: traits `model_types`, the config `model_type`s the release's dynamic EPLB registers
# (`vllm_ascend/eplb/utils.py` `model_register`, called when dynamic EPLB is on; any other type raises
# NotImplementedError("EPLB is not supported.")), or None where the release keeps no such list; `config`, which
# config's model_type it reads (`hf_config`: the top level; `hf_text_config`: text_config's where there is one).
# Before v0.11.0rc0 the eplb era refuses dynamic EPLB itself; from v0.15.0rc1 model_register checks no type.
_EPLB_TYPES = ("qwen3_moe", "deepseek_v2", "deepseek_v3")
_EPLB_MODELS: tuple[tuple[str, str, tuple[str, ...] | None, str, str], ...] = (
    ("no-dynamic-eplb", "<0.11.0rc0", None, "", "the eplb era (adapters/eplb.py) refuses dynamic EPLB here"),
    (
        "registered-types", ">=0.11.0rc0,<0.13.0rc2", _EPLB_TYPES, "hf_config",
        "v0.11.0:vllm_ascend/eplb/utils.py:69-77 … v0.13.0rc1:vllm_ascend/eplb/utils.py:72-80 "
        "(model_config.hf_config); v0.11.0:vllm_ascend/worker/model_runner_v1.py:2685 (if self.dynamic_eplb)",
    ),
    (
        "registered-text-types", ">=0.13.0rc2,<0.15.0rc1", _EPLB_TYPES, "hf_text_config",
        "v0.13.0:vllm_ascend/eplb/utils.py:69-77 … v0.14.0rc1:vllm_ascend/eplb/utils.py:66-74 "
        "(model_config.hf_text_config)",
    ),
    ("no-type-list", ">=0.15.0rc1", None, "", "v0.15.0rc1:vllm_ascend/eplb/utils.py (model_register checks no type)"),
)  # fmt: skip
for _name, _spec, _types, _config, _source in _EPLB_MODELS:
    era(
        "eplb-models", _name, axis="vllm_ascend", spec=_spec, backends=_NPU,
        summary=f"dynamic EPLB registers {', '.join(_types)} ({_config})" if _types else "no model-type list",
        source=_source, traits={"model_types": _types, "config": _config or None},
    )(nothing_to_plan)  # fmt: skip


# `execute-model-floor`: trait `floor`, (below, raised to): vllm-ascend's platform raises a smaller
# VLLM_EXECUTE_MODEL_TIMEOUT_SECONDS (HCCL's operator timeout is 1836 s), or None where it leaves the value alone;
# the timeouts era (adapters/env.py) warns a runtime.timeouts.execute_model_s below it.
_FLOOR_SOURCE = (
    "v0.23.0:vllm_ascend/platform.py:1274-1281; v0.23.0.post1:PyPI:vllm_ascend-0.23.0.post1.tar.gz:"
    "vllm_ascend/platform.py:1274-1281 (not in v0.23.0rc1 nor v0.24.0rc1)"
)
_FLOORS: tuple[tuple[str, str, tuple[int, int] | None, str], ...] = (
    ("kept", "<0.23.0", None, "v0.23.0rc1:vllm_ascend/platform.py (no such check)"),
    ("raised-below-1836", ">=0.23.0,<0.24.0rc1", (1836, 3000), _FLOOR_SOURCE),
    ("kept-again", ">=0.24.0rc1", None, "v0.24.0rc1:vllm_ascend/platform.py, v0.25.1rc1:vllm_ascend/platform.py "
     "(no such check)"),
)  # fmt: skip


for _name, _spec, _floor, _source in _FLOORS:
    era(
        "execute-model-floor", _name, axis="vllm_ascend", spec=_spec, backends=_NPU,
        summary=f"VLLM_EXECUTE_MODEL_TIMEOUT_SECONDS under {_floor[0]} raised to {_floor[1]}" if _floor
        else "VLLM_EXECUTE_MODEL_TIMEOUT_SECONDS as given",
        source=_source, traits={"floor": _floor},
    )(nothing_to_plan)  # fmt: skip


# `metrics-names`: trait `names`, what `ascendctl status` reads from a vLLM's `/metrics`, by meaning → metric family
# name as `prometheus_client`'s parser reports it (a counter's family drops `_total`). The KV-cache gauge was
# renamed in vLLM 0.9.2 (the old name hidden from 0.11.0); from 0.11.0 a per-request TPOT histogram exists beside
# the per-token one (renamed `vllm:inter_token_latency_seconds` in 0.10.2). Keyed by the instance's own `/version`.
_METRICS_LOGGERS = "vllm/v1/metrics/loggers.py"
_METRICS_COMMON = {
    "running": "vllm:num_requests_running",
    "waiting": "vllm:num_requests_waiting",
    "prompt_tokens": "vllm:prompt_tokens",
    "generation_tokens": "vllm:generation_tokens",
    "preemptions": "vllm:num_preemptions",
    "ttft": "vllm:time_to_first_token_seconds",
}
_METRICS_NAMES: tuple[tuple[str, str, str, str, str], ...] = (
    (
        "gpu-cache-usage", "<0.9.2", "vllm:gpu_cache_usage_perc", "vllm:time_per_output_token_seconds",
        f"vLLM 0.8.5:{_METRICS_LOGGERS}:169,279; 0.9.1:{_METRICS_LOGGERS}:189,303",
    ),
    (
        "kv-cache-usage", ">=0.9.2,<0.11.0", "vllm:kv_cache_usage_perc", "vllm:time_per_output_token_seconds",
        f"vLLM 0.9.2:{_METRICS_LOGGERS}:217,330; 0.10.2:{_METRICS_LOGGERS}:245,383",
    ),
    (
        "request-tpot", ">=0.11.0", "vllm:kv_cache_usage_perc", "vllm:request_time_per_output_token_seconds",
        f"vLLM 0.11.0:{_METRICS_LOGGERS}:252,414; 0.32.0:{_METRICS_LOGGERS}:620,951",
    ),
)  # fmt: skip
for _name, _spec, _kv, _tpot, _source in _METRICS_NAMES:
    era(
        "metrics-names", _name, axis="vllm", spec=_spec,
        summary=f"`/metrics`: KV-cache use from {_kv}, TPOT from {_tpot}",
        source=_source,
        traits={"names": MappingProxyType({**_METRICS_COMMON, "kv_usage": _kv, "tpot": _tpot})},
    )(nothing_to_plan)  # fmt: skip


def metrics_names(vllm: str) -> Era:
    """The `metrics-names` era of a running vLLM (any backend: the names are vLLM's); its version as `/version`
    reports it (`0.32.0+cpu`). A pre-release counts as its final, like every vLLM-axis era."""
    parsed = version_of(version_of(vllm).base_version)
    matching = [e for e in eras_of("metrics-names") if in_range(e.spec, parsed)]
    if len(matching) != 1:
        raise EraError(f"topic 'metrics-names': {len(matching)} eras match vLLM {vllm}")
    return matching[0]
