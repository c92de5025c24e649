"""Lint rules that need the model's own config.json and the resolved plan. Pure functions.

Each rule returns findings with a level: `error` (the engine would fail: the planner treats it as a broken
constraint), `warning` (works, but not as recommended) or `info` (a rule that could not run, and why).
Facts: vllm-ascend.md FAQ #13 (§11 #12), §4.2 (feature matrix, EPLB constraints), §6.2, §9.6, §11 #14.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from ascendctl.model_config import ModelConfig
from ascendctl.models.plan import LintFinding
from ascendctl.models.profile import Profile

MLA_HEADS = (32, 64, 128)
EPLB_MIN_EXPERTS_PER_DEVICE = 8  # EPLB is not recommended at or below this many experts per device
LOW_BIT_EPLB = ("w4a8_dynamic", "w4a4", "w4a4_flatquant_dynamic")
GRAPH_MODES = ("piecewise", "full", "full-decode-only", "full-and-piecewise", "torchair", "default")
CP_FLAGS = ("--prefill-context-parallel-size", "--decode-context-parallel-size", "-pcp", "-dcp")


@dataclass(frozen=True)
class LintInput:
    profile: Profile
    hardware: str | None
    arch: str  # dense / moe / mla
    graph_mode: str  # as resolved by the adapters
    config: ModelConfig | None
    model_is_local: bool
    duo_max_len: int | None = None  # the matrix's verified context for this family on 300I Duo
    env: Mapping[str, str] = field(default_factory=dict)  # runtime.env


def lint(inp: LintInput) -> list[LintFinding]:
    out: list[LintFinding] = []
    for rule in (
        _mla_heads,
        _experts_divisible,
        _eplb_experts_per_device,
        _low_bit_eplb,
        _duo_dtype_and_length,
        _full_with_context_parallel,
        _launch_blocking,
    ):
        out += rule(inp)
    return out


def _skipped(inp: LintInput, rule: str, what: str) -> list[LintFinding]:
    where = "the model is a hub id" if not inp.model_is_local else "its config.json could not be read"
    return [LintFinding(rule, "info", f"skipped: {what} needs the model's config.json and {where}")]


def _graph_on(inp: LintInput) -> bool:
    return inp.graph_mode in GRAPH_MODES


def _ep_size(p: Profile) -> int:
    par = p.engine.parallel
    return par.tensor * par.data


def _mla_heads(inp: LintInput) -> list[LintFinding]:
    rule = "mla-heads-per-rank"
    if inp.hardware is None or inp.arch != "mla" or not _graph_on(inp):
        return []
    cfg = inp.config
    if cfg is None or cfg.num_attention_heads is None:
        return _skipped(inp, rule, "the MLA heads-per-rank check")
    tp = inp.profile.engine.parallel.tensor
    per_rank = cfg.num_attention_heads / tp
    if per_rank in MLA_HEADS:
        return []
    return [
        LintFinding(
            rule,
            "error",
            f"MLA with graph mode needs heads per TP rank in {{32, 64, 128}}: {cfg.num_attention_heads} heads / "
            f"TP {tp} = {per_rank:g} (engine error EZ9999 'MLA only support {{32, 64, 128}}'); change the tensor "
            "size or use engine.graph.mode: eager",
            "vllm-ascend FAQ #13 (docs/source/faqs.md)",
        )
    ]


def _experts(inp: LintInput) -> int | None:
    return inp.config.num_experts if inp.config else None


def _experts_divisible(inp: LintInput) -> list[LintFinding]:
    rule = "experts-divisible-by-ep"
    p = inp.profile
    if not p.engine.parallel.expert:
        return []
    experts = _experts(inp)
    if experts is None:
        return _skipped(inp, rule, "the experts ÷ EP-size check")
    total = experts + p.engine.eplb.redundant_experts
    ep = _ep_size(p)
    if total % ep == 0:
        return []
    return [
        LintFinding(
            rule,
            "error",
            f"(experts {experts} + redundant {p.engine.eplb.redundant_experts}) = {total} is not divisible by the "
            f"EP size {ep} (tensor × data); adjust engine.eplb.redundant_experts or the layout",
            "vllm-ascend EPLB guide (vllm-ascend.md §4.2)",
        )
    ]


def _eplb_experts_per_device(inp: LintInput) -> list[LintFinding]:
    rule = "eplb-experts-per-device"
    p = inp.profile
    if p.engine.eplb.mode == "off":
        return []
    experts = _experts(inp)
    if experts is None:
        return _skipped(inp, rule, "the experts-per-device check")
    per_device = (experts + p.engine.eplb.redundant_experts) / _ep_size(p)
    if per_device > EPLB_MIN_EXPERTS_PER_DEVICE:
        return []
    return [
        LintFinding(
            rule,
            "warning",
            f"EPLB with {per_device:g} experts per device (≤ {EPLB_MIN_EXPERTS_PER_DEVICE}) has little to balance "
            "and is not recommended",
            "vllm-ascend EPLB guide (expert_parallelism_load_balancer.md)",
        )
    ]


def _low_bit_eplb(inp: LintInput) -> list[LintFinding]:
    p = inp.profile
    if p.engine.eplb.mode == "off" or p.model.quantization not in LOW_BIT_EPLB:
        return []
    return [
        LintFinding(
            "low-bit-quant-eplb",
            "error",
            f"{p.model.quantization} weights do not work with EPLB (feature matrix: W4A8 × EPLB ❌, W4A4 × EPLB ❌)",
            "docs/source/user_guide/support_matrix/feature_matrix.md (vllm-ascend.md §4.2); RN v0.18.0 #8341",
        )
    ]


def _duo_dtype_and_length(inp: LintInput) -> list[LintFinding]:
    if inp.hardware != "300i-duo":
        return []
    out: list[LintFinding] = []
    cfg = inp.config
    if cfg is not None and cfg.torch_dtype == "bfloat16":
        out.append(
            LintFinding(
                "310p-float16",
                "warning",
                "the checkpoint is bfloat16 but Atlas 300I Duo runs float16 only: it is cast (check accuracy)",
                "vllm-ascend.md §9.4 ('Only float16 dtype is supported')",
            )
        )
    length = inp.profile.model.max_model_len
    ref = "v0.18.0 docs/source/tutorials/hardwares/310p.md (vllm-ascend.md §9.6)"
    if length is None:
        out.append(
            LintFinding(
                "310p-max-model-len",
                "warning",
                "set a conservative model.max_model_len on Atlas 300I Duo: the 310P attention path builds a full "
                "float16 [max_model_len × max_model_len] mask",
                ref,
            )
        )
    elif inp.duo_max_len is not None and length > inp.duo_max_len:
        out.append(
            LintFinding(
                "310p-max-model-len",
                "warning",
                f"model.max_model_len {length} is above the {inp.duo_max_len} tokens the matrix verifies on "
                "Atlas 300I Duo (the 310P mask is O(max_model_len²))",
                ref,
            )
        )
    return out


def _context_parallel(inp: LintInput) -> bool:
    p = inp.profile
    if any(a.split("=", 1)[0] in CP_FLAGS for a in p.engine.extra_args):
        return True
    if p.engine.additional_config.get("enable_context_parallel") is True:
        return True
    return inp.env.get("VLLM_ASCEND_ENABLE_CONTEXT_PARALLEL", "0") not in ("", "0")


def _full_with_context_parallel(inp: LintInput) -> list[LintFinding]:
    if inp.graph_mode != "full" or not _context_parallel(inp):
        return []
    return [
        LintFinding(
            "full-graph-context-parallel",
            "warning",
            "cudagraph_mode FULL is not sufficiently supported with context parallelism; prefer FULL_DECODE_ONLY",
            "main graph_mode.md (vllm-ascend.md §6.2)",
        )
    ]


def _launch_blocking(inp: LintInput) -> list[LintFinding]:
    if inp.hardware is None or inp.env.get("ASCEND_LAUNCH_BLOCKING", "0") != "1" or not _graph_on(inp):
        return []
    return [
        LintFinding(
            "launch-blocking-graph",
            "error",
            "ASCEND_LAUNCH_BLOCKING=1 with a graph mode: vllm-ascend refuses to start (ACL graph is incompatible "
            "with it); unset it or use engine.graph.mode: eager",
            "vllm_ascend/platform.py (vllm-ascend.md §11 #14)",
        )
    ]
