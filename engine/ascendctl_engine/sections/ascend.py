"""Profile section `engine.ascend`: vllm-ascend feature switches as typed fields, and host-specific tuning.

Each switch is tri-state: `true` / `false` say on / off, unset leaves the release's own default (nothing is
emitted). The profile states the intent only; how a release spells it (an environment variable, an
`--additional-config` key, a nested key, or not at all) is the planner's business — the era registry in
`ascendctl_engine.adapters.ascend_switches` — so the same profile plans for old and new releases alike
(`ascendctl matrix --explain MODEL --feature SWITCH`, docs/intent-to-flags.md).
"""

from typing import Annotated

from pydantic import Field, field_validator

from ascendctl_engine.sections.base import StrictModel
from ascendctl_engine.sections.fields import NonEmptyLine

_RELEASE = " Spelled per release by the planner; unset keeps the release's default."


def _switch(what: str) -> str:
    return what + _RELEASE


Switch = bool | None


class AscendSpec(StrictModel):
    flashcomm1: Annotated[
        Switch,
        Field(
            description=_switch(
                "FlashComm1: under tensor parallelism, replace each layer's all-reduce by a reduce-scatter and an "
                "all-gather (faster prefill at high concurrency; vllm-ascend advises against it for long, "
                "low-concurrency requests)."
            )
        ),
    ] = None
    cpu_binding: Annotated[
        Switch,
        Field(description=_switch("Bind each NPU worker's threads to CPU cores near its device (ARM servers).")),
    ] = None
    multistream_overlap_shared_expert: Annotated[
        Switch,
        Field(
            description=_switch(
                "Run the shared experts of MoE layers on a second stream, overlapped with the routed experts."
            )
        ),
    ] = None
    mlapo: Annotated[
        Switch,
        Field(
            description=_switch(
                "MLAPO: the fused MLA preprocessing kernel of DeepSeek-class W8A8 models (faster, needs more NPU "
                "memory)."
            )
        ),
    ] = None
    fused_mc2: Annotated[
        Switch,
        Field(
            description=_switch(
                "Fused MC2: let MoE dispatch/combine use the fused communication + compute kernels (mode 1; "
                "the decode-node mode 2 some releases offer stays in engine.additional_config)."
            )
        ),
    ] = None
    balance_scheduling: Annotated[
        Switch,
        Field(
            description=_switch(
                "Balance scheduling: even out the work scheduled on the data-parallel ranks (better throughput and "
                "TPOT, sometimes worse TTFT; not for prefill/decode-disaggregated deployments)."
            )
        ),
    ] = None
    weight_prefetch: Annotated[
        Switch,
        Field(
            description=_switch(
                "Weight prefetch: load the next weights into cache while the current layer computes (later "
                "releases dropped the feature; asking for it there fails the plan)."
            )
        ),
    ] = None
    recompute_scheduler: Annotated[
        Switch,
        Field(
            description=_switch(
                "vllm-ascend's recompute scheduler (documented for the decode nodes of prefill/decode-disaggregated "
                "deployments)."
            )
        ),
    ] = None
    shared_expert_dp: Annotated[
        Switch,
        Field(
            description=_switch(
                "Shared-expert data parallelism: replicate the shared experts over the data-parallel ranks (faster, "
                "more memory; needs expert parallelism with TP > 1)."
            )
        ),
    ] = None
    dsa_cp: Annotated[
        Switch,
        Field(
            description=_switch(
                "DSA context parallelism for DeepSeek-V3.2-class sparse-attention models (needs flashcomm1)."
            )
        ),
    ] = None
    reduce_sample: Annotated[
        Switch,
        Field(
            description=_switch(
                "Reduce sampling: keep logits split over the tensor-parallel ranks and gather only the top-k "
                "candidates."
            )
        ),
    ] = None
    mc2_hierarchy_comm: Annotated[
        Switch,
        Field(description=_switch("Hierarchical MC2: MoE dispatch/combine across nodes over RoCE.")),
    ] = None
    multistream_dsa_preprocess: Annotated[
        Switch,
        Field(description=_switch("Overlap the DSA (sparse attention) preprocessing on a second stream.")),
    ] = None
    dp_allreduce_on_npu: Annotated[
        Switch,
        Field(description=_switch("Run the data-parallel metadata all-reduce on the NPU instead of the CPU.")),
    ] = None
    prefetch_mlp: Annotated[
        Switch,
        Field(description=_switch("Prefetch MLP weights (a small-concurrency optimisation of some releases).")),
    ] = None
    topk_optimize: Annotated[
        Switch,
        Field(description=_switch("The early releases' optimised top-k/top-p sampling path.")),
    ] = None
    fuse_norm_quant: Annotated[
        Switch,
        Field(
            description=_switch(
                "Graph fusion pass: RMSNorm fused with the quantization after it "
                "(`ascend_compilation_config.fuse_norm_quant`; the release's default is on; not on 300I Duo)."
            )
        ),
    ] = None
    fuse_qknorm_rope: Annotated[
        Switch,
        Field(
            description=_switch(
                "Graph fusion pass: the Q/K norm fused with RoPE (`ascend_compilation_config.fuse_qknorm_rope`; "
                "vllm-ascend's docs: turn it off where Triton is not installed)."
            )
        ),
    ] = None
    fuse_allreduce_rms: Annotated[
        Switch,
        Field(
            description=_switch(
                "Graph fusion pass: matmul + all-reduce fused with the following add-RMSNorm "
                "(`ascend_compilation_config.fuse_allreduce_rms`; off by default: it conflicts with sequence "
                "parallelism)."
            )
        ),
    ] = None
    fuse_muls_add: Annotated[
        Switch,
        Field(
            description=_switch(
                "Graph fusion pass: a multiply fused with the add after it (`ascend_compilation_config.fuse_muls_add`;"
                " the release's default is on; not on 300I Duo)."
            )
        ),
    ] = None
    sparse_sfa_c8: Annotated[
        Switch,
        Field(
            description=_switch(
                "int8 (C8) KV in sparse flash attention, for C8 weights (`enable_sparse_sfa_c8`; v0.23.0rc1 … "
                "v0.23.0.post1 only)."
            )
        ),
    ] = None
    sparse_li_c8: Annotated[
        Switch,
        Field(
            description=_switch(
                "int8 (C8) lightning indexer of sparse attention (`enable_sparse_li_c8`; v0.23.0rc1 … v0.23.0.post1 "
                "only)."
            )
        ),
    ] = None
    npugraph_ex: Annotated[
        Switch,
        Field(
            description=_switch(
                "Compile the graph with the npugraph_ex backend (`enable_npugraph_ex`, then "
                "`ascend_compilation_config.enable_npugraph_ex`; the release's default is on from v0.16.0rc1; "
                "not on 300I Duo)."
            )
        ),
    ] = None
    static_kernel: Annotated[
        Switch,
        Field(
            description=_switch(
                "Static kernels for static or rarely changing shapes (`ascend_compilation_config."
                "enable_static_kernel`; needs npugraph_ex; off by default)."
            )
        ),
    ] = None
    jemalloc: Annotated[
        NonEmptyLine | None,
        Field(
            description=(
                "Absolute path of the jemalloc library on the host (e.g. /usr/lib/aarch64-linux-gnu/libjemalloc.so.2), "
                "preloaded into the engine (`LD_PRELOAD`) as the tutorials do; `ascendctl check PROFILE` verifies it "
                "exists. Unset: no preload."
            )
        ),
    ] = None

    @field_validator("jemalloc")
    @classmethod
    def _one_absolute_library(cls, value: str | None) -> str | None:
        # LD_PRELOAD splits on `:` and blanks, and a relative entry is searched for: one absolute path, or the
        # preload could name a different (or several) libraries than the operator wrote.
        if value is None:
            return value
        if not value.startswith("/"):
            raise ValueError(f"give the library's absolute path, got {value!r}")
        if any(ch in value for ch in ": \t"):
            raise ValueError("one library path: no ':' or blanks (list other preloads in runtime.env.LD_PRELOAD)")
        return value
