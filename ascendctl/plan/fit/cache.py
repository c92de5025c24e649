"""KV-cache bytes per token and the engine's block rounding.

Per rank, after tensor/pipeline sharding, the way vLLM's KV cache specs count a page (`page_size_bytes` ÷
`block_size`): GQA/MHA layers cache K and V for the rank's KV heads (heads are replicated when TP exceeds them,
vllm/config/model.py `get_num_kv_heads`: `max(1, kv_heads // tp)`); MLA layers cache one latent of
`kv_lora_rank + qk_rope_head_dim` that TP does not shard (vllm/v1/kv_cache_interface.py `MLAAttentionSpec`);
DeepSeek-V3.2's sparse indexer adds a key cache of `index_head_dim` per layer. A hybrid model with
linear-attention layers (Qwen3-Next) is charged as if every layer held an attention page per token: vLLM
unifies the page sizes of its cache groups and gives each group a page per block
(vllm/v1/core/kv_cache_utils.py `unify_kv_cache_spec_page_size`), and published start-up logs agree (counting
only the full-attention layers overestimates capacity about 4×). DeepSeek-V4's compressed layers cache one row per
4 or 128 tokens (`_compressed`). MTP draft layers cache like target layers.

Token capacity is whole blocks: `floor(bytes / (bytes_per_token × block)) × block`.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from ascendctl_engine.records import record

if TYPE_CHECKING:
    from ascendctl.facts.model_inspect import ModelConfig

DTYPE_BYTES = {"float32": 4, "float": 4, "bfloat16": 2, "float16": 2, "half": 2}

# The engine's block size when the profile sets none. NPU: 128 (v0.11.0:vllm_ascend/platform.py:270,
# v0.23.0:vllm_ascend/utils.py:1381; hybrid models size their own blocks); CPU: 128 except MLA (16)
# (vllm v0.32.0 platforms/cpu.py:235-288); CUDA: vLLM's default 16.
DEFAULT_BLOCK = {"npu": 128, "cpu": 128, "cuda": 16}
CPU_MLA_BLOCK = 16


def block_size(backend: str, mla: bool) -> int:
    if backend == "cpu" and mla:
        return CPU_MLA_BLOCK
    return DEFAULT_BLOCK.get(backend, 16)


def element_bytes(kv_cache_dtype: str, model_dtype: str | None) -> int:
    """Bytes per cached element for `engine.memory.kv_cache_dtype`: the model's dtype for `auto`, 2 for a 16-bit
    cache, 1 for the fp8 and int8 (incl. vllm-ascend's C8) caches. Sub-byte and scaled formats (int4, nvfp4,
    turboquant) have no byte size here: the fit says so instead of guessing."""
    if kv_cache_dtype == "auto":
        return DTYPE_BYTES.get((model_dtype or "bfloat16").lower(), 2)
    if kv_cache_dtype in DTYPE_BYTES:
        return DTYPE_BYTES[kv_cache_dtype]
    if kv_cache_dtype.startswith(("fp8", "int8")):
        return 1
    raise ValueError(f"no bytes-per-element for the {kv_cache_dtype} KV cache")


@record(eq=False)
class KvShape:
    """What one token costs in one rank's KV cache, and how that number was made.

    Plain models: one cache group of every layer, `bytes_per_token` per token. Hybrid models: vLLM splits the
    layers into `groups` groups of `group_size` layers that share one pool of `page_bytes` pages (one per group
    member and block, `block` tokens each); the attention group needs a block per `block` tokens of a request, each
    linear-attention group one block per request."""

    bytes_per_token: int
    layers: int  # layers charged on the limiting (pipeline) stage
    per_layer: int  # bytes per token per layer
    kind: str  # "gqa", "mla", "mla+indexer", "hybrid", "compressed" (DeepSeek-V4)
    note: str
    block: int | None = None  # the block size the model forces (hybrid), else the backend's
    page_bytes: int = 0  # hybrid: one layer's page of one block
    group_size: int = 0  # hybrid: layers per group
    groups: int = 1  # hybrid: attention + linear-attention groups
    state_groups: int = 0  # hybrid: groups holding one state block per request


def kv_shape(
    config: ModelConfig, *, tensor: int, pipeline: int, element: int, mtp_layers: int = 0, hybrid_rule: str = "v0.18"
) -> KvShape | None:
    """Bytes per token on one rank; None when config.json lacks the shapes."""
    layers_total = config.num_hidden_layers
    if not layers_total:
        return None
    # the limiting stage holds the most layers; MTP layers sit on the last stage with the last block of layers
    layers = -(-layers_total // pipeline) + mtp_layers
    note = f"{layers} layers per stage" + (f" (incl. {mtp_layers} MTP)" if mtp_layers else "")
    if config.compress_ratios and config.head_dim:
        return _compressed(config, config.head_dim, pipeline=pipeline, element=element, mtp_layers=mtp_layers)
    if config.mla and config.kv_lora_rank:
        rope = config.qk_rope_head_dim or 64  # DeepSeek-V2/V3/R1 and Kimi-K2 all use 64
        per_layer = (config.kv_lora_rank + rope) * element
        kind = "mla"
        if config.index_head_dim:
            # the indexer keeps one key of index_head_dim per token and layer, at the model's dtype here
            per_layer += config.index_head_dim * 2
            kind = "mla+indexer"
        return KvShape(per_layer * layers, layers, per_layer, kind, note + f"; latent {config.kv_lora_rank}+{rope}")
    heads = config.num_attention_heads
    kv_heads = config.num_key_value_heads or heads
    if not heads or not kv_heads:
        return None
    # vLLM's head size: config.json's head_dim when set and > 0, else hidden_size ÷ num_attention_heads (vllm v0.32.0
    # transformers_utils/model_arch_config_convertor.py:89-116; the model code does the same, e.g. v0.32.0
    # model_executor/models/qwen2.py:150); an architecture whose config class defaults it (Qwen3: 128) has it filled
    # first (inputs.with_config_defaults)
    head_dim = config.head_dim or (config.hidden_size // heads if config.hidden_size else None)
    if not head_dim:
        return None
    per_rank_heads = max(1, kv_heads // tensor)
    per_layer = 2 * per_rank_heads * head_dim * element
    note += f"; {per_rank_heads} KV heads × {head_dim} per rank"
    if config.full_attention_layers is not None:
        hybrid = _hybrid(config, per_layer, tensor=tensor, layers=layers_total, rule=hybrid_rule)
        if hybrid is not None:
            return hybrid
        note += "; hybrid without linear-attention dims: every layer charged an attention page"
    return KvShape(per_layer * layers, layers, per_layer, "gqa", note)


# DeepSeek-V4 on A2/A3 (v0.23.0rc1 to v0.25.1rc1 alike): the indexer keeps an int8 key and one float16 scale per
# compressed entry (v0.23.0rc1:vllm_ascend/models/deepseek_v4.py:152-169,568-577).
DSV4_INDEXER_KEY_BYTES = 1
DSV4_INDEXER_SCALE_BYTES = 2
DSV4_INDEXED_RATIO = 4  # only the ratio-4 (compressed sparse attention) layers own an indexer


def _compressed(config: ModelConfig, head_dim: int, *, pipeline: int, element: int, mtp_layers: int) -> KvShape:
    """DeepSeek-V4's compressed attention as vllm-ascend sizes it: a layer of ratio r > 1 caches one `head_dim` row
    per r tokens at the cache dtype (v0.23.0rc1:vllm_ascend/models/layer/attention/layer.py:175-194), a ratio-4 layer
    also one indexer key of `index_head_dim` int8 plus a float16 scale per 4 tokens; a spec costs
    `cdiv(len, block × r) × page` (v0.23.0rc1:vllm_ascend/core/kv_cache_interface.py:117-121,241-249), so a token
    costs page ÷ (block × r) — the same for the 128, 64 and 32 block settings (…/layer.py:34-38). KV heads are one
    latent row, which TP does not shard. Every layer's 128-token sliding window and the compressors' state are a
    fixed cost per request, not per token (ratio-0 layers and MTP layers hold only that), and are not charged here."""
    ratios = list(config.compress_ratios[: config.num_hidden_layers or None])
    index_row = (config.index_head_dim or 0) * DSV4_INDEXER_KEY_BYTES + DSV4_INDEXER_SCALE_BYTES

    def row_bytes(ratio: int) -> float:
        if ratio <= 1:
            return 0.0
        return (head_dim * element + (index_row if ratio == DSV4_INDEXED_RATIO else 0)) / ratio

    per_stage = -(-len(ratios) // pipeline)
    stages = [ratios[i : i + per_stage] for i in range(0, len(ratios), per_stage)] or [[]]
    limiting = max(stages, key=lambda stage: sum(row_bytes(r) for r in stage))
    exact = sum(row_bytes(r) for r in limiting)
    per_token = math.ceil(exact)
    counts = {r: limiting.count(r) for r in sorted(set(limiting))}
    note = (
        f"{len(limiting)} layers per stage (compression ratios {', '.join(f'{n}× {r}' for r, n in counts.items())})"
        + (f" + {mtp_layers} MTP" if mtp_layers else "")
        + f"; {exact:,.1f} B/token of compressed rows and indexer keys (sliding windows and compressor state are "
        "per request, not counted)"
    )
    layers = len(limiting) + mtp_layers
    return KvShape(per_token, layers, per_token // max(layers, 1), "compressed", note)


def _hybrid(config: ModelConfig, token_page: int, *, tensor: int, layers: int, rule: str) -> KvShape | None:
    """Hybrid attention + gated-delta-net layers (Qwen3-Next) as vllm-ascend sizes their shared pages
    (vllm_ascend/patch/platform/patch_mamba_config.py): the linear layers' state per rank — SSM
    `value_heads × key_dim × value_dim` and the conv window `(2 × key_heads × key_dim + value_heads × value_dim)
    × (kernel − 1)`, bf16 — sets the block: up to v0.17 `128 × ceil((ssm + conv) / (128 × token page))` with the
    page `block × token page` (v0.13.0 …:37-88); from v0.18 `128 × ceil(ssm / (128 × K-only page))` with the page
    `block × token page + conv` (v0.23.0 …:94,117). vLLM then groups the layers by the smallest layer count of a
    type (vllm/v1/core/kv_cache_utils.py `_get_kv_cache_groups_uniform_page_size`)."""
    c = config
    dims = (c.linear_key_heads, c.linear_key_head_dim, c.linear_value_heads, c.linear_value_head_dim)
    full = c.full_attention_layers
    if not full or not all(dims) or token_page < 2 or full > layers:  # zero dims or layers: no page to size
        return None
    key_heads, key_dim, value_heads, value_dim = (int(d or 0) for d in dims)
    kernel = c.linear_conv_kernel or 4
    ssm = value_heads // tensor * key_dim * value_dim * 2
    conv = (2 * key_heads * key_dim + value_heads * value_dim) // tensor * (kernel - 1) * 2
    if rule == "v0.13":
        block = 128 * -(-(ssm + conv) // (128 * token_page))
        page = block * token_page
    else:
        block = 128 * -(-ssm // (128 * (token_page // 2)))
        page = block * token_page + conv
    if block <= 0:  # fewer value heads than TP ranks: no state per rank to size a block by
        return None
    linear = layers - full
    group_size = min(full, linear) if linear else full
    if linear and max(full, linear) <= 1.5 * group_size:
        group_size = max(full, linear)
    attention_groups = -(-full // group_size)
    groups = attention_groups + (-(-linear // group_size) if linear else 0)
    per_token = page * group_size * groups // block
    note = (
        f"hybrid: {full} attention + {linear} linear-attention layers in {groups} groups of {group_size}, "
        f"block {block}, page {page:,} B ({rule} page rule)"
    )
    return KvShape(
        per_token, layers, token_page, "hybrid", note, block=block, page_bytes=page, group_size=group_size,
        groups=groups, state_groups=groups - attention_groups,
    )  # fmt: skip


def capacity(shape: KvShape, available_bytes: float, block: int) -> tuple[int, int]:
    """(tokens, blocks) that `available_bytes` hold, whole blocks only, as the engine prints them: a plain model's
    blocks × block; a hybrid model's blocks per group × block (vllm/v1/core/kv_cache_utils.py)."""
    if available_bytes <= 0 or shape.bytes_per_token <= 0:
        return 0, 0
    if shape.kind == "hybrid" and shape.block:
        blocks = int(available_bytes // (shape.page_bytes * shape.group_size))
        return blocks // shape.groups * shape.block, blocks
    blocks = int(available_bytes // (shape.bytes_per_token * block))
    return blocks * block, blocks


def blocks_per_request(shape: KvShape, block: int, tokens: int) -> int:
    """Blocks one request of `tokens` tokens takes: a block per `block` tokens (the model's own block for a hybrid
    model), plus one state block per linear-attention group."""
    return -(-tokens // (shape.block or block)) + shape.state_groups


def concurrency(shape: KvShape, blocks: int, block: int, max_model_len: int) -> float:
    """Requests of `max_model_len` the blocks hold (the engine's "Maximum concurrency")."""
    need = blocks_per_request(shape, block, max_model_len)
    return blocks / need if need else 0.0


# From vLLM 0.20.1 "GPU KV cache size" is max_concurrency × max_model_len (which vLLM prints which figure is the era
# registry's `kv-tokens-printed`). For a hybrid model the old figure divided the shared pool among the cache groups;
# the new one charges a request its blocks in every group (the attention blocks and one state block per
# linear-attention group), about `groups` × the old figure. A plain model differs only when max_model_len is not a
# whole number of blocks.


def printed_tokens(concurrency_: float, max_model_len: int) -> int:
    """The KV token count vLLM ≥ 0.20.1 prints: `int(max_concurrency × max_model_len)`, where the concurrency is
    the blocks over a max_model_len request's blocks in every group (`concurrency`; per rank with context
    parallelism, so the count is the whole sequence's)."""
    return int(concurrency_ * max_model_len)
