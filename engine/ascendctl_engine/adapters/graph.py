"""Graph-mode eras: eager, TorchAir (DeepSeek-class, ≤ v0.11), ACL graph `cudagraph_mode` (≥ v0.12),
`engine-default` (no graph flag in any era), npugraph_ex key moves, 300I Duo / Ascend 950 limits, how
capture sizes are spelled per vLLM, and (data topic `capture-list`) the capture list each release's code builds.

Facts: each vllm-ascend tag's `docs/source/user_guide/configuration/additional_config.md`, graph-mode guide
(`docs/source/user_guide/feature_guide/graph_mode.md`) and `vllm_ascend/platform.py` (read at the tag); vLLM's
`vllm/config/compilation.py` (CUDAGraphMode, capture sizes).
"""

from __future__ import annotations

from dataclasses import replace
from functools import partial

from ascendctl_engine.adapters.builder import CommandBuilder
from ascendctl_engine.adapters.capture_list import CaptureEra, compute, sample_sizes
from ascendctl_engine.adapters.eras import era, nothing_to_plan
from ascendctl_engine.adapters.intent import EngineIntent
from ascendctl_engine.platform_needs import CAPTURE_MIN_CANN, CAPTURE_MIN_HDK, capture_stream_shortfall
from ascendctl_engine.versions import cann_below

NPU = {"npu"}
NON_NPU = {"cpu", "cuda"}

CUDAGRAPH = {
    "piecewise": "PIECEWISE",
    "full": "FULL",
    "full-decode-only": "FULL_DECODE_ONLY",
    "full-and-piecewise": "FULL_AND_PIECEWISE",
}
# The 300I Duo tutorials capture few sizes (the card has few streams): v0.23.0:docs/source/tutorials/models/
# Qwen3-Dense.md (W8A8SC, generate) and Qwen3-Embedding.md / Qwen3-Reranker.md (embedding / reranker).
DUO_SIZES_GENERATE = (1, 2, 4, 8, 16, 32)
DUO_SIZES_POOLING = (1024, 512)
AUTO_WHY = (
    "auto: FULL_DECODE_ONLY is the documented recommendation for generative models from v0.12.0rc1 "
    "(release notes v0.12.0rc1; v0.23.0 tutorials Qwen3-Dense, Qwen3-235B-A22B, DeepSeek-R1 and Qwen-VL-Dense)"
)


def _mode_why(intent: EngineIntent) -> str:
    return intent.source("engine.graph.mode")


def _eager(intent: EngineIntent, b: CommandBuilder, why: str) -> None:
    b.graph_mode = "eager"
    b.arg("--enforce-eager", why=why)


def _engine_default(intent: EngineIntent, b: CommandBuilder, blocked_by: str | None = None) -> None:
    """`engine-default`: no graph flag at all, so the engine decides as a bare `vllm serve` would (unlike `auto`,
    which plans the documented recommendation). Capture sizes the profile names are still spelled."""
    b.graph_mode = "default"
    b.decide(
        "graph.mode",
        f"{_mode_why(intent)}: no `--enforce-eager` and no `cudagraph_mode`; the engine's own default applies",
    )
    if blocked_by:
        b.warn(f"engine.graph.mode engine-default: the engine's own default captures graphs, but {blocked_by}")
    _user_sizes(intent, b)


def _cudagraph(b: CommandBuilder, mode: str, why: str) -> None:
    b.graph_mode = mode
    b.compile_key("cudagraph_mode", CUDAGRAPH[mode], why=why)


def _user_sizes(intent: EngineIntent, b: CommandBuilder) -> None:
    if intent.engine.graph.capture_sizes:
        b.capture_sizes = tuple(intent.engine.graph.capture_sizes)
        b.capture_sizes_why = intent.source("engine.graph.capture_sizes")


def _min_cann(intent: EngineIntent) -> str:
    return (
        f"{intent.traits.label} graph compilation needs CANN ≥ {intent.traits.graph_min_cann} (matrix hardware limits)"
    )


def _duo_cann_blocks_graphs(intent: EngineIntent, b: CommandBuilder) -> bool:
    """Whether the family's minimum CANN for graph compilation (hardware trait) blocks graphs on this CANN."""
    need = intent.traits.graph_min_cann
    if need is None:
        return False
    old = cann_below(intent.cann, need)
    if old is None:
        b.warn(f"{intent.traits.label} graph mode needs CANN ≥ {need}; the CANN version is unknown")
    return bool(old)


