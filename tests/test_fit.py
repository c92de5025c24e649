"""The memory fit's pure core: bytes per token, block rounding, weight sharding, the HCCL rules, verdicts and
suggestions (`ascendctl.plan.fit`). Configs are the reduced ones in ascendctl/facts/data/model_configs/."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from ascendctl.facts.model_inspect import WeightStats, param_breakdown, parse_model_config
from ascendctl.plan.fit import budget, cache
from ascendctl.plan.fit.budget import GIB, MIB, Layout
from ascendctl.plan.fit.estimate import FitError, FitInputs, estimate, verdict_for
from ascendctl_engine.inenv import tiny_model

CONFIGS = Path(__file__).resolve().parents[1] / "ascendctl" / "facts" / "data" / "model_configs"


def config(name: str, **changes: object):
    data = json.loads((CONFIGS / f"{name}.json").read_text())
    data.update(changes)
    return parse_model_config(data, name)


TINY = tiny_model.config_json()  # the tiny-random model the e2e tests serve


def test_gqa_bytes_per_token_counts_k_and_v_for_the_ranks_kv_heads() -> None:
    cfg = parse_model_config(TINY)
    shape = cache.kv_shape(cfg, tensor=1, pipeline=1, element=2)
    assert shape is not None and shape.bytes_per_token == 4 * 2 * 2 * 64 * 2  # layers × K,V × heads × dim × bf16
    # TP 2 halves the KV heads; TP 4 > 2 KV heads replicates one head per rank
    assert cache.kv_shape(cfg, tensor=2, pipeline=1, element=2).bytes_per_token == 4 * 2 * 1 * 64 * 2  # type: ignore[union-attr]
    assert cache.kv_shape(cfg, tensor=4, pipeline=1, element=2).bytes_per_token == 4 * 2 * 1 * 64 * 2  # type: ignore[union-attr]
    # PP 3 over 4 layers: the limiting stage holds 2
    assert cache.kv_shape(cfg, tensor=1, pipeline=3, element=2).layers == 2  # type: ignore[union-attr]


def test_mla_caches_one_latent_that_tp_does_not_shard() -> None:
    cfg = config("deepseek-v3")
    shape = cache.kv_shape(cfg, tensor=16, pipeline=1, element=2, mtp_layers=1)
    assert shape is not None and shape.kind == "mla"
    assert shape.bytes_per_token == 62 * (512 + 64) * 2  # 61 layers + 1 MTP, latent + rope, bf16
    indexer = cache.kv_shape(replace(cfg, index_head_dim=128), tensor=16, pipeline=1, element=2)
    assert indexer is not None and indexer.kind == "mla+indexer"
    assert indexer.bytes_per_token == 61 * ((512 + 64) * 2 + 128 * 2)


def test_hybrid_pages_reproduce_published_qwen3_next_logs() -> None:
    """vllm-ascend v0.13.0rc2, Qwen3-Next-80B TP4 on A2 (vllm-project/vllm-ascend#6250): 9,786,143,744 bytes
    available printed 198,912 tokens and 23.29× at 32,768; v0.12.0rc1 on A3 (#5020) printed 282,240 tokens and
    210.07× at 4,096 (benchmarks/data/fit_published.yaml)."""
    cfg = config("qwen3-next")
    assert cfg.full_attention_layers == 12  # every 4th of 48
    shape = cache.kv_shape(cfg, tensor=4, pipeline=1, element=2, hybrid_rule="v0.13")
    assert shape is not None and shape.kind == "hybrid"
    assert (shape.block, shape.page_bytes, shape.group_size, shape.groups) == (384, 393216, 12, 4)
    tokens, blocks = cache.capacity(shape, 9786143744, 128)
    assert (tokens, blocks) == (198912, 2073)
    assert round(cache.concurrency(shape, blocks, 128, 32768), 2) == 23.29
    assert round(cache.concurrency(shape, 2941, 128, 4096), 2) == 210.07 and 2941 // 4 * 384 == 282240
    # every layer is charged a page: counting only the 12 full-attention layers would give 4× the tokens
    assert shape.bytes_per_token == 48 * 1024
    # without the linear-attention dims, every layer is still charged an attention page
    bare = replace(cfg, linear_key_heads=None)
    plain = cache.kv_shape(bare, tensor=4, pipeline=1, element=2)
    assert plain is not None and plain.bytes_per_token == 48 * 1024 and "hybrid" in plain.note


def test_one_byte_caches_and_block_sizes() -> None:
    assert cache.element_bytes("int8", "bfloat16") == 1
    assert cache.element_bytes("fp8_e4m3", "bfloat16") == 1
    assert cache.element_bytes("auto", "float32") == 4
    assert cache.block_size("npu", mla=True) == 128 and cache.block_size("cpu", mla=True) == 16


def test_weights_from_headers_shard_experts_over_ep_and_layers_over_tp() -> None:
    stats = WeightStats(
        total_bytes=0, by_dtype={}, files=2, source="safetensors headers",
        by_kind={"embeddings": 8 * GIB, "layers": 32 * GIB, "experts": 64 * GIB, "replicated": GIB},
    )  # fmt: skip
    common = {"stats": stats, "params": None, "quantization": "none", "model_dtype": "bfloat16", "tied": False}
    tp8 = budget.weights_per_rank(Layout(tensor=8), **common)  # type: ignore[arg-type]
    assert tp8 is not None and tp8.bytes == (8 + 32 + 64) * GIB // 8 + GIB
    # expert parallelism over TP 4 × DP 4: the experts split 16 ways, the rest 4 ways
    ep = budget.weights_per_rank(Layout(tensor=4, data=4, expert=True), **common)  # type: ignore[arg-type]
    assert ep is not None and ep.bytes == (8 + 32) * GIB // 4 + 64 * GIB // 16 + GIB
    # PP 2: each stage holds half the layers and one of the two untied embedding matrices
    pp = budget.weights_per_rank(Layout(tensor=2, pipeline=2), **common)  # type: ignore[arg-type]
    assert pp is not None and pp.bytes == int(8 * GIB * 0.5 / 2 + 32 * GIB / 4 + 64 * GIB / 4 + GIB / 2)


def test_weights_from_config_use_the_quantizations_stored_bytes() -> None:
    cfg = config("qwen3-235b-a22b")
    params = param_breakdown(cfg)
    assert params is not None and params.experts > params.layers
    bf16 = budget.weights_per_rank(
        Layout(tensor=4), stats=None, params=params, quantization="none", model_dtype="bfloat16", tied=False
    )
    w4a8 = budget.weights_per_rank(
        Layout(tensor=4), stats=None, params=params, quantization="w4a8", model_dtype="bfloat16", tied=False
    )
    assert bf16 is not None and w4a8 is not None
    # experts at half a byte, other layers at one, embeddings stay bf16
    expected = (params.embeddings * 2 + params.layers * 1 + params.experts * 0.5) / 4
    assert w4a8.bytes == pytest.approx(expected, rel=1e-6)
    assert bf16.bytes > 3 * w4a8.bytes


def test_hccl_buffers_for_the_groups_the_forward_pass_uses() -> None:
    assert budget.communicators(Layout()) == []
    assert budget.communicators(Layout(tensor=4, data=2, expert=True)) == ["tp", "mc2"]
    assert budget.communicators(Layout(tensor=2, pipeline=2)) == ["tp", "pp"]
    # the TP group at vllm-ascend's 200 MB default, the MC2 group at HCCL_BUFFSIZE
    assert budget.comm_bytes(Layout(tensor=4, data=2, expert=True), 1024) == (200 + 1024) * MIB
    assert budget.comm_bytes(Layout(tensor=4, data=2, expert=True), None) == 400 * MIB


def test_mc2_buffer_follows_the_dispatch_rule() -> None:
    cfg = config("deepseek-v3")
    # EP 16, 256 experts → 16 local, 32 tokens per rank, top-8 + 1 shared, H 7168:
    # (16 × 32 × 16 × Align512(Align32(14336) + 64) + 9 × 32 × Align512(14336)) bytes → MB, rounded up (the window
    # of 2 × that fits the communicator's 2 × HCCL_BUFFSIZE)
    need = 16 * 32 * 16 * 14848 + 9 * 32 * 14336
    assert budget.mc2_buffer_mb(cfg, Layout(tensor=16, expert=True), tokens_per_rank=32) == -(-need // MIB)
    assert budget.mc2_buffer_mb(cfg, Layout(tensor=16), tokens_per_rank=32) is None  # no EP, no MC2
    assert budget.mc2_buffer_mb(parse_model_config(TINY), Layout(tensor=2, expert=True), tokens_per_rank=8) is None


def test_capture_sizes_follow_vllms_default_list() -> None:
    sizes = budget.default_capture_sizes(256)
    assert sizes[:4] == [1, 2, 4, 8] and sizes[-1] == 512 and 264 not in sizes and 272 in sizes
    assert budget.default_capture_sizes(4) == [1, 2, 4, 8]
    assert budget.default_capture_sizes(256, cap=4) == [464, 480, 496, 512]
    assert budget.graph_bytes("eager", sizes, 40) == 0
    assert budget.graph_bytes("piecewise", [1, 2], 40) > budget.graph_bytes("full-decode-only", [1, 2], 40)


def test_verdicts_read_the_engines_concurrency() -> None:
    assert verdict_for(0.49, 4) == "does-not-fit"  # not even one max_model_len sequence
    assert verdict_for(2.0, 4) == "low-memory"  # fewer than max_num_seqs of them
    assert verdict_for(4.0, 4) == "fits"


def _npu(cfg_name: str = "qwen3-235b-a22b", **changes: object) -> FitInputs:
    base = FitInputs(
        backend="npu",
        config=config(cfg_name),
        layout=Layout(tensor=4),
        max_model_len=32768,
        max_num_seqs=64,
        max_num_batched_tokens=8192,
        device_bytes=64 * GIB,
        utilization=0.9,
        params=param_breakdown(config(cfg_name)),
        quantization="none",
        graph_mode="full-decode-only",
        kv_memory_flag="--kv-cache-memory-bytes",
        max_devices_per_node=16,
        devices_per_node=4,
    )
    return replace(base, **changes)  # type: ignore[arg-type]


def test_kv_cache_is_what_is_left_of_the_requested_share() -> None:
    result = estimate(_npu())
    d = result.per_device[0]
    requested = 0.9 * 64
    spent = d.weights_gib + d.activation_gib + d.comm_buffers_gib + d.runtime_reserve_gib
    assert d.kv_cache_gib == pytest.approx(requested - spent)
    whole_blocks = max(0, int(d.kv_cache_gib * GIB // (result.kv_bytes_per_token * 128)))  # none when nothing is left
    assert result.kv_tokens == whole_blocks * 128
    assert result.graph_headroom_gib == pytest.approx(64 * 0.1)
    assert result.to_json()["schema"] == 1


def test_a_model_that_cannot_fit_gets_suggestions_that_are_recomputed() -> None:
    # a 235B MoE in bf16 over 8 dies of 64 GiB: the weights leave less than one 128K sequence
    result = estimate(_npu(layout=Layout(tensor=8), devices_per_node=8, max_model_len=131072))
    assert result.verdict == "does-not-fit" and result.kv_tokens < 131072
    by_key = {" ".join(s.sets): s for s in result.suggestions}
    # a larger tensor size brings the devices it needs along
    assert set(by_key) >= {"engine.parallel.tensor=16 target.devices_per_node=16", "model.quantization=w8a8"}
    # TP 8 alone: expert parallelism over the same 8 ranks would hold the same expert bytes, so it is not offered
    assert "engine.parallel.expert=true" not in by_key
    tp16 = by_key["engine.parallel.tensor=16 target.devices_per_node=16"]
    assert tp16.kv_tokens == estimate(_npu(layout=Layout(tensor=16))).kv_tokens
    assert (
        by_key["model.quantization=w8a8"].kv_tokens
        == estimate(_npu(layout=Layout(tensor=8), quantization="w8a8")).kv_tokens
    )
    assert all(s.kv_tokens > 0 for s in by_key.values())
    # on two dies the weights do not fit at all: only a larger tensor size helps (the smallest that fits, 8)
    two = estimate(_npu(layout=Layout(tensor=2), devices_per_node=2))
    assert two.kv_tokens == 0 and [s.sets for s in two.suggestions] == [
        ("engine.parallel.tensor=8", "target.devices_per_node=8")
    ]
    # data parallel replicas without EP each hold every expert; EP over TP 4 × DP 2 splits them 8 ways
    dp = estimate(_npu(layout=Layout(tensor=4, data=2), devices_per_node=8, quantization="w8a8"))
    ep = next(s for s in dp.suggestions if s.sets == ("engine.parallel.expert=true",))
    with_ep = estimate(_npu(layout=Layout(tensor=4, data=2, expert=True), quantization="w8a8"))
    assert ep.kv_tokens == with_ep.kv_tokens > dp.kv_tokens


def test_low_memory_suggests_a_context_and_a_batch_that_fit() -> None:
    result = estimate(_npu(layout=Layout(tensor=16), max_num_seqs=1024))
    assert result.verdict == "low-memory"
    lengths = [s for s in result.suggestions if s.sets[0].startswith("model.max_model_len=")]
    assert lengths and lengths[0].verdict == "fits"
    seqs = next(s for s in result.suggestions if s.sets[0].startswith("engine.scheduler.max_num_seqs="))
    n = int(seqs.sets[0].split("=")[1])
    assert seqs.verdict == "fits" and n == int(result.max_concurrency)
    kv = next(s for s in result.suggestions if s.sets[0].startswith("engine.extra_args="))
    assert kv.sets[0].startswith('engine.extra_args=["--kv-cache-memory-bytes=')


def test_the_300i_duo_halving_and_the_cpu_explicit_space() -> None:
    halved = estimate(_npu(layout=Layout(tensor=16), kv_halved=True))
    whole = estimate(_npu(layout=Layout(tensor=16)))
    assert whole.per_device[0].kv_cache_gib > 0
    assert halved.per_device[0].kv_cache_gib == pytest.approx(whole.per_device[0].kv_cache_gib / 2)
    cpu = estimate(
        FitInputs(
            backend="cpu", config=parse_model_config(TINY), layout=Layout(), max_model_len=512, max_num_seqs=128,
            max_num_batched_tokens=2048, device_bytes=None, utilization=0.9, cpu_kv_bytes=GIB,
            params=param_breakdown(parse_model_config(TINY)),
        )
    )  # fmt: skip
    assert cpu.kv_tokens == 524288 and cpu.max_concurrency == pytest.approx(1024.0) and cpu.verdict == "fits"


def test_identical_ranks_are_one_row_and_pipeline_shows_its_limiting_stage() -> None:
    tp = estimate(_npu(layout=Layout(tensor=8))).per_device
    assert [(d.rank, d.count) for d in tp] == [("all", 8)]
    pp = estimate(_npu(layout=Layout(tensor=4, pipeline=2))).per_device
    assert [(d.rank, d.count) for d in pp] == [("last stage", 4)]
    one = estimate(_npu(layout=Layout(tensor=1), devices_per_node=1, max_model_len=1024)).per_device
    assert [(d.rank, d.count) for d in one] == [("0", 1)]


def test_memory_other_processes_hold_on_the_device() -> None:
    """The second-instance case: the old worker charges what others hold; the new one sizes from its share and
    then cannot allocate it next to them."""
    base = _npu(layout=Layout(tensor=16))
    alone = estimate(base)
    old = estimate(replace(base, whole_device=True, device_used_bytes=20 * GIB))
    old_alone = estimate(replace(base, whole_device=True))
    assert old.per_device[0].kv_cache_gib == pytest.approx(old_alone.per_device[0].kv_cache_gib - 20)
    assert any("charged to this engine" in n for n in old.notes)
    crowded = estimate(replace(base, device_used_bytes=20 * GIB))  # 0.9 × 64 + 20 > 64
    assert crowded.verdict == "does-not-fit" and crowded.kv_tokens == alone.kv_tokens
    assert any("does not fit next to it" in n for n in crowded.notes)
    roomy = estimate(replace(base, device_used_bytes=2 * GIB))  # 57.6 + 2 ≤ 64: the share still fits
    assert roomy.verdict == alone.verdict


def test_kv_cache_dtypes_with_a_byte_size_and_those_without() -> None:
    assert cache.element_bytes("bfloat16", "float32") == 2  # an explicit 16-bit cache, whatever the model's dtype
    assert cache.element_bytes("int8_per_token_head", "bfloat16") == 1
    with pytest.raises(ValueError, match="nvfp4"):
        cache.element_bytes("nvfp4", "bfloat16")
    with pytest.raises(FitError, match="16-bit, fp8 and int8"):
        estimate(_npu(kv_cache_dtype="int4_per_token_head"))


def test_an_explicit_kv_cache_memory_is_the_kv_cache() -> None:
    from ascendctl.plan.fit.inputs import _explicit_kv_memory
    from ascendctl_engine.argv_items import parse_args

    assert _explicit_kv_memory(parse_args(["--kv-cache-memory=8G"])) == 8 * GIB
    assert _explicit_kv_memory(parse_args(["--kv-cache-memory-bytes", "1000"])) == 1000
    assert _explicit_kv_memory(parse_args(["--max-model-len", "8"])) is None
    fixed = estimate(_npu(layout=Layout(tensor=16), kv_memory_bytes=10 * GIB))
    assert fixed.per_device[0].kv_cache_gib == pytest.approx(10)
