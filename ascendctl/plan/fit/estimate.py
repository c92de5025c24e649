"""Will it fit: the per-device budget, KV tokens, concurrency, a verdict and the knobs that change it.

Pure: `estimate(FitInputs)` reads nothing. Verdict: `does-not-fit` when the engine would refuse to start (the KV
cache cannot hold one sequence of `max_model_len`, nothing is left for it, or the device is over-committed);
`tight` when it starts but fewer than two full-length sequences fit (one long request stalls the rest), graph
capture needs more than the headroom above the share, or — only when a workload is given — the workload does not
fit; `fits` otherwise. vLLM schedules by tokens and preempts, so holding `max_num_seqs` full-length sequences at
once is not required. Each suggestion re-runs the estimate with one profile key changed; the ones that keep the
operator's `max_model_len` and concurrency come first, and a shorter context is offered only when the
deployment would not start.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import field, replace
from functools import partial
from typing import TYPE_CHECKING

from ascendctl.plan.fit import budget, cache
from ascendctl.plan.fit.budget import GIB, Layout
from ascendctl.plan.fit.result import DeviceBudget, FitResult, PointFit, Suggestion, Verdict, WorkloadFit
from ascendctl_engine.records import record

if TYPE_CHECKING:
    from ascendctl.facts.model_inspect import ModelConfig, ParamBreakdown, WeightStats
    from ascendctl.plan.workload import Workload

# Full-length sequences the KV cache must hold at once for `fits`: with fewer, one long request stalls the rest.
FULL_SEQUENCES_TO_FIT = 2


@record(eq=False)
class FitInputs:
    backend: str  # npu / cpu / cuda
    config: ModelConfig
    layout: Layout
    max_model_len: int
    max_num_seqs: int
    max_num_batched_tokens: int
    device_bytes: int | None  # total memory of one device (npu/cuda); None on cpu
    utilization: float  # device_utilization (npu/cuda)
    cpu_kv_bytes: int | None = None  # cpu: VLLM_CPU_KVCACHE_SPACE, explicit
    weights_stats: WeightStats | None = None
    params: ParamBreakdown | None = None
    quantization: str = "none"
    graph_mode: str = "eager"
    capture_sizes: tuple[int, ...] | None = None
    capture_cap: int | None = None  # the hardware's most capture sizes
    kv_cache_dtype: str = "auto"
    block: int | None = None
    hccl_buffsize_mb: int | None = None
    speculative_tokens: int = 0
    mtp_layers: int = 0
    kv_halved: bool = False  # the 300I Duo worker halves the KV budget for workspace (era `kv-budget`)
    charges_in_use: bool = False  # ... and subtracts what the device held before profiling (era `kv-budget`)
    profile_at_max_model_len: bool = False  # the profiling pass runs max_model_len tokens (era `kv-budget`)
    whole_device: bool = False  # the worker charges the runtime's whole non-torch share, not its increase
    runtime_310p: bool = False  # a 300I Duo die: its runtime's share is RUNTIME_IN_USE_310P (budget.runtime_reserve)
    kv_memory_flag: str | None = None  # the release's `--kv-cache-memory-bytes` spelling, if it has one
    kv_memory_bytes: int | None = None  # an explicit --kv-cache-memory-bytes: the engine takes it as the KV cache
    device_used_bytes: int = 0  # memory other processes already hold on the device (host facts: npu-smi)
    measured_weights_bytes: int | None = None  # per rank, from a start-up log ("Loading model weights took")
    hybrid_rule: str = "v0.18"  # how vllm-ascend sizes hybrid models' pages (the era registry's `fit` topic)
    graph_in_budget: bool = False  # the worker charges its graph-memory estimate to the KV budget (CUDA era)
    nccl_groups: tuple[str, ...] = ()  # groups whose NCCL init the worker charges (CUDA `kv-budget` era)
    extra_args: tuple[str, ...] = ()  # the profile's engine.extra_args (a suggestion that adds one keeps them)
    devices_per_node: int = 1
    nodes: int = 1
    max_devices_per_node: int | None = None
    inputs: dict[str, str] = field(default_factory=dict)  # where each number came from
    workload: Workload | None = None  # `fit --workload`: the load the KV cache must hold without preemption
    # decode × prefill context parallelism: each rank keeps 1/N of a sequence's tokens, so the engine prints N ×
    # the rank's tokens ("Multiplying the GPU KV cache size by the cp_world_size", vllm/v1/core/kv_cache_utils.py)
    context_parallel: int = 1
    # how the release's vLLM prints the KV token count (the era registry's `kv-tokens-printed`): "blocks", whole blocks
    # per group × block, before vLLM 0.20.1; "concurrency", max_concurrency × max_model_len, from it
    printed_tokens: str = "blocks"


def verdict_for(concurrency: float) -> Verdict:
    """From the engine's own concurrency figure (requests of max_model_len the KV cache holds)."""
    if concurrency < 1:
        return "does-not-fit"
    if concurrency < FULL_SEQUENCES_TO_FIT:
        return "tight"
    return "fits"