# --------------------------------------------------------------------------- npu: before v0.9.0rc1
@era(
    "graph",
    "eager-only",
    axis="vllm_ascend",
    spec="<0.9.0rc1",
    backends=NPU,
    summary="`--enforce-eager` (no usable graph mode before v0.9.0rc1)",
    source="v0.8.5rc1:docs/source/user_guide/suppoted_features.md (Graph Mode 🔴 V0 / 🔵 V1); "
    "v0.9.0rc1:docs/source/user_guide/graph_mode.md",
)
def graph_v0(intent: EngineIntent, b: CommandBuilder) -> None:
    mode = intent.engine.graph.mode
    if mode == "engine-default":
        b.graph_mode = "default"
        b.decide("graph.mode", f"{_mode_why(intent)}: no graph flag; the engine's own default applies")
        return
    if mode not in ("auto", "eager"):
        b.fail(
            f"engine.graph.mode {mode}: graph mode needs vllm-ascend ≥ v0.9.0rc1 "
            "(v0.9.0rc1:docs/source/user_guide/graph_mode.md)"
        )
    why = _mode_why(intent) if mode == "eager" else "auto: no graph mode before v0.9.0rc1 (v0.9.0rc1 graph_mode.md)"
    _eager(intent, b, why)


# ------------------------------------------------------------------- npu: ACL graph + TorchAir eras
def _torchair(intent: EngineIntent, b: CommandBuilder, enable_key: str, why: str) -> None:
    b.graph_mode = "torchair"
    b.ascend_scheduler = True
    b.additional_key(f"torchair_graph_config.{enable_key}", True, why=why)
    b.additional_key(
        "ascend_scheduler_config.enabled",
        True,
        why="TorchAir runs with the Ascend scheduler (v0.9.1/v0.11.0 graph_mode.md: TorchAir works without "
        "chunked prefill)",
    )
    if intent.engine.graph.capture_sizes:
        b.additional_key(
            "torchair_graph_config.graph_batch_sizes",
            list(intent.engine.graph.capture_sizes),
            why=f"{intent.source('engine.graph.capture_sizes')} (TorchAir capture sizes)",
        )


def _torchair_era(intent: EngineIntent, b: CommandBuilder, *, enable_key: str, full_decode: bool) -> None:
    mode = intent.engine.graph.mode
    if mode == "eager":
        _eager(intent, b, _mode_why(intent))
        return
    if mode == "engine-default":  # no TorchAir either: it is switched on by additional_config, never by default
        _engine_default(intent, b, _min_cann(intent) if _duo_cann_blocks_graphs(intent, b) else None)
        return
    if _duo_cann_blocks_graphs(intent, b):
        if mode != "auto":
            b.fail(f"engine.graph.mode {mode}: {_min_cann(intent)}", clause="known-failure")
        _eager(intent, b, f"auto: {_min_cann(intent)}")
        return
    if intent.load.arch == "mla" and not (full_decode and mode != "auto"):
        why = (
            "auto: TorchAir is this era's graph mode for DeepSeek-class (MLA) models "
            "(v0.9.1/v0.11.0 graph_mode.md; v0.11.0 multi_node.md)"
            if mode == "auto"
            else f"{_mode_why(intent)}: TorchAir is how DeepSeek-class models capture graphs before v0.12.0rc1"
        )
        if mode in ("piecewise", "full-and-piecewise"):
            b.warn(f"engine.graph.mode {mode} is not offered for DeepSeek-class models before v0.12.0rc1: TorchAir")
        _torchair(intent, b, enable_key, why)
        return
    _user_sizes(intent, b)
    if mode in ("auto", "piecewise"):
        b.graph_mode = "piecewise"
        b.decide(
            "graph.mode",
            ("auto: " if mode == "auto" else f"{_mode_why(intent)}: ")
            + "ACL graph (piecewise) is the default of the V1 engine in this era, no flag (graph_mode.md)",
        )
        return
    if mode == "full-decode-only" and full_decode:
        b.warn("FULL_DECODE_ONLY is experimental before v0.12.0rc1 (v0.11.0 platform.py warns on start)")
        _cudagraph(b, mode, _mode_why(intent))
        return
    refused = b.accepted.parser.check_json_keys("--compilation-config", {"cudagraph_mode": CUDAGRAPH[mode]})
    if any(p.severity == "error" for p in refused):
        # vLLM itself has no such key (0.9.0): spelled as asked the engine would not start, so it is never emitted
        b.fail(
            f"engine.graph.mode {mode}: vLLM {intent.vllm}'s `--compilation-config` has no `cudagraph_mode` key "
            f"({b.accepted.parser.source}): the engine refuses it at start",
            clause="engine-start",
        )
        return
    b.fail(
        f"engine.graph.mode {mode} is not available in this vllm-ascend release: platform.py turns "
        f"{CUDAGRAPH[mode]} into PIECEWISE or NONE (FULL from v0.12.0rc1, FULL_AND_PIECEWISE from v0.21.0rc1)"
    )
    _cudagraph(b, mode, _mode_why(intent))


