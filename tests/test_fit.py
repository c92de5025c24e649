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


def test_deepseek_v4_caches_compressed_rows_per_ratio() -> None:
    """vllm-ascend v0.23.0rc1: a ratio-r layer caches one 512-wide row per r tokens at the cache dtype, a ratio-4
    layer also its indexer's int8 key of 128 and a float16 scale; ratio-0 and MTP layers hold only per-request
    sliding windows (ascendctl/plan/fit/cache.py `_compressed`)."""
    cfg = config("deepseek-v4-flash")
    assert (cfg.compress_ratios.count(0), cfg.compress_ratios.count(4), cfg.compress_ratios.count(128)) == (2, 21, 20)
    shape = cache.kv_shape(cfg, tensor=8, pipeline=1, element=2, mtp_layers=1)
    assert shape is not None and shape.kind == "compressed"
    exact = 21 * (512 * 2 + 128 + 2) / 4 + 20 * 512 * 2 / 128  # 6,218.5 B/token
    assert shape.bytes_per_token == 6219 == -(-exact // 1)
    single = cache.kv_shape(cfg, tensor=1, pipeline=1, element=2)  # TP does not shard the one latent row
    assert single is not None and (single.bytes_per_token, single.layers) == (6219, 43) and "MTP" not in single.note
    # an int8 cache halves the rows, not the indexer's int8 key; two stages split the compressed layers
    assert cache.kv_shape(cfg, tensor=1, pipeline=1, element=1).bytes_per_token == 3451  # type: ignore[union-attr]
    assert cache.kv_shape(cfg, tensor=1, pipeline=2, element=2).bytes_per_token == 3254  # type: ignore[union-attr]
    # not a plain MQA head: without compress_ratios the same config would be charged one 512-wide K and V per layer
    assert cache.kv_shape(replace(cfg, compress_ratios=()), tensor=1, pipeline=1, element=2).kind == "gqa"  # type: ignore[union-attr]


def test_compress_ratios_are_read_only_as_a_list_of_counts() -> None:
    assert parse_model_config({"compress_ratios": [0, 4, 128]}).compress_ratios == (0, 4, 128)
    assert parse_model_config({"text_config": {"compress_ratios": [4]}}).compress_ratios == (4,)
    assert parse_model_config({"compress_ratios": [0, "4"]}).compress_ratios == ()
    assert parse_model_config({"compress_ratios": {"a": 4}}).compress_ratios == ()


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
    assert verdict_for(0.99) == "does-not-fit"  # not even one max_model_len sequence: the engine refuses
    assert verdict_for(1.0) == verdict_for(1.99) == "tight"  # it starts; one long request stalls the rest
    assert verdict_for(2.0) == "fits"  # max_num_seqs plays no part: vLLM schedules by tokens and preempts


def _cpu(**changes: object) -> FitInputs:
    """The tiny model on CPU with 1 GiB of KV space: exactly 524,288 tokens (4,096 blocks of 128)."""
    cfg = parse_model_config(TINY)
    base = FitInputs(
        backend="cpu", config=cfg, layout=Layout(), max_model_len=512, max_num_seqs=256, max_num_batched_tokens=2048,
        device_bytes=None, utilization=0.9, cpu_kv_bytes=GIB, params=param_breakdown(cfg),
    )  # fmt: skip
    return replace(base, **changes)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("max_model_len", "verdict"),
    [
        (262144, "fits"),  # exactly two full-length sequences (2,048 blocks each)
        (262144 + 128, "tight"),  # one block more: 1.99 of them
        (524288, "tight"),  # exactly one
        (524288 + 128, "does-not-fit"),  # not one: the engine refuses to start
    ],
)
def test_verdict_boundaries_in_whole_blocks(max_model_len: int, verdict: str) -> None:
    result = estimate(_cpu(max_model_len=max_model_len))
    assert result.kv_tokens == 524288 and result.verdict == verdict
    assert bool(result.suggestions) == (verdict != "fits")  # suggestions only for tight and does-not-fit


