"""Which typed profile field owns an engine spelling: a `vllm serve` flag, an `--additional-config` key path or
an environment variable, so `validate` and `plan` can tell an operator who wrote the spelling by hand through
`engine.extra_args`, `engine.additional_config` or `runtime.env` which field says it instead
(`profile.migration.typed-field`).

The table below is plain data, grouped by the adapter module that emits the spellings: `validate` reads it
without loading the era adapters. The tests hold each group to its adapter: every spelling of every
`engine.ascend` switch era is claimed by the switch and nothing else is (`tests/test_ascend_switches.py`), the
serving and scheduler flags exist in the real-parser snapshots (`tests/test_serving_options.py`), the
speculative, KV-cache and graph spellings are the adapters' own (`tests/test_speculative_and_kv.py`), and the model
and environment fields' variables and flags are the ones their adapters emit (`tests/test_hand_set_fields.py`).

Flags are canonical (`--max-model-len`); keys are dotted `--additional-config` paths; env names exact.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from ascendctl_engine.records import record

Kind = Literal["flag", "key", "env"]


@record
class Claim:
    field: str  # the profile field, dotted (`serving.reasoning_parser`)
    kind: Kind
    spelling: str


_CLAIMS: dict[tuple[Kind, str], Claim] = {}


def claim(field: str, *, flags: Iterable[str] = (), keys: Iterable[str] = (), env: Iterable[str] = ()) -> None:
    """Record that `field` is how a profile says these spellings (a spelling has one owner)."""
    groups: tuple[tuple[Kind, Iterable[str]], ...] = (("flag", flags), ("key", keys), ("env", env))
    for kind, spellings in groups:
        for spelling in spellings:
            existing = _CLAIMS.get((kind, spelling))
            if existing is not None and existing.field != field:
                raise ValueError(f"{kind} {spelling!r} is claimed by {existing.field} and {field}")
            _CLAIMS[(kind, spelling)] = Claim(field, kind, spelling)


def owner(kind: Kind, spelling: str) -> Claim | None:
    """The typed field that says `spelling`, if any. A key also matches through its parents (`a.b.c` → `a.b`)."""
    found = _CLAIMS.get((kind, spelling))
    if found is None and kind == "key":
        parts = spelling.split(".")
        for n in range(len(parts) - 1, 0, -1):
            found = _CLAIMS.get((kind, ".".join(parts[:n])))
            if found is not None:
                break
    return found


def claims() -> list[Claim]:
    return sorted(_CLAIMS.values(), key=lambda c: (c.field, c.kind, c.spelling))


# ------------------------------------------------------------------------------- adapters/ascend_switches.py
# Every spelling of every switch era (the era registry's `ascend.*` topics); the tutorials' misspelling of the
# prefetch key is claimed too, for the same advice.
claim(
    "engine.ascend.flashcomm1",
    keys=("enable_flashcomm1",),
    env=("VLLM_ASCEND_ENABLE_FLASHCOMM", "VLLM_ASCEND_ENABLE_FLASHCOMM1"),
)
claim("engine.ascend.cpu_binding", keys=("enable_cpu_binding",))
claim("engine.ascend.multistream_overlap_shared_expert", keys=("multistream_overlap_shared_expert",))
claim("engine.ascend.mlapo", keys=("enable_mlapo",), env=("VLLM_ASCEND_ENABLE_MLAPO",))
claim("engine.ascend.fused_mc2", keys=("enable_fused_mc2",), env=("VLLM_ASCEND_ENABLE_FUSED_MC2",))
claim(
    "engine.ascend.balance_scheduling",
    keys=("enable_balance_scheduling", "scheduler_config.enable_balance_scheduling"),
    env=("VLLM_ASCEND_BALANCE_SCHEDULING",),
)
claim("engine.ascend.weight_prefetch", keys=("weight_prefetch_config.enabled", "weight_prefetch_config.enable"))
claim(
    "engine.ascend.recompute_scheduler",
    keys=("recompute_scheduler_enable", "scheduler_config.recompute_scheduler_enable"),
)
claim("engine.ascend.shared_expert_dp", keys=("enable_shared_expert_dp",))
claim("engine.ascend.dsa_cp", keys=("enable_dsa_cp",))
claim("engine.ascend.reduce_sample", keys=("enable_reduce_sample",))
claim("engine.ascend.mc2_hierarchy_comm", keys=("enable_mc2_hierarchy_comm",))
claim("engine.ascend.multistream_dsa_preprocess", keys=("multistream_dsa_preprocess",))
claim("engine.ascend.dp_allreduce_on_npu", keys=("dp_allreduce_on_npu",))
claim("engine.ascend.prefetch_mlp", env=("VLLM_ASCEND_ENABLE_PREFETCH_MLP",))
claim("engine.ascend.topk_optimize", env=("VLLM_ASCEND_ENABLE_TOPK_OPTIMIZE",))
claim("engine.ascend.fuse_norm_quant", keys=("ascend_compilation_config.fuse_norm_quant",))
claim("engine.ascend.fuse_qknorm_rope", keys=("ascend_compilation_config.fuse_qknorm_rope",))
claim("engine.ascend.fuse_allreduce_rms", keys=("ascend_compilation_config.fuse_allreduce_rms",))
claim("engine.ascend.fuse_muls_add", keys=("ascend_compilation_config.fuse_muls_add",))
claim("engine.ascend.sparse_sfa_c8", keys=("enable_sparse_sfa_c8",))
claim("engine.ascend.sparse_li_c8", keys=("enable_sparse_li_c8",))
claim("engine.ascend.npugraph_ex", keys=("enable_npugraph_ex", "ascend_compilation_config.enable_npugraph_ex"))
claim("engine.ascend.static_kernel", keys=("ascend_compilation_config.enable_static_kernel",))
claim("engine.ascend.jemalloc", env=("LD_PRELOAD",))

# ---------------------------------------------------------------------------------------- adapters/graph.py
# cudagraph_mode rides inside `--compilation-config`, which carries other keys too: that flag is not claimed.
claim("engine.graph.mode", flags=("--enforce-eager", "--no-enforce-eager"), keys=("torchair_graph_config.enabled",))
claim("engine.graph.capture_sizes", flags=("--cuda-graph-sizes",), keys=("torchair_graph_config.graph_batch_sizes",))

# ---------------------------------------------------------------------------------- adapters/speculative.py
# vLLM 0.7's own spellings (`--speculative-model`, …) and the vLLM ≥ 0.22 shorthand are the same intent.
claim(
    "engine.speculative",
    flags=(
        "--speculative-config",
        "-sc",
        "--speculative-model",
        "--num-speculative-tokens",
        "--speculative-draft-tensor-parallel-size",
        "-spec-draft-tp",
    ),
)
claim("engine.speculative.method", flags=("--spec-method",))

# ------------------------------------------------------------------------------------- adapters/kv_cache.py
claim("engine.memory.kv_cache_dtype", flags=("--kv-cache-dtype",), keys=("kv_cache_dtype",))

# ---------------------------------------------------------------------------------------- adapters/model.py
claim("server.api_server_count", flags=("--api-server-count",))
claim("model.source", env=("VLLM_USE_MODELSCOPE",))  # `modelscope:ORG/NAME`
claim("model.allow_long_context", env=("VLLM_ALLOW_LONG_MAX_MODEL_LEN",))
claim("model.tokenizer_mode", flags=("--tokenizer-mode",))
claim("model.load_strategy", flags=("--safetensors-load-strategy",))
claim("engine.seed", flags=("--seed",))
claim("model.hf_overrides", flags=("--hf-overrides",))

# ------------------------------------------------------------------------------------ adapters/weight_nz.py
claim("engine.weight_nz", keys=("weight_nz_mode",), env=("VLLM_ASCEND_ENABLE_NZ",))
claim("engine.memory.block_size", flags=("--block-size",))

# ------------------------------------------------------------------------------------------ adapters/env.py
claim("engine.memory.hccl_buffer_mb", env=("HCCL_BUFFSIZE",))
claim("runtime.cpu.threads", env=("OMP_NUM_THREADS",))
claim("runtime.cpu.bind", env=("OMP_PROC_BIND",))
claim("runtime.worker_start", env=("VLLM_WORKER_MULTIPROC_METHOD",))
claim("network.hccl.connect_timeout_s", env=("HCCL_CONNECT_TIMEOUT",))
claim("network.hccl.exec_timeout_s", env=("HCCL_EXEC_TIMEOUT",))
claim("network.hccl.intra_node", env=("HCCL_INTRA_PCIE_ENABLE", "HCCL_INTRA_ROCE_ENABLE"))
claim("runtime.timeouts.engine_ready_s", env=("VLLM_ENGINE_READY_TIMEOUT_S",))
claim("runtime.timeouts.execute_model_s", env=("VLLM_EXECUTE_MODEL_TIMEOUT_SECONDS",))
claim("runtime.timeouts.rpc_s", env=("VLLM_RPC_TIMEOUT",))
claim("runtime.timeouts.engine_iteration_s", env=("VLLM_ENGINE_ITERATION_TIMEOUT_S",))

# -------------------------------------------------------------------------------------- adapters/serving.py
# Negative spellings are claimed too: `--no-enable-lora` in extra_args is still LoRA said by hand.
claim("serving.tool_call_parser", flags=("--tool-call-parser",))
claim(
    "serving.auto_tool_choice",
    flags=("--enable-auto-tool-choice", "--no-enable-auto-tool-choice", "--disable-auto-tool-choice"),
)
claim("serving.reasoning_parser", flags=("--reasoning-parser", "--enable-reasoning", "--no-enable-reasoning"))
claim("serving.chat_template", flags=("--chat-template",))
claim("serving.limit_mm_per_prompt", flags=("--limit-mm-per-prompt",))
claim(
    "serving.mm_processor_cache_gb",
    flags=("--mm-processor-cache-gb", "--disable-mm-preprocessor-cache", "--no-disable-mm-preprocessor-cache"),
)
claim("serving.lora", flags=("--enable-lora", "--no-enable-lora", "--disable-lora"))
claim("serving.lora.adapters", flags=("--lora-modules",))
claim("serving.lora.max_rank", flags=("--max-lora-rank",))
claim("serving.lora.max_loras", flags=("--max-loras",))
claim("serving.prefill_context_parallel", flags=("--prefill-context-parallel-size", "-pcp"))
claim("serving.decode_context_parallel", flags=("--decode-context-parallel-size", "-dcp"))
claim("serving.allowed_local_media_path", flags=("--allowed-local-media-path",))
claim("serving.mm_encoder_tp_mode", flags=("--mm-encoder-tp-mode",))
claim("serving.cp_kv_cache_interleave_size", flags=("--cp-kv-cache-interleave-size",))
claim("serving.structured_outputs_backend", flags=("--structured-outputs-config", "--guided-decoding-backend"))

# ------------------------------------------------------------------------------------ adapters/scheduler.py
# The scheduler fields own these spellings, negatives included.
claim("engine.scheduler.max_num_seqs", flags=("--max-num-seqs",))
claim("engine.scheduler.max_num_batched_tokens", flags=("--max-num-batched-tokens",))
claim(
    "engine.scheduler.prefix_caching",
    flags=("--enable-prefix-caching", "--no-enable-prefix-caching", "--disable-prefix-caching"),
)
claim(
    "engine.scheduler.chunked_prefill",
    flags=("--enable-chunked-prefill", "--no-enable-chunked-prefill", "--disable-chunked-prefill"),
    keys=("ascend_scheduler_config.enable_chunked_prefill",),
)
claim("engine.scheduler.async_scheduling", flags=("--async-scheduling", "--no-async-scheduling"))