@era(
    "graph",
    "aclgraph+torchair (rc1)",
    axis="vllm_ascend",
    spec=">=0.9.0rc1,<0.9.0rc2",
    backends=NPU,
    summary="ACL graph piecewise by default; DeepSeek-class: `torchair_graph_config.enabled` + Ascend scheduler",
    source="v0.9.0rc1:vllm_ascend/ascend_config.py reads `enabled` "
    "(engine/ascendctl_engine/data/ascend_keys/v0.9.0rc1.json; the "
    "tag's docs/source/user_guide/graph_mode.md says `enable`, which the code ignores)",
)
def graph_torchair_rc1(intent: EngineIntent, b: CommandBuilder) -> None:
    _torchair_era(intent, b, enable_key="enabled", full_decode=False)


@era(
    "graph",
    "aclgraph+torchair",
    axis="vllm_ascend",
    spec=">=0.9.0rc2,<0.11.0rc0",
    backends=NPU,
    summary=(
        "ACL graph piecewise by default (no flag); DeepSeek-class: `--additional-config` "
        "`torchair_graph_config.enabled` + `ascend_scheduler_config.enabled`; capture sizes → graph_batch_sizes"
    ),
    source="v0.9.1 graph_mode.md/additional_config.md; v0.10.2rc1 platform.py (only NONE/PIECEWISE)",
)
def graph_torchair(intent: EngineIntent, b: CommandBuilder) -> None:
    _torchair_era(intent, b, enable_key="enabled", full_decode=False)


@era(
    "graph",
    "aclgraph+torchair+full-decode",
    axis="vllm_ascend",
    spec=">=0.11.0rc0,<0.12.0rc1",
    backends=NPU,
    summary=(
        'as before, plus experimental `--compilation-config {"cudagraph_mode": "FULL_DECODE_ONLY"}`; '
        "DeepSeek-class auto → TorchAir"
    ),
    source="v0.11.0:vllm_ascend/platform.py (FULL_DECODE_ONLY experimental, FULL_AND_PIECEWISE → PIECEWISE, "
    "FULL → NONE); v0.11.0 multi_node.md",
)
def graph_torchair_fdo(intent: EngineIntent, b: CommandBuilder) -> None:
    _torchair_era(intent, b, enable_key="enabled", full_decode=True)


# --------------------------------------------------------------------------- npu: ACL graph eras
def _aclgraph(intent: EngineIntent, b: CommandBuilder, *, full_and_piecewise: bool, cap_950: bool) -> None:
    mode = intent.engine.graph.mode
    if mode == "eager":
        _eager(intent, b, _mode_why(intent))
        return
    if mode == "engine-default":
        _engine_default(intent, b, _min_cann(intent) if _duo_cann_blocks_graphs(intent, b) else None)
        return
    duo_blocked = _duo_cann_blocks_graphs(intent, b)
    if mode == "auto":
        if duo_blocked:
            _eager(intent, b, f"auto: {_min_cann(intent)}")
            return
        if intent.model.task != "generate":
            b.graph_mode = "default"
            b.decide(
                "graph.mode",
                "auto: pooling tutorials keep the engine's default cudagraph_mode "
                "(v0.23.0:docs/source/tutorials/models/Qwen3-Embedding.md, Qwen3-Reranker.md)",
            )
        else:
            _cudagraph(b, "full-decode-only", AUTO_WHY)
    else:
        if duo_blocked:
            b.fail(f"engine.graph.mode {mode}: {_min_cann(intent)}", clause="known-failure")
        if mode == "full-and-piecewise" and not full_and_piecewise:
            b.fail(
                "engine.graph.mode full-and-piecewise needs vllm-ascend ≥ v0.21.0rc1 (earlier platform.py turns "
                "FULL_AND_PIECEWISE into PIECEWISE)"
            )
        if mode != "full-and-piecewise" or full_and_piecewise:
            _warn_capture_streams(intent, b, mode)
        _cudagraph(b, mode, _mode_why(intent))
    _user_sizes(intent, b)
    if intent.traits.few_streams and not intent.engine.graph.capture_sizes:
        sizes = DUO_SIZES_POOLING if intent.model.task != "generate" else DUO_SIZES_GENERATE
        b.capture_sizes = sizes
        b.capture_sizes_why = (
            f"ascend default: {intent.traits.label} has few streams, capture few sizes (300I Duo tutorials "
            "v0.23.0:docs/source/tutorials/models/Qwen3-Dense.md, Qwen3-Embedding.md)"
        )
    if cap_950 and intent.traits.max_capture_sizes is not None:
        _cap_sizes(intent, b, intent.traits.max_capture_sizes)


