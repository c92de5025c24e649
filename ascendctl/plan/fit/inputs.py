"""Gathering a fit's inputs from the plan, the model on disk, the host facts and the hardware table.

Each number records where it came from (`FitInputs.inputs`), the way `--json` reports it. The engine's own
defaults for what the profile leaves unset are vLLM's (`ENGINE_*` below, with their sources).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ascendctl.facts.model_inspect import inspect_model, is_path_source, param_breakdown, with_context_overrides
from ascendctl.facts.published_shapes import CONFIG_HINT, published_config
from ascendctl.plan.fit.budget import GIB, MIB, Layout
from ascendctl.plan.fit.estimate import FitError, FitInputs
from ascendctl.plan.types import EngineSettings
from ascendctl_engine import versions
from ascendctl_engine.adapters.eras import era_for_release
from ascendctl_engine.adapters.parser_snapshot import (
    ParserSnapshot,
    human_int,
    parser_distribution,
    snapshot_for,
    snapshot_versions,
)
from ascendctl_engine.argv_items import ArgItem, find
from ascendctl_engine.records import record

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ascendctl.facts.matrix.schema import Hardware
    from ascendctl.facts.model_inspect import ModelConfig, ModelInspection
    from ascendctl.plan.types import Setting
    from ascendctl.schema.profile import Profile
    from ascendctl_engine.host.facts import HostFacts

# vLLM's batch defaults for `vllm serve` when the profile sets none (vllm v0.32.0 engine/arg_utils.py:2923-2985):
# devices under 70 GiB (every Ascend NPU but the 96 GB Ascend 950) get 256 sequences / 2048 tokens; from 70 GiB
# 1024 / 8192; from 160 GiB 1024 / 16384; the CPU platform 128 / 2048 per rank of TP × PP.
ENGINE_BATCH_DEFAULTS = ((160 * GIB, 1024, 16384), (70 * GIB, 1024, 8192), (0, 256, 2048))
CPU_BATCH_DEFAULTS = (128, 2048)
MTP_METHODS = ("mtp", "deepseek_mtp")


def engine_batch_defaults(backend: str, device_bytes: int | None, world: int) -> tuple[int, int]:
    """(max_num_seqs, max_num_batched_tokens) vLLM picks for `vllm serve`."""
    if backend == "cpu":
        return CPU_BATCH_DEFAULTS[0] * world, CPU_BATCH_DEFAULTS[1] * world
    for floor, seqs, tokens in ENGINE_BATCH_DEFAULTS:
        if (device_bytes or 0) >= floor:
            return seqs, tokens
    return ENGINE_BATCH_DEFAULTS[-1][1:]  # pragma: no cover - the last floor is 0


# What the NPU runtime reports as a device's total memory (`torch.npu.mem_get_info`, the worker's "total memory")
# for the HBM sizes npu-smi prints: the driver keeps about 3 GiB of a 64 GB part. Measured in published start-up
# logs (benchmarks/data/fit_published.yaml: vllm-project/vllm-ascend#4594, #6847, #4037 for 65,536 MB; #5044, #2473
# for 32,768 MB). Other sizes are scaled like the 64 GB part.
VISIBLE_BYTES = {65536: 65452113920, 32768: 31662800896}
# The families whose runtime reports npu-smi's memory figure itself, in MiB (MB × 2^20): on a 300I Duo die npu-smi
# already prints what is left after the driver (47,304 MB → 49,602,220,032 B in vllm-project/vllm-ascend#3316;
# 44,280 MB ↔ 46,431,260,672 B in #4074; 44,278 MB ↔ 43.24 GiB in #14274), so the A2 conversion would be ≈ 4.8 %
# low there.
NPU_SMI_IS_VISIBLE = frozenset({"300i-duo"})
# The 300I Duo (310P) family, whose runtime holds budget.RUNTIME_IN_USE_310P of non-torch memory.
FAMILIES_310P = frozenset({"300i-duo"})


def visible_bytes(hbm_mb: int, family: str | None = None) -> tuple[int, str]:
    """The runtime's total for a device npu-smi reports `hbm_mb` for, on hardware family `family`."""
    if family in NPU_SMI_IS_VISIBLE:
        return hbm_mb * MIB, f"npu-smi's figure × 2^20 (what the {family} runtime reports)"
    if hbm_mb in VISIBLE_BYTES:
        return VISIBLE_BYTES[hbm_mb], "as published logs of this size report"
    return int(hbm_mb * VISIBLE_BYTES[65536] / 65536), "scaled like the 64 GB part (no published log of this size)"


