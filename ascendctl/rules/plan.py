"""`plan.*` rules: the resolved plan against the model's config.json and the matrix's hardware limits.

A failing `error` rule is a broken constraint (the planner refuses unless `allow_unsupported`); `warn` rules
work but not as recommended; a rule that applies but lacks the model's config.json is `undecided` and shown.
Hardware limits come from the matrix's hardware table (`PlanFacts.hardware`), never from family names; which
quantizations break which features is the matrix's `feature_constraints` (reported through `plan.supported`).
Facts: vllm-ascend.md FAQ #13 (§11 #12), §4.2 (EPLB), §6.2, §9.4, §9.6, §11 #14.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ascendctl.rules import Finding, Outcome, evaluate, passed, problem, rule, skipped, undecided

if TYPE_CHECKING:
    from ascendctl.model_config import ModelConfig
    from ascendctl.models.matrix import Hardware
    from ascendctl.models.profile import Profile

MLA_HEADS = (32, 64, 128)  # the heads per TP rank the MLA graph kernels take (FAQ #13)
EPLB_MIN_EXPERTS_PER_DEVICE = 8  # EPLB is not recommended at or below this many experts per device
CP_FLAGS = ("--prefill-context-parallel-size", "--decode-context-parallel-size", "-pcp", "-dcp")


@dataclass(frozen=True)
class PlanFacts:
    """What the plan rules see: the profile, the resolved plan's decisions and the model's own config."""

    profile: Profile
    graph_mode: str  # as resolved by the adapters (eager / piecewise / full / ... / default)
    arch: str  # dense / moe / mla
    config: ModelConfig | None
    model_is_local: bool
    hardware: Hardware | None = None  # the matrix's family (npu targets)
    in_matrix: bool = True  # the model family is in the support matrix (npu targets)
    verified_max_len: int | None = None  # the context the matrix verifies for this family on this hardware
    env: Mapping[str, str] = field(default_factory=dict)  # the environment the engine gets
    broken: tuple[str, ...] = ()  # matrix verdict, host and adapter problems the planner collected

    @property
    def npu(self) -> bool:
        return self.profile.target.backend == "npu"


def plan_findings(facts: PlanFacts) -> list[Finding]:
    return evaluate("plan", facts)


def captures_graphs(graph_mode: str) -> bool:
    """Whether a resolved graph mode captures graphs (everything but eager; `auto` is unresolved)."""
    return graph_mode not in ("eager", "auto")


def launch_blocking_breaks_graphs(env: Mapping[str, str], graph_mode: str) -> bool:
    """vllm-ascend refuses to start graph capture with ASCEND_LAUNCH_BLOCKING=1 (platform.py; §11 #14)."""
    return env.get("ASCEND_LAUNCH_BLOCKING", "0") == "1" and captures_graphs(graph_mode)


def _no_config(f: PlanFacts, what: str) -> Outcome:
    where = (
        "the model is a hub id not in the Hugging Face or ModelScope cache"
        if not f.model_is_local
        else "its config.json could not be read"
    )
    return undecided(f"skipped: {what} needs the model's config.json and {where}")


def _ep_size(p: Profile) -> int:
    return p.engine.parallel.tensor * p.engine.parallel.data


@rule("plan.supported", "error", "The matrix and the release accept this deployment")
def supported(f: PlanFacts) -> Outcome:
    if f.broken:
        return problem("; ".join(dict.fromkeys(f.broken)), "see `ascendctl plan PROFILE` for the suggestions")
    return passed("no broken constraint")


@rule("plan.model.in-matrix", "warn", "The model family is in the support matrix", source="ascendctl/data/matrix.yaml")
def model_in_matrix(f: PlanFacts) -> Outcome:
    if not f.npu:
        return skipped("the matrix records model support for Ascend only")
    if not f.in_matrix:
        return problem(
            f"{f.profile.model.source} is not in the support matrix: model support is not verified",
            "`ascendctl matrix models` lists the families",
        )
    return passed("listed")


@rule(
    "plan.hardware.dtype", "error", "model.dtype is one the hardware runs",
    source="matrix hardware limits (vllm-ascend.md §9.4)",
)  # fmt: skip
def hardware_dtype(f: PlanFacts) -> Outcome:
    hw, dtype = f.hardware, f.profile.model.dtype
    if hw is None:
        return skipped("no hardware family")
    if dtype not in ("auto", *hw.limits.dtypes):
        only = "/".join(hw.limits.dtypes)
        return problem(
            f"model.dtype: {hw.name} runs {only} only, not {dtype}", f"set model.dtype: {hw.limits.dtypes[0]}",
            at=("model", "dtype"),
        )  # fmt: skip
    return passed(f"{dtype} on {hw.name}")


@rule("plan.hardware.min-devices", "error", "Enough devices work together for the hardware family")
def hardware_min_devices(f: PlanFacts) -> Outcome:
    hw = f.hardware
    if hw is None:
        return skipped("no hardware family")
    need, have = hw.limits.min_devices, f.profile.target.devices_per_node
    if have < need:
        return problem(
            f"{hw.name} needs at least {need} devices working together, the profile uses {have}",
            f"set target.devices_per_node: {need} (and engine.parallel.tensor to match)",
            at=("target", "devices_per_node"),
        )
    return passed(f"{have} devices")


@rule("plan.hardware.devices-per-node", "error", "No more devices per node than the family's servers have")
def hardware_devices_per_node(f: PlanFacts) -> Outcome:
    hw = f.hardware
    if hw is None or hw.devices_per_server is None:
        return skipped("no server size recorded for this family")
    have = f.profile.target.devices_per_node
    if have > hw.devices_per_server:
        return problem(
            f"target.devices_per_node {have} is more than the {hw.devices_per_server} devices of an {hw.name} "
            "server (matrix hardware table)",
            f"set target.devices_per_node ≤ {hw.devices_per_server} and spread the rest over target.nodes",
            at=("target", "devices_per_node"),
        )
    return passed(f"{have} of {hw.devices_per_server} devices")


@rule("plan.hardware.checkpoint-dtype", "warn", "The checkpoint's dtype runs natively", source="vllm-ascend.md §9.4")
def checkpoint_dtype(f: PlanFacts) -> Outcome:
    hw = f.hardware
    if hw is None or "bfloat16" in hw.limits.dtypes:
        return skipped("the hardware runs bfloat16")
    if f.config is None:
        return _no_config(f, "the checkpoint dtype check")
    if f.config.torch_dtype == "bfloat16":
        return problem(
            f"the checkpoint is bfloat16 but {hw.name} runs {'/'.join(hw.limits.dtypes)} only: it is cast "
            "(check accuracy)"
        )
    return passed(f"checkpoint {f.config.torch_dtype or 'dtype unknown'}")


@rule(
    "plan.hardware.max-model-len", "warn", "A bounded context where attention builds a full mask",
    source="v0.18.0 docs/source/tutorials/hardwares/310p.md (vllm-ascend.md §9.6)",
)  # fmt: skip
def square_mask_length(f: PlanFacts) -> Outcome:
    hw = f.hardware
    if hw is None or not hw.limits.square_attention_mask:
        return skipped("the attention path builds no full mask")
    length = f.profile.model.max_model_len
    if length is None:
        return problem(
            f"set a conservative model.max_model_len on {hw.name}: its attention path builds a full "
            "float16 [max_model_len × max_model_len] mask",
            at=("model", "max_model_len"),
        )
    if f.verified_max_len is not None and length > f.verified_max_len:
        return problem(
            f"model.max_model_len {length} is above the {f.verified_max_len} tokens the matrix verifies on "
            f"{hw.name} (its attention mask is O(max_model_len²))",
            at=("model", "max_model_len"),
        )
    return passed(f"max_model_len {length}")


@rule("plan.mla.heads-per-rank", "error", "MLA graph kernels get 32, 64 or 128 heads per rank", source="FAQ #13")
def mla_heads(f: PlanFacts) -> Outcome:
    if not f.npu or f.arch != "mla" or not captures_graphs(f.graph_mode):
        return skipped("not MLA with a graph mode on an NPU")
    cfg = f.config
    if cfg is None or cfg.num_attention_heads is None:
        return _no_config(f, "the MLA heads-per-rank check")
    tp = f.profile.engine.parallel.tensor
    per_rank = cfg.num_attention_heads / tp
    if per_rank in MLA_HEADS:
        return passed(f"{per_rank:g} heads per rank")
    return problem(
        f"MLA with graph mode needs heads per TP rank in {{32, 64, 128}}: {cfg.num_attention_heads} heads / "
        f"TP {tp} = {per_rank:g} (engine error EZ9999 'MLA only support {{32, 64, 128}}')",
        "change the tensor size or use engine.graph.mode: eager",
    )


def _experts(f: PlanFacts) -> int | None:
    return f.config.num_experts if f.config else None


@rule("plan.moe.experts-divisible", "error", "Experts divide over the EP ranks", source="vllm-ascend.md §4.2")
def experts_divisible(f: PlanFacts) -> Outcome:
    p = f.profile
    if not p.engine.parallel.expert:
        return skipped("expert parallelism off")
    experts = _experts(f)
    if experts is None:
        return _no_config(f, "the experts ÷ EP-size check")
    total = experts + p.engine.eplb.redundant_experts
    ep = _ep_size(p)
    if total % ep == 0:
        return passed(f"{total} experts over {ep} EP ranks")
    return problem(
        f"(experts {experts} + redundant {p.engine.eplb.redundant_experts}) = {total} is not divisible by the "
        f"EP size {ep} (tensor × data)",
        "adjust engine.eplb.redundant_experts or the layout",
    )


@rule(
    "plan.eplb.experts-per-device", "warn", "EPLB has experts to balance",
    source="vllm-ascend EPLB guide (expert_parallelism_load_balancer.md)",
)  # fmt: skip
def eplb_experts_per_device(f: PlanFacts) -> Outcome:
    p = f.profile
    if p.engine.eplb.mode == "off":
        return skipped("EPLB off")
    experts = _experts(f)
    if experts is None:
        return _no_config(f, "the experts-per-device check")
    per_device = (experts + p.engine.eplb.redundant_experts) / _ep_size(p)
    if per_device > EPLB_MIN_EXPERTS_PER_DEVICE:
        return passed(f"{per_device:g} experts per device")
    return problem(
        f"EPLB with {per_device:g} experts per device (≤ {EPLB_MIN_EXPERTS_PER_DEVICE}) has little to balance "
        "and is not recommended",
        "turn EPLB off (engine.eplb.mode: off)",
    )


def _context_parallel(f: PlanFacts) -> bool:
    p = f.profile
    if (p.serving.prefill_context_parallel or 1) > 1 or (p.serving.decode_context_parallel or 1) > 1:
        return True
    if any(a.split("=", 1)[0] in CP_FLAGS for a in p.engine.extra_args):
        return True
    if p.engine.additional_config.get("enable_context_parallel") is True:
        return True
    return f.env.get("VLLM_ASCEND_ENABLE_CONTEXT_PARALLEL", "0") not in ("", "0")


@rule(
    "plan.graph.full-with-context-parallel", "warn", "FULL graphs and context parallelism",
    source="main graph_mode.md (vllm-ascend.md §6.2)",
)  # fmt: skip
def full_with_context_parallel(f: PlanFacts) -> Outcome:
    if f.graph_mode != "full" or not _context_parallel(f):
        return skipped("not FULL graphs with context parallelism")
    return problem(
        "cudagraph_mode FULL is not sufficiently supported with context parallelism",
        "use engine.graph.mode: full-decode-only",
    )


@rule(
    "plan.graph.launch-blocking", "error", "ASCEND_LAUNCH_BLOCKING off with graph mode",
    source="vllm_ascend/platform.py (vllm-ascend.md §11 #14)",
)  # fmt: skip
def launch_blocking(f: PlanFacts) -> Outcome:
    if not f.npu:
        return skipped("not an NPU target")
    if launch_blocking_breaks_graphs(f.env, f.graph_mode):
        return problem(
            f"ASCEND_LAUNCH_BLOCKING=1 with graph mode {f.graph_mode}: vllm-ascend refuses to start (ACL graph is "
            "incompatible with it)",
            "unset ASCEND_LAUNCH_BLOCKING (or set it to 0), or use engine.graph.mode: eager while debugging",
        )
    return passed(f"ASCEND_LAUNCH_BLOCKING={f.env.get('ASCEND_LAUNCH_BLOCKING', 'unset')}, graph mode {f.graph_mode}")
