"""The memory one device of an instance spends before its KV cache: weights, the profiling peak, graph
capture, HCCL buffers and the runtime's own share.

How vllm-ascend sizes the KV cache (v0.23.0:vllm_ascend/worker/worker.py:527-592): requested memory is
`gpu_memory_utilization × total`; the KV cache gets what is left after weights, the torch peak of one profiling
forward pass (`max_num_batched_tokens` tokens) and the non-torch increase (ACL context, HCCL buffers, driver).
Graphs are captured *afterwards* (worker.py:730-732) and are not charged inside the requested share: they must
fit in the memory left above it, which is why graph capture runs out of memory while the KV cache looked fine.
From v0.19.1rc1 the worker logs all four terms and suggests `--kv-cache-memory` = requested − weights −
activation − non-torch − graph − 150 MiB (worker.py:734-766); `suggested_kv_cache_memory` mirrors it.

The activation, graph and runtime terms are models with constants, not measurements: `CALIBRATION` says what
each constant was fitted on (see docs/memory-fit.md and `make bench-fit` for the error per published log).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from ascendctl_engine.records import record

if TYPE_CHECKING:
    from ascendctl.facts.model_inspect import ModelConfig, ParamBreakdown, WeightStats

GIB = 1 << 30
MIB = 1 << 20

# The worker keeps this much below its own suggestion (v0.23.0:vllm_ascend/worker/worker.py:742).
SUGGESTION_MARGIN = 150 * MIB

# HCCL: CANN's reference says a communicator holds up to 2 × its buffer (send and receive) and that the default
# buffer is 200 MB (HCCL_BUFFSIZE:
# https://www.hiascend.com/document/detail/en/canncommercial/850/commlib/hcclug/hcclug_000076.html); vllm-ascend
# gives the non-MC2 groups a 200 MB buffer of their own (v0.23.0:vllm_ascend/utils.py:67,1098-1122) and the MC2
# (MoE dispatch) group takes HCCL_BUFFSIZE. Buffers are allocated when a communicator is first used, so the
# profiling pass charges the groups the forward pass uses (TP all-reduce, PP send/receive, MC2 dispatch), and
# the published non-torch figures fit one buffer per such group (CALIBRATION).
HCCL_DEFAULT_BUFFSIZE_MB = 200

# Model constants, each fitted as CALIBRATION says (benchmarks/fit_accuracy.py prints the fit per published log).
ACTIVATION_HIDDEN_FACTOR = 10  # bf16 hidden-sized buffers alive per token at the profiling peak
LOGITS_BYTES = 4  # the sampler's float32 logits per sequence and vocabulary entry
# The runtime's own share the worker charges: up to v0.14 every non-torch byte on the device (ACL context,
# workspaces, driver: ~0.9 GiB on an idle NPU), from v0.15 only what profiling adds (~0.1 GiB without HCCL).
RUNTIME_RESERVE_WHOLE_DEVICE = int(0.9 * GIB)
RUNTIME_RESERVE_INCREASE = int(0.1 * GIB)
# The 300I Duo worker (from v0.18.0rc1) subtracts `non_torch_memory_cleared_by_empty_cache`: the non-torch memory
# in use before `empty_cache` minus its profiled increase — the runtime's context held before profiling plus the
# workspace empty_cache frees (v0.23.0:vllm_ascend/_310p/worker_310p.py:86-90,113-115). Its size, besides other
# processes' memory: 1.49 GiB (TP0) and 1.53 GiB (TP1) in vllm-project/vllm-ascend#10122 (requested − weights −
# peak − non-torch − 2 × the halved KV memory the log prints).
RUNTIME_IN_USE_310P = int(1.49 * GIB)
# The same runtime share before v0.15, when the worker charges every non-torch byte on the device (the runtime's
# context included): the NPU worker of those releases has no 300I Duo branch in determine_available_memory
# (v0.9.2rc1:vllm_ascend/worker/worker_v1.py:144-182, v0.10.2rc1 …:161-199, v0.11.0rc0:vllm_ascend/worker/
# worker_v1.py:197-235: total × utilization − torch peak − (device-wide allocated − torch allocated)), so on a 300I
# Duo die the whole share is what the v0.18+ 310P worker charges as two terms: the non-torch memory held before
# profiling (RUNTIME_IN_USE_310P) and the profiled increase (RUNTIME_RESERVE_INCREASE), not the A2/A3 figure
# RUNTIME_RESERVE_WHOLE_DEVICE. Not fitted on the rows it applies to (vllm-project/vllm-ascend#3316, #4074,
# Ascend/pytorch#78): `make bench-fit` shows them apart.
# Hybrid linear-attention models (Qwen3-Next's gated delta net): the profiling peak above the dense activation
# model, per rank. The bytes per token are exact, the peak is not: the published breakdown shows it ≈ 0.7 GiB
# above (vllm-project/vllm-ascend#6250, Qwen3-Next-80B TP4: 2.33 GiB besides the weights against 1.61 estimated).
HYBRID_PEAK_EXTRA = int(0.7 * GIB)
# CUDA (vLLM's V1 GPU worker): the KV cache gets the requested share of the total less what the profiling run
# consumed since the worker's memory snapshot. The snapshot is taken after NCCL (and, later, the cuBLAS handles) is
# initialised, so those count as baseline and are not charged (v0.11.0:vllm/v1/worker/gpu_worker.py:177-184,
# 259-280; v0.33.0:vllm/v1/worker/gpu_worker.py:520-541,685-757): weights, the torch peak and the non-torch
# increase, which is small — 0.20 GiB and 0.25 GiB (TP2) in published figures (vllm-project/vllm#14447,
# vllm-project/vllm#13061).
CUDA_NON_TORCH_INCREASE = int(0.25 * GIB)
# CUDA workers whose snapshot predates the distributed environment (vLLM < 0.11.0, the `kv-budget` era's
# `nccl_groups`) also charge what each process group of more than one rank creates at init: an NCCL communicator,
# warmed up with an all-reduce (v0.6.5:vllm/distributed/device_communicators/pynccl.py:99-105), and for the TP group
# the two IPC buffers custom all-reduce allocates outside torch, `max_size` = 8 MiB each
# (v0.6.5:vllm/distributed/device_communicators/custom_all_reduce.py:153-157). NCCL sizes its buffers by channels
# and peers (NCCL_BUFFSIZE, 4 MiB by default, per channel and peer; more channels on faster links:
# NVIDIA/nccl#986), so the communicator's size is a published figure, not code: ≈ 1.6 GB for one communicator after
# an all-reduce (NVIDIA/nccl#864); 0.54-0.69 GB on 4 × A100 over NVLink (NVIDIA/nccl#964). vLLM's own TP1 → TP2
# step (vllm-project/vllm#10511: non-torch 1.79 → 3.58 GiB, one communicator) agrees and is not used to fit it.
# These are NVLink figures: GPUs without NVLink hold far less (vllm-project/vllm#13061: 0.25 GiB of non-torch memory
# in all at TP2 on two RTX 4090s), where the term overcharges; the fit does not know the interconnect.
NCCL_COMMUNICATOR_BYTES = int(1.5 * GIB)
CUSTOM_ALLREDUCE_BYTES = 2 * 8 * MIB
GRAPH_BYTES_PER_CAPTURE = 16 * MIB  # one captured graph's own memory (FULL / FULL_DECODE_ONLY)
PIECEWISE_BYTES_PER_PIECE = 1 * MIB  # piecewise graphs: one piece per attention split, per size

CALIBRATION = {
    "activation": "fitted on the v0.19.1rc1+ breakdown logs of Qwen3-0.6B (docs quick start: 0.22 GiB) and the "
    "old-era logs of Qwen3-1.7B/8B/32B: per token ACTIVATION_HIDDEN_FACTOR hidden-sized bf16 buffers plus the "
    "rank's MLP intermediate (gate+up), plus float32 logits for max_num_seqs",
    "hybrid_peak": "HYBRID_PEAK_EXTRA 0.7 GiB per rank above the dense activation model for attention + "
    "linear-attention models, fitted on the Qwen3-Next-80B TP4 breakdown (vllm-project/vllm-ascend#6250)",
    "profile_tokens": "the releases that force their scheduler without chunked prefill on non-MLA text models "
    "(v0.9.1, v0.10.2rc1, v0.11.0rc0: the `kv-budget` era) profile max_model_len tokens, so the activation "
    "term grows with the context (vllm-project/vllm-ascend#3316: 3.2 GiB besides the weights at 32K)",
    "runtime_in_use_310p": "RUNTIME_IN_USE_310P 1.49 GiB, charged by the 300I Duo worker from v0.18.0rc1 next to "
    "other processes' memory, fitted on vllm-project/vllm-ascend#10122 (TP0 1.49, TP1 1.53 GiB); before v0.15 the "
    "whole-device worker charges it with the profiled increase instead of the A2/A3 share (not fitted there)",
    "runtime_reserve": "whole-device era (≤ v0.14): 0.9 GiB fitted on Qwen3-1.7B/8B TP1 logs; profiled-increase "
    "era (≥ v0.15): 0.1 GiB from the breakdown logs' non-torch figures (0.03-0.22 GiB); CUDA: "
    "CUDA_NON_TORCH_INCREASE 0.25 GiB, the non-torch increase published vLLM logs print (vllm-project/vllm#14447: "
    "0.20 GiB, vllm-project/vllm#13061: 0.25 GiB at TP2); NCCL and cuBLAS are in the worker's baseline",
    "graph_capture": "16 MiB per captured size in full graphs (Qwen3-32B TP8, 25 FULL_DECODE_ONLY sizes: 0.40 GiB); "
    "1 MiB per piece and size for piecewise (Qwen3-8B-shaped, 35 sizes: 0.13 GiB); never inside the KV budget",
    "nccl_communicators": "NCCL_COMMUNICATOR_BYTES 1.5 GiB per process group of more than one rank, charged by "
    "CUDA workers before vLLM 0.11.0 (snapshot before NCCL init): ≈ 1.6 GB for one communicator after an all-reduce "
    "(NVIDIA/nccl#864), 0.54-0.69 GB on 4 × A100 (NVIDIA/nccl#964); vllm-project/vllm#10511's TP1 → TP2 step (+1.79 "
    "GiB) agrees, not fitted on; plus custom all-reduce's two 8 MiB IPC buffers (code). NVLink figures: GPUs without "
    "NVLink hold far less (vllm-project/vllm#13061: 0.25 GiB of non-torch memory in all at TP2 on two RTX 4090s)",
    "comm_buffers": "one buffer per HCCL group the forward pass uses (TP, PP, MC2), fitted on Qwen3-32B TP8 and "
    "GLM-5 TP8+EP; CANN's upper bound is twice that",
}


@record
class Layout:
    tensor: int = 1
    pipeline: int = 1
    data: int = 1
    expert: bool = False

    @property
    def ep_size(self) -> int:
        """vLLM's expert-parallel group: tensor × data ranks (with expert parallelism on)."""
        return self.tensor * self.data if self.expert else 1

    @property
    def devices(self) -> int:
        return self.tensor * self.pipeline * self.data