def _warn_capture_streams(intent: EngineIntent, b: CommandBuilder, mode: str) -> None:
    old = capture_stream_shortfall(mode, intent.driver, intent.cann)
    if old:
        b.warn(
            f"graph mode {mode} needs HDK ≥ {CAPTURE_MIN_HDK} and CANN ≥ {CAPTURE_MIN_CANN} (RN v0.21.0rc1, FAQ #17); "
            f"this host has {', '.join(old)}: expect stream exhaustion (error 207008)"
            + (" or a fallback to PIECEWISE" if mode == "full-and-piecewise" else "")
        )
    elif mode == "full-and-piecewise" and intent.driver is None:
        # the release notes state this minimum as a requirement of FULL_AND_PIECEWISE: say it was not verified
        b.warn(
            f"FULL_AND_PIECEWISE needs HDK ≥ {CAPTURE_MIN_HDK} and CANN ≥ {CAPTURE_MIN_CANN} (RN v0.21.0rc1); "
            "the driver was not probed"
        )


def _cap_sizes(intent: EngineIntent, b: CommandBuilder, cap: int) -> None:
    """The platform keeps at most `cap` capture sizes on this family (hardware trait; the era says from when)."""
    label = intent.traits.label
    sizes = sorted(set(b.capture_sizes or ()))
    if not sizes:
        b.warn(
            f"{label}: vllm-ascend keeps only {cap} of the engine's capture sizes "
            "(platform.py MAX_CAPTURE_SIZES_FOR_950, v0.22.1rc1+)"
        )
        return
    if len(sizes) <= cap:
        return
    picked = sample_sizes(sizes, cap)
    b.warn(
        f"{label} accepts at most {cap} capture sizes: {sizes} → {picked}, the same sample vllm-ascend's "
        "platform.py takes"
    )
    b.capture_sizes = tuple(picked)
    b.capture_sizes_why += f" (sampled to {cap} for {label})"


@era(
    "graph",
    "aclgraph",
    axis="vllm_ascend",
    spec=">=0.12.0rc1,<0.21.0rc1",
    backends=NPU,
    summary=(
        '`--compilation-config {"cudagraph_mode": …}` PIECEWISE / FULL / FULL_DECODE_ONLY (auto: '
        "FULL_DECODE_ONLY); `--enforce-eager`; FULL_AND_PIECEWISE unsupported"
    ),
    source="RN v0.12.0rc1 (TorchAir removed, FULL_DECODE_ONLY recommended); v0.12.0rc1–v0.20.2rc1 platform.py",
)
def graph_aclgraph(intent: EngineIntent, b: CommandBuilder) -> None:
    _aclgraph(intent, b, full_and_piecewise=False, cap_950=False)


@era(
    "graph",
    "aclgraph+full-and-piecewise",
    axis="vllm_ascend",
    spec=">=0.21.0rc1,<0.22.1rc1",
    backends=NPU,
    summary="as `aclgraph`, plus FULL_AND_PIECEWISE (warns: needs HDK ≥ 25.5.1 / CANN ≥ 8.5.0)",
    source="RN v0.21.0rc1; v0.21.0rc1 platform.py",
)
def graph_aclgraph_fp(intent: EngineIntent, b: CommandBuilder) -> None:
    _aclgraph(intent, b, full_and_piecewise=True, cap_950=False)


