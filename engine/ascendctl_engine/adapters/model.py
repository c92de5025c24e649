"""Eras of the model-level flags: the model itself, quantization, pooling tasks and the API server (speculative
decoding lives in `adapters/speculative.py`). Each era's `source` names the file at a tag, the issue or the pull
request in vllm-project/vllm-ascend or vllm-project/vllm that the fact comes from."""

from __future__ import annotations

from ascendctl_engine.adapters.builder import CommandBuilder
from ascendctl_engine.adapters.eras import Apply, era, eras_of
from ascendctl_engine.adapters.intent import EngineIntent

NPU = {"npu"}
NON_NPU = {"cpu", "cuda"}
# Every pinned vLLM reads it as a boolean ("1" / "true") and then only warns where it refuses a max_model_len above the
# length config.json gives (`_get_and_verify_max_len`).
LONG_CONTEXT_SOURCE = (
    "vLLM 0.7.1:vllm/envs.py:421-424 … 0.33.0:vllm/envs.py:1115-1118 (VLLM_ALLOW_LONG_MAX_MODEL_LEN); "
    "0.13.0:vllm/config/model.py:2183-2189"
)
# Every pinned vLLM reads the variable as a boolean (`"True"` is true in all of them) and then loads models, configs and
# tokenizers through ModelScope's snapshot_download (e.g. 0.13.0:vllm/transformers_utils/config.py:47).
MODELSCOPE_SOURCE = (
    "vLLM 0.7.1:vllm/envs.py:191-192 … 0.13.0:vllm/envs.py:537-540 … 0.33.0:vllm/envs.py:736-738 (VLLM_USE_MODELSCOPE)"
)


# ------------------------------------------------------------------------------------------- model
@era(
    "model",
    "engine-args",
    axis="vllm",
    summary=(
        "`--served-model-name`, `--dtype` (float16 forced on Atlas 300I Duo), `--max-model-len`, "
        "`--trust-remote-code`, `--revision`, `--hf-overrides` JSON, `--seed`, `--gpu-memory-utilization`; "
        "`VLLM_USE_MODELSCOPE=True` for a `modelscope:` source, `VLLM_ALLOW_LONG_MAX_MODEL_LEN=1` for "
        "model.allow_long_context"
    ),
    source="vLLM vllm/engine/arg_utils.py (engine flags; engine/ascendctl_engine/data/parsers/); "
    "v0.23.0:docs/source/tutorials/models/Qwen3-Dense.md and Qwen-VL-Dense.md (300I Duo: float16 only); "
    f"{MODELSCOPE_SOURCE}; {LONG_CONTEXT_SOURCE}",
)
def model_args(intent: EngineIntent, b: CommandBuilder) -> None:
    m = intent.model
    _model_env(intent, b)
    if m.served_name:
        b.arg("--served-model-name", m.served_name, why=intent.source("model.served_name"))
    if "bfloat16" not in intent.traits.dtypes and m.dtype == "auto":
        only = intent.traits.dtypes[0]
        why = f"matrix rule: {intent.traits.label or intent.hardware} runs {'/'.join(intent.traits.dtypes)} only"
        b.arg("--dtype", only, why=why)
        b.resolve("model.dtype", only, why)
    elif m.dtype != "auto":
        b.arg("--dtype", m.dtype, why=intent.source("model.dtype"))
    if m.max_model_len is not None:
        b.arg("--max-model-len", m.max_model_len, why=intent.source("model.max_model_len"))
    if m.trust_remote_code:
        b.arg("--trust-remote-code", why=intent.source("model.trust_remote_code"))
    if m.revision:
        b.arg("--revision", m.revision, why=intent.source("model.revision"))
    if m.hf_overrides:
        b.json_arg("--hf-overrides", m.hf_overrides, why=intent.source("model.hf_overrides"))
    _tokenizer_and_blocks(intent, b)
    if intent.engine.seed is not None:
        b.arg("--seed", intent.engine.seed, why=intent.source("engine.seed"))
    if intent.engine.memory.device_utilization is not None:
        b.arg(
            "--gpu-memory-utilization",
            intent.engine.memory.device_utilization,
            why=intent.source("engine.memory.device_utilization"),
        )
    for node in intent.nodes:  # a node's own value wins on that node
        if node.device_utilization is not None:
            b.arg(
                "--gpu-memory-utilization",
                node.device_utilization,
                why=f"user: network.nodes[{node.index}].device_utilization",
                node=node.index,
            )