def _family(hardware: Hardware | None, facts: HostFacts | None) -> str | None:
    """The hardware family: the profile's, else the one npu-smi's table layout names (its `310p` layout)."""
    if hardware is not None:
        return hardware.id
    layout = facts.npu.layout if facts is not None and facts.npu is not None else None
    return "300i-duo" if layout == "310p" else layout


@record(eq=False)
class DeviceMemory:
    bytes: int
    source: str
    used: int = 0  # bytes other processes hold on the fullest device in use (host facts)


def device_memory(
    profile: Profile, hardware: Hardware | None, facts: HostFacts | None, mask: str | None = None
) -> DeviceMemory | None:
    """Total memory of one device as the runtime sees it: from the smallest HBM the host reports among the devices
    the profile uses, else from the hardware table's first (most common) size. A3 and 300I Duo cards hold two
    dies: the numbers are per die."""
    wanted = profile.target.visible_devices or list(range(profile.target.devices_per_node))
    if facts is not None and facts.npu is not None and facts.devices:
        devices = facts.devices_in_use(wanted, mask) or list(facts.devices)
        known = [s for s in (d.hbm_total_mb or d.memory_total_mb for d in devices) if s]
        if known:
            total, how = visible_bytes(min(known), _family(hardware, facts))
            # npu-smi counts the driver's own reserve as used (≈3.3 GB on an idle 64 GB part) — the part of HBM the
            # runtime's total already leaves out; only what is held beyond it belongs to other processes
            reserve_mb = min(known) - total // MIB
            used_mb = max((d.hbm_used_mb if d.hbm_total_mb else d.memory_used_mb) or 0 for d in devices)
            used = max(0, used_mb - reserve_mb) * MIB
            return DeviceMemory(
                total, f"host facts: {min(known)} MB per device (npu-smi) → {total / GIB:.2f} GiB, {how}", used
            )
    if facts is not None and facts.cuda.gpus:
        gpus = [g for g in facts.cuda.gpus if g.index in set(wanted)] or list(facts.cuda.gpus)
        sizes = [g.memory_total_mb for g in gpus if g.memory_total_mb]
        if sizes:
            return DeviceMemory(min(sizes) * MIB, f"host facts: {min(sizes)} MiB per GPU (nvidia-smi)")
    if hardware is not None and hardware.hbm_gb_per_chip:
        gb = hardware.hbm_gb_per_chip[0]
        die = " per die" if (hardware.chips_per_card or 1) > 1 else ""
        total, how = visible_bytes(gb * 1024)  # the nominal size: npu-smi facts give the real one
        return DeviceMemory(total, f"hardware table: {hardware.name} {gb} GB{die} → {total / GIB:.2f} GiB, {how}")
    return None