@era(
    "graph",
    "aclgraph+950-cap",
    axis="vllm_ascend",
    spec=">=0.22.1rc1",
    backends=NPU,
    summary="as above; Ascend 950 keeps at most 4 capture sizes",
    source="v0.22.1rc1+ vllm_ascend/platform.py (MAX_CAPTURE_SIZES_FOR_950 = 4, prune_capture_sizes_for_950)",
)
def graph_aclgraph_950(intent: EngineIntent, b: CommandBuilder) -> None:
    _aclgraph(intent, b, full_and_piecewise=True, cap_950=True)


# --------------------------------------------------------------------------------- cpu / cuda
@era(
    "graph",
    "compilation-level",
    axis="vllm",
    spec="<0.13",
    backends=NON_NPU,
    summary="`--enforce-eager`, or `cudagraph_mode` in `--compilation-config` (auto: engine default)",
    source="vLLM vllm/config/compilation.py (CUDAGraphMode at every tag); vllm/platforms/cpu.py (CPU: no graphs)",
)
@era(
    "graph",
    "compilation-mode",
    axis="vllm",
    spec=">=0.13",
    backends=NON_NPU,
    summary="`--enforce-eager`, or `cudagraph_mode` in `--compilation-config` (auto: engine default)",
    source="vLLM v0.33.0:vllm/config/vllm.py (optimization levels); vllm/platforms/cpu.py (CPU: no graphs)",
)
def graph_upstream(intent: EngineIntent, b: CommandBuilder) -> None:
    mode = intent.engine.graph.mode
    if mode == "eager":
        _eager(intent, b, _mode_why(intent))
        return
    if mode == "engine-default":
        _engine_default(intent, b)
        return
    if mode == "auto":
        b.graph_mode = "default"
        b.decide("graph.mode", "auto: the engine's own default (vLLM vllm/config/compilation.py)")
    elif intent.backend == "cpu":
        b.warn(f"engine.graph.mode {mode}: the CPU engine captures no graphs (vLLM vllm/platforms/cpu.py); ignored")
    else:
        _cudagraph(b, mode, _mode_why(intent))
    _user_sizes(intent, b)


# ------------------------------------------------------------------------------------ npugraph_ex
@era(
    "npugraph-ex",
    "absent",
    axis="vllm_ascend",
    spec="<0.14.0rc1",
    backends=NPU,
    summary="(no npugraph_ex)",
    source="v0.14.0rc1:docs/source/user_guide/configuration/additional_config.md (npugraph_ex_config added)",
)
def npugraph_absent(intent: EngineIntent, b: CommandBuilder) -> None:
    return


@era(
    "npugraph-ex",
    "npugraph_ex_config (off)",
    axis="vllm_ascend",
    spec=">=0.14.0rc1,<0.15.0rc1",
    backends=NPU,
    summary="`npugraph_ex_config.enable` defaults to false: nothing to turn off",
    source="v0.14.0rc1:docs/source/user_guide/configuration/additional_config.md",
)
def npugraph_v14(intent: EngineIntent, b: CommandBuilder) -> None:
    if not intent.traits.npugraph_ex:
        b.decide("npugraph_ex", "off by default in v0.14 (npugraph_ex_config.enable = false)")


def _duo_off(intent: EngineIntent, b: CommandBuilder, path: str) -> None:
    if not intent.traits.npugraph_ex and b.graph_mode not in ("eager",):
        b.additional_key(
            path,
            False,
            why=f"matrix rule: {intent.traits.label} must turn npugraph_ex off (hardware limits)",
        )


@era(
    "npugraph-ex",
    "npugraph_ex_config (on)",
    axis="vllm_ascend",
    spec=">=0.15.0rc1,<0.16.0rc1",
    backends=NPU,
    summary="300I Duo: `npugraph_ex_config.enable: false` (default true from v0.15)",
    source="v0.15.0rc1:docs/source/user_guide/configuration/additional_config.md",
)
def npugraph_v15(intent: EngineIntent, b: CommandBuilder) -> None:
    _duo_off(intent, b, "npugraph_ex_config.enable")