def test_no_suggestion_shrinks_the_context_of_a_deployment_that_starts() -> None:
    tight = estimate(_cpu(max_model_len=400_000))
    assert tight.verdict == "tight" and tight.suggestions
    assert not any(one.startswith("model.max_model_len=") for s in tight.suggestions for one in s.sets)
    space = tight.suggestions[0]
    assert space.sets == ("engine.memory.cpu_kv_cache_gib=2",) and space.verdict == "fits"
    # does-not-fit, but a larger layout or int8 weights make it start: the context is left alone
    refused = estimate(_npu(layout=Layout(tensor=8), devices_per_node=8, max_model_len=131072))
    assert refused.verdict == "does-not-fit" and any(s.verdict == "fits" for s in refused.suggestions)
    assert not any(s.sets[0].startswith("model.max_model_len=") for s in refused.suggestions)
    # nothing else makes it start: a shorter context, offered last
    hopeless = estimate(_npu(layout=Layout(tensor=8), devices_per_node=8, max_model_len=1_000_000))
    keys = [s.sets[0] for s in hopeless.suggestions]
    shorter = [k for k in keys if k.startswith("model.max_model_len=")]
    assert shorter and keys[-len(shorter) :] == shorter
    assert all(s.verdict == "does-not-fit" for s in hopeless.suggestions if s.sets[0] not in shorter)
    assert all(s.verdict != "does-not-fit" for s in hopeless.suggestions if s.sets[0] in shorter)
    # each one re-estimated, and only what helps
    for result in (refused, hopeless):
        assert all(s.kv_tokens > result.kv_tokens or s.verdict != "does-not-fit" for s in result.suggestions)


def test_a_large_batch_is_not_a_memory_problem() -> None:
    """Fewer than max_num_seqs full-length sequences is the normal case (#30: 739,072 tokens, 90× at 8,192)."""
    result = estimate(_npu(layout=Layout(tensor=16), max_num_seqs=1024))
    assert 2 <= result.max_concurrency < 1024 and result.verdict == "fits" and result.suggestions == ()


def test_graph_capture_beyond_the_headroom_is_tight_with_its_note() -> None:
    base = _npu(layout=Layout(tensor=16), max_num_seqs=1024)
    squeezed = estimate(replace(base, utilization=0.995))  # 0.32 GiB above the share for 0.8 GiB of graphs
    assert squeezed.verdict == "tight" and squeezed.max_concurrency >= 2
    assert any("graph capture needs" in n for n in squeezed.notes)
    fewer = next(s for s in squeezed.suggestions if s.sets[0].startswith("engine.graph.capture_sizes="))
    assert fewer.verdict == "fits"