# ---- weights ----------------------------------------------------------------------------------------------


def bytes_per_param(quantization: str, model_dtype: str | None, kind: str) -> float:
    """Stored bytes per parameter for config.json-based estimates: ModelSlim keeps embeddings and lm_head at
    the float dtype; `w8a8*` store int8 linear weights, `w4a8` int4 routed experts (int8 elsewhere),
    `w4a4`/`w4a16` int4 linear weights."""
    float_bytes = 4.0 if (model_dtype or "").lower() in ("float32", "float") else 2.0
    q = quantization.lower()
    if q in ("none", "auto", "") or kind == "embeddings":
        return float_bytes
    if q.startswith("w4a8"):
        return 0.5 if kind == "experts" else 1.0
    if q.startswith("w4"):
        return 0.5
    return 1.0


@record
class Weights:
    bytes: int  # on the limiting rank
    basis: str  # where the number comes from


def weights_per_rank(
    layout: Layout,
    *,
    stats: WeightStats | None,
    params: ParamBreakdown | None,
    quantization: str,
    model_dtype: str | None,
    tied: bool,
) -> Weights | None:
    """Checkpoint bytes on the limiting rank: the safetensors headers' real bytes per tensor kind when read,
    else the index's total split like the config's parameter counts, else parameters × stored bytes."""
    tp, pp, ep = layout.tensor, layout.pipeline, layout.ep_size
    # the first pipeline stage holds embed_tokens, the last lm_head: a stage holds half the untied pair
    embed_share = 1.0 if pp == 1 or tied else 0.5
    expert_div = ep if layout.expert else tp

    def shard(embeddings: float, layers: float, experts: float, replicated: float) -> int:
        return int(embeddings * embed_share / tp + layers / (tp * pp) + experts / (expert_div * pp) + replicated / pp)

    if stats is not None and stats.by_kind:
        k = stats.by_kind
        value = shard(k.get("embeddings", 0), k.get("layers", 0), k.get("experts", 0), k.get("replicated", 0))
        return Weights(value, f"safetensors headers ({stats.total_bytes / GIB:.2f} GiB in {stats.files} files)")
    if stats is not None and params is not None and params.total > 0:
        scale = stats.total_bytes / params.total
        value = shard(params.embeddings * scale, params.layers * scale, params.experts * scale, 0)
        return Weights(value, f"index total {stats.total_bytes / GIB:.2f} GiB, split like config.json's shapes")
    if stats is not None:
        return Weights(int(stats.total_bytes / (tp * pp)), f"index total {stats.total_bytes / GIB:.2f} GiB ÷ TP×PP")
    if params is not None:

        def stored(kind: str, count: int) -> float:
            return count * bytes_per_param(quantization, model_dtype, kind)

        embeddings, layers = stored("embeddings", params.embeddings), stored("layers", params.layers)
        value = shard(embeddings, layers, stored("experts", params.experts), 0)
        return Weights(value, f"{params.total / 1e9:.3g}B parameters from config.json at {quantization} stored bytes")
    return None