def fit_inputs(
    profile: Profile,
    *,
    engine: EngineSettings,
    vllm: str,
    vllm_ascend: str | None,
    model_source: str,
    facts: HostFacts | None = None,
    config: ModelConfig | None = None,
) -> FitInputs:
    """Everything `estimate` needs, from the plan's typed settings (`engine`), the model on disk and the host;
    raises FitError when the model's shapes or the device memory are unknown. `config`: a config.json given
    explicitly (`--config FILE`), read instead of the model's own; the weights are still read from disk if there."""
    hardware = engine.hardware
    found = inspect_model(model_source, revision=profile.model.revision, weights=True, hub=profile.model.scheme)
    config, config_source = with_config_defaults(*_model_config(profile, found, config))
    inputs: dict[str, str] = {"config": config_source}
    if profile.model.dtype != "auto":  # `--dtype` casts what config.json stores: the weights and the KV cache follow it
        config = replace(config, torch_dtype=profile.model.dtype)
        inputs["dtype"] = f"model.dtype {profile.model.dtype} (--dtype)"
    par = profile.engine.parallel
    layout = Layout(par.tensor, par.pipeline, par.data, par.expert)
    backend = profile.target.backend
    memory: DeviceMemory | None = None
    if backend != "cpu":
        # the mask as `check` reads it (the host's environment under the profile's runtime.env), not the plan's
        # own ASCEND_RT_VISIBLE_DEVICES, which restates target.visible_devices
        host_env = dict(facts.env) if facts is not None else {}
        mask = {**host_env, **profile.runtime.env}.get("ASCEND_RT_VISIBLE_DEVICES")
        memory = device_memory(profile, hardware, facts, mask)
        if memory is None:
            raise FitError(
                "device memory is unknown: pass --facts FILE (`ascendctl check --json` on the host) or set "
                "target.hardware"
            )
        inputs["hbm"] = memory.source
        if memory.used:
            inputs["hbm_in_use"] = f"{memory.used / GIB:.2f} GiB held by other processes (npu-smi)"
    device_bytes = memory.bytes if memory else None
    seqs_default, tokens_default = engine_batch_defaults(backend, device_bytes, par.tensor * par.pipeline)
    snapshot = _snapshot(vllm, backend)

    def pick(name: str, default: Any, what: str) -> Any:
        key = EngineSettings.paths[name]
        chosen: Setting = getattr(engine, name)
        if chosen.value is None:
            if default is None:
                raise FitError(f"{key} is unset and the engine's default is unknown ({what})")
            inputs[key] = f"engine default {default} ({what})"
            return default
        inputs[key] = chosen.source
        return chosen.value

    # the context the engine derives when max_model_len is unset: config.json's, with model.hf_overrides applied
    served = with_context_overrides(config, profile.model.hf_overrides)
    context = "config.json's context" + (" with model.hf_overrides" if served is not config else "")
    max_len = pick("max_model_len", served.derived_max_model_len, context)
    seqs = pick("max_num_seqs", seqs_default, "vLLM's batch defaults")
    batched = pick("max_num_batched_tokens", tokens_default, "vLLM's batch defaults")
    util_default = utilization_default(vllm, backend)
    util = pick(
        "device_utilization",
        util_default[0] if util_default is not None else None,
        util_default[1] if util_default is not None else "no parser snapshot at or below this vLLM",
    )
    cpu_kv = None
    if backend == "cpu":
        space = engine.cpu_kv_cache_gib.value
        if not isinstance(space, int):
            raise FitError("the CPU KV cache size is unset: set engine.memory.cpu_kv_cache_gib")
        cpu_kv = space * GIB
        inputs["kv_cache"] = f"VLLM_CPU_KVCACHE_SPACE={space} GiB (explicit on CPU)"
    buffsize = engine.hccl_buffer_mb.value
    if buffsize is not None:
        inputs["hccl_buffsize"] = f"HCCL_BUFFSIZE={buffsize} MB (plan env)"
    spec = profile.engine.speculative
    mtp = config.mtp_layers if spec is not None and spec.method in MTP_METHODS else 0
    inputs["weights"] = (
        f"safetensors headers under {found.directory}"
        if found.weights is not None and found.weights.by_kind
        else (found.weights.source if found.weights is not None else "config.json parameter counts")
    )
    if found.weights is None and found.weights_error:  # unreadable or over the header budget: say why
        inputs["weights"] += f" ({found.weights_error})"
    explicit_kv = _explicit_kv_memory(profile.engine.arg_items)
    if explicit_kv is not None:
        inputs["kv_cache"] = f"{KV_MEMORY_FLAG}={explicit_kv} in engine.extra_args (the engine skips profiling)"
    budget_era = kv_budget(backend, vllm, vllm_ascend)
    worker = _worker(budget_era, hardware, facts, config, inputs)
    return FitInputs(
        backend=backend,
        config=config,
        layout=layout,
        max_model_len=int(max_len),
        max_num_seqs=int(seqs),
        max_num_batched_tokens=int(batched),
        device_bytes=device_bytes,
        utilization=float(util),
        cpu_kv_bytes=cpu_kv,
        weights_stats=found.weights,
        params=param_breakdown(config),
        quantization=profile.model.quantization,
        graph_mode=str(engine.graph_mode.value),
        capture_sizes=tuple(engine.capture_sizes.value) if engine.capture_sizes.value else None,
        capture_cap=hardware.limits.max_capture_sizes if hardware is not None else None,
        kv_cache_dtype=str(engine.kv_cache_dtype.value),
        hccl_buffsize_mb=buffsize,
        speculative_tokens=spec.num_tokens if spec is not None else 0,
        mtp_layers=mtp,
        kv_halved=worker.halved,
        charges_in_use=worker.charges_in_use,
        profile_at_max_model_len=worker.profile_at_max_model_len,
        whole_device=worker.whole_device,
        hybrid_rule=worker.hybrid_rule,
        graph_in_budget=worker.graph_in_budget,
        nccl_groups=worker.nccl_groups,
        kv_memory_flag=KV_MEMORY_FLAG if snapshot is not None and snapshot.has(KV_MEMORY_FLAG) else None,
        extra_args=tuple(profile.engine.extra_args),
        kv_memory_bytes=explicit_kv,
        device_used_bytes=memory.used if memory is not None else 0,
        devices_per_node=profile.target.devices_per_node,
        nodes=profile.target.nodes,
        max_devices_per_node=hardware.devices_per_server if hardware is not None else None,
        inputs=inputs,
        context_parallel=_context_parallel(profile),
        runtime_310p=worker.runtime_310p,
        printed_tokens=printed_tokens_rule(vllm, backend),
    )