def _model_env(intent: EngineIntent, b: CommandBuilder) -> None:
    """The model's variables: where it is downloaded from (`modelscope:`), and a context beyond config.json's."""
    m = intent.model
    if m.scheme == "modelscope":
        why = f"{intent.source('model.source')} (modelscope: the engine downloads from ModelScope; {MODELSCOPE_SOURCE})"
        b.env_default("VLLM_USE_MODELSCOPE", "True", why=why)
    if m.allow_long_context:
        why = f"{intent.source('model.allow_long_context')} ({LONG_CONTEXT_SOURCE})"
        b.env_default("VLLM_ALLOW_LONG_MAX_MODEL_LEN", "1", why=why)


def _tokenizer_and_blocks(intent: EngineIntent, b: CommandBuilder) -> None:
    """`--tokenizer-mode` and `--block-size`: every pinned vLLM has both; the argv replay checks the value against
    the release's parser (choices up to vLLM 0.11 / 0.17, engine/ascendctl_engine/data/parsers/)."""
    if intent.model.tokenizer_mode is not None:
        b.arg("--tokenizer-mode", intent.model.tokenizer_mode, why=intent.source("model.tokenizer_mode"))
    if intent.engine.memory.block_size is not None:
        b.arg("--block-size", intent.engine.memory.block_size, why=intent.source("engine.memory.block_size"))


# --------------------------------------------------------------------------------------- load strategy
# The strategies each vLLM's loader tells apart (LoadConfig.safetensors_load_strategy); before 0.24 the parser takes
# any text and the loader reads an unknown one as `lazy`, so the era says what the release knows.
_LOAD_STRATEGIES: tuple[tuple[str, str, tuple[str, ...], str], ...] = (
    ("none", "<0.10.2", (), "engine/ascendctl_engine/data/parsers/vllm-0.10.1.1.json (no --safetensors-load-strategy)"),
    ("lazy/eager", ">=0.10.2,<0.12", ("lazy", "eager"),
     "vLLM 0.10.2:vllm/config/load.py:54-62 … 0.11.0:vllm/config/load.py:54"),
    ("+torchao", ">=0.12,<0.18", ("lazy", "eager", "torchao"),
     "vLLM 0.12.0:vllm/config/load.py:56 … 0.17.0:vllm/config/load.py:54"),
    ("+prefetch", ">=0.18", ("lazy", "eager", "prefetch", "torchao"),
     "vLLM 0.18.0:vllm/config/load.py:57 … 0.33.0:vllm/config/load.py:65 (the parser's choices from 0.24.0)"),
)  # fmt: skip


def _load_strategy(known: tuple[str, ...], source: str) -> Apply:
    def apply(intent: EngineIntent, b: CommandBuilder) -> None:
        strategy = intent.model.load_strategy
        if strategy is None:
            return
        if strategy not in known:
            lacks = "has no `--safetensors-load-strategy`" if not known else "reads no such safetensors strategy"
            b.fail(
                f"model.load_strategy {strategy}: vLLM {intent.vllm} {lacks} ({source}); {_first_with(strategy)}",
                clause="engine-start",
            )
            return
        b.arg("--safetensors-load-strategy", strategy, why=f"{intent.source('model.load_strategy')} ({source})")

    return apply


def _first_with(strategy: str) -> str:
    """`vLLM >=0.18 reads it` from the era table."""
    return (
        "vLLM "
        + " or ".join(e.spec for e in eras_of("load-strategy") if strategy in e.traits["strategies"])
        + (" reads it")
    )


for _name, _spec, _known, _source in _LOAD_STRATEGIES:
    era(
        "load-strategy", _name, axis="vllm", spec=_spec,
        summary=f"`--safetensors-load-strategy` {' / '.join(_known)}" if _known else "no load-strategy flag",
        source=_source, traits={"strategies": _known},
    )(_load_strategy(_known, _source))  # fmt: skip