@era(
    "npugraph-ex",
    "ascend_compilation_config",
    axis="vllm_ascend",
    spec=">=0.16.0rc1",
    backends=NPU,
    summary="300I Duo: `ascend_compilation_config.enable_npugraph_ex: false` (auto-on for FULL modes)",
    source="v0.16.0rc1+ docs/source/user_guide/configuration/additional_config.md; "
    "v0.23.0:docs/source/user_guide/feature_guide/graph_mode.md",
)
def npugraph_v16(intent: EngineIntent, b: CommandBuilder) -> None:
    _duo_off(intent, b, "ascend_compilation_config.enable_npugraph_ex")


# ---------------------------------------------------------------------------------- capture sizes
@era(
    "capture-sizes",
    "--cuda-graph-sizes",
    axis="vllm",
    spec="<0.12",
    backends={"npu", "cuda"},
    summary="`--cuda-graph-sizes N …` (SchedulerConfig flag)",
    source="vLLM v0.11.0 SchedulerConfig (--cuda-graph-sizes; unrecognized from 0.13: "
    "engine/ascendctl_engine/data/parsers/vllm-0.13.0.json)",
)
def sizes_flag(intent: EngineIntent, b: CommandBuilder) -> None:
    if b.capture_sizes and b.graph_mode not in ("eager", "torchair"):
        b.arg("--cuda-graph-sizes", list(b.capture_sizes), why=b.capture_sizes_why, required=False)


@era(
    "capture-sizes",
    "cudagraph_capture_sizes",
    axis="vllm",
    spec=">=0.12",
    backends={"npu", "cuda"},
    summary="`cudagraph_capture_sizes` inside `--compilation-config`",
    source="vLLM v0.13.0:vllm/config/compilation.py (cudagraph_capture_sizes); v0.23.0:docs/source/tutorials/"
    "models/Qwen3-Dense.md, Qwen-VL-Dense.md, Qwen3-Embedding.md",
)
def sizes_compilation(intent: EngineIntent, b: CommandBuilder) -> None:
    if b.capture_sizes and b.graph_mode not in ("eager", "torchair"):
        b.compile_key("cudagraph_capture_sizes", list(b.capture_sizes), why=b.capture_sizes_why)


@era(
    "capture-sizes",
    "none (CPU)",
    axis="vllm",
    backends={"cpu"},
    summary="ignored: the CPU engine captures no graphs",
    source="vLLM vllm/platforms/cpu.py (cudagraph_capture_sizes=[] on CPU; "
    "tests/fixtures/vllm_logs/cpu-0.32.0-eager-startup.log)",
)
def sizes_cpu(intent: EngineIntent, b: CommandBuilder) -> None:
    if intent.engine.graph.capture_sizes:
        b.warn("engine.graph.capture_sizes: the CPU engine captures no graphs (vLLM vllm/platforms/cpu.py); ignored")


