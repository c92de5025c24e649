"""KV-cache dtype eras (`engine.memory.kv_cache_dtype`).

Two kinds of quantized KV cache exist. vLLM's own are `--kv-cache-dtype` choices (fp8 variants, per-token-head
int8/fp8, nvfp4, …), and each vLLM version's parser snapshot lists the ones it takes; a value missing there is a
broken constraint naming the first vLLM whose parser has it. vllm-ascend's is an int8 cache with scales from
ModelSlim "C8" weights (`int8` here), and how a release switches it on changed twice:

- v0.9.2rc1–v0.12.0rc1: `--additional-config '{"kv_cache_dtype": "int8"}'` next to weights whose
  quant_model_description.json has `kv_quant_type: C8` (platform.py copies the key into cache_config.cache_dtype;
  additional_config.md: "currently only int8 is supported"; key tables engine/ascendctl_engine/data/ascend_keys/).
- v0.13.0rc1–v0.18.0rc1: no int8 KV cache (the key and the C8 quant method are gone from the code).
- v0.18.0 on: the weights alone (`kv_cache_type: C8` in quant_model_description.json, read by
  quantization/modelslim_config.py); there is no flag.

The NPU attention backends have no fp8 / fp4 KV-cache path: a quantized `--kv-cache-dtype` passes vLLM's parser
on Ascend but nothing in vllm-ascend reads it as such, so it plans with a warning.
"""

from __future__ import annotations

from ascendctl_engine.adapters.builder import CommandBuilder
from ascendctl_engine.adapters.eras import era
from ascendctl_engine.adapters.intent import EngineIntent
from ascendctl_engine.adapters.parser_snapshot import ParserSnapshot
from ascendctl_engine.adapters.speculative import where_vllm

TOPIC = "kv-cache"
FLAG = "--kv-cache-dtype"
KEY = "kv_cache_dtype"  # vllm-ascend's `--additional-config` key (v0.9.2rc1–v0.12.0rc1)
ASCEND_INT8 = "int8"
NPU = {"npu"}
NON_NPU = {"cpu", "cuda"}
# Unquantized caches in another float width: every backend stores them as they are.
PLAIN = ("auto", "bfloat16", "float16")


def _why(intent: EngineIntent) -> str:
    return intent.source("engine.memory.kv_cache_dtype")


def _choices(parser: ParserSnapshot) -> tuple[str, ...] | None:
    opt = parser.option(FLAG)
    if opt is None or opt.choices is None:
        return None
    return tuple(str(c) for c in opt.choices)


def _upstream(intent: EngineIntent, b: CommandBuilder) -> None:
    """A vLLM `--kv-cache-dtype` value, checked against this vLLM's parser."""
    dtype = intent.engine.memory.kv_cache_dtype
    if dtype == "auto":
        return
    parser = b.accepted.parser
    choices = _choices(parser)
    if parser.option(FLAG) is not None and choices is not None and dtype not in choices:
        where = where_vllm(parser, f"`{FLAG} {dtype}`", lambda s: dtype in (_choices(s) or ()))
        b.fail(
            f"engine.memory.kv_cache_dtype {dtype}: vLLM {intent.vllm} does not take it (choices: "
            f"{', '.join(choices)}; {parser.source}); {where}",
            clause="engine-start",
        )
        return
    if choices is None and parser.option(FLAG) is not None:
        b.decide("kv_cache_dtype", f"vLLM {intent.vllm}'s parser takes any text here; CacheConfig checks `{dtype}`")
    if intent.backend == "npu" and dtype not in PLAIN:
        b.warn(
            f"engine.memory.kv_cache_dtype {dtype}: vLLM takes it, but vllm-ascend's attention backends have no "
            f"{dtype} KV-cache path; Ascend's quantized KV cache is `int8` (C8 weights)"
        )
    b.arg(FLAG, dtype, why=_why(intent))


def _needs_modelslim(intent: EngineIntent, b: CommandBuilder) -> bool:
    if intent.model.quantization == "none":
        b.fail(
            "engine.memory.kv_cache_dtype int8: the int8 KV cache takes its scales from ModelSlim C8 weights; "
            "model.quantization is `none`"
        )
        return False
    return True