# ------------------------------------------------------------------------------------ quantization
def _quant_none_or_detected(intent: EngineIntent, b: CommandBuilder) -> bool:
    """Handles float weights and methods vLLM reads from config.json. True when nothing is left to do."""
    m = intent.model
    if m.quantization == "none" or (intent.load.quant_method in (None, "none") and m.quantization != "auto"):
        return True
    if intent.load.quant_method in ("compressed-tensors", "fp8"):
        b.decide(
            "quantization",
            f"{intent.load.quant_method}: vLLM reads `quantization_config` from config.json, no flag needed "
            "(v0.23.0:docs/source/user_guide/feature_guide/quantization.md)",
        )
        return True
    return False


def _sharded_state(intent: EngineIntent, b: CommandBuilder) -> None:
    if intent.model.quantization == "w8a8sc":
        b.arg(
            "--load-format",
            "sharded_state",
            why="W8A8SC weights are compressed per TP rank and load as sharded state "
            "(v0.18.0:docs/source/tutorials/hardwares/310p.md)",
        )


def _quant_flag(intent: EngineIntent, b: CommandBuilder, why: str) -> None:
    m = intent.model
    if m.quantization == "auto" and intent.load.quant_method in (None, "auto"):
        b.warn(
            "model.quantization is `auto` but this release needs `--quantization ascend` for ModelSlim weights "
            "and the model directory could not be inspected: no flag planned; set model.quantization (e.g. w8a8) "
            "if the weights come from ModelSlim"
        )
        return
    b.arg("--quantization", "ascend", why=why)
    _sharded_state(intent, b)


@era(
    "quantization",
    "none",
    axis="vllm_ascend",
    spec="<0.7.3",
    backends=NPU,
    summary="no ModelSlim quantization",
    source="v0.7.3 FAQ #10: W8A8 arrives in v0.8.4rc2 (v0.7.3 only with MindIE Turbo)",
    traits={"flag": "unavailable", "auto_detect": False},
)
@era(
    "quantization",
    "none-v0.8",
    axis="vllm_ascend",
    spec=">=0.8.0,<0.8.4rc2",
    backends=NPU,
    summary="no ModelSlim quantization",
    source="v0.7.3 FAQ #10: W8A8 is supported natively from v0.8.4rc2",
    traits={"flag": "unavailable", "auto_detect": False},
)
def quant_unavailable(intent: EngineIntent, b: CommandBuilder) -> None:
    if _quant_none_or_detected(intent, b):
        return
    b.fail(
        f"ModelSlim quantization ({intent.model.quantization}) needs vllm-ascend ≥ v0.8.4rc2, or v0.7.3 with "
        "MindIE Turbo (v0.7.3 FAQ #10)",
        clause="known-failure",
    )


@era(
    "quantization",
    "mindie-turbo",
    axis="vllm_ascend",
    spec=">=0.7.3,<0.8.0",
    backends=NPU,
    summary="no flag; ModelSlim weights load through MindIE Turbo 2.0rc1 (install it in the engine env)",
    source="v0.7.3:docs/source/installation.md (pip install mindie_turbo); "
    "v0.7.3:vllm_ascend/quantization/quantizer.py (imports mindie_turbo)",
    traits={"flag": "none", "auto_detect": False, "packages": {"mindie_turbo": "2.0rc1"}},
)
def quant_mindie(intent: EngineIntent, b: CommandBuilder) -> None:
    if _quant_none_or_detected(intent, b):
        return
    b.decide("quantization", "v0.7.3: the Ascend quantizer comes from MindIE Turbo; no CLI flag")
    b.warn(
        "v0.7.3 quantization needs `mindie_turbo==2.0rc1` in the engine environment "
        "(v0.7.3:docs/source/installation.md)"
    )