def _model_config(profile: Profile, found: ModelInspection, given: ModelConfig | None) -> tuple[ModelConfig, str]:
    """The shapes the fit reads and where they came from: `--config FILE`, else the model's config.json on disk,
    else the published shapes matched by name; FitError when none."""
    if given is not None:
        return given, f"{given.path} (--config)"
    if found.config is not None:
        return found.config, found.config.path
    why = found.config_error or "no config.json on this machine (a hub id not in the HF or ModelScope cache)"
    config = published_config(profile.model.location)
    if config is None:
        # a hub id can be fetched by name; a path names a directory of another machine: its own file is the way
        local = is_path_source(profile.model.location)
        hint = "give the model's config.json with `--config FILE`" if local else CONFIG_HINT
        raise FitError(
            f"the fit needs the model's config.json: {why}, and its shapes are not published in "
            f"ascendctl/facts/data/model_configs/ ({hint})"
        )
    return config, f"{config.path}: {why}; matched by name, weights from parameter counts"


# What transformers gives a config.json that leaves a key out: its architecture's config class default, which is what
# vLLM then reads (transformers 5.19.0: models/qwen3/configuration_qwen3.py:62,68 — vocab_size 151,936, head_dim 128;
# models/qwen2_5_vl/configuration_qwen2_5_vl.py:72-109 — the text model's vocab_size 152,064). Keyed by the text
# model's model_type. A key no class defaults keeps vLLM's own fallback (head_dim: hidden_size ÷ num_attention_heads,
# cache.kv_shape).
CONFIG_CLASS_DEFAULTS: dict[str, dict[str, int]] = {  # only vocab_size and head_dim are filled
    "qwen3": {"vocab_size": 151936, "head_dim": 128},
    "qwen2_5_vl": {"vocab_size": 152064},
    "qwen2_5_vl_text": {"vocab_size": 152064},
}


def with_config_defaults(config: ModelConfig, source: str) -> tuple[ModelConfig, str]:
    """`config` with the keys it leaves out filled from its architecture's config class (CONFIG_CLASS_DEFAULTS), so
    the parameters can be counted and the head size is the model's; `source` says which were filled."""
    defaults = CONFIG_CLASS_DEFAULTS.get(config.text_model_type or config.model_type or "", {})
    filled = {key: value for key, value in defaults.items() if getattr(config, key) is None}
    if not filled:
        return config, source
    said = ", ".join(f"{key} {value:,}" for key, value in filled.items())
    config = replace(
        config, vocab_size=filled.get("vocab_size", config.vocab_size), head_dim=filled.get("head_dim", config.head_dim)
    )
    return config, f"{source} ({said}: the {config.text_model_type} config class's defaults)"


KV_MEMORY_FLAG = "--kv-cache-memory-bytes"


def _explicit_kv_memory(items: Sequence[ArgItem]) -> int | None:
    """The bytes of a `--kv-cache-memory-bytes` in the profile's parsed extra_args (argparse also takes a unique
    prefix, and the worker's own suggestion spells it `--kv-cache-memory`)."""
    item = find(items, KV_MEMORY_FLAG, abbreviation=len("--kv-cache-m"))
    raw = item.value if item is not None else None
    return human_int(raw) if raw is not None else None


def _snapshot(vllm: str, backend: str) -> ParserSnapshot | None:
    try:
        return snapshot_for(vllm, parser_distribution(backend))
    except LookupError:
        return None


def utilization_default(vllm: str | None, backend: str = "npu") -> tuple[float, str] | None:
    """vLLM's `--gpu-memory-utilization` default for a version, from the parser snapshots
    (engine/ascendctl_engine/data/parsers/): the version's own snapshot, else the nearest older one (the default
    changed from 0.9 to 0.92 in 0.20); None when no snapshot is at or below it."""
    distribution = parser_distribution(backend)
    known = snapshot_versions(distribution)
    if not known:
        return None
    wanted = versions.parse(vllm or known[0])
    older = [v for v in known if versions.parse(v) <= wanted]
    for version in ([vllm] if vllm else []) + older[::-1]:
        snapshot = _snapshot(version, backend)
        option = snapshot.option("--gpu-memory-utilization") if snapshot is not None else None
        if snapshot is not None and option is not None and option.default is not None:
            return float(option.default), f"--gpu-memory-utilization in {snapshot.source}"
    return None