def test_a_workload_is_held_without_preemption_in_whole_blocks() -> None:
    from ascendctl.plan.workload import parse_workload

    result = estimate(_cpu(max_model_len=131072, workload=parse_workload("2k:256:16")))
    assert result.workload is not None and result.verdict == "fits"
    (point,) = result.workload.points
    # 2,304 tokens → 18 blocks of 128 per request, 16 requests
    assert point.tokens_needed == 16 * 18 * 128 and point.fits
    assert point.headroom_tokens == 524288 - 16 * 18 * 128
    assert point.to_json()["headroom_pct"] == pytest.approx(100 * (1 - 16 * 18 * 128 / 524288), abs=0.05)
    # 16 × 64K does not fit: the deployment starts (four 128K sequences fit) but the load preempts → tight
    heavy = estimate(_cpu(max_model_len=131072, workload=parse_workload("64k:256:16")))
    assert heavy.max_concurrency >= 2 and heavy.verdict == "tight" and heavy.workload is not None
    assert not heavy.workload.fits and heavy.workload.points[0].headroom_tokens == 524288 - 16 * 514 * 128
    assert not any(one.startswith("model.max_model_len=") for s in heavy.suggestions for one in s.sets)
    assert heavy.to_json()["workload"]["fits"] is False
    # a point longer than max_model_len is refused by the engine, whatever the memory
    long = estimate(_cpu(max_model_len=2048, workload=parse_workload("2k:256:1")))
    assert long.workload is not None and long.workload.points[0].over_max_model_len and not long.workload.fits
    assert long.verdict == "tight" and long.suggestions[0].sets == ("model.max_model_len=3072",)  # a longer one
    assert long.suggestions[0].verdict == "fits"
    assert estimate(_cpu()).to_json()["workload"] is None


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
    assert result.to_json()["schema"] == 2


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
    # on two dies the weights do not fit at all: only a larger tensor size helps, the smallest that fits (TP 8
    # starts but holds 1.3 sequences of 32K: tight; TP 16 holds two)
    two = estimate(_npu(layout=Layout(tensor=2), devices_per_node=2))
    assert two.kv_tokens == 0 and [s.sets for s in two.suggestions] == [
        ("engine.parallel.tensor=16", "target.devices_per_node=16")
    ]
    assert estimate(_npu(layout=Layout(tensor=8), devices_per_node=8)).verdict == "tight"
    # data parallel replicas without EP each hold every expert; EP over TP 4 × DP 2 splits them 8 ways
    dp = estimate(_npu(layout=Layout(tensor=4, data=2), devices_per_node=8, quantization="w8a8"))
    ep = next(s for s in dp.suggestions if s.sets == ("engine.parallel.expert=true",))
    with_ep = estimate(_npu(layout=Layout(tensor=4, data=2, expert=True), quantization="w8a8"))
    assert ep.kv_tokens == with_ep.kv_tokens > dp.kv_tokens


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


# ---- the terms of issue 30, each against the published log that motivated it ---------------------------------


def test_the_300i_duo_runtime_total_is_npu_smis_figure() -> None:
    """vllm-project/vllm-ascend#3316: npu-smi 47,304 MB, the worker's total 49,602,220,032 B; #4074: 44,280 MB
    (npu-smi of the same card in #1141/#14274) ↔ 46,431,260,672 B. The A2 conversion would be ≈ 4.8 % low."""
    from ascendctl.plan.fit.inputs import visible_bytes

    total, how = visible_bytes(47304, "300i-duo")
    assert abs(total - 49602220032) / 49602220032 < 1e-4 and "2^20" in how
    assert abs(visible_bytes(44280, "300i-duo")[0] - 46431260672) / 46431260672 < 1e-4
    a2_way = visible_bytes(47304)[0]
    assert 0.04 < (49602220032 - a2_way) / 49602220032 < 0.06
    assert visible_bytes(65536, "a2")[0] == 65452113920  # the A2/A3 figure is unchanged


def test_releases_that_profile_max_model_len_tokens() -> None:
    """v0.9.1, v0.10.2rc1 and v0.11.0rc0 force their scheduler without chunked prefill on non-MLA text models and
    raise max_num_batched_tokens to max_model_len (v0.10.2rc1:vllm_ascend/platform.py:136-159): #3316's
    Qwen2.5-0.5B at 32K keeps 3.2 GiB besides its 0.93 GiB of weights."""
    from ascendctl.plan.fit.inputs import kv_budget, profiles_at_max_model_len

    qwen = config("qwen2.5-0.5b")
    assert profiles_at_max_model_len(kv_budget("npu", "0.10.2", "0.10.2rc2.dev0"), qwen)
    assert profiles_at_max_model_len(kv_budget("npu", "0.11.0", "0.11.0rc0"), qwen)
    assert not profiles_at_max_model_len(kv_budget("npu", "0.11.0", "0.11.0"), qwen)  # the scheduler on request
    assert not profiles_at_max_model_len(kv_budget("npu", "0.11.0", "0.11.0rc0"), config("deepseek-v3"))  # MLA
    assert not profiles_at_max_model_len(kv_budget("npu", "0.11.0", "0.11.0rc0"), config("qwen3-vl-8b"))  # vision
    base = _npu(
        "qwen2.5-0.5b", layout=Layout(), devices_per_node=1, max_model_len=32768, max_num_seqs=256,
        max_num_batched_tokens=2048, device_bytes=49602220032, utilization=0.9, graph_mode="eager",
        whole_device=True, kv_cache_dtype="float16", measured_weights_bytes=int(0.9299 * GIB),
    )  # fmt: skip
    at_len = estimate(replace(base, profile_at_max_model_len=True))
    batched = estimate(base)
    # the log: 3,269,760 tokens; profiling 2,048 tokens overstates them by 5.6 %, 32,768 tokens lands within 5 %
    assert (batched.kv_tokens - 3269760) / 3269760 > 0.05
    assert abs(at_len.kv_tokens - 3269760) / 3269760 < 0.05


