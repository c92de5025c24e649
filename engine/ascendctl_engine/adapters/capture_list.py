"""The graph capture list a release's code builds, and whether it captures the widest decode batch.

Pure functions over one `CaptureEra` (the facts of a release range, registered per range as the `capture-list`
topic's trait in adapters/graph.py: only the era registry tells releases apart) and one `CaptureInputs` (what the
plan passes). The steps follow the code, in its order:

1. vLLM's list (`VllmConfig._set_cudagraph_sizes`): from vLLM 0.12 1, 2, 4, every 8 below 256, every 16 from 256 up
   to `max_cudagraph_capture_size` (min(max_num_batched_tokens, ceiling); the ceiling min(2 × max_num_seqs, 512) in
   vLLM 0.12, min(2 × max_num_seqs × decode query length, 512) from 0.13, and vllm-ascend's own min(max_num_seqs ×
   decode query length, 512) from v0.18.0rc1, which drops the × 2); vLLM 0.11: 1, 2, 4, every 8 up to
   `cuda_graph_sizes[0]` = min(2 × max_num_seqs, 512), filtered to max_num_batched_tokens. From vLLM 0.20
   max_num_batched_tokens is appended when it fits. Explicit sizes replace the grid (vLLM 0.11 reads a single
   `--cuda-graph-sizes N` as the ceiling).
2. vllm-ascend's Qwen3-MoE list on TP 1 with DP > 1 (some releases), then its sequence-parallel trim (FlashComm1,
   TP > 1: keep the multiples of TP), then on Ascend 950 its 4-size sample (piecewise modes only).
3. vLLM's model runner rounds the sizes up to multiples of the decode query length (1 + speculative tokens) when
   decode graphs are FULL (`adjust_cudagraph_sizes_for_spec_decode`).

The dispatcher (vllm/v1/cudagraph_dispatcher.py at every vLLM from 0.11) keys FULL decode graphs of the separate
decode routine (FULL_DECODE_ONLY, FULL_AND_PIECEWISE) by the capture sizes ≤ max_num_seqs × query length, and pads
a batch up to the next capture size: the widest decode batch has a FULL graph only when a capture size lies between
it and max_num_seqs × query length, that is (without a token budget below it) when that exact size is on the list.
FULL (one routine) pads any batch up to the largest size.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Literal

from ascendctl_engine.records import record

Grid = Literal["vllm-0.11", "vllm-0.12"]
# "2x": vLLM 0.11/0.12's min(2 × max_num_seqs, 512); "2x-query": vLLM 0.13+'s min(2 × max_num_seqs × query
# length, 512); "ascend-query": vllm-ascend's min(max_num_seqs × query length, 512) (v0.18.0rc1 on)
Ceiling = Literal["2x", "2x-query", "ascend-query"]
DEFAULT_MAX_GRAPH_SIZE = 512  # the ceiling's cap in every release above
SEPARATE_DECODE = frozenset({"full-decode-only", "full-and-piecewise"})  # decode graphs keyed per decode batch
PIECEWISE_MODES = frozenset({"piecewise", "full-and-piecewise"})  # `requires_piecewise_compilation()`
QWEN3_MOE_HEAD = (1, 2, 5, 10, 15, 20)  # vllm-ascend's `update_default_aclgraph_sizes` list head


@record
class CaptureEra:
    """What one range of releases does to the capture list (the sources are its era's)."""

    grid: Grid
    ceiling: Ceiling
    full_decode_modes: frozenset[str]  # graph modes whose decode batches run as FULL graphs in this range
    sp_trim: bool = True  # FlashComm1 (`enable_sp`) with TP > 1 keeps only the multiples of TP
    qwen3_moe_dp: bool = False  # `update_default_aclgraph_sizes`: Qwen3-MoE on TP 1, DP > 1
    round_modes: frozenset[str] = frozenset()  # the modes whose sizes vLLM rounds to the decode query length
    round_sees_sp: bool = False  # the rounding sees sequence parallelism (multiple of max(query length, TP))
    append_batched_tokens: bool = False  # vLLM appends max_num_batched_tokens when it fits the ceiling
    prune_950: bool = False  # `prune_capture_sizes_for_950` (piecewise modes) on a family that caps the sizes
    mla_decode_piecewise: bool = False  # FULL_DECODE_ONLY on an MLA model runs the PIECEWISE path
    few_streams_sizes: tuple[int, ...] | None = None  # the sizes the plan passes on few-stream families (graph era)
    plan_samples_cap: bool = False  # the plan samples explicit sizes to the family's cap (graph era)


@record
class CaptureInputs:
    """What the plan gives the engine (a `capture_sizes` of None: the engine's default list)."""

    max_num_seqs: int
    mode: str  # the resolved graph mode (full-decode-only, full, full-and-piecewise, piecewise, ...)
    speculative_tokens: int = 0
    tensor: int = 1
    data: int = 1
    sequence_parallel: bool = False  # FlashComm1 (vllm-ascend's `enable_sp`)
    max_num_batched_tokens: int | None = None  # None: the engine's default (≥ 2048, above every ceiling here)
    capture_sizes: tuple[int, ...] | None = None
    model_type: str | None = None
    mla: bool = False
    max_capture_sizes: int | None = None  # the hardware family's cap (Ascend 950: 4)
    few_streams: bool = False  # the hardware family captures few sizes (300I Duo)


@record
class CaptureList:
    sizes: tuple[int, ...]  # what the engine captures, ascending
    query_len: int  # 1 + speculative tokens
    decode_batch: int  # the widest uniform decode batch, in tokens
    full_decode: bool  # the mode runs decode batches as FULL graphs in this release
    captured: bool  # the widest decode batch has a FULL graph
    default_list: bool  # the engine built the list itself (no explicit sizes)

    @property
    def largest_covered(self) -> int:
        """The largest capture size at or below the widest decode batch (0: none): wider decode batches pad past
        every decode graph."""
        return max((s for s in self.sizes if s <= self.decode_batch), default=0)


def grid(ceiling: int, *, step16: bool = True) -> list[int]:
    """vLLM's stride grid up to `ceiling`: 1, 2, 4, every 8 (below 256 when `step16`), every 16 from 256."""
    sizes = [s for s in (1, 2, 4) if s <= ceiling]
    if not step16:
        return sizes + list(range(8, ceiling + 1, 8))
    if ceiling >= 8:
        sizes += range(8, min(ceiling + 1, 256), 8)
    if ceiling >= 256:
        sizes += range(256, ceiling + 1, 16)
    return sizes


def sample_sizes(sizes: Sequence[int], cap: int) -> list[int]:
    """`cap` sizes spread over `sizes` keeping the first and last (vllm-ascend's `prune_capture_sizes_for_950` and
    `update_aclgraph_sizes`: v0.23.0:vllm_ascend/platform.py:109-119)."""
    if len(sizes) <= cap:
        return list(sizes)
    step = (len(sizes) - 1) / (cap - 1)
    picked = [round(i * step) for i in range(cap)]
    picked[0], picked[-1] = 0, len(sizes) - 1
    return [sizes[i] for i in picked]


def _ceiling(era: CaptureEra, seqs: int, query_len: int) -> int:
    if era.ceiling == "2x":
        return min(seqs * 2, DEFAULT_MAX_GRAPH_SIZE)
    if era.ceiling == "2x-query":
        return min(seqs * query_len * 2, DEFAULT_MAX_GRAPH_SIZE)
    return min(seqs * query_len, DEFAULT_MAX_GRAPH_SIZE)


def _vllm_list(era: CaptureEra, i: CaptureInputs, given: tuple[int, ...] | None) -> tuple[list[int], bool]:
    """vLLM's `_set_cudagraph_sizes` (and where it is the default grid, for the Qwen3-MoE rule)."""
    tokens = i.max_num_batched_tokens
    query_len = 1 + i.speculative_tokens
    if era.grid == "vllm-0.11":
        if given is not None and len(given) > 1:
            sizes = sorted(set(given))
            default = False
        else:
            top = given[0] if given else min(i.max_num_seqs * 2, DEFAULT_MAX_GRAPH_SIZE)
            sizes = grid(top, step16=False)
            default = True
        kept = [s for s in sizes if tokens is None or s <= tokens]
        return kept, default and kept == sizes
    if given is not None:
        sizes = sorted({s for s in given if tokens is None or s <= tokens})
        return sizes, bool(sizes) and sizes == grid(sizes[-1])
    ceiling = _ceiling(era, i.max_num_seqs, query_len)
    if tokens is not None:
        ceiling = min(tokens, ceiling)
    sizes = grid(ceiling)
    if era.append_batched_tokens and tokens is not None and tokens <= ceiling and tokens not in sizes:
        sizes = sorted([*sizes, tokens])
    return sizes, bool(sizes) and sizes == grid(sizes[-1])


def _round_up(size: int, multiple: int) -> int:
    return -(-size // multiple) * multiple


def _planned(era: CaptureEra, i: CaptureInputs) -> tuple[int, ...] | None:
    """The sizes the plan passes: the profile's, else the few-stream families' (graph era), sampled to the family's
    cap where the graph era samples them."""
    given = i.capture_sizes
    if given is None and i.few_streams:
        given = era.few_streams_sizes
    if given is not None and era.plan_samples_cap and i.max_capture_sizes:
        given = tuple(sample_sizes(sorted(set(given)), i.max_capture_sizes))
    return given


def _qwen3_moe_dp(era: CaptureEra, i: CaptureInputs) -> bool:
    return era.qwen3_moe_dp and i.model_type == "qwen3_moe" and i.tensor == 1 and i.data > 1


def _rounded(sizes: list[int], multiple: int) -> list[int]:
    """`adjust_cudagraph_sizes_for_spec_decode`: each size rounded up to `multiple`, none above the largest."""
    top = sizes[-1]
    rounded = sorted({_round_up(s, multiple) for s in sizes if _round_up(s, multiple) <= top})
    return rounded or ([multiple] if multiple <= top else [])


def _reachable(i: CaptureInputs, widest: int, query_len: int) -> int:
    """The widest uniform decode batch the scheduler can form: max_num_batched_tokens may cap it."""
    tokens = i.max_num_batched_tokens
    if tokens is None or tokens >= widest:
        return widest
    return max(tokens // query_len, 1) * query_len


def _captured(i: CaptureInputs, sizes: list[int], reachable: int, widest: int) -> bool:
    if i.mode in SEPARATE_DECODE:  # decode graphs only up to max_num_seqs × query length
        return any(reachable <= s <= widest for s in sizes)
    return bool(sizes) and reachable <= sizes[-1]  # FULL pads up to its largest graph


def compute(era: CaptureEra, i: CaptureInputs) -> CaptureList:
    """The capture list of `i` under `era`'s code, and whether it captures the widest decode batch."""
    query_len = 1 + i.speculative_tokens
    given = _planned(era, i)
    sizes, default_grid = _vllm_list(era, i, given)
    if default_grid and _qwen3_moe_dp(era, i):
        sizes = [*QWEN3_MOE_HEAD, *range(24, sizes[-1] + 1, 8)]
    sp = era.sp_trim and i.sequence_parallel and i.tensor > 1
    if sp:
        sizes = [s for s in sizes if s % i.tensor == 0]
    if era.prune_950 and i.max_capture_sizes and i.mode in PIECEWISE_MODES:
        sizes = sample_sizes(sizes, i.max_capture_sizes)
    if query_len > 1 and i.mode in era.round_modes and sizes:
        sizes = _rounded(sizes, max(query_len, i.tensor) if era.round_sees_sp and sp else query_len)
    full_decode = i.mode in era.full_decode_modes and not (era.mla_decode_piecewise and i.mla)
    widest = i.max_num_seqs * query_len
    reachable = _reachable(i, widest, query_len)
    captured = full_decode and _captured(i, sizes, reachable, widest)
    return CaptureList(tuple(sizes), query_len, reachable, full_decode, captured, given is None)


def nearest_captured(era: CaptureEra, i: CaptureInputs, *, above: bool, limit: int = 1024) -> int | None:
    """The nearest max_num_seqs below (or above) `i.max_num_seqs` whose widest decode batch this release captures."""
    seqs = range(i.max_num_seqs + 1, limit + 1) if above else range(i.max_num_seqs - 1, 0, -1)
    for n in seqs:
        if compute(era, replace(i, max_num_seqs=n)).captured:
            return n
    return None