@record(eq=False)
class _Core:
    budget: DeviceBudget
    shape: cache.KvShape
    bytes_per_token: int
    kv_tokens: int
    concurrency: float
    verdict: Verdict
    block: int
    headroom: float | None
    suggested: int | None
    notes: tuple[str, ...]
    workload: WorkloadFit | None = None


def _kv_shape(i: FitInputs) -> cache.KvShape:
    """One rank's KV cache shape; FitError when the cache dtype or config.json's attention shapes rule it out."""
    cfg, layout = i.config, i.layout
    try:
        element = cache.element_bytes(i.kv_cache_dtype, cfg.torch_dtype)
    except ValueError as exc:
        raise FitError(f"{exc}: the fit covers 16-bit, fp8 and int8 caches") from None
    shape = cache.kv_shape(
        cfg, tensor=layout.tensor, pipeline=layout.pipeline, element=element, mtp_layers=i.mtp_layers,
        hybrid_rule=i.hybrid_rule,
    )  # fmt: skip
    if shape is None:
        raise FitError("config.json lacks the attention shapes (layers, heads, head_dim) the KV cache needs")
    return shape


def _weights_bytes(i: FitInputs) -> int:
    """One rank's weights: measured in a start-up log, else counted; FitError when neither is possible."""
    cfg = i.config
    weights = (
        budget.Weights(i.measured_weights_bytes, "measured")
        if i.measured_weights_bytes
        else budget.weights_per_rank(
            i.layout,
            stats=i.weights_stats,
            params=i.params,
            quantization=i.quantization,
            model_dtype=cfg.torch_dtype,
            tied=cfg.tie_word_embeddings,
        )
    )
    if weights is None:
        raise FitError(
            "the weights' size is unknown: no safetensors on this machine and config.json lacks the shapes "
            "to count parameters"
        )
    return weights.bytes


@record
class _Costs:
    """One rank's memory outside the KV cache, in bytes."""

    weights: int
    activation: int
    graph: int
    comm: int
    reserve: int


def _costs(i: FitInputs, shape: cache.KvShape) -> _Costs:
    """Weights, activations, graph capture, communication buffers and the runtime's reserve of one rank."""
    cfg, layout = i.config, i.layout
    weights_b = _weights_bytes(i)
    activation = budget.activation_bytes(cfg, layout, batched_tokens=_profile_tokens(i), num_seqs=i.max_num_seqs)
    graph = budget.graph_bytes(i.graph_mode, _capture_sizes(i), shape.layers)
    comm = budget.comm_bytes(layout, i.hccl_buffsize_mb) if i.backend == "npu" else 0
    if i.backend == "cuda":
        comm = budget.nccl_bytes(layout, i.nccl_groups)
    reserve = (
        budget.runtime_reserve(i.whole_device, i.backend, runtime_310p=i.runtime_310p) if i.backend != "cpu" else 0
    )
    return _Costs(weights_b, activation, graph, comm, reserve)