def test_hybrid_models_profile_above_the_dense_activation_model() -> None:
    """vllm-project/vllm-ascend#6250 (Qwen3-Next-80B TP4, v0.13.0rc2): 2.33 GiB besides the weights against 1.61
    estimated without the hybrid term."""
    qwen_next = config("qwen3-next")
    assert budget.is_hybrid(qwen_next) and not budget.is_hybrid(config("qwen3-32b"))
    args = {"batched_tokens": 2048, "num_seqs": 256}
    hybrid = budget.activation_bytes(qwen_next, Layout(tensor=4), **args)
    dense = budget.activation_bytes(replace(qwen_next, full_attention_layers=None), Layout(tensor=4), **args)
    assert hybrid - dense == budget.HYBRID_PEAK_EXTRA


def test_the_300i_duo_worker_charges_memory_in_use_twice() -> None:
    """From v0.18.0rc1 the 300I Duo worker subtracts what the device held before profiling (other processes
    included) from a share that already left it out (v0.23.0:vllm_ascend/_310p/worker_310p.py:90,113-115).
    #10122 fixes the runtime's own part; #14274 (20,687 MB of another service on the die) started with no KV room
    where the plain formula says it fits."""
    from ascendctl.plan.fit.inputs import kv_budget

    # #10122, TP0: requested 34.59, weights 18.8, peak 1.71, non-torch 1.05, printed KV 5.77 GiB (halved)
    printed = (34.59 - 18.8 - 1.71 - 1.05 - budget.RUNTIME_IN_USE_310P / GIB) / 2
    assert printed == pytest.approx(5.77, abs=0.01)
    era = kv_budget("npu", "0.13.0", "0.22.1rc1")
    assert era is not None and era.charges_in_use and era.workspace_halving
    assert not kv_budget("npu", "0.13.0", "0.17.0rc1").charges_in_use  # type: ignore[union-attr]
    shared = _npu(
        "qwen3-0.6b", layout=Layout(), devices_per_node=1, max_model_len=4096, max_num_seqs=1,
        device_bytes=44278 * MIB, utilization=0.5, graph_mode="eager", kv_cache_dtype="float16", kv_halved=True,
        device_used_bytes=20687 * MIB,
    )  # fmt: skip
    assert estimate(shared).verdict == "fits"  # without the term: the old prediction
    charged = estimate(replace(shared, charges_in_use=True))
    assert charged.verdict == "does-not-fit" and any("counts twice" in n for n in charged.notes)


def test_utilization_defaults_come_from_the_parser_snapshots() -> None:
    from ascendctl.plan.fit.inputs import utilization_default

    found = utilization_default("0.19.1")
    assert found == (0.9, "--gpu-memory-utilization in engine/ascendctl_engine/data/parsers/vllm-0.19.1.json")
    assert utilization_default("0.20.2")[0] == 0.92  # type: ignore[index]
    older = utilization_default("0.20.3")  # no snapshot of its own: the nearest older one
    assert older is not None and older[0] == 0.92 and "vllm-0.20.2.json" in older[1]
    assert utilization_default("0.32.0", "cpu")[0] == 0.92  # type: ignore[index]