# ---- profiling peak, graphs, communication ----------------------------------------------------------------


def activation_bytes(config: ModelConfig, layout: Layout, *, batched_tokens: int, num_seqs: int) -> int:
    """The torch peak of the profiling forward pass (see CALIBRATION)."""
    h = config.hidden_size or 0
    inter = config.intermediate_size or 4 * h
    if config.moe:
        # routed tokens: each token reaches top-k experts; expert parallelism spreads the experts, not the tokens
        inter = (config.experts_per_token or 8) * (config.moe_intermediate_size or inter)
    per_token = (ACTIVATION_HIDDEN_FACTOR * h + 2 * inter // layout.tensor) * 2
    logits = num_seqs * (config.vocab_size or 0) * LOGITS_BYTES
    return batched_tokens * per_token + logits + (HYBRID_PEAK_EXTRA if is_hybrid(config) else 0)


def is_hybrid(config: ModelConfig) -> bool:
    """Attention + linear-attention layers (the shapes `cache` pages as a hybrid model)."""
    return bool(config.full_attention_layers and config.linear_value_heads and config.linear_key_head_dim)


def default_capture_sizes(max_num_seqs: int, speculative_tokens: int = 0, cap: int | None = None) -> list[int]:
    """vLLM's default capture list: 1, 2, 4, every 8 below 256, every 16 from 256, up to the largest size
    min(2 × max_num_seqs × (1 + spec tokens), 512) (vllm v0.32.0 config/vllm.py:2297-2305); a hardware cap (the
    matrix's `max_capture_sizes`) keeps the largest ones. vllm-ascend may thin the list further for its stream
    budget, so this counts at most what it captures."""
    largest = min(max_num_seqs * (1 + speculative_tokens) * 2, 512)
    sizes = [s for s in (1, 2, 4, *range(8, 256, 8), *range(256, largest + 1, 16)) if s <= largest]
    return sizes[-cap:] if cap else sizes


def graph_bytes(mode: str, sizes: list[int], layers: int) -> int:
    if mode in ("eager", "engine-default-eager"):
        return 0
    if mode in ("piecewise", "full-and-piecewise"):
        per_size = (layers + 1) * PIECEWISE_BYTES_PER_PIECE
        if mode == "full-and-piecewise":
            per_size += GRAPH_BYTES_PER_CAPTURE
        return len(sizes) * per_size
    return len(sizes) * GRAPH_BYTES_PER_CAPTURE


def communicators(layout: Layout) -> list[str]:
    """The HCCL groups the forward pass of one rank uses (vllm/distributed/parallel_state.py builds them;
    vllm-ascend adds MC2 for MoE dispatch with expert parallelism): TP all-reduce, PP send/receive, MC2."""
    groups: list[str] = []
    if layout.tensor > 1:
        groups.append("tp")
    if layout.pipeline > 1:
        groups.append("pp")
    if layout.expert and layout.ep_size > 1:
        groups.append("mc2")
    return groups


def comm_bytes(layout: Layout, hccl_buffsize_mb: int | None) -> int:
    mc2 = hccl_buffsize_mb or HCCL_DEFAULT_BUFFSIZE_MB
    return sum((mc2 if g == "mc2" else HCCL_DEFAULT_BUFFSIZE_MB) * MIB for g in communicators(layout))


def nccl_bytes(layout: Layout, groups: tuple[str, ...]) -> int:
    """CUDA: the NCCL communicator and custom all-reduce buffers of each of `groups` (the era's `nccl_groups`) that
    spans more than one rank (see NCCL_COMMUNICATOR_BYTES); 0 when the worker's snapshot follows NCCL init."""
    sizes = {
        "tp": layout.tensor, "pp": layout.pipeline, "dp": layout.data, "ep": layout.tensor * layout.data,
    }  # fmt: skip
    spanning = sum(1 for g in groups if sizes.get(g, 1) > 1)
    # custom all-reduce serves the TP group (the PP group is built without it: v0.6.5:vllm/distributed/
    # parallel_state.py:1062-1066)
    custom = CUSTOM_ALLREDUCE_BYTES if "tp" in groups and layout.tensor > 1 else 0
    return spanning * NCCL_COMMUNICATOR_BYTES + custom


def runtime_reserve(whole_device: bool, backend: str = "npu", *, runtime_310p: bool = False) -> int:
    """The non-torch memory the worker charges besides the weights and the torch peak (see CALIBRATION); a 300I Duo
    die's whole share is its runtime's (RUNTIME_IN_USE_310P) plus the profiled increase."""
    if backend == "cuda":
        return CUDA_NON_TORCH_INCREASE
    if whole_device and runtime_310p:
        return RUNTIME_IN_USE_310P + RUNTIME_RESERVE_INCREASE
    return RUNTIME_RESERVE_WHOLE_DEVICE if whole_device else RUNTIME_RESERVE_INCREASE


# ---- the MoE dispatch buffer --------------------------------------------------------------------------------


def _align(value: int, to: int) -> int:
    return -(-value // to) * to


def mc2_tokens_per_rank(layout: Layout, *, largest_capture: int | None, max_num_seqs: int, spec_tokens: int) -> int:
    """Tokens one rank dispatches per MoE step, as vllm-ascend sizes MC2: the largest captured batch (graph modes)
    or max_num_seqs × (1 + speculative tokens) (eager), split over TP and capped at 512
    (v0.23.0:vllm_ascend/ascend_forward_context.py:202-217)."""
    tokens = largest_capture if largest_capture else max_num_seqs * (1 + spec_tokens)
    return min(-(-tokens // layout.tensor), 512)


def mc2_buffer_mb(config: ModelConfig, layout: Layout, *, tokens_per_rank: int) -> int | None:
    """HCCL_BUFFSIZE (MB) that MoE dispatch/combine (MC2) needs for `tokens_per_rank` tokens per rank. CANN's
    rule for MoeDistributeDispatch, as vllm-ascend's sizing helper encodes it (vllm-project/vllm-ascend#3073), asks
    for a window of 2 × (local experts × tokens × EP × Align512(Align32(2H) + 64) + (top-k + shared) × tokens ×
    Align512(2H)) bytes; HCCL gives a communicator a window of 2 × HCCL_BUFFSIZE (send and receive, CANN's
    HCCL_BUFFSIZE reference), so HCCL_BUFFSIZE must hold the bracket once. Read that way, every tutorial
    configuration ascendctl carries fits (tests/test_fit.py); read with the factor 2 twice, Kimi-K2.5's published
    800 MB would not. None when the model is not MoE, the shapes are missing or there is no EP group."""
    if not (config.moe and config.hidden_size and config.num_experts and layout.expert and layout.ep_size > 1):
        return None
    h2 = 2 * config.hidden_size
    local = -(-config.num_experts // layout.ep_size)
    top_k = config.experts_per_token or 8
    shared = config.shared_experts or 0
    dispatch = local * tokens_per_rank * layout.ep_size * _align(_align(h2, 32) + 64, 512)
    combine = (top_k + shared) * tokens_per_rank * _align(h2, 512)
    return math.ceil((dispatch + combine) / MIB)