@era(
    TOPIC,
    "upstream only",
    axis="vllm_ascend",
    spec="<0.9.2rc1",
    backends=NPU,
    summary="`--kv-cache-dtype` (the vLLM parser's choices); no int8 KV cache",
    source="engine/ascendctl_engine/data/ascend_keys/ (no tag before v0.9.2rc1 reads `kv_cache_dtype`; v0.9.1's "
    "additional_config.md documents it, its code does not read it)",
)
def kv_none(intent: EngineIntent, b: CommandBuilder) -> None:
    if intent.engine.memory.kv_cache_dtype == ASCEND_INT8:
        b.fail(
            f"engine.memory.kv_cache_dtype int8: vllm-ascend {intent.vllm_ascend} has no int8 KV cache; it first "
            "runs in vllm-ascend v0.9.2rc1 (`kv_cache_dtype` in --additional-config, v0.9.2rc1:vllm_ascend/"
            "platform.py:128)"
        )
        return
    _upstream(intent, b)


@era(
    TOPIC,
    "additional_config int8",
    axis="vllm_ascend",
    spec=">=0.9.2rc1,<0.13.0rc1",
    backends=NPU,
    summary='int8: `--additional-config {"kv_cache_dtype": "int8"}` (C8 weights); others: `--kv-cache-dtype`',
    source="v0.9.2rc1:vllm_ascend/platform.py:128 / v0.12.0rc1:vllm_ascend/platform.py:169 (copied into "
    "cache_config.cache_dtype), model_runner_v1.py (int8 cache shape); additional_config.md",
)
def kv_additional(intent: EngineIntent, b: CommandBuilder) -> None:
    if intent.engine.memory.kv_cache_dtype != ASCEND_INT8:
        _upstream(intent, b)
        return
    if _needs_modelslim(intent, b):
        b.additional_key(KEY, ASCEND_INT8, why=f"{_why(intent)} (vllm-ascend's int8 KV cache, this era's key)")
        b.warn(
            "engine.memory.kv_cache_dtype int8: the weights must carry the C8 KV scales "
            "(quant_model_description.json `kv_quant_type: C8`)"
        )


@era(
    TOPIC,
    "no int8 KV cache",
    axis="vllm_ascend",
    spec=">=0.13.0rc1,<0.18.0",
    backends=NPU,
    summary="`--kv-cache-dtype` (the vLLM parser's choices); int8 ✗ (removed in v0.13.0rc1, back in v0.18.0)",
    source="engine/ascendctl_engine/data/ascend_keys/v0.13.0rc1.json … v0.18.0rc1.json (no "
    "`kv_cache_dtype`); no C8 method in "
    "v0.13.0rc1–v0.18.0rc1:vllm_ascend/quantization/",
)
def kv_gap(intent: EngineIntent, b: CommandBuilder) -> None:
    if intent.engine.memory.kv_cache_dtype == ASCEND_INT8:
        b.fail(
            f"engine.memory.kv_cache_dtype int8: vllm-ascend {intent.vllm_ascend} has no int8 KV cache (v0.13.0rc1 "
            "removed it; v0.9.2rc1–v0.12.0rc1 ran it through `--additional-config`); it runs again from vllm-ascend "
            "v0.18.0 (C8 weights, v0.18.0:vllm_ascend/quantization/modelslim_config.py:494)"
        )
        return
    _upstream(intent, b)


@era(
    TOPIC,
    "C8 from the weights",
    axis="vllm_ascend",
    spec=">=0.18.0",
    backends=NPU,
    summary="int8: no flag (the weights' `kv_cache_type: C8` switches it on); others: `--kv-cache-dtype`",
    source="v0.18.0:vllm_ascend/quantization/modelslim_config.py:434/494 (AscendC8KVCacheAttentionMethod)",
)
def kv_weights(intent: EngineIntent, b: CommandBuilder) -> None:
    if intent.engine.memory.kv_cache_dtype != ASCEND_INT8:
        _upstream(intent, b)
        return
    if _needs_modelslim(intent, b):
        b.decide("kv_cache_dtype", "int8: switched on by the weights' quant_model_description.json (no flag)")
        b.warn(
            "engine.memory.kv_cache_dtype int8: no flag in this release; the int8 (C8) KV cache runs only when "
            "the weights' quant_model_description.json says `kv_cache_type: C8` (a *-C8 ModelSlim checkpoint)"
        )


@era(
    TOPIC,
    "--kv-cache-dtype",
    axis="vllm",
    backends=NON_NPU,
    summary="`--kv-cache-dtype` (the vLLM parser's choices)",
    source="engine/ascendctl_engine/data/parsers/ (`--kv-cache-dtype` choices per vLLM)",
)
def kv_upstream(intent: EngineIntent, b: CommandBuilder) -> None:
    if intent.engine.memory.kv_cache_dtype == ASCEND_INT8:
        b.fail(
            f"engine.memory.kv_cache_dtype int8 is vllm-ascend's KV cache (Ascend only); the {intent.backend} "
            "engine's quantized caches are its `--kv-cache-dtype` choices (e.g. int8_per_token_head, fp8)"
        )
        return
    _upstream(intent, b)