def test_context_parallelism_multiplies_the_printed_tokens() -> None:
    """vllm-project/vllm#40585 (Qwen3.5-35B-A3B, TP8 DCP4 on 8×910B): the engine prints 4 × each rank's tokens
    ("Multiplying the GPU KV cache size by the cp_world_size 4"), and a rank keeps a quarter of each sequence."""
    plain = estimate(_npu(max_model_len=8192))
    split = estimate(_npu(max_model_len=8192, context_parallel=4))
    assert split.per_device[0].kv_cache_gib == plain.per_device[0].kv_cache_gib  # the same memory per rank
    assert split.kv_tokens == 4 * plain.kv_tokens
    assert split.max_concurrency == pytest.approx(4 * plain.max_concurrency, rel=0.01)


def test_cuda_workers_before_0_11_charge_each_groups_nccl_communicator() -> None:
    """vLLM < 0.11.0 takes the worker's memory snapshot before the distributed environment (v0.6.5:vllm/worker/
    worker.py:141-150; v0.10.2:vllm/v1/worker/gpu_worker.py:175,193), so every process group of more than one rank
    charges its NCCL communicator, and the TP group custom all-reduce's two IPC buffers; from v0.9.0 vLLM also builds
    an EP group of TP × DP ranks; from v0.11.0 the snapshot follows NCCL init and nothing is charged."""
    from ascendctl.plan.fit.inputs import kv_budget

    eras = {v: kv_budget("cuda", v, None) for v in ("0.6.5", "0.9.2", "0.10.2", "0.11.0", "0.20.2")}
    assert all(e is not None for e in eras.values())
    groups = {v: e.nccl_groups for v, e in eras.items() if e is not None}
    assert groups == {
        "0.6.5": ("tp", "pp"), "0.9.2": ("tp", "pp", "dp", "ep"), "0.10.2": ("tp", "pp", "dp", "ep"),
        "0.11.0": (), "0.20.2": (),
    }  # fmt: skip
    nccl, custom = budget.NCCL_COMMUNICATOR_BYTES, budget.CUSTOM_ALLREDUCE_BYTES
    assert budget.nccl_bytes(Layout(tensor=1), groups["0.6.5"]) == 0  # one rank: no communicator
    assert budget.nccl_bytes(Layout(tensor=2), groups["0.6.5"]) == nccl + custom
    assert budget.nccl_bytes(Layout(tensor=4), groups["0.9.2"]) == 2 * nccl + custom  # TP and EP groups
    assert budget.nccl_bytes(Layout(pipeline=2), groups["0.6.5"]) == nccl  # PP: no custom all-reduce
    assert budget.nccl_bytes(Layout(tensor=4), groups["0.11.0"]) == 0
    gpu = _npu(backend="cuda", layout=Layout(tensor=2), graph_mode="eager")
    plain, charged = estimate(gpu), estimate(replace(gpu, nccl_groups=groups["0.6.5"]))
    assert charged.per_device[0].comm_buffers_gib == pytest.approx((nccl + custom) / GIB)
    assert charged.per_device[0].kv_cache_gib == pytest.approx(plain.per_device[0].kv_cache_gib - (nccl + custom) / GIB)
    single = replace(gpu, layout=Layout(tensor=1))
    assert estimate(replace(single, nccl_groups=groups["0.6.5"])).kv_tokens == estimate(single).kv_tokens