@era(
    "quantization",
    "config-detected",
    axis="vllm_ascend",
    spec=">=0.8.4rc2,<0.9.0rc1",
    backends=NPU,
    summary="no flag: `ascend` is not a CLI choice yet; the method comes from the model's quant config",
    source="v0.8.5rc1:vllm_ascend/quantization/quant_config.py (override_quantization_method); "
    "v0.9.0rc1:vllm_ascend/platform.py:88 adds `ascend` to the --quantization choices (key table)",
    traits={"flag": "none", "auto_detect": True},
)
def quant_config_detected(intent: EngineIntent, b: CommandBuilder) -> None:
    if _quant_none_or_detected(intent, b):
        return
    b.decide(
        "quantization",
        "selected from the model's quantization config; `--quantization ascend` is rejected by the CLI "
        "before v0.9.0rc1",
    )
    _sharded_state(intent, b)


@era(
    "quantization",
    "flag-required",
    axis="vllm_ascend",
    spec=">=0.9.0rc1,<0.15.0rc1",
    backends=NPU,
    summary="`--quantization ascend` (required for ModelSlim weights)",
    source="v0.9.0rc1:vllm_ascend/platform.py:88 (the CLI choice appears); "
    "v0.9.1:docs/source/user_guide/feature_guide/quantization.md",
    traits={"flag": "required", "auto_detect": False},
)
@era(
    "quantization",
    "flag-required-again",
    axis="vllm_ascend",
    spec=">=0.16.0rc1,<0.17.0rc1",
    backends=NPU,
    summary="`--quantization ascend` (required again: auto-detection reverted)",
    source="vllm-project/vllm-ascend#6873 (reverted the detection in v0.16.0rc1; release notes v0.16.0rc1)",
    traits={"flag": "required", "auto_detect": False},
)
def quant_required(intent: EngineIntent, b: CommandBuilder) -> None:
    if _quant_none_or_detected(intent, b):
        return
    _quant_flag(
        intent,
        b,
        "required for ModelSlim weights in this release (v0.9.1:docs/source/user_guide/feature_guide/"
        "quantization.md; vllm-project/vllm-ascend#6873)",
    )


@era(
    "quantization",
    "auto-detect",
    axis="vllm_ascend",
    spec=">=0.15.0rc1,<0.16.0rc1",
    backends=NPU,
    summary="`--quantization ascend` kept explicit (the release also detects quant_model_description.json)",
    source="vllm-project/vllm-ascend#6645 (auto-detection in v0.15.0rc1); v0.15.0rc1:vllm_ascend/quantization/"
    "utils.py (detect_quantization_method; explicit method always wins)",
    traits={"flag": "optional", "auto_detect": True},
)
@era(
    "quantization",
    "auto-detect-again",
    axis="vllm_ascend",
    spec=">=0.17.0rc1",
    backends=NPU,
    summary="`--quantization ascend` kept explicit (detection is back; an explicit method always wins)",
    source="vllm-project/vllm-ascend#7111 (re-added detection in v0.17.0rc1); "
    "v0.17.0rc1:vllm_ascend/quantization/utils.py",
    traits={"flag": "optional", "auto_detect": True},
)
def quant_detected(intent: EngineIntent, b: CommandBuilder) -> None:
    if _quant_none_or_detected(intent, b):
        return
    if intent.model.quantization == "auto" and intent.load.quant_method in (None, "auto"):
        b.decide("quantization", "auto: this release detects ModelSlim weights from quant_model_description.json")
        return
    b.arg(
        "--quantization",
        "ascend",
        why="optional in this release (auto-detected), kept explicit as the tutorials do; "
        "an explicit method always wins (v0.17.0rc1:vllm_ascend/quantization/utils.py)",
    )
    _sharded_state(intent, b)


@era(
    "quantization",
    "upstream",
    axis="vllm",
    backends=NON_NPU,
    summary="no flag for compressed-tensors / fp8 (read from config.json); ModelSlim types are NPU-only",
    source="vLLM vllm/model_executor/layers/quantization/__init__.py (QuantizationMethods, v0.11.0 and v0.33.0); "
    "v0.23.0:vllm_ascend/platform.py (NPUPlatform.supported_quantization)",
    traits={"flag": "unavailable", "auto_detect": True},
)
def quant_upstream(intent: EngineIntent, b: CommandBuilder) -> None:
    if _quant_none_or_detected(intent, b):
        return
    if intent.model.quantization == "auto":
        b.decide("quantization", "auto: vLLM reads the method from config.json")
        return
    b.fail(
        f"{intent.model.quantization} is a ModelSlim (vllm-ascend) quantization: it runs only on Ascend NPUs, "
        f"not on the {intent.backend} engine",
        clause="engine-start",  # no `ascend` quantization method outside vllm-ascend: vLLM's parser refuses it
    )