def _profile_tokens(i: FitInputs) -> int:
    """The tokens of the release's profiling forward pass."""
    return max(i.max_num_batched_tokens, i.max_model_len) if i.profile_at_max_model_len else i.max_num_batched_tokens


@record
class _Share:
    """The bytes the KV cache gets and, on a device (npu/cuda), the figures around device_utilization's share."""

    kv_bytes: float
    hbm: float | None = None
    headroom: float | None = None
    suggested: int | None = None
    overcommitted: bool = False


def _device_share(i: FitInputs, c: _Costs, notes: list[str]) -> _Share:
    """What device_utilization's share of one device leaves for the KV cache (npu/cuda); appends its notes."""
    total = float(i.device_bytes or 0)
    requested = i.utilization * total
    kv_bytes = requested - c.weights - c.activation - c.comm - c.reserve - (c.graph if i.graph_in_budget else 0)
    if i.kv_memory_bytes is not None:
        # the worker skips its profiling estimate and takes the number as it is (worker.py:534-548)
        spent = c.weights + c.activation + c.comm + c.reserve + c.graph + i.kv_memory_bytes
        if spent > total:
            notes.append(
                f"the explicit KV size and the rest need {spent / GIB:.2f} GiB of the device's {total / GIB:.2f}"
            )
        kv_bytes = float(i.kv_memory_bytes)
    used = float(i.device_used_bytes)
    overcommitted = False
    if i.charges_in_use:
        # the 300I Duo worker subtracts the non-torch memory held before its profiling pass (its own runtime's and
        # every other process's) from a share that already left it out
        # (v0.23.0:vllm_ascend/_310p/worker_310p.py:90,113-115)
        kv_bytes -= used + budget.RUNTIME_IN_USE_310P
        notes.append(
            f"the 300I Duo worker charges the {(used + budget.RUNTIME_IN_USE_310P) / GIB:.2f} GiB in use before "
            "profiling against the KV cache (memory other processes hold counts twice)"
        )
    if used > 0 and i.whole_device:
        # the old worker charges every byte already in use on the device to this engine
        kv_bytes -= used
        notes.append(f"{used / GIB:.2f} GiB already in use on the device is charged to this engine (≤ v0.14)")
    elif used > 0 and requested + used > total:
        overcommitted = True
        notes.append(
            f"{used / GIB:.2f} GiB is already in use on the device: the requested share of {requested / GIB:.2f} "
            f"GiB does not fit next to it and allocating the KV cache fails (lower device_utilization or free "
            "the device)"
        )
    headroom = (total - requested - (used if not i.whole_device else 0)) / GIB
    suggested = int(requested - c.weights - c.activation - c.comm - c.reserve - c.graph - budget.SUGGESTION_MARGIN)
    if c.graph / GIB > headroom and not i.graph_in_budget:
        notes.append(
            f"graph capture needs ~{c.graph / GIB:.2f} GiB but only {headroom:.2f} GiB is above "
            "device_utilization's share: capture may run out of memory"
        )
    return _Share(kv_bytes, total / GIB, headroom, suggested, overcommitted)


def _verdict(i: FitInputs, concurrency: float, share: _Share, graph: int, load: WorkloadFit | None) -> Verdict:
    """The concurrency's verdict, lowered on a device when graph capture outgrows the headroom or it is taken, and
    when a given workload does not fit."""
    verdict = verdict_for(concurrency)
    if verdict == "fits" and i.backend != "cpu" and not i.graph_in_budget and graph / GIB > (share.headroom or 0):
        verdict = "tight"
    if verdict == "fits" and load is not None and not load.fits:
        verdict = "tight"
    if i.backend != "cpu" and share.overcommitted:
        verdict = "does-not-fit"
    return verdict