def test_the_cuda_worker_charges_its_non_torch_increase_and_by_era_its_graphs() -> None:
    """vLLM's V1 GPU worker: requested share − weights − torch peak − the non-torch increase since its snapshot
    (taken after NCCL init, v0.11.0:vllm/v1/worker/gpu_worker.py:177-184,254-280); from v0.20.2 it also charges its
    CUDA-graph estimate (VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS defaults to 1: v0.20.2:vllm/envs.py:1736-1738)."""
    from ascendctl.plan.fit.inputs import kv_budget

    before, after = kv_budget("cuda", "0.19.1", None), kv_budget("cuda", "0.20.2", None)
    assert before is not None and after is not None
    assert not before.graph_in_budget and after.graph_in_budget and after.accounting == "increase"
    assert kv_budget("cpu", "0.32.0", None) is None
    gpu = _npu(backend="cuda", layout=Layout(tensor=4), graph_mode="full-decode-only")
    plain = estimate(gpu)
    assert plain.per_device[0].runtime_reserve_gib == pytest.approx(budget.CUDA_NON_TORCH_INCREASE / GIB)
    assert plain.per_device[0].comm_buffers_gib == 0  # NCCL is in the worker's baseline, not charged
    charged = estimate(replace(gpu, graph_in_budget=True))
    row, row0 = charged.per_device[0], plain.per_device[0]
    assert row.graph_capture_gib > 0
    assert row.kv_cache_gib == pytest.approx(row0.kv_cache_gib - row.graph_capture_gib)
    assert not any("graph capture needs" in n for n in charged.notes)  # inside the budget: no headroom to outgrow


def test_the_300i_duo_runtime_share_before_v0_15_is_its_in_use_memory_and_the_increase() -> None:
    """Before v0.15 the NPU worker charges every non-torch byte on the device and has no 300I Duo branch
    (v0.11.0rc0:vllm_ascend/worker/worker_v1.py:197-235), so a 300I Duo die's whole share is the two non-torch terms
    the v0.18+ 310P worker charges: RUNTIME_IN_USE_310P (fitted on vllm-project/vllm-ascend#10122) and the profiled
    increase. Checked on rows it was not fitted on: Ascend/pytorch#78 (Seed-X-PPO-7B, v0.9.2rc1) printed 184,448
    tokens, +2.8 % over with the A2/A3 share."""
    seed_x = _npu(
        "seed-x-7b", layout=Layout(), devices_per_node=1, max_model_len=4096, max_num_seqs=256,
        max_num_batched_tokens=2048, device_bytes=45816029184, utilization=0.9, graph_mode="eager",
        whole_device=True, kv_cache_dtype="float16", measured_weights_bytes=int(14.0046 * GIB),
    )  # fmt: skip
    a2_share = estimate(seed_x)
    own_share = estimate(replace(seed_x, runtime_310p=True))
    assert own_share.per_device[0].runtime_reserve_gib == pytest.approx(
        (budget.RUNTIME_IN_USE_310P + budget.RUNTIME_RESERVE_INCREASE) / GIB
    )
    assert (a2_share.kv_tokens - 184448) / 184448 > 0.025  # the 300I Duo over-prediction, same sign on #3316, #4074
    assert abs(own_share.kv_tokens - 184448) / 184448 < 0.01
    # only the whole-device era charges it; from v0.15 the worker charges the increase alone (v0.18+: + in-use)
    increase = estimate(replace(seed_x, whole_device=False, runtime_310p=True)).per_device[0]
    assert increase.runtime_reserve_gib == pytest.approx(budget.RUNTIME_RESERVE_INCREASE / GIB)