# ------------------------------------------------------------------------------------ capture list (data)
# `capture-list`: trait `capture_list`, the release's own capture-list computation (adapters/capture_list.py
# `compute` over this range's `CaptureEra` facts: CaptureInputs → CaptureList), and `full_decode_modes`, the graph
# modes whose decode batches run as FULL graphs in the range; the plan rule plan.graph.decode-capture asks. None
# before FULL_DECODE_ONLY exists. vLLM facts are read at the vLLM each range pins.
_FDO = frozenset({"full-decode-only"})
_FULL = frozenset({"full", "full-decode-only"})
_ALL_FULL = frozenset({"full", "full-decode-only", "full-and-piecewise"})
_SEPARATE = frozenset({"full-decode-only", "full-and-piecewise"})
_V0110RC0 = CaptureEra("vllm-0.11", "2x", _FDO, sp_trim=False, mla_decode_piecewise=True)
_V0110RC1 = replace(_V0110RC0, sp_trim=True, mla_decode_piecewise=False)
_V0110RC2 = replace(_V0110RC1, qwen3_moe_dp=True)
_V0120 = CaptureEra(
    "vllm-0.12", "2x", _FULL, qwen3_moe_dp=True, round_modes=_SEPARATE, few_streams_sizes=DUO_SIZES_GENERATE
)
_V0130 = replace(_V0120, ceiling="2x-query")
_V0130RC2 = replace(_V0130, round_sees_sp=True)
_V0130RC3 = replace(_V0130RC2, qwen3_moe_dp=False)
_V0140 = replace(_V0130, qwen3_moe_dp=True)
_V0150 = replace(_V0140, qwen3_moe_dp=False)
_V0160 = replace(_V0150, round_sees_sp=True)
_V0180 = replace(_V0160, ceiling="ascend-query")
_V0202 = replace(_V0180, append_batched_tokens=True, round_modes=_ALL_FULL)
_V0210 = replace(_V0202, full_decode_modes=_ALL_FULL)
_V0221 = replace(_V0210, prune_950=True, plan_samples_cap=True)
_DISPATCH = (
    "FULL decode graphs keyed by the sizes ≤ max_num_seqs × query length: vLLM v0.11.0:vllm/v1/cudagraph_dispatcher.py"
    ":84-93 … v0.23.0:vllm/v1/cudagraph_dispatcher.py:211-235"
)
_CAPTURE_LIST: tuple[tuple[str, str, CaptureEra | None, str], ...] = (
    ("no-full-decode", "<0.11.0rc0", None, "v0.10.2rc1:vllm_ascend/platform.py (NONE or PIECEWISE only)"),
    (
        "vllm-0.11-grid", ">=0.11.0rc0,<0.11.0rc1", _V0110RC0,
        "v0.11.0rc0:vllm_ascend/platform.py:212 (vLLM's list), :221-237 (FULL_DECODE_ONLY on MLA takes the "
        "PIECEWISE path); vLLM v0.11.0:vllm/config/scheduler.py:222-227 (cuda_graph_sizes = [min(2 × max_num_seqs, "
        f"512)]), vllm/config/__init__.py:589-612 (1, 2, 4, every 8); {_DISPATCH}",
    ),
    (
        "vllm-0.11-grid+sp-trim", ">=0.11.0rc1,<0.11.0rc2", _V0110RC1,
        "v0.11.0rc1:vllm_ascend/platform.py:184-198 (enable_sp with TP > 1: multiples of TP)",
    ),
    (
        "vllm-0.11-grid+qwen3-moe-dp", ">=0.11.0rc2,<0.12.0rc1", _V0110RC2,
        "v0.11.0rc2:vllm_ascend/platform.py:189; v0.11.0rc2:vllm_ascend/utils.py:341-367 … "
        "v0.11.0:vllm_ascend/platform.py:185-204 (Qwen3-MoE TP 1 DP > 1: 1, 2, 5, 10, 15, 20, every 8 from 24)",
    ),
    (
        "vllm-0.12-grid", ">=0.12.0rc1,<0.13.0rc1", _V0120,
        "vLLM v0.12.0:vllm/config/vllm.py:1036-1075 (min(2 × max_num_seqs, 512); every 8 below 256, every 16 "
        "from 256); v0.12.0rc1:vllm_ascend/platform.py:203-218,244 (FULL and FULL_DECODE_ONLY); "
        "v0.12.0rc1:vllm_ascend/utils.py:418-443; v0.12.0rc1:vllm_ascend/worker/model_runner_v1.py:3043-3049 "
        "(sizes rounded up to multiples of the query length)",
    ),
    (
        "vllm-2x-query-ceiling", ">=0.13.0rc1,<0.13.0rc2", _V0130,
        "vLLM v0.13.0:vllm/config/vllm.py:1067-1077 (min(2 × max_num_seqs × query length, 512)); "
        "v0.13.0rc1:vllm_ascend/platform.py:205-220; v0.13.0rc1:vllm_ascend/worker/model_runner_v1.py:2916-2923 "
        "(rounding, TP without enable_sp)",
    ),
    (
        "vllm-2x-query-ceiling+sp-rounding", ">=0.13.0rc2,<0.13.0rc3", _V0130RC2,
        "v0.13.0rc2:vllm_ascend/worker/model_runner_v1.py:3030 (update_pass_config: the rounding sees enable_sp, "
        "multiples of max(query length, TP)); v0.13.0rc2:vllm_ascend/platform.py:218-233",
    ),
    (
        "no-qwen3-moe-list-v0.13", ">=0.13.0rc3,<0.14.0rc1", _V0130RC3,
        "v0.13.0rc3:vllm_ascend/platform.py:219-233 … v0.13.0:vllm_ascend/platform.py:219-233 (no "
        "update_default_aclgraph_sizes)",
    ),
    (
        "qwen3-moe-list-v0.14", ">=0.14.0rc1,<0.15.0rc1", _V0140,
        "v0.14.0rc1:vllm_ascend/platform.py:249-266; v0.14.0rc1:vllm_ascend/utils.py:448-474; "
        "v0.14.0rc1:vllm_ascend/worker/model_runner_v1.py:2808 (vLLM v0.14.1:vllm/v1/worker/gpu_model_runner.py:5176 "
        "rounds, no update_pass_config)",
    ),
    (
        "vllm-grid-v0.15", ">=0.15.0rc1,<0.16.0rc1", _V0150,
        "v0.15.0rc1:vllm_ascend/platform.py:242-255; v0.15.0rc1:vllm_ascend/worker/model_runner_v1.py:2913 (vLLM "
        "v0.15.0:vllm/v1/worker/gpu_model_runner.py:5381 rounds, no update_pass_config)",
    ),
    (
        "vllm-grid-v0.16", ">=0.16.0rc1,<0.18.0rc1", _V0160,
        "v0.16.0rc1:vllm_ascend/worker/model_runner_v1.py:3110 (update_pass_config); "
        "v0.16.0rc1:vllm_ascend/platform.py:247-260",
    ),
    (
        "ascend-ceiling", ">=0.18.0rc1,<0.20.2rc1", _V0180,
        "v0.18.0rc1:vllm_ascend/platform.py:157-191,198-210 (min(max_num_seqs × query length, 512), the × 2 "
        "dropped), :314-330; vLLM v0.18.0:vllm/config/vllm.py:822 (platform defaults before the list)",
    ),
    (
        "ascend-ceiling+batched-tokens", ">=0.20.2rc1,<0.21.0rc1", _V0202,
        "vLLM v0.20.2:vllm/config/vllm.py:1527-1532 (max_num_batched_tokens appended when it fits); vLLM "
        "v0.20.2:vllm/config/compilation.py:1411-1418 (rounding for every FULL decode mode)",
    ),
    (
        "ascend-ceiling+full-and-piecewise", ">=0.21.0rc1,<0.22.1rc1", _V0210,
        "v0.21.0rc1:vllm_ascend/platform.py:502-520,551,576 (FULL_AND_PIECEWISE kept)",
    ),
    (
        "ascend-ceiling+950-prune", ">=0.22.1rc1", _V0221,
        "v0.22.1rc1:vllm_ascend/platform.py:107-122,619 … v0.23.0:vllm_ascend/platform.py:109-119 "
        "(prune_capture_sizes_for_950), :207-241 (ceiling), :549-568 (SP trim), :599-625 (piecewise modes only) … "
        "v0.25.1rc1:vllm_ascend/platform.py:108,206-240,502-524,581",
    ),
)  # fmt: skip