def workload_fit(i: FitInputs, shape: cache.KvShape, blocks: int, block: int, kv_tokens: int) -> WorkloadFit | None:
    """Whether the KV cache holds each point of the workload at once without preemption: `concurrency` requests
    of `input + output` tokens, each in whole blocks (plus a hybrid model's state blocks), and the headroom left."""
    if i.workload is None:
        return None
    points: list[PointFit] = []
    for p in i.workload.points:
        length = p.tokens_per_sequence
        local = -(-length // i.context_parallel)  # the tokens one rank keeps of each sequence
        held = cache.concurrency(shape, blocks, block, local)
        per_request = cache.blocks_per_request(shape, block, local)
        # in the engine's token units: a plain model's blocks × block; a hybrid model's share of its pool
        need = (
            kv_tokens * p.concurrency * per_request // blocks
            if blocks
            else p.concurrency * per_request * (shape.block or block)
        )
        headroom = kv_tokens - need
        too_long = length > i.max_model_len
        points.append(
            PointFit(
                p.label, p.input_len, p.output_len, p.concurrency, need, held >= p.concurrency and not too_long,
                headroom, headroom / kv_tokens if kv_tokens else -1.0, held, too_long,
            )
        )  # fmt: skip
    return WorkloadFit(i.workload.name, tuple(points))


def _budget_row(layout: Layout, hbm: float | None, kv_bytes: float, c: _Costs) -> DeviceBudget:
    """The per-device table row, in GiB."""
    return DeviceBudget(
        # TP/EP/DP ranks hold the same; with PP the last stage (MTP layers, the most layers) is the one shown
        rank=("last stage" if layout.pipeline > 1 else ("all" if layout.devices > 1 else "0")),
        count=layout.devices // layout.pipeline if layout.pipeline > 1 else layout.devices,
        hbm_gib=hbm,
        weights_gib=c.weights / GIB,
        activation_gib=c.activation / GIB,
        graph_capture_gib=c.graph / GIB,
        comm_buffers_gib=c.comm / GIB,
        runtime_reserve_gib=c.reserve / GIB,
        kv_cache_gib=kv_bytes / GIB,
    )


def _core(i: FitInputs) -> _Core:
    shape = _kv_shape(i)
    block = shape.block or i.block or cache.block_size(i.backend, i.config.mla)
    notes = [shape.note]
    costs = _costs(i, shape)
    share = _Share(float(i.cpu_kv_bytes or 0)) if i.backend == "cpu" else _device_share(i, costs, notes)
    kv_bytes = share.kv_bytes
    if i.kv_halved and kv_bytes > 0:
        kv_bytes /= 2
        notes.append("the 300I Duo worker halves the KV budget for its workspace")
    tokens, blocks = cache.capacity(shape, kv_bytes, block)
    # with context parallelism a rank holds 1/N of every sequence; the engine prints N × its tokens
    tokens *= i.context_parallel
    concurrency = cache.concurrency(shape, blocks, block, -(-i.max_model_len // i.context_parallel))
    if i.printed_tokens == "concurrency":
        tokens = cache.printed_tokens(concurrency, i.max_model_len)
    load = workload_fit(i, shape, blocks, block, tokens)
    verdict = _verdict(i, concurrency, share, costs.graph, load)
    row = _budget_row(i.layout, share.hbm, kv_bytes, costs)
    return _Core(
        row, shape, shape.bytes_per_token, tokens, concurrency, verdict, block, share.headroom, share.suggested,
        tuple(notes), load,
    )  # fmt: skip


class FitError(ValueError):
    """The estimate cannot be made (what is missing is the message)."""


def _capture_sizes(i: FitInputs) -> list[int]:
    if i.graph_mode == "eager":
        return []
    if i.capture_sizes:
        return list(i.capture_sizes)
    return budget.default_capture_sizes(i.max_num_seqs, i.speculative_tokens, i.capture_cap)


def estimate(i: FitInputs) -> FitResult:
    core = _core(i)
    sizes = _capture_sizes(i)
    tokens = budget.mc2_tokens_per_rank(
        i.layout, largest_capture=max(sizes) if sizes else None, max_num_seqs=i.max_num_seqs,
        spec_tokens=i.speculative_tokens,
    )  # fmt: skip
    need = budget.mc2_buffer_mb(i.config, i.layout, tokens_per_rank=tokens) if i.backend == "npu" else None
    return FitResult(
        per_device=(core.budget,),
        limiting_rank=core.budget.rank,
        kv_bytes_per_token=core.bytes_per_token,
        kv_tokens=core.kv_tokens,
        max_concurrency=core.concurrency,
        verdict=core.verdict,
        block=core.block,
        graph_headroom_gib=core.headroom,
        suggested_kv_cache_memory=core.suggested,
        suggestions=tuple(suggest(i, core)),
        inputs=dict(i.inputs),
        max_model_len=i.max_model_len,
        max_num_seqs=i.max_num_seqs,
        notes=core.notes,
        hccl_buffsize_mb=i.hccl_buffsize_mb or budget.HCCL_DEFAULT_BUFFSIZE_MB,
        mc2_need_mb=need,
        mc2_tokens_per_rank=tokens if need is not None else None,
        workload=core.workload,
        estimated_from=i,
    )


def with_workload(fit: FitResult, workload: Workload | None) -> FitResult:
    """The same estimate judged against `workload` too (`fit --workload`; `fit` itself without one); FitError when
    `fit` was not made by `estimate`."""
    if workload is None:
        return fit
    if not isinstance(fit.estimated_from, FitInputs):
        raise FitError("the fit's inputs are not at hand to judge a workload")
    return estimate(replace(fit.estimated_from, workload=workload))


# ---- suggestions ---------------------------------------------------------------------------------------------


def _round_down(value: int, step: int) -> int:
    return value // step * step


def _try(i: FitInputs, key: str, why: str, change: Callable[[FitInputs], FitInputs]) -> Suggestion | None:
    """The estimate with one change; `key` holds its `--set` assignments separated by spaces."""
    try:
        core = _core(change(i))
    except FitError:
        return None
    return Suggestion(tuple(key.split(" ")), core.kv_tokens, core.concurrency, core.verdict, why)


def _keeps_request(s: Suggestion, i: FitInputs) -> bool:
    """Whether a suggestion keeps what the operator asked for: no shorter context, no fewer sequences."""
    asked = {"model.max_model_len": i.max_model_len, "engine.scheduler.max_num_seqs": i.max_num_seqs}
    for one in s.sets:
        key, _, value = one.partition("=")
        if key in asked and value.isdigit() and int(value) < asked[key]:
            return False
    return True


def suggest(i: FitInputs, core: _Core) -> list[Suggestion]:
    """The knobs that would change a `tight` or `does-not-fit` verdict, each with its re-estimated effect; those
    that keep `max_model_len` and the concurrency first, a shorter context only when the deployment would not
    start."""
    if core.verdict == "fits":
        return []
    out: list[Suggestion] = []
    if i.backend == "npu":
        out += _npu_suggestions(i, core)
    if i.backend == "cpu":
        out += [s for s in (_larger_cpu_space(i, core),) if s]
    longer = _workload_context(i, core)
    # A shorter context shrinks what the operator asked for: offered only when nothing else makes it start.
    if core.verdict == "does-not-fit" and all(s.verdict == "does-not-fit" for s in out):
        out += _shorter_context(i, core)
    # only what helps: a better verdict, or more KV tokens at the same one
    out = [s for s in out if _RANK[s.verdict] > _RANK[core.verdict] or s.kv_tokens > core.kv_tokens]
    out = [*([longer] if longer else []), *out]
    return sorted(out, key=lambda s: not _keeps_request(s, i))  # stable: each group keeps its order


def _workload_context(i: FitInputs, core: _Core) -> Suggestion | None:
    """A workload point longer than max_model_len: the context that admits it (the engine refuses it otherwise)."""
    load = core.workload
    if load is None or not any(p.over_max_model_len for p in load.points):
        return None
    length = -(-max(p.input_len + p.output_len for p in load.points) // 1024) * 1024
    return _try(
        i, f"model.max_model_len={length}", "a context that admits the workload's longest request",
        partial(replace, max_model_len=length),
    )  # fmt: skip


def _shorter_context(i: FitInputs, core: _Core) -> list[Suggestion]:
    """A deployment that would not start: the longest context that holds two sequences (fits), else one (starts).
    Never offered for a deployment that starts."""
    out: list[Suggestion] = []
    tokens = core.kv_tokens
    step = 1024 if tokens >= 1024 * FULL_SEQUENCES_TO_FIT else core.block
    two = _round_down(tokens // FULL_SEQUENCES_TO_FIT, step)
    one = _round_down(tokens, 1024 if tokens >= 1024 else core.block)
    for length in dict.fromkeys(v for v in (two, one) if 0 < v < i.max_model_len):
        s = _try(
            i, f"model.max_model_len={length}", "a context the KV cache holds (nothing else makes it start)",
            partial(replace, max_model_len=length),
        )  # fmt: skip
        if s and s.verdict != "does-not-fit":
            out.append(s)
    return out


def _larger_cpu_space(i: FitInputs, core: _Core) -> Suggestion | None:
    """CPU: the smallest whole-GiB VLLM_CPU_KVCACHE_SPACE that holds two full-length sequences."""
    block = core.shape.block or core.block
    need = FULL_SEQUENCES_TO_FIT * cache.blocks_per_request(core.shape, block, i.max_model_len) * block
    gib = max(1, -(-need * core.bytes_per_token // GIB))
    if i.cpu_kv_bytes is not None and gib * GIB <= i.cpu_kv_bytes:
        return None
    return _try(
        i, f"engine.memory.cpu_kv_cache_gib={gib}", "a KV space that holds two full-length sequences",
        lambda x: replace(x, cpu_kv_bytes=gib * GIB),
    )  # fmt: skip


def _tensor_sets(i: FitInputs, tensor: int) -> str:
    """`engine.parallel.tensor=N`, with the devices per node it then needs when the node has fewer."""
    per_node = -(-tensor * i.layout.data * i.layout.pipeline // max(i.nodes, 1))
    more = f" target.devices_per_node={per_node}" if per_node > i.devices_per_node else ""
    return f"engine.parallel.tensor={tensor}{more}"


def _tensor_allowed(i: FitInputs, tensor: int) -> bool:
    """Whether a tensor size fits the node's devices and divides the attention heads."""
    limit, heads = i.max_devices_per_node, i.config.num_attention_heads
    return (limit is None or tensor * i.layout.data * i.layout.pipeline <= limit) and (
        heads is None or heads % tensor == 0
    )


def _combined(i: FitInputs, core: _Core) -> list[Suggestion]:
    """When no single knob lets one sequence fit: an int8 checkpoint together with the smallest larger tensor size
    that does (each assignment is one `--set`)."""
    if i.quantization not in ("none", "auto"):
        return []
    tensor = i.layout.tensor * 2
    while _tensor_allowed(i, tensor):
        s = _try(
            i, f"model.quantization=w8a8 {_tensor_sets(i, tensor)}",
            f"an int8 checkpoint over {tensor} devices (no single change lets one sequence fit)",
            partial(replace, quantization="w8a8", weights_stats=None, layout=replace(i.layout, tensor=tensor)),
        )  # fmt: skip
        if s and s.verdict != "does-not-fit":
            return [s]
        tensor *= 2
    return []


_RANK = {"does-not-fit": 0, "tight": 1, "fits": 2}


def _better(s: Suggestion, best: Suggestion | None, core: _Core) -> bool:
    """A better verdict than the best so far, or more tokens at the same verdict while that is still the core's."""
    return (
        best is None
        or _RANK[s.verdict] > _RANK[best.verdict]
        or (_RANK[s.verdict] == _RANK[best.verdict] == _RANK[core.verdict] and s.kv_tokens > best.kv_tokens)
    )


def _more_tokens(s: Suggestion | None, core: _Core) -> Suggestion | None:
    """The suggestion when it holds more KV tokens than the estimate without it."""
    return s if s and s.kv_tokens > core.kv_tokens else None


def _larger_tensor(i: FitInputs, core: _Core) -> Suggestion | None:
    """A larger tensor size: weights and KV heads over more devices."""
    layout = i.layout
    best: Suggestion | None = None
    bigger = layout.tensor * 2
    # the smallest larger TP that fits, else the smallest that improves the verdict, else the one with most tokens
    while _tensor_allowed(i, bigger):
        s = _try(
            i, _tensor_sets(i, bigger), f"weights and KV heads over {bigger} devices",
            partial(replace, layout=replace(layout, tensor=bigger)),
        )  # fmt: skip
        if s and s.kv_tokens > core.kv_tokens:
            if _better(s, best, core):
                best = s
            if s.verdict == "fits":
                break
        bigger *= 2
    return best


def _expert_parallel(i: FitInputs, core: _Core) -> Suggestion | None:
    """MoE models split over several ranks: routed experts over the EP ranks."""
    layout = i.layout
    if not (i.config.moe and not layout.expert and layout.tensor * layout.data > 1):
        return None
    s = _try(
        i, "engine.parallel.expert=true", "routed experts spread over the EP ranks instead of TP-sharded",
        lambda x: replace(x, layout=replace(layout, expert=True)),
    )  # fmt: skip
    return _more_tokens(s, core)


def _int8_weights(i: FitInputs, core: _Core) -> Suggestion | None:
    """An unquantized 16-bit model: an int8 checkpoint instead."""
    if i.quantization not in ("none", "auto") or (i.config.torch_dtype or "bfloat16") not in ("bfloat16", "float16"):
        return None
    s = _try(
        i, "model.quantization=w8a8", "an int8 (ModelSlim W8A8) checkpoint halves the linear weights",
        lambda x: replace(x, quantization="w8a8", weights_stats=None),
    )  # fmt: skip
    return _more_tokens(s, core)


def _fewer_captures(i: FitInputs, core: _Core) -> Suggestion | None:
    """Graph mode: fewer captured sizes, when that changes the verdict or the tokens."""
    if i.graph_mode == "eager":
        return None
    small = (1, 2, 4, 8, 16, 32)
    s = _try(
        i, "engine.graph.capture_sizes=[1,2,4,8,16,32]", "fewer captured graphs need less memory above the share",
        lambda x: replace(x, capture_sizes=small),
    )  # fmt: skip
    return s if s and (s.verdict != core.verdict or s.kv_tokens != core.kv_tokens) else None


def _larger_share(i: FitInputs, core: _Core) -> Suggestion | None:
    """A device_utilization below 0.95: raised to 0.95."""
    if i.utilization < 0.95:
        s = _try(
            i, "engine.memory.device_utilization=0.95", "a larger share of device memory for the engine",
            lambda x: replace(x, utilization=0.95),
        )  # fmt: skip
        return _more_tokens(s, core)
    return None


def _explicit_kv(i: FitInputs, core: _Core) -> Suggestion | None:
    """A release with `--kv-cache-memory-bytes` and no explicit size yet: the worker's own suggested size."""
    if not (i.kv_memory_flag and i.kv_memory_bytes is None and core.suggested and core.suggested > 0):
        return None
    # the worker's own suggestion: everything measured (graphs included) and a margin off the requested share
    args = json.dumps([*i.extra_args, f"{i.kv_memory_flag}={core.suggested}"], separators=(",", ":"))
    return _try(
        i, f"engine.extra_args={args}",
        "size the KV cache explicitly, graph memory and a 150 MiB margin deducted (the worker's formula)",
        lambda x: replace(x, kv_memory_bytes=core.suggested),
    )  # fmt: skip


def _npu_suggestions(i: FitInputs, core: _Core) -> list[Suggestion]:
    out = [s for s in (_larger_tensor(i, core), _expert_parallel(i, core), _int8_weights(i, core)) if s]
    if core.verdict == "does-not-fit" and not any(x.verdict != "does-not-fit" for x in out):
        out += _combined(i, core)
    out += [s for s in (_fewer_captures(i, core), _larger_share(i, core), _explicit_kv(i, core)) if s]
    return out