def test_vllm_from_0_20_1_prints_max_concurrency_times_max_model_len() -> None:
    """vLLM 0.20.1 first prints `int(max_concurrency × max_model_len)` as "GPU KV cache size" (v0.20.1:vllm/v1/core/
    kv_cache_utils.py:1684-1713); 0.20.0 still printed `num_blocks // num_groups × block` (v0.20.0 …:1679-1711). A
    plain model differs when max_model_len is not a whole number of blocks; a hybrid model's pool is no longer
    divided among its groups (a request takes its attention blocks and one state block per linear-attention group)."""
    from ascendctl.plan.fit.inputs import printed_tokens_rule

    # a vLLM pre-release behaves like its final, as in every vLLM-keyed era (adapters/eras.py; vllm-ascend FAQ #7)
    assert [printed_tokens_rule(v) for v in ("0.20.0", "0.20.1rc1", "0.20.1", "0.24.0", None)] == [
        "blocks", "concurrency", "concurrency", "concurrency", "blocks",
    ]  # fmt: skip
    base = _npu("qwen3-8b", layout=Layout(), devices_per_node=1, max_model_len=14000, graph_mode="eager")
    blocks = estimate(base)
    printed = estimate(replace(base, printed_tokens="concurrency"))
    assert blocks.kv_tokens % 128 == 0 and printed.max_concurrency == blocks.max_concurrency
    assert printed.kv_tokens == int(blocks.kv_tokens // 128 / 110 * 14000)  # cdiv(14,000, 128) = 110 blocks each
    hybrid = _npu("qwen3-next", max_model_len=32768, graph_mode="eager", hybrid_rule="v0.13")
    old, new = estimate(hybrid), estimate(replace(hybrid, printed_tokens="concurrency"))
    blocks = int(old.max_concurrency * (32768 // 384 + 1 + 3) + 0.5)  # cdiv(32,768, 384) attention + 3 state blocks
    assert old.kv_tokens == blocks // 4 * 384  # the pool divided among the 4 groups
    assert new.kv_tokens == int(blocks / (86 + 3) * 32768) > 3 * old.kv_tokens
    # noonghunna/club-3090#652 and #612 (vLLM 0.24.0, Qwen3.6-35B-A3B, fp8 KV, max_model_len 131,072) printed
    # 569,878 and 567,978 tokens: this rule over 300 and 299 blocks of vLLM's own CUDA hybrid page, 63 + 3 × 2 of
    # them per request (2,096-token blocks: the 16-token kernel alignment over a float32 SSM state; two state blocks
    # per group in the `align` mamba cache mode prefix caching selects: v0.24.0:vllm/platforms/interface.py:632-800,
    # vllm/model_executor/models/config.py:417-432). The fit pages CUDA hybrids with vllm-ascend's rule, so this
    # pins the print rule alone (benchmarks/data/fit_facts.md (j))
    assert cache.printed_tokens(300 / 69, 131072) == 569878 and cache.printed_tokens(299 / 69, 131072) == 567978


def test_keys_a_config_leaves_out_are_its_config_classs_defaults() -> None:
    """transformers fills a key config.json leaves out from the architecture's config class, and vLLM reads that
    (transformers 5.19.0 models/qwen3/configuration_qwen3.py:62,68): Qwen3-14B's published shapes lack vocab_size,
    so its parameters could not be counted; a Qwen3 config without head_dim has 128, a Qwen2 one hidden ÷ heads."""
    from ascendctl.facts.published_shapes import published_config
    from ascendctl.plan.fit.inputs import with_config_defaults

    qwen3_14b = published_config("Qwen/Qwen3-14B")
    assert qwen3_14b is not None and qwen3_14b.vocab_size is None and param_breakdown(qwen3_14b) is None
    filled, said = with_config_defaults(qwen3_14b, "published")
    assert filled.vocab_size == 151936 and "vocab_size 151,936" in said
    assert param_breakdown(filled) is not None
    assert with_config_defaults(config("qwen3-8b"), "x") == (config("qwen3-8b"), "x")  # nothing left out
    no_head = replace(config("qwen3-8b"), head_dim=None, hidden_size=2560, num_attention_heads=32)  # Qwen3-4B-shaped
    shape = cache.kv_shape(with_config_defaults(no_head, "")[0], tensor=1, pipeline=1, element=2)
    assert shape is not None and "× 128 per rank" in shape.note  # not 2,560 ÷ 32 = 80
    qwen2 = cache.kv_shape(with_config_defaults(config("qwen2.5-0.5b"), "")[0], tensor=1, pipeline=1, element=2)
    assert qwen2 is not None and "× 64 per rank" in qwen2.note  # 896 ÷ 14