def _capture_summary(facts: CaptureEra | None) -> str:
    if facts is None:
        return "no FULL decode graphs"
    ceiling = {
        "2x": "min(2 × max_num_seqs, 512)",
        "2x-query": "min(2 × max_num_seqs × (1 + spec), 512)",
        "ascend-query": "min(max_num_seqs × (1 + spec), 512)",
    }[facts.ceiling]
    grid = "1, 2, 4, every 8" if facts.grid == "vllm-0.11" else "1, 2, 4, every 8 < 256, every 16 ≥ 256"
    extra = [
        name
        for name, on in (
            ("SP: multiples of TP", facts.sp_trim),
            ("Qwen3-MoE DP list", facts.qwen3_moe_dp),
            ("+ max_num_batched_tokens", facts.append_batched_tokens),
            ("rounded to multiples of 1 + spec", bool(facts.round_modes)),
            ("950: 4 sizes (piecewise)", facts.prune_950),
        )
        if on
    ]
    modes = ", ".join(sorted(facts.full_decode_modes))
    return f"capture list {grid} up to {ceiling}" + "".join(f"; {e}" for e in extra) + f" (FULL decode: {modes})"


for _name, _spec, _facts, _source in _CAPTURE_LIST:
    era(
        "capture-list", _name, axis="vllm_ascend", spec=_spec, backends=NPU,
        summary=f"data: {_capture_summary(_facts)} (plan rules ask; no flags)", source=_source,
        traits={
            "capture_list": partial(compute, _facts) if _facts is not None else None,
            "full_decode_modes": _facts.full_decode_modes if _facts is not None else frozenset(),
            "facts": _facts,
        },
    )(nothing_to_plan)  # fmt: skip