@record(eq=False)
class KvBudgetEra:
    """The era registry's `kv-budget` answer for a release (NPU by vllm-ascend version, CUDA by vLLM version)."""

    name: str
    accounting: str  # whole-device / increase
    workspace_halving: bool  # families with `workspace_kv_halving` in their matrix limits halve the budget
    hybrid_pages: str
    label: str
    profile_tokens: str = "batched"  # or max-model-len-for-text: the profiling pass runs max_model_len tokens
    charges_in_use: bool = False  # the halving worker also subtracts what the device held before profiling
    graph_in_budget: bool = False  # the worker charges its CUDA-graph memory estimate to the KV budget (CUDA)
    nccl_groups: tuple[str, ...] = ()  # groups whose NCCL init the worker charges (snapshot before it, CUDA)

    @property
    def describe(self) -> str:
        halving = ", halved where the family's workers halve it" if self.workspace_halving else ""
        graphs = ", CUDA-graph memory charged to the KV budget" if self.graph_in_budget else ""
        graphs += f", NCCL of the {'/'.join(self.nccl_groups)} groups charged" if self.nccl_groups else ""
        return f"{self.label}: {self.accounting} accounting{halving}{graphs}"


def kv_budget(backend: str, vllm: str, vllm_ascend: str | None) -> KvBudgetEra | None:
    if backend == "cpu" or (backend == "npu" and vllm_ascend is None):
        return None
    era = era_for_release("kv-budget", backend, vllm, vllm_ascend)
    if era is None:
        return None
    t = era.traits
    return KvBudgetEra(
        era.name, str(t["accounting"]), bool(t["workspace_halving"]), str(t["hybrid_pages"]), era.label,
        str(t["profile_tokens"]), bool(t["charges_in_use"]), bool(t.get("graph_in_budget")),
        tuple(t.get("nccl_groups") or ()),
    )  # fmt: skip


@record
class _Worker:
    """How the release's worker sizes this deployment's KV cache (the `kv-budget` era on this hardware)."""

    halved: bool = False
    charges_in_use: bool = False
    profile_at_max_model_len: bool = False
    whole_device: bool = False
    hybrid_rule: str = "v0.18"
    graph_in_budget: bool = False
    nccl_groups: tuple[str, ...] = ()
    runtime_310p: bool = False


def _worker(
    era: KvBudgetEra | None,
    hardware: Hardware | None,
    facts: HostFacts | None,
    config: ModelConfig,
    inputs: dict[str, str],
) -> _Worker:
    """The era's traits for this hardware and model; records them in `inputs`."""
    if era is None:
        return _Worker()
    inputs["kv_budget"] = era.describe
    family = _family(hardware, facts)
    halving_family = hardware.limits.workspace_kv_halving if hardware is not None else family in NPU_SMI_IS_VISIBLE
    halved = era.workspace_halving and halving_family
    at_max_len = profiles_at_max_model_len(era, config)
    if at_max_len:
        inputs["profile_tokens"] = f"max_model_len ({era.label}: text models profile it)"
    return _Worker(
        halved, halved and era.charges_in_use, at_max_len, era.accounting == "whole-device", era.hybrid_pages,
        era.graph_in_budget, era.nccl_groups, family in FAMILIES_310P,
    )  # fmt: skip


def printed_tokens_rule(vllm: str | None, backend: str = "npu") -> str:
    """How the release's vLLM prints its KV token count (the era registry's `kv-tokens-printed`: "concurrency" from
    vLLM 0.20.1), "blocks" when the version is unknown."""
    if versions.parse_or_none(vllm) is None:
        return "blocks"
    era = era_for_release("kv-tokens-printed", backend, str(vllm), None)
    return str(era.traits["printed"]) if era is not None else "blocks"


def profiles_at_max_model_len(era: KvBudgetEra | None, config: ModelConfig) -> bool:
    """Whether the release's profiling pass runs `max_model_len` tokens for this model: the platform forces its
    scheduler without chunked prefill on non-MLA text-only models (the era's `profile_tokens`)."""
    return bool(era and era.profile_tokens == "max-model-len-for-text" and not config.mla and not config.vision)


def _context_parallel(profile: Profile) -> int:
    """Decode × prefill context parallelism: each rank keeps 1/N of every sequence's KV."""
    return (profile.serving.decode_context_parallel or 1) * (profile.serving.prefill_context_parallel or 1)