# ----------------------------------------------------------------------------------------- pooling
_TASK_OLD = {"embed": "embed", "rerank": "score"}


@era(
    "pooling",
    "task-flag",
    axis="vllm",
    spec="<0.13",
    summary="`--task embed` / `--task score` for pooling models",
    source="vLLM v0.11.0 `vllm serve --help=all` (`--task` deprecated at 0.11, gone at 0.13: "
    "engine/ascendctl_engine/data/parsers/vllm-0.13.0.json); "
    "v0.12.0rc1:docs/source/tutorials/Qwen3_embedding.md uses `--task embed`",
)
def pooling_task(intent: EngineIntent, b: CommandBuilder) -> None:
    task = intent.model.task
    if task == "generate":
        return
    b.arg("--task", _TASK_OLD[task], why=f"{intent.source('model.task')} (pooling task, vLLM < 0.13 spelling)")


@era(
    "pooling",
    "runner-pooling",
    axis="vllm",
    spec=">=0.13",
    summary="`--runner pooling` for embedding and reranker models",
    source="vLLM v0.33.0:docs/models/pooling_models/README.md; v0.23.0:docs/source/tutorials/models/"
    "Qwen3-Embedding.md and Qwen3-Reranker.md (release notes v0.13.0: --task deprecated, "
    "vllm-project/vllm-ascend#5257)",
)
def pooling_runner(intent: EngineIntent, b: CommandBuilder) -> None:
    if intent.model.task == "generate":
        return
    b.arg("--runner", "pooling", why=f"{intent.source('model.task')} (pooling runner, vLLM ≥ 0.13 spelling)")


# ------------------------------------------------------------------------------------------ server
def _server(intent: EngineIntent, b: CommandBuilder, drain: bool) -> None:
    s = intent.server
    b.arg("--host", s.host, why=intent.source("server.host"), server=True)
    b.arg("--port", s.port, why=intent.source("server.port"), server=True)
    if s.api_server_count is not None:
        b.arg(
            "--api-server-count",
            s.api_server_count,
            why=f"{intent.source('server.api_server_count')} (API server processes; the head only)",
            server=True,
        )
    if drain:
        b.arg(
            "--shutdown-timeout",
            s.shutdown_timeout,
            why=f"{intent.source('server.shutdown_timeout')} (drain in-flight requests on stop)",
            server=True,
        )
        return
    note = f"vLLM {intent.vllm} has no `--shutdown-timeout` (vLLM ≥ 0.18): a stop aborts in-flight requests"
    if intent.explicit("server.shutdown_timeout") and s.shutdown_timeout > 0:
        b.warn(f"server.shutdown_timeout not applied: {note}")
    b.decide("server.shutdown_timeout", note)


@era(
    "server",
    "no-drain",
    axis="vllm",
    spec="<0.18",
    summary="`--host`, `--port`; no drain flag (SIGTERM aborts in-flight requests)",
    source="engine/ascendctl_engine/data/parsers/vllm-0.11.0.json, vllm-0.13.0.json (no --shutdown-timeout); "
    "vLLM v0.11.0:vllm/entrypoints/launcher.py (SIGTERM cancels the server task)",
)
def server_old(intent: EngineIntent, b: CommandBuilder) -> None:
    _server(intent, b, drain=False)


@era(
    "server",
    "drain",
    axis="vllm",
    spec=">=0.18",
    summary="`--host`, `--port`, `--shutdown-timeout N` (drain on stop)",
    source="vLLM v0.18.0:vllm/engine/arg_utils.py (--shutdown-timeout) and vllm/entrypoints/launcher.py "
    "(v0.18.0+: engine_client.shutdown(timeout))",
)
def server_new(intent: EngineIntent, b: CommandBuilder) -> None:
    _server(intent, b, drain=True)
