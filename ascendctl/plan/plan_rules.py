"""`plan.*` rules: the resolved plan against the model's config.json and the matrix's hardware limits.

A failing `error` rule is a broken constraint (`plan`, `serve` and `render` exit 2 unless the profile's `allow`
or `--allow` names its id); `warn` rules work but not as recommended; a rule that applies but lacks the model's
config.json is `undecided` and shown. The verdicts gathered before the rules run are findings too, one per
constraint: `plan.matrix.*` (the support matrix: release × hardware, the model table, quantization, each feature
combination), `plan.host.*` (the profile against the probed host), `plan.refused.<topic>` (an era adapter cannot
express the intent on this release) and `plan.rejected.*` (the release's own parser or config rejects what
would be launched: never allowable, the engine would not start).
Hardware limits come from the matrix's hardware table (`PlanFacts.hardware`), never from family names; which
quantizations break which features is the matrix's `feature_constraints` (`plan.matrix.combination.*`).
Facts (vllm-ascend): main:docs/source/faqs.md #13 (MLA heads), the main EPLB guide
(docs/source/user_guide/feature_guide/expert_parallelism_load_balancer.md), main graph_mode.md, the main
Qwen-VL-Dense.md tutorial (300I Duo: float16 only), v0.18.0:docs/source/tutorials/hardwares/310p.md,
main:vllm_ascend/platform.py (ASCEND_LAUNCH_BLOCKING), v0.9.1 quantization.md FAQ #1 (KeyError without
--quantization ascend), main additional_config.md and vllm_ascend/ascend_config.py (keys for a PD decode node only).
Release-era facts (which flag ModelSlim weights need, which description file a tag reads, which keys a tag refuses
outside a PD decode node) are asked of the era registry (`ascendctl_engine.adapters.eras`), never compared here.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from ascendctl.core.dotted import dotted_get
from ascendctl.core.findings import (
    Clause,
    Each,
    Finding,
    Outcome,
    evaluate,
    kebab,
    passed,
    problem,
    rule,
    skipped,
    undecided,
)
from ascendctl.facts.model_inspect import CONTEXT_OVERRIDES, with_context_overrides
from ascendctl.plan.fit.inputs import device_memory, engine_batch_defaults
from ascendctl_engine.adapters import quantization_rule
from ascendctl_engine.adapters.acceptance import SettingVerdict
from ascendctl_engine.adapters.builder import Refusal
from ascendctl_engine.adapters.capture_list import (
    CaptureEra,
    CaptureInputs,
    CaptureList,
    compute,
    nearest_captured,
    sample_sizes,
)
from ascendctl_engine.adapters.eras import Era, era_for_release
from ascendctl_engine.adapters.parser_snapshot import ParserSnapshot, SnapshotMissing, parser_distribution, snapshot_for
from ascendctl_engine.argv_items import ArgItem, PrefixProblem, find, resolve_prefixes
from ascendctl_engine.platform_needs import captures_graphs, launch_blocking_breaks_graphs
from ascendctl_engine.records import record

if TYPE_CHECKING:
    from ascendctl.facts.matrix.schema import Hardware, Release
    from ascendctl.facts.model_inspect import ModelConfig
    from ascendctl.facts.published_shapes import ModelShapes
    from ascendctl.plan.fit.result import FitResult
    from ascendctl.plan.pd_facts import PdFacts
    from ascendctl.schema.profile import Profile

MLA_HEADS = (32, 64, 128)  # the heads per TP rank the MLA graph kernels take (vllm-ascend faqs.md #13)
EPLB_MIN_EXPERTS_PER_DEVICE = 8  # EPLB is not recommended at or below this many experts per device
CP_FLAGS = ("--prefill-context-parallel-size", "--decode-context-parallel-size", "-pcp", "-dcp")
# A default context at or above this many tokens is "long": vLLM's start-up check needs KV cache for one whole
# request of max_model_len, and that grows linearly with it (a 32k-token request of a 7B model with full multi-head
# attention already needs ~16 GiB). Today's checkpoints default to 32k (Qwen2.5), 40k (Qwen3) or 128k-256k (MoE /
# MLA families), which operators rarely mean to serve; below 32k the default is what they would set anyway.
LONG_CONTEXT = 32768


@record
class Broken:
    """One constraint a verdict found broken (or only partly met): `key` is its finding id below its rule."""

    key: str
    message: str
    source: str = ""
    level: Literal["error", "warning"] = "error"
    fix: str | None = None
    clause: Clause | None = None  # an error refuses only with one (the refusal policy); without one it warns


@record
class PlanFacts:
    """What the plan rules see: the profile, the resolved plan's decisions and the model's own config."""

    profile: Profile
    graph_mode: str  # as resolved by the adapters (eager / piecewise / full / ... / default)
    arch: str  # dense / moe / mla
    config: ModelConfig | None  # the model's own config.json (or `--config FILE`): what its directory says
    model_is_local: bool
    # the shapes the shape rules read (config.json, `--config`, else published shapes) and what they rest on
    shapes: ModelShapes | None = None
    hardware: Hardware | None = None  # the matrix's family (npu targets)
    in_matrix: bool = True  # the model family is in the support matrix (npu targets)
    verified_max_len: int | None = None  # the context the matrix verifies for this family on this hardware
    env: Mapping[str, str] = field(default_factory=dict)  # the environment the engine gets
    matrix: tuple[Broken, ...] = ()  # the support matrix's verdict on this combination
    host: tuple[Broken, ...] = ()  # the profile against the probed host
    refusals: tuple[Refusal, ...] = ()  # what the era adapters and the release's acceptance checks refused
    reads: tuple[SettingVerdict, ...] = ()  # each config key and variable the plan passes, as the release reads it
    fit: FitResult | None = None  # the memory fit of this plan (ascendctl.plan.fit), when it could be made
    release: Release | None = None  # the resolved release row (for the era registry's answers)
    kv_role: str | None = None  # the planned `kv_role` of a prefill/decode instance (None: not disaggregated)
    pd: PdFacts | None = None  # the whole prefill/decode layout (`ascendctl.plan.pd_rules`), on every instance

    @property
    def npu(self) -> bool:
        return self.profile.target.backend == "npu"


def plan_findings(facts: PlanFacts) -> list[Finding]:
    return evaluate("plan", facts)


def _no_config(f: PlanFacts, what: str) -> Outcome:
    where = (
        "the model is a hub id not in the Hugging Face or ModelScope cache"
        if not f.model_is_local
        else "its config.json could not be read"
    )
    return undecided(f"skipped: {what} needs the model's config.json and {where}")


def _shape_config(f: PlanFacts) -> ModelConfig | None:
    """What the shape rules read: config.json, `--config`, else the published shapes (`ModelShapes`)."""
    return f.shapes.config if f.shapes is not None else None


def _on_shapes(f: PlanFacts, outcome: Outcome) -> Outcome:
    """A shape rule's outcome, said on what it rests on. A failure on shapes matched only by a normalised name
    warns instead of refusing (the model may be a fine-tune with other shapes), naming the id it matched."""
    shapes = f.shapes
    if shapes is None or shapes.basis in ("config.json", "--config"):
        return outcome
    if outcome.kind == "pass":
        return passed(f"{outcome.message} (from {shapes.label})")
    if outcome.kind != "problem":
        return outcome
    if shapes.decisive:
        return Outcome("problem", f"{outcome.message} [from {shapes.label}]", outcome.fix, outcome.severity, outcome.at)
    return problem(
        f"{outcome.message} [from {shapes.label}: {f.profile.model.location} may be a fine-tune with other shapes]",
        f"{outcome.fix or 'check the layout'}; or give the model's own config.json (`--config FILE`) to decide",
        severity="warn",
        at=outcome.at or (),
    )


def _ep_size(p: Profile) -> int:
    return p.engine.parallel.tensor * p.engine.parallel.data


@rule("plan.plannable", "error", "The profile can be planned: its release and model resolve")
def plannable(f: PlanFacts) -> Outcome:
    # A profile that cannot be planned has no PlanFacts: `check` reports this rule failing with the reason.
    return passed(f"planned for {f.release.version if f.release else 'its release'}")


def _each(broken: tuple[Broken, ...]) -> list[Each]:
    return [
        Each(
            b.key,
            problem(b.message, b.fix, severity="warn" if b.level == "warning" else None, clause=b.clause),
            b.source or None,
        )
        for b in broken
    ]


@rule("plan.matrix", "error", "The support matrix accepts this combination", source="ascendctl/facts/data/matrix.yaml")
def matrix_verdict(f: PlanFacts) -> list[Each]:
    return _each(f.matrix)


@rule("plan.host", "error", "The profile targets this host's backend and hardware", clause="placement")
def host_verdict(f: PlanFacts) -> list[Each]:
    return _each(f.host)


@rule(
    "plan.refused",
    "error",
    "This release can express every intent of the profile",
    source="engine/ascendctl_engine/adapters (the era registry)",
)
def adapter_refusals(f: PlanFacts) -> list[Each]:
    fix = (
        "change what the message names, or plan another release (`ascendctl plan PROFILE --release TAG`; `ascendctl "
        "matrix --explain MODEL --feature F` lists the releases that have a feature)"
    )
    return [Each(kebab(r.kind), problem(r.message, fix, clause=r.clause)) for r in f.refusals if not r.fatal]


@rule(
    "plan.rejected",
    "error",
    "The release's own parser and config accept every argument and key",
    source="engine/ascendctl_engine/data/parsers (real-parser snapshots), data/ascend_keys (key tables)",
    allowable=False,
    clause="engine-start",
)
def release_rejections(f: PlanFacts) -> list[Each]:
    return [
        Each(kebab(r.kind), problem(r.message, "the engine would not start: change or remove it"))
        for r in f.refusals
        if r.fatal
    ]


@rule(
    "plan.unread",
    "warn",
    "The release reads every `--additional-config` key and vLLM / vllm-ascend variable the plan passes",
    source="engine/ascendctl_engine/data/ascend_keys (what each vllm-ascend tag reads), "
    "engine/ascendctl_engine/data/vllm_envs.json (the variables each vLLM reads)",
)
def unread_settings(f: PlanFacts) -> list[Each]:
    # One judgement wherever the setting was written (ascendctl_engine.adapters.acceptance): the same id and words
    # for a typed field, engine.additional_config, extra_args, runtime.env/secrets, a node's or a role's settings.
    return [
        Each(
            "keys" if v.kind == "key" else "env",
            problem(v.message, "the engine ignores it: remove it, or plan a release that reads it"),
        )
        for v in f.reads
        if v.status == "not-read"
    ]


@rule(
    "plan.model.in-matrix",
    "warn",
    "The model family is in the support matrix",
    source="ascendctl/facts/data/matrix.yaml",
)
def model_in_matrix(f: PlanFacts) -> Outcome:
    if not f.npu:
        return skipped("the matrix records model support for Ascend only")
    if not f.in_matrix:
        return problem(
            f"{f.profile.model.location} is not in the support matrix: model support is not verified",
            "`ascendctl matrix models` lists the families",
        )
    return passed("listed")


@rule(
    "plan.hardware.dtype", "error", "model.dtype is one the hardware runs",
    source="matrix hardware limits (main:docs/source/tutorials/models/Qwen-VL-Dense.md:301, 300I Duo: float16 only)",
    clause="placement",  # the hardware has no such dtype: it cannot run there
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


# The matrix's `min_devices` is a document's claim (the A3 quick start), and upstream's nightly CI runs a model on one
# A3 NPU (v0.25.1rc1:tests/e2e/nightly/single_node/models/configs/Qwen3-30B-A3B-W8A8.yaml, `--tensor-parallel-size 1`):
# one device can be placed, so it warns (docs/refusal-policy.md).
@rule("plan.hardware.min-devices", "warn", "Enough devices work together for the hardware family")
def hardware_min_devices(f: PlanFacts) -> Outcome:
    hw = f.hardware
    if hw is None:
        return skipped("no hardware family")
    need, have = hw.limits.min_devices, f.profile.target.devices_per_node
    if have < need:
        return problem(
            f"{hw.name}: the matrix says a deployment uses at least {need} devices working together, the profile "
            f"uses {have} (a document's claim: upstream's nightly CI serves Qwen3-30B-A3B-W8A8 on one A3 NPU)",
            f"set target.devices_per_node: {need} (and engine.parallel.tensor to match)",
            at=("target", "devices_per_node"),
        )
    return passed(f"{have} devices")


@rule(
    "plan.hardware.devices-per-node",
    "error",
    "No more devices per node than the family's servers have",
    clause="placement",
)
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


@rule(
    "plan.hardware.checkpoint-dtype", "warn", "The checkpoint's dtype runs natively",
    source="main:docs/source/tutorials/models/Qwen-VL-Dense.md:301",
)  # fmt: skip
def checkpoint_dtype(f: PlanFacts) -> Outcome:
    hw = f.hardware
    if hw is None or "bfloat16" in hw.limits.dtypes:
        return skipped("the hardware runs bfloat16")
    if f.config is None:
        return _no_config(f, "the checkpoint dtype check")
    if f.config.torch_dtype == "bfloat16":
        return problem(
            f"the checkpoint is bfloat16 but {hw.name} runs {'/'.join(hw.limits.dtypes)} only: it is cast "
            "(check accuracy)",
            "use a float16 checkpoint of the model, or compare its answers with a bfloat16 host's before serving",
        )
    return passed(f"checkpoint {f.config.torch_dtype or 'dtype unknown'}")


@rule(
    "plan.hardware.max-model-len", "warn", "A bounded context where attention builds a full mask",
    source="v0.18.0:docs/source/tutorials/hardwares/310p.md",
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
            f"set model.max_model_len (at most {f.verified_max_len or 'the length you need'})",
            at=("model", "max_model_len"),
        )
    if f.verified_max_len is not None and length > f.verified_max_len:
        return problem(
            f"model.max_model_len {length} is above the {f.verified_max_len} tokens the matrix verifies on "
            f"{hw.name} (its attention mask is O(max_model_len²))",
            f"set model.max_model_len: {f.verified_max_len} or less",
            at=("model", "max_model_len"),
        )
    return passed(f"max_model_len {length}")


@rule(
    "plan.mla.heads-per-rank", "warn", "MLA graph kernels get 32, 64 or 128 heads per rank",
    source="main:docs/source/faqs.md #13",  # a document's claim (main's FAQ): it warns, the refusal policy
)  # fmt: skip
def mla_heads(f: PlanFacts) -> Outcome:
    if not f.npu or f.arch != "mla" or not captures_graphs(f.graph_mode):
        return skipped("not MLA with a graph mode on an NPU")
    cfg = _shape_config(f)
    if cfg is None or cfg.num_attention_heads is None:
        return _no_config(f, "the MLA heads-per-rank check")
    tp = f.profile.engine.parallel.tensor
    per_rank = cfg.num_attention_heads / tp
    if per_rank in MLA_HEADS:
        return _on_shapes(f, passed(f"{per_rank:g} heads per rank"))
    return _on_shapes(
        f,
        problem(
            f"MLA with graph mode needs heads per TP rank in {{32, 64, 128}}: {cfg.num_attention_heads} heads / "
            f"TP {tp} = {per_rank:g} (engine error EZ9999 'MLA only support {{32, 64, 128}}')",
            "change the tensor size or use engine.graph.mode: eager",
        ),
    )


def _experts(f: PlanFacts) -> int | None:
    cfg = _shape_config(f)
    return cfg.num_experts if cfg else None


@rule(
    "plan.moe.experts-divisible", "warn", "Experts divide over the EP ranks",
    source="main:docs/source/user_guide/feature_guide/expert_parallelism_load_balancer.md:328 (a document: it warns)",
)  # fmt: skip
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
        return _on_shapes(f, passed(f"{total} experts over {ep} EP ranks"))
    return _on_shapes(
        f,
        problem(
            f"(experts {experts} + redundant {p.engine.eplb.redundant_experts}) = {total} is not divisible by the "
            f"EP size {ep} (tensor × data)",
            "adjust engine.eplb.redundant_experts or the layout",
        ),
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
        return _on_shapes(f, passed(f"{per_device:g} experts per device"))
    return _on_shapes(
        f,
        problem(
            f"EPLB with {per_device:g} experts per device (≤ {EPLB_MIN_EXPERTS_PER_DEVICE}) has little to balance "
            "and is not recommended",
            "turn EPLB off (engine.eplb.mode: off)",
        ),
    )


def _context_parallel(f: PlanFacts) -> bool:
    p = f.profile
    if (p.serving.prefill_context_parallel or 1) > 1 or (p.serving.decode_context_parallel or 1) > 1:
        return True
    if any(item.flag in CP_FLAGS for item in _items(f)):  # any spelling: `--decode_context_parallel_size=2`, `-dcp 2`
        return True
    if p.engine.additional_config.get("enable_context_parallel") is True:
        return True
    return f.env.get("VLLM_ASCEND_ENABLE_CONTEXT_PARALLEL", "0") not in ("", "0")


@rule(
    "plan.graph.full-with-context-parallel", "warn", "FULL graphs and context parallelism",
    source="main:docs/source/user_guide/feature_guide/graph_mode.md:20",
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
    source="main:vllm_ascend/platform.py:1110", clause="engine-start"
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


# The graph modes' names in `--compilation-config` (messages only).
_CUDAGRAPH_NAMES = {"full": "FULL", "full-decode-only": "FULL_DECODE_ONLY", "full-and-piecewise": "FULL_AND_PIECEWISE"}
_FLASHCOMM_VARIABLES = ("VLLM_ASCEND_ENABLE_FLASHCOMM1", "VLLM_ASCEND_ENABLE_FLASHCOMM")


def _flashcomm1(f: PlanFacts) -> bool:
    """FlashComm1 (vllm-ascend's `enable_sp`) as the engine reads it: the switch, the `--additional-config` key, else
    the variables (v0.11.0:vllm_ascend/utils.py:668-681; v0.23.0:vllm_ascend/utils.py:903-928)."""
    p = f.profile
    if p.engine.ascend.flashcomm1 is not None:
        return p.engine.ascend.flashcomm1
    if "enable_flashcomm1" in p.engine.additional_config:
        return bool(p.engine.additional_config["enable_flashcomm1"])
    return any(f.env.get(name, "0") not in ("", "0") for name in _FLASHCOMM_VARIABLES)


def _max_num_seqs(f: PlanFacts) -> tuple[int, str]:
    """max_num_seqs and where it comes from: the profile's, else vLLM's default for the device (256 below 70 GiB,
    1024 from 70 GiB: vLLM v0.11.0 … v0.25.1 vllm/engine/arg_utils.py, e.g. v0.23.0:…/arg_utils.py:2316-2335)."""
    p = f.profile
    if p.engine.scheduler.max_num_seqs is not None:
        return p.engine.scheduler.max_num_seqs, "engine.scheduler.max_num_seqs"
    if f.fit is not None:
        return f.fit.max_num_seqs, "vLLM's default for the device"
    memory = device_memory(p, f.hardware, None)
    par = p.engine.parallel
    seqs, _ = engine_batch_defaults(p.target.backend, memory.bytes if memory else None, par.tensor * par.pipeline)
    return seqs, "vLLM's default for the device"


def _sizes_text(sizes: Sequence[int]) -> str:
    if len(sizes) <= 12:
        return "[" + ", ".join(map(str, sizes)) + "]"
    return f"[{', '.join(map(str, sizes[:4]))}, …, {', '.join(map(str, sizes[-3:]))}] ({len(sizes)} sizes)"


def _capture_ways_out(facts: CaptureEra, inputs: CaptureInputs, result: CaptureList, release: str) -> str:
    """The nearest max_num_seqs values on the release's list, and capture sizes holding the batch (each checked by
    the release's own computation)."""
    ways: list[str] = []
    near = [n for n in (nearest_captured(facts, inputs, above=False), nearest_captured(facts, inputs, above=True)) if n]
    if near:
        ways.append(
            f"set engine.scheduler.max_num_seqs to {' or '.join(map(str, near))} (the nearest whose widest decode "
            f"batch is on {release}'s list)"
        )
    batch = result.decode_batch
    base = sorted({*(inputs.capture_sizes or result.sizes), batch})
    for sizes in (base, sample_sizes(base, inputs.max_capture_sizes or len(base))):
        if compute(facts, replace(inputs, capture_sizes=tuple(sizes))).captured:
            own = f"{release}'s own list" if result.default_list else "the planned list"
            example = _sizes_text(sizes) if len(sizes) <= 12 else f"{own} ({len(sizes) - 1} sizes) with {batch} added"
            ways.append(f"set engine.graph.capture_sizes to a list that holds {batch} (e.g. {example})")
            break
    return "; or ".join(ways) or "use engine.graph.mode: piecewise (no FULL decode graphs to miss)"


@rule(
    "plan.graph.decode-capture", "warn", "The widest decode batch is on the release's capture list",
    source="vllm-project/vllm-ascend#16049 (off-stride max_num_seqs: the widest decode batches run eager, ~7.5× "
    "slower; fixes vllm-project/vllm-ascend#16623, #16970 open); vllm-project/vllm-ascend#14440 (max_num_seqs 264 with "
    "MTP: 528 tokens above the 512 ceiling); vLLM v0.23.0:vllm/v1/cudagraph_dispatcher.py:211-235 (FULL decode graphs "
    "only for sizes ≤ max_num_seqs × query length); era topic capture-list (engine/ascendctl_engine/adapters/graph.py)",
)  # fmt: skip
def decode_capture(f: PlanFacts) -> Outcome:
    p = f.profile
    chosen = _era(f, "capture-list")
    if chosen is None:
        return skipped("not an NPU release")
    facts = chosen.traits.get("facts")
    if f.graph_mode == "default":
        return skipped("graph mode engine-default: the engine's own cudagraph_mode is not modelled")
    if not isinstance(facts, CaptureEra) or f.graph_mode not in facts.full_decode_modes:
        return skipped(f"graph mode {f.graph_mode}: {p.release} runs no FULL decode graphs in it ({chosen.label})")
    if p.model.task != "generate":
        return skipped(f"model.task {p.model.task}: no decode steps")
    if f.kv_role == "kv_producer":
        return skipped("a prefill instance: its requests move to the decode instances after the first token")
    par = p.engine.parallel
    if facts.qwen3_moe_dp and par.tensor == 1 and par.data > 1 and _shape_config(f) is None:
        return _no_config(f, "the capture-list check (this release builds another list for Qwen3-MoE on DP)")
    seqs, seqs_why = _max_num_seqs(f)
    inputs = _capture_inputs(f, seqs)
    result = compute(facts, inputs)
    if not result.full_decode:
        return skipped(f"{p.release} runs FULL_DECODE_ONLY on MLA models as PIECEWISE graphs ({chosen.source})")
    if result.captured:
        return passed(
            f"the widest decode batch ({result.decode_batch} tokens) has a FULL graph: {_sizes_text(result.sizes)}"
        )
    return problem(
        _uncaptured_message(f, chosen, result, seqs, seqs_why),
        _capture_ways_out(facts, inputs, result, p.release),
        at=("engine", "scheduler", "max_num_seqs") if p.engine.scheduler.max_num_seqs is not None else (),
    )


def _capture_inputs(f: PlanFacts, seqs: int) -> CaptureInputs:
    p = f.profile
    par = p.engine.parallel
    config = _shape_config(f)
    hw = f.hardware
    return CaptureInputs(
        max_num_seqs=seqs, mode=f.graph_mode,
        speculative_tokens=p.engine.speculative.num_tokens if p.engine.speculative is not None else 0,
        tensor=par.tensor, data=par.data, sequence_parallel=_flashcomm1(f),
        max_num_batched_tokens=p.engine.scheduler.max_num_batched_tokens,
        capture_sizes=tuple(p.engine.graph.capture_sizes) if p.engine.graph.capture_sizes else None,
        model_type=config.model_type if config is not None else None, mla=f.arch == "mla",
        max_capture_sizes=hw.limits.max_capture_sizes if hw is not None else None,
        few_streams=hw.limits.few_streams if hw is not None else False,
    )  # fmt: skip


def _uncaptured_message(f: PlanFacts, chosen: Era, result: CaptureList, seqs: int, seqs_why: str) -> str:
    p = f.profile
    batch, spec = result.decode_batch, result.query_len - 1
    widest = f"max_num_seqs {seqs} ({seqs_why})" + (f" × (1 + {spec} speculative tokens)" if spec else "")
    if batch < seqs * result.query_len:
        widest += f", capped by max_num_batched_tokens {p.engine.scheduler.max_num_batched_tokens},"
    whose = f"the list {p.release} builds" if result.default_list else "the list the plan passes"
    piecewise = f.graph_mode == "full-and-piecewise" and bool(result.sizes) and batch <= result.sizes[-1]
    run = (
        "fall back to PIECEWISE graphs (the throughput cliff of vllm-project/vllm#57355)"
        if piecewise
        else "run eager, ~7.5× slower in vllm-project/vllm-ascend#16049"
    )
    covered = result.largest_covered
    steps = f"{covered + 1}–{batch}" if covered + 1 < batch else str(batch)
    return (
        f"cudagraph_mode {_CUDAGRAPH_NAMES[f.graph_mode]} on {p.release}: the widest decode batch, {widest} = {batch} "
        f"tokens, has no FULL graph in {whose}, {_sizes_text(result.sizes)} ({chosen.label}): decode steps of "
        f"{steps} tokens {run}, and the engine starts without an error"
    )


# --------------------------------------------------------------------------------------------------
# quantization, attention heads, context length, PD-decode-only keys (issue 17)


def _era(f: PlanFacts, topic: str) -> Era | None:
    """The era registry's answer for `topic` on the plan's release (None off NPU or without a release)."""
    if f.release is None or f.release.backend != "npu":
        return None
    return era_for_release(topic, f.release.backend, f.release.vllm, f.release.vllm_ascend)


def _written_items(p: Profile) -> tuple[ArgItem, ...]:
    """The parsed extra args of the profile and of every node, as written."""
    return (*p.engine.arg_items, *(item for node in p.network.nodes for item in node.arg_items))


def _snapshot(f: PlanFacts) -> ParserSnapshot | None:
    """The release's `vllm serve` parser snapshot; None without a release or a snapshot."""
    if f.release is None:
        return None
    try:
        return snapshot_for(f.release.vllm, parser_distribution(f.release.backend))
    except SnapshotMissing:
        return None


def _resolved(f: PlanFacts) -> tuple[tuple[ArgItem, ...], tuple[PrefixProblem, ...]]:
    """The profile's extra-args items with abbreviations resolved against the release's parser snapshot (argparse
    takes a unique prefix), and the ones it cannot resolve; as written without a release or snapshot."""
    items = _written_items(f.profile)
    snapshot = _snapshot(f)
    if snapshot is None:
        return items, ()
    return resolve_prefixes(items, frozenset(snapshot.long_flags), snapshot.completions)


def _items(f: PlanFacts) -> tuple[ArgItem, ...]:
    """What the plan rules read of the extra args: parsed once, abbreviations resolved for the target release."""
    return _resolved(f)[0]


@rule(
    "plan.extra-args.prefix",
    "error",
    "Abbreviated extra_args flags name one flag of the release",
    clause="engine-start",
)
def extra_args_prefix(f: PlanFacts) -> Outcome:
    if _snapshot(f) is None:
        return skipped("no parser snapshot for the release")
    items, problems = _resolved(f)
    # A flag that is no prefix of any flag is the release parser's verdict (the acceptance check refuses it);
    # this rule owns only the abbreviations argparse cannot resolve, so one mistake gives one finding.
    ambiguous = [p for p in problems if p.candidates]
    if not ambiguous:
        resolved = [f"{i.written} → {i.flag}" for i in items if i.written]
        return passed("; ".join(resolved) if resolved else "every flag is spelled in full or unknown to the release")
    first = ambiguous[0]
    vllm = f.release.vllm if f.release is not None else "?"
    written = first.item.tokens[0]
    shown = ", ".join(f"`{c}`" for c in first.candidates[:8])
    more = f" and {len(first.candidates) - 8} more" if len(first.candidates) > 8 else ""
    return problem(
        f"`{written}` in extra_args is an ambiguous abbreviation for vLLM {vllm}: argparse refuses it "
        f"(it starts {len(first.candidates)} flags)",
        f"spell the flag in full: one of {shown}{more}",
    )


def _model_dir(f: PlanFacts) -> str:
    return str(Path(f.config.path).parent) if f.config and f.config.path else f.profile.model.location


@rule(
    "plan.quant.modelslim-unset", "error", "ModelSlim weights are loaded as ModelSlim weights",
    source="v0.9.1:docs/source/user_guide/feature_guide/quantization.md:103 (KeyError FAQ); quantization era traits "
    "(engine/ascendctl_engine/adapters/model.py): detection at "
    "v0.15.0rc1:vllm_ascend/platform.py:178, none at v0.16.0rc1, again from v0.17.0rc1:vllm_ascend/platform.py:184",
    clause="known-failure"
)  # fmt: skip
def modelslim_unset(f: PlanFacts) -> Outcome:
    p = f.profile
    if not f.npu or f.release is None:
        return skipped("ModelSlim weights run on Ascend NPUs only")
    if p.model.quantization != "none":
        return skipped(f"model.quantization is {p.model.quantization}")
    if (given := find(_items(f), "--quantization")) is not None and given.value is not None:
        return skipped("--quantization is passed through extra_args")
    rule_ = quantization_rule(f.release.backend, f.release.vllm, f.release.vllm_ascend)
    if f.config is None:
        if rule_.auto_detect:
            return skipped(f"{rule_.era} detects ModelSlim weights itself")
        return _no_config(f, "the ModelSlim-weights check")
    if not f.config.modelslim:
        return passed("no quant_model_description.json (float weights)")
    where = _model_dir(f)
    if rule_.auto_detect:
        return problem(
            f"model.quantization is none but {where} holds ModelSlim weights (quant_model_description.json): "
            f"{rule_.era} detects them and loads them quantized, while the plan sizes them as float weights",
            "set model.quantization: auto (or the checkpoint's ModelSlim type, e.g. w8a8_dynamic)",
            severity="warn",
            at=("model", "quantization"),
        )
    if rule_.flag == "unavailable":
        return problem(
            f"{where} holds ModelSlim weights (quant_model_description.json) but {f.release.version} cannot load "
            f"them ({rule_.era}: {rule_.source})",
            "use a release that loads ModelSlim weights (`ascendctl matrix quantizations`), or float weights",
            at=("release",),
        )
    return problem(
        f"model.quantization is none but {where} holds ModelSlim weights (quant_model_description.json): "
        f"{rule_.era} does not detect them, so the engine loads them as float weights and fails with "
        "KeyError: '…layers.0.self_attn.q_proj.weight'",
        "set model.quantization: auto (the plan then adds `--quantization ascend`), or the checkpoint's ModelSlim "
        "type, e.g. w8a8_dynamic",
        at=("model", "quantization"),
    )


@rule(
    "plan.quant.description-name", "error", "The ModelSlim description has the name vllm-ascend reads",
    source="v0.23.0:vllm_ascend/quantization/modelslim_config.py:67 (MODELSLIM_CONFIG_FILENAME); older msModelSlim "
    "output: v0.8.4rc2:docs/source/tutorials/multi_npu_quantization.md:65; era topic quant-description",
    clause="engine-start"
)  # fmt: skip
def description_name(f: PlanFacts) -> Outcome:
    chosen = _era(f, "quant-description")
    if chosen is None:
        return skipped("ModelSlim weights run on Ascend NPUs only")
    standard = chosen.traits.get("filename")
    if not standard:
        return skipped(f"{chosen.label} reads the quant description from config.json, not from a file")
    if f.config is None:
        if f.profile.model.quantization in ("none", "auto"):  # plan.quant.modelslim-unset speaks for these
            return skipped("the model directory could not be inspected")
        return _no_config(f, "the ModelSlim description-name check")
    misnamed = f.config.misnamed_quant_descriptions
    if not misnamed:
        return passed("no misnamed ModelSlim description")
    where = _model_dir(f)
    return problem(
        f"{where} has {', '.join(misnamed)} but no {standard}, the only description {f.profile.release} reads "
        f"({chosen.source}): with --quantization ascend the engine stops with 'ModelSlim Quantization Config Not "
        "Found', without it the quantized weights load as float and fail with a KeyError",
        f"rename or copy {misnamed[0]} to {where}/{standard} (older msModelSlim put the quant type in the name)",
    )


def _working_tp(heads: int, kv_heads: int | None, limit: int) -> list[int]:
    return [t for t in range(1, limit + 1) if _heads_split(heads, kv_heads, t) is None]


def _heads_split(heads: int, kv_heads: int | None, tp: int) -> str | None:
    """vLLM's own refusal for `tp` ranks, or None: ModelConfig.verify_with_parallel_config (vllm/config/model.py)
    checks the attention heads; QKVParallelLinear (vllm/model_executor/layers/linear.py) splits the KV heads with
    `divide` (vllm/distributed/utils.py ensure_divisibility), replicating them when there are fewer than ranks."""
    if heads % tp:
        return f"Total number of attention heads ({heads}) must be divisible by tensor parallel size ({tp})."
    if kv_heads is None:
        return None
    if tp >= kv_heads and tp % kv_heads:
        return f"AssertionError: {tp} is not divisible by {kv_heads} (TP {tp} ≥ {kv_heads} KV heads: replicated)"
    if tp < kv_heads and kv_heads % tp:
        return f"AssertionError: {kv_heads} is not divisible by {tp} (the KV heads split over TP {tp})"
    return None


@rule(
    "plan.tp.heads-divisible", "error", "The attention and KV heads split over the tensor-parallel ranks",
    source="vllm vllm/config/model.py ModelConfig.verify_with_parallel_config; "
    "vllm/model_executor/layers/linear.py QKVParallelLinear.__init__ (num_kv_head_replicas)", clause="engine-start"
)  # fmt: skip
def heads_divisible(f: PlanFacts) -> Outcome:
    tp = f.profile.engine.parallel.tensor
    if tp == 1:
        return skipped("tensor parallelism off")
    cfg = _shape_config(f)
    if cfg is None or cfg.num_attention_heads is None:
        return _no_config(f, "the heads ÷ TP check")
    heads = cfg.num_attention_heads
    kv_heads = None if cfg.mla else (cfg.num_key_value_heads or heads)  # MLA: one latent KV cache, no KV split
    refusal = _heads_split(heads, kv_heads, tp)
    if refusal is None:
        kv = "" if kv_heads is None else f", {kv_heads} KV heads"
        return _on_shapes(f, passed(f"{heads} heads{kv} over TP {tp}"))
    limit = max(f.profile.target.devices_per_node, tp)
    sizes = ", ".join(str(t) for t in _working_tp(heads, kv_heads, limit))
    kv_text = " (MLA: the attention heads only)" if kv_heads is None else f" and {kv_heads} KV heads"
    return _on_shapes(
        f,
        problem(
            f"engine.parallel.tensor {tp} does not split {heads} attention heads{kv_text}: vLLM refuses to start "
            f"({refusal})",
            f"set engine.parallel.tensor to one of {sizes} (sizes up to {limit} that split the heads)",
            at=("engine", "parallel", "tensor"),
        ),
    )


@rule(
    "plan.model.max-model-len-unset", "error", "A bounded context for long-context models",
    source="vllm vllm/config/model.py _get_and_verify_max_len; vLLM v0.32.0:vllm/v1/core/kv_cache_utils.py:1019-1040 "
    "(_check_enough_kv_cache_memory: one request of max_model_len); vLLM v0.32.0 "
    "vllm/transformers_utils/config.py:926-928 (hf_overrides update the config first); main:docs/source/faqs.md #12",
    clause="placement",
)  # fmt: skip
def max_model_len_unset(f: PlanFacts) -> Outcome:
    p = f.profile
    if p.model.max_model_len is not None:
        return skipped(f"model.max_model_len {p.model.max_model_len}")
    if f.hardware is not None and f.hardware.limits.square_attention_mask:
        return skipped("plan.hardware.max-model-len asks for a bounded context on this hardware")
    shapes = _shape_config(f)
    if shapes is None:
        return _no_config(f, "the default-context check")
    cfg = with_context_overrides(shapes, p.model.hf_overrides)  # what the engine derives, as the fit does
    length = cfg.derived_max_model_len
    if length is None:
        return skipped("config.json gives no max_position_embeddings")
    if length < LONG_CONTEXT:
        return _on_shapes(f, passed(f"default context {length} tokens"))
    rope = f" × RoPE {cfg.rope_type} factor {cfg.rope_factor:g}" if cfg.rope_factor else ""
    if cfg is not shapes:
        rope += " with model.hf_overrides"
    fix = "set model.max_model_len to the longest prompt + output you serve (e.g. 32768)"
    if f.fit is not None and f.fit.kv_tokens == 0:
        return skipped("the fit leaves no room for any KV cache, whatever the context (plan.memory.kv-cache-room)")
    if f.fit is not None and f.fit.max_model_len == length and f.fit.max_concurrency < 1:
        # the fit sized the KV cache of this plan on this hardware: one request of the default context does not fit
        # (its concurrency, not its token count: a hybrid model's request takes fewer pages than its tokens)
        return _on_shapes(
            f,
            problem(
                f"model.max_model_len is unset: the engine serves the model's full default context, {length:,} "
                f"tokens (max_position_embeddings{rope}), but the fit estimates a KV cache of {f.fit.kv_tokens:,} "
                "tokens here: the engine refuses to start ('To serve at least one request with the model's max seq "
                "len (…), … KV cache is needed, which is larger than the available KV cache memory')",
                f"{fix}; at most {f.fit.kv_tokens:,} tokens fit",
                at=("model", "max_model_len"),
            ),
        )
    return _on_shapes(
        f,
        problem(
            f"model.max_model_len is unset: the engine serves the model's full default context, {length} tokens "
            f"(max_position_embeddings{rope}), and refuses to start when the KV cache cannot hold one request of "
            "that length ('To serve at least one request with the model's max seq len (…), … KV cache is needed, "
            "which is larger than the available KV cache memory')",
            fix,
            severity="warn",
            at=("model", "max_model_len"),
        ),
    )


# hf_overrides keys that change the context vLLM derives: the check cannot judge a profile that sets them.
_CONTEXT_OVERRIDES = CONTEXT_OVERRIDES


@rule(
    "plan.model.max-model-len-above-config", "warn", "A context beyond the model's own is allowed explicitly",
    source="vLLM 0.7.1:vllm/config.py:2471-2499 … 0.13.0:vllm/config/model.py:2163-2189 … "
    "0.33.0:vllm/config/model.py:2657-2683 (_get_and_verify_max_len)",
)  # fmt: skip
def max_model_len_above_config(f: PlanFacts) -> Outcome:
    m = f.profile.model
    if m.max_model_len is None:
        return skipped("model.max_model_len unset: the engine serves the model's own context")
    if m.hf_overrides and any(k in m.hf_overrides for k in _CONTEXT_OVERRIDES):
        return skipped("model.hf_overrides changes the model's context")
    if f.config is None:
        return _no_config(f, "the model-context check")
    derived = f.config.derived_max_model_len
    if derived is None:
        return skipped("config.json gives no max_position_embeddings")
    if m.max_model_len <= max(derived, f.config.model_max_length or 0):
        return passed(f"max_model_len {m.max_model_len} ≤ the model's {derived}")
    if m.allow_long_context or f.env.get("VLLM_ALLOW_LONG_MAX_MODEL_LEN", "").strip().lower() in ("1", "true"):
        return passed(
            f"max_model_len {m.max_model_len} above the model's {derived}, allowed (VLLM_ALLOW_LONG_MAX_MODEL_LEN)"
        )
    return problem(
        f"model.max_model_len {m.max_model_len} is above the model's own context ({derived} tokens from "
        f"{f.config.path}): vLLM refuses to start ('User-specified max_model_len ({m.max_model_len}) is greater "
        "than the derived max_model_len') unless VLLM_ALLOW_LONG_MAX_MODEL_LEN=1",
        f"lower model.max_model_len to {derived}, or set model.allow_long_context: true if the model's positions "
        "reach that far (e.g. RoPE scaling in model.hf_overrides)",
        at=("model", "max_model_len"),
    )


@rule(
    "plan.memory.kv-cache-room", "warn", "The weights leave room for the KV cache (the memory fit's estimate)",
    source="vLLM v0.32.0:vllm/v1/core/kv_cache_utils.py:1009-1017 (available_memory <= 0: 'No available memory for "
    "the cache blocks'); v0.23.0:vllm_ascend/worker/worker.py:590 (available = requested − weights − torch peak − "
    "non-torch); ascendctl.plan.fit (docs/memory-fit.md)",
)  # fmt: skip
# A warning, not a refusal: it is the fit's estimate, not the engine's own check, and upstream runs launches on
# hardware where the estimate leaves no room (v0.23.0rc1:tests/e2e/nightly/multi_node/internal_dp/config/
# DeepSeek-R1-W8A8-longseq.yaml; tests/e2e/models/configs/ERNIE-4.5-21B-A3B-PT.yaml) — a verified launch is never
# refused by an estimate (docs/refusal-policy.md). `ascendctl fit` exits 1 on it.
def kv_cache_room(f: PlanFacts) -> Outcome:
    fit = f.fit
    if f.profile.target.backend == "cpu":
        return skipped("the CPU KV cache is sized explicitly (engine.memory.cpu_kv_cache_gib)")
    if fit is None:
        return skipped("no memory fit for this plan (`ascendctl fit PROFILE` says why)")
    d = fit.per_device[0]
    if fit.kv_tokens > 0:
        return passed(f"{d.kv_cache_gib:.1f} GiB per device for the KV cache ({fit.kv_tokens:,} tokens)")
    spent = d.weights_gib + d.activation_gib + d.comm_buffers_gib + d.runtime_reserve_gib
    # what would leave room: the fit's own re-estimates that give the KV cache any block at all
    sets = [" ".join(f"--set {shlex.quote(one)}" for one in s.sets) for s in fit.suggestions if s.kv_tokens > 0]
    fix = (
        "; or ".join(sets[:3])
        if sets
        else "spread the weights over more devices (engine.parallel.tensor; engine.parallel.expert for MoE), use a "
        "quantized checkpoint, or raise engine.memory.device_utilization"
    )
    return problem(
        f"the weights ({d.weights_gib:.1f} GiB per device) and the profiling pass (activations "
        f"{d.activation_gib:.1f} GiB, communication and runtime {d.comm_buffers_gib + d.runtime_reserve_gib:.1f} GiB) "
        f"need {spent:.1f} GiB of device_utilization's share of the {d.hbm_gib or 0:.1f} GiB device, leaving "
        f"{max(d.kv_cache_gib, 0.0):.2f} GiB for the KV cache by the fit's estimate, less than one block: if so, the "
        "engine refuses to start ('No available memory for the cache blocks') whatever model.max_model_len is",
        f"{fix} (`ascendctl fit PROFILE` shows the per-device table)",
        at=("engine", "parallel", "tensor"),
    )


def _kv_role(items: tuple[ArgItem, ...]) -> str | None:
    """The node role a `--kv-transfer-config` in extra_args gives (`kv_consumer`, ...), "" when it cannot be
    read, None without one (ascendctl plans no PD roles itself)."""
    item = find(items, "--kv-transfer-config")
    raw = item.value if item is not None else None
    if raw is None:
        return None
    try:
        data = json.loads(raw)
    except ValueError:
        return ""
    role = data.get("kv_role") if isinstance(data, dict) else None
    return role if isinstance(role, str) else ""


def _pd_decode_only(f: PlanFacts, feature: str, what: str, switch: bool = False) -> Outcome:
    chosen = _era(f, "pd-decode-only")
    if chosen is None:
        return skipped("an Ascend-only setting")
    keys = chosen.traits.get("keys", {})
    if feature not in keys:
        return skipped(f"{chosen.label} has no PD-decode-only check for {what}")
    paths, error, source = keys[feature]
    cfg = f.profile.engine.additional_config
    given = [path for path in paths if dotted_get(cfg, path) not in (None, False, 0)]
    said = [f"engine.additional_config.{path}" for path in given] + (["engine.ascend." + what] if switch else [])
    if not said:
        return skipped(f"{what} not set")
    role = f.kv_role if f.kv_role is not None else _kv_role(_items(f))
    if role == "kv_consumer":
        return passed(f"{what} on a PD decode node (--kv-transfer-config kv_role kv_consumer)")
    if role == "kv_producer" and feature == "recompute":  # accepted (v0.18.0) or ignored with a warning (v0.23.0)
        return skipped(f"{what} on a PD prefill node: the release accepts or ignores it there")
    if role == "":
        return undecided(f"{what}: the --kv-transfer-config in extra_args does not say kv_role; it needs kv_consumer")
    node = "a PD-mixed node (no --kv-transfer-config)" if role is None else f"a {role} node"
    return problem(
        f"{' and '.join(said)}: {f.profile.release} accepts {what} only on a PD-disaggregated decode node "
        f"(kv_role kv_consumer), and this plan is {node}: the engine refuses to start ({error}) [{source}]",
        f"remove {' and '.join(said)}, or move it to `disaggregation.decode.engine` (decode instances are planned "
        "with kv_role kv_consumer)",
    )


@rule(
    "plan.ascend.kv-nz-pd-decode", "error", "enable_kv_nz only on an MLA PD decode node",
    source="v0.23.0:vllm_ascend/ascend_config.py:274,277 (first v0.13.0rc2:…:147,151); era topic pd-decode-only",
    clause="engine-start"
)  # fmt: skip
def kv_nz_pd_decode(f: PlanFacts) -> Outcome:
    outcome = _pd_decode_only(f, "kv_nz", "enable_kv_nz")
    if outcome.kind == "problem" and f.arch != "mla":
        return problem(
            f"engine.additional_config.enable_kv_nz: {f.profile.release} supports the NZ KV cache for MLA models "
            f"only and this model is {f.arch}: the engine refuses to start (RuntimeError: enable_kv_nz is only "
            "supported for mla currently.)",
            "remove engine.additional_config.enable_kv_nz",
        )
    return outcome


@rule(
    "plan.ascend.recompute-scheduler-pd-decode", "error", "The recompute scheduler only on a PD-disaggregated node",
    source="v0.18.0:vllm_ascend/platform.py:466 … v0.23.0:vllm_ascend/platform.py:703, "
    "v0.25.1rc1:vllm_ascend/platform.py:694; era topic pd-decode-only", clause="engine-start"
)  # fmt: skip
def recompute_scheduler_pd_decode(f: PlanFacts) -> Outcome:
    switch = f.profile.engine.ascend.recompute_scheduler is True
    return _pd_decode_only(f, "recompute", "recompute_scheduler", switch=switch)


@rule(
    "plan.ascend.oproj-tp-pd-decode", "error", "o_proj fine-grained TP only on a PD decode node",
    source="v0.23.0:vllm_ascend/ascend_config.py:556,559 (first v0.10.2rc1:vllm_ascend/ascend_config.py:80); "
    "era topic pd-decode-only", clause="engine-start"
)  # fmt: skip
def oproj_tp_pd_decode(f: PlanFacts) -> Outcome:
    return _pd_decode_only(f, "oproj", "oproj_tensor_parallel_size")


@rule(
    "plan.moe.hccl-buffsize", "warn", "HCCL_BUFFSIZE holds the MoE dispatch of the planned batch",
    source="CANN MoeDistributeDispatch buffer rule as vllm-project/vllm-ascend#3073 encodes it; "
    "v0.23.0:vllm_ascend/ascend_forward_context.py:202-217 (tokens per rank); vllm-project/vllm-ascend#2674, #6130",
)  # fmt: skip
def hccl_buffsize(f: PlanFacts) -> Outcome:
    if not f.npu or not f.profile.engine.parallel.expert:
        return skipped("no expert parallelism on an NPU: no MC2 dispatch")
    if f.fit is None:
        return _no_config(f, "the MoE dispatch buffer estimate")
    need, have = f.fit.mc2_need_mb, f.fit.hccl_buffsize_mb
    if need is None:
        return skipped("not a MoE model with an expert-parallel group: no MC2 dispatch")
    tokens = f.fit.mc2_tokens_per_rank
    if have < need:
        return problem(
            f"HCCL_BUFFSIZE {have} MB is below the ~{need} MB MoE dispatch needs for {tokens} tokens per rank "
            "(the engine fails with `HCCL_BUFFSIZE is too SMALL` or `The DDR address of the MTE instruction is "
            "out of range`)",
            f"set engine.memory.hccl_buffer_mb: {need} or more, or lower engine.scheduler.max_num_seqs / the "
            "capture sizes",
        )
    return passed(f"HCCL_BUFFSIZE {have} MB ≥ ~{need} MB for {tokens} tokens per rank")


# --------------------------------------------------------------------------------------------------
# failure modes of issue 32: W8A8 with float16 activations, dynamic EPLB on an unregistered model type, remote-code
# files config.json names but the model directory lacks

W8A8_FAMILY = ("w8a8", "w8a8_dynamic", "w8a8_mix")


@rule(
    "plan.quant.w8a8-float16", "error", "W8A8 weights run with bfloat16 activations where the hardware has them",
    source="vllm-project/vllm-ascend#12907 (aclnnQuantMatmulWeightNz: Tensor scale not implemented for DT_FLOAT16); "
    "vllm-project/vllm-ascend#624", clause="known-failure"
)  # fmt: skip
def w8a8_float16(f: PlanFacts) -> Outcome:
    p = f.profile
    if not f.npu or p.model.quantization not in W8A8_FAMILY:
        return skipped("not W8A8 weights on an NPU")
    hw = f.hardware
    if hw is None or "bfloat16" not in hw.limits.dtypes:
        return skipped("the hardware runs float16 only: its W8A8 path is float16")
    dtype: str
    if p.model.dtype != "auto":
        dtype, said = p.model.dtype, f"model.dtype {p.model.dtype}"
    elif f.config is not None and f.config.torch_dtype:
        dtype, said = f.config.torch_dtype, f"the checkpoint's torch_dtype {f.config.torch_dtype} (model.dtype auto)"
    else:
        return _no_config(f, "the W8A8 activation-dtype check")
    if dtype not in ("float16", "half", "fp16"):
        return passed(f"{p.model.quantization} with {dtype} activations")
    return problem(
        f"{p.model.quantization} weights with float16 activations ({said}) on {hw.name}: the quantized matmul kernels "
        "take bfloat16 scales and the engine fails in its profiling run (AclNN_Parameter_Error(EZ1001): Tensor scale "
        "not implemented for DT_FLOAT16)",
        "set model.dtype: bfloat16",
        at=("model", "dtype"),
    )


@rule(
    "plan.eplb.model-registered", "error", "Dynamic EPLB supports the model's MoE architecture in this release",
    source="era topic eplb-models: v0.11.0:vllm_ascend/eplb/utils.py:69-77 … "
    "v0.14.0rc1:vllm_ascend/eplb/utils.py:66-74 (model_register); vllm-project/vllm-ascend#5798", clause="engine-start"
)  # fmt: skip
def eplb_model_registered(f: PlanFacts) -> Outcome:
    if f.profile.engine.eplb.mode != "dynamic":
        return skipped("dynamic EPLB off")
    chosen = _era(f, "eplb-models")
    types = chosen.traits.get("model_types") if chosen is not None else None
    if chosen is None or not types:
        return skipped("the release's EPLB keeps no model-type list")
    if f.config is None:
        return _no_config(f, "the EPLB model-type check")
    text = chosen.traits.get("config") == "hf_text_config"
    model_type = f.config.text_model_type if text else f.config.model_type
    if model_type in types:
        return passed(f"model_type {model_type} is registered by {chosen.label}")
    return problem(
        f"dynamic EPLB on model_type {model_type or 'unknown'}: {f.profile.release} registers only "
        f"{', '.join(types)} and the engine stops at load (NotImplementedError: EPLB is not supported.) "
        f"[{chosen.source}]",
        "turn dynamic EPLB off (engine.eplb.mode: off), or use a release whose EPLB has no model-type list "
        "(v0.15.0rc1 and later)",
        at=("engine", "eplb", "mode"),
    )


@rule(
    "plan.model.remote-code-files", "error", "The remote-code files config.json's auto_map names are in the model",
    source="v0.9.1:docs/source/user_guide/feature_guide/quantization.md:108 (FAQ 2: Could not locate the "
    "configuration_deepseek.py); transformers dynamic modules (auto_map); vllm-project/vllm#13283",
    clause="engine-start"
)  # fmt: skip
def remote_code_files_present(f: PlanFacts) -> Outcome:
    if not f.profile.model.trust_remote_code:
        return skipped("model.trust_remote_code is false: auto_map code is not loaded")
    if f.config is None:
        return _no_config(f, "the remote-code files check")
    if not f.config.remote_code_files:
        return passed("config.json names no remote-code files")
    missing = f.config.missing_remote_code
    if not missing:
        return passed(f"{', '.join(f.config.remote_code_files)} present")
    where = _model_dir(f)
    return problem(
        f"{where}/config.json's auto_map names {', '.join(missing)}, which {where} lacks (quantization tools often "
        "copy config.json without them): with trust_remote_code the engine stops with 'does not appear to have a "
        f"file named {missing[0]}'",
        f"copy {', '.join(missing)} from the original model into {where}",
    )
