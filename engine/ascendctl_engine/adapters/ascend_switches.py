"""vllm-ascend feature switches (profile `engine.ascend`): one topic per switch, one era per spelling.

A switch is on/off intent (`True` / `False`; `None` leaves the release's own default and emits nothing). Each
release spells it its own way: an environment variable (`VLLM_ASCEND_ENABLE_FLASHCOMM1=1`), an
`--additional-config` key (`{"enable_flashcomm1": true}`), a nested key (`{"scheduler_config":
{"enable_balance_scheduling": true}}`), or not at all. The eras below were read off the per-tag key tables
(`engine/ascendctl_engine/data/ascend_keys/`, via `ascend_keys.tags_reading` / `tags_defining_env`): where a tag
reads several
spellings, the era uses the one its code prefers — the key over the variable it falls back to, a key that is not
marked deprecated over one that is. `tests/test_ascend_switches.py` re-derives every era from the tables, so a
new table that moves a spelling fails the tests until the era is updated.

Asking for a switch the target release does not read fails the plan, naming the releases that read it. Where the
tutorials of an era spell a switch differently from what its code prefers, the code wins and the plan warns.

Nothing here imports the key tables: a plan reads its one tag's table through the builder's acceptance check.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Literal

from ascendctl_engine.adapters.builder import CommandBuilder
from ascendctl_engine.adapters.eras import Apply, Era, era, era_for_release, eras_of
from ascendctl_engine.adapters.intent import EngineIntent
from ascendctl_engine.records import record
from ascendctl_engine.vocab import ModelArch

NPU = {"npu"}
TOPIC_PREFIX = "ascend."
FIELD_PREFIX = "engine.ascend."
KEYS = "engine/ascendctl_engine/data/ascend_keys"
Status = Literal["read", "absent", "not-read", "removed"]

# Where the code of the key-reading eras says the variable is only a fallback it will drop (the same getter in
# every tag that has the key): the reason the plan spells the key although most tutorials export the variable.
_FALLBACK = "v0.23.0:vllm_ascend/ascend_config.py:361, v0.25.1rc1:vllm_ascend/ascend_config.py:290"
_SCHEDULER_FALLBACK = "v0.25.1rc1:vllm_ascend/ascend_config.py:909-921"


@record
class Spelling:
    """How one era spells a switch: a variable (`1`/`0`) or an `--additional-config` key path (JSON value)."""

    kind: Literal["env", "key"]
    name: str  # variable name, or dotted key path from the top of `--additional-config`
    integer: bool = False  # the code casts the key with int(): 1/0 instead of true/false

    def value(self, on: bool) -> str | bool | int:
        if self.kind == "env":
            return "1" if on else "0"
        return int(on) if self.integer else on

    def shown(self, on: bool = True) -> str:
        """`VLLM_ASCEND_X=1` or `--additional-config {"a": {"b": true}}`, as a plan would carry it."""
        if self.kind == "env":
            return f"{self.name}={self.value(on)}"
        nested: Any = self.value(on)
        for part in reversed(self.name.split(".")):
            nested = {part: nested}
        return f"--additional-config {json.dumps(nested)}"


def env(name: str) -> Spelling:
    return Spelling("env", name)


def key(path: str, *, integer: bool = False) -> Spelling:
    return Spelling("key", path, integer)


@record
class SwitchEra:
    spec: str  # vllm-ascend range, as the era registry writes it
    first: str  # the oldest and newest tag with a key table in the range (for an open range: when it was written)
    last: str
    spelling: Spelling | None  # None: no tag in the range reads the switch
    source: str = ""  # tag:path:line where the first and the last tag of the range read the spelling
    note: str = ""  # how the tutorials of these tags spell it instead (`plan --why` says it with the spelling)

    @property
    def releases(self) -> str:
        """`v0.11.0rc1 … v0.19.1rc1`, or `v0.20.2rc1 and later` for a range without an upper bound."""
        if "<" not in self.spec:
            return f"{self.first} and later"
        return self.first if self.first == self.last else f"{self.first} … {self.last}"


def _decode_instance(intent: EngineIntent, what: str) -> str | None:
    """None on a decode instance of a prefill/decode deployment; else why `what` is out of place here."""
    kv = intent.kv_transfer
    if kv is not None and kv.role == "decode":
        return None
    where = "this plan has no `disaggregation`" if kv is None else f"this is a {kv.role} instance"
    return (
        f"vllm-ascend documents {what} for the decode instances of a prefill/decode-disaggregated deployment only "
        f"(additional_config.md); {where}"
    )


@record
class Switch:
    field: str  # the `engine.ascend` field and `AscendIntent` attribute
    title: str  # what it switches, for messages
    eras: tuple[SwitchEra, ...]
    advice: str = ""  # a caveat of the switch itself, whatever the release (warned when it is turned on)
    # What else the intent needs for the switch to take effect, in every release that has it (None: fine)
    needs: Callable[[EngineIntent], str | None] | None = None
    # The model architectures whose layers read the switch (empty: any model), and where they read it: on another
    # model it does nothing (the plan warns; `tune --suggest` does not offer it)
    models: tuple[ModelArch, ...] = ()
    models_source: str = ""

    def off_model(self, arch: str) -> str | None:
        """None when the switch applies to a model of `arch`; else why it does nothing there."""
        if not self.models or arch in self.models:
            return None
        archs = " or ".join(self.models)
        return f"{self.title} is read by {archs} model layers only ({self.models_source}); this model is {arch}"

    @property
    def topic(self) -> str:
        return f"{TOPIC_PREFIX}{self.field}"

    @property
    def path(self) -> str:
        return f"{FIELD_PREFIX}{self.field}"

    def spellings(self) -> tuple[Spelling, ...]:
        return tuple(dict.fromkeys(e.spelling for e in self.eras if e.spelling is not None))

    def status(self, index: int) -> Status:
        """What an era without a spelling means: before the first reader, between readers, or after the last."""
        if self.eras[index].spelling is not None:
            return "read"
        before = any(e.spelling for e in self.eras[:index])
        after = any(e.spelling for e in self.eras[index + 1 :])
        return "not-read" if before and after else ("removed" if before else "absent")

    def readers(self) -> str:
        """`v0.9.1rc2 … v0.9.1, v0.10.2rc1 and later`: the tags that read the switch, run by run (an era without an
        upper bound goes on past the newest table, so it is not closed with that tag)."""
        runs: list[list[str]] = []
        for e in self.eras:
            last = e.last if "<" in e.spec else ""
            if e.spelling is None:
                runs.append([])
            elif runs and runs[-1]:
                runs[-1][1] = last
            else:
                runs.append([e.first, last])
        return ", ".join(
            f"{r[0]} and later" if not r[1] else (r[0] if r[0] == r[1] else f"{r[0]} … {r[1]}") for r in runs if r
        )

    def first_reader(self) -> SwitchEra:
        return next(e for e in self.eras if e.spelling is not None)


def _era(spec: str, first: str, last: str, spelling: Spelling | None, source: str = "", note: str = "") -> SwitchEra:
    return SwitchEra(spec, first, last, spelling, source, note)


def _env_note(var: str, example: str, keypath: str) -> str:
    return (
        f"planned as `--additional-config` `{keypath}`, which this release's code reads first; the tutorials' "
        f"`{var}=1` (e.g. {example}) is only its fallback, marked for removal ({_FALLBACK})"
    )


def _compiles(intent: EngineIntent) -> str | None:
    """The graph fusion passes are the compiler's (the platform's pass manager, v0.23.0:vllm_ascend/platform.py:173;
    v0.23.0:vllm_ascend/compilation/graph_fusion_pass_manager.py:49-72): an eager engine compiles nothing."""
    if intent.engine.graph.mode != "eager":
        return None
    return (
        "a graph fusion pass runs when vLLM compiles the model (v0.23.0:vllm_ascend/compilation/"
        "graph_fusion_pass_manager.py:49-72); engine.graph.mode eager compiles nothing"
    )


def _compiles_graph(intent: EngineIntent) -> str | None:
    """npugraph_ex and its static kernels compile the FX graph Dynamo captures (v0.25.1rc1:vllm_ascend/
    ascend_config.py:514-522): an eager engine captures none."""
    if intent.engine.graph.mode != "eager":
        return None
    return (
        "npugraph_ex compiles the graph Dynamo captures (v0.25.1rc1:vllm_ascend/ascend_config.py:514-522); "
        "engine.graph.mode eager captures none"
    )


_V0251_SCHEDULER = (
    "planned as `--additional-config` `scheduler_config.{old}`: v0.25.1rc1 deprecates the top-level `{old}`{also}, "
    "which its tutorials still use (e.g. {example}; {src})"
)

# ------------------------------------------------------------------------------------------------ the switches
# Field order = the profile's field order. The ranges partition the whole version line (every release row has
# exactly one era per switch); `first`/`last` are the tags with a key table at the ends of each range.
SWITCHES: tuple[Switch, ...] = (
    Switch(
        "flashcomm1",
        "FlashComm1",
        (
            _era("<0.9.1rc2", "v0.7.1rc1", "v0.9.1rc1", None),
            _era(
                ">=0.9.1rc2,<0.9.2rc1",
                "v0.9.1rc2",
                "v0.9.1",
                env("VLLM_ASCEND_ENABLE_FLASHCOMM"),
                "v0.9.1rc2:vllm_ascend/envs.py:158 … v0.9.1:vllm_ascend/envs.py:158",
            ),
            _era(">=0.9.2rc1,<0.10.2rc1", "v0.9.2rc1", "v0.10.1rc1", None),
            _era(
                ">=0.10.2rc1,<0.11.0rc1",
                "v0.10.2rc1",
                "v0.11.0rc0",
                env("VLLM_ASCEND_ENABLE_FLASHCOMM"),
                "v0.10.2rc1:vllm_ascend/envs.py:136 … v0.11.0rc0:vllm_ascend/envs.py:136",
            ),
            _era(
                ">=0.11.0rc1,<0.20.2rc1",
                "v0.11.0rc1",
                "v0.19.1rc1",
                env("VLLM_ASCEND_ENABLE_FLASHCOMM1"),
                "v0.11.0rc1:vllm_ascend/envs.py:136 … v0.19.1rc1:vllm_ascend/envs.py:74",
            ),
            _era(
                ">=0.20.2rc1",
                "v0.20.2rc1",
                "v0.25.1rc1",
                key("enable_flashcomm1"),
                "v0.20.2rc1:vllm_ascend/ascend_config.py:85 … v0.25.1rc1:vllm_ascend/ascend_config.py:82",
                _env_note(
                    "VLLM_ASCEND_ENABLE_FLASHCOMM1",
                    "v0.25.1rc1:docs/source/tutorials/models/DeepSeek-V3.2.md:132",
                    "enable_flashcomm1",
                ),
            ),
        ),
    ),
    Switch(
        "cpu_binding",
        "CPU binding",
        (
            _era("<0.9.1rc2", "v0.7.1rc1", "v0.9.1rc1", None),
            _era(
                ">=0.9.1rc2,<0.9.2rc1",
                "v0.9.1rc2",
                "v0.9.1",
                key("enable_cpu_binding"),
                "v0.9.1rc2:vllm_ascend/ascend_config.py:66 … v0.9.1:vllm_ascend/ascend_config.py:63",
            ),
            _era(">=0.9.2rc1,<0.11.0rc1", "v0.9.2rc1", "v0.11.0rc0", None),
            _era(
                ">=0.11.0rc1",
                "v0.11.0rc1",
                "v0.25.1rc1",
                key("enable_cpu_binding"),
                "v0.11.0rc1:vllm_ascend/ascend_config.py:104 … v0.25.1rc1:vllm_ascend/ascend_config.py:147",
            ),
        ),
    ),
    Switch(
        "multistream_overlap_shared_expert",
        "shared-expert multistream overlap",
        (
            _era("<0.11.0rc0", "v0.7.1rc1", "v0.10.2rc1", None),
            _era(
                ">=0.11.0rc0",
                "v0.11.0rc0",
                "v0.25.1rc1",
                key("multistream_overlap_shared_expert"),
                "v0.11.0rc0:vllm_ascend/ascend_config.py:66 … v0.25.1rc1:vllm_ascend/ascend_config.py:126",
            ),
        ),
        models=("moe", "mla"),
        models_source="v0.23.0:vllm_ascend/ops/fused_moe/fused_moe.py:396-397, the fused-MoE layer with shared experts",
    ),
    Switch(
        "mlapo",
        "MLAPO (fused MLA preprocessing)",
        (
            _era("<0.11.0rc0", "v0.7.1rc1", "v0.10.2rc1", None),
            _era(
                ">=0.11.0rc0,<0.20.2rc1",
                "v0.11.0rc0",
                "v0.19.1rc1",
                env("VLLM_ASCEND_ENABLE_MLAPO"),
                "v0.11.0rc0:vllm_ascend/envs.py:170 … v0.19.1rc1:vllm_ascend/envs.py:86",
            ),
            _era(
                ">=0.20.2rc1",
                "v0.20.2rc1",
                "v0.25.1rc1",
                key("enable_mlapo"),
                "v0.20.2rc1:vllm_ascend/ascend_config.py:160 … v0.25.1rc1:vllm_ascend/ascend_config.py:167",
                _env_note(
                    "VLLM_ASCEND_ENABLE_MLAPO",
                    "v0.25.1rc1:docs/source/tutorials/models/DeepSeek-V3.2.md:130",
                    "enable_mlapo",
                ),
            ),
        ),
        models=("mla",),
        models_source="v0.23.0:vllm_ascend/attention/mla_v1.py:758, the MLA attention backend",
    ),
    Switch(
        "fused_mc2",
        "fused MC2 (MoE dispatch/combine)",
        (
            _era("<0.13.0rc1", "v0.7.1rc1", "v0.12.0rc1", None),
            _era(
                ">=0.13.0rc1,<0.20.2rc1",
                "v0.13.0rc1",
                "v0.19.1rc1",
                env("VLLM_ASCEND_ENABLE_FUSED_MC2"),
                "v0.13.0rc1:vllm_ascend/envs.py:135 … v0.19.1rc1:vllm_ascend/envs.py:103",
            ),
            _era(
                ">=0.20.2rc1",
                "v0.20.2rc1",
                "v0.25.1rc1",
                key("enable_fused_mc2", integer=True),
                "v0.20.2rc1:vllm_ascend/ascend_config.py:154 … v0.25.1rc1:vllm_ascend/ascend_config.py:154",
                _env_note(
                    "VLLM_ASCEND_ENABLE_FUSED_MC2",
                    "v0.25.1rc1:docs/source/tutorials/features/dynamic_chunked_pipeline_parallel.md:79",
                    "enable_fused_mc2",
                ),
            ),
        ),
        models=("moe", "mla"),
        models_source="v0.23.0:vllm_ascend/ascend_forward_context.py:260-269, the MoE dispatch/combine choice",
    ),
    Switch(
        "balance_scheduling",
        "balance scheduling",
        (
            _era("<0.13.0rc1", "v0.7.1rc1", "v0.12.0rc1", None),
            _era(
                ">=0.13.0rc1,<0.20.2rc1",
                "v0.13.0rc1",
                "v0.19.1rc1",
                env("VLLM_ASCEND_BALANCE_SCHEDULING"),
                "v0.13.0rc1:vllm_ascend/envs.py:138 … v0.19.1rc1:vllm_ascend/envs.py:107",
            ),
            _era(
                ">=0.20.2rc1,<0.25.1rc1",
                "v0.20.2rc1",
                "v0.24.0rc1",
                key("enable_balance_scheduling"),
                "v0.20.2rc1:vllm_ascend/ascend_config.py:79 … v0.24.0rc1:vllm_ascend/ascend_config.py:77",
                _env_note(
                    "VLLM_ASCEND_BALANCE_SCHEDULING",
                    "v0.23.0:docs/source/tutorials/models/DeepSeek-R1.md:156",
                    "enable_balance_scheduling",
                ),
            ),
            _era(
                ">=0.25.1rc1",
                "v0.25.1rc1",
                "v0.25.1rc1",
                key("scheduler_config.enable_balance_scheduling"),
                "v0.25.1rc1:vllm_ascend/ascend_config.py:871",
                _V0251_SCHEDULER.format(
                    old="enable_balance_scheduling",
                    also=" and the variable `VLLM_ASCEND_BALANCE_SCHEDULING`",
                    example="v0.25.1rc1:docs/source/tutorials/models/DeepSeek-R1.md:143",
                    src=_SCHEDULER_FALLBACK,
                ),
            ),
        ),
    ),
    Switch(
        "weight_prefetch",
        "weight prefetch",
        (
            _era("<0.11.0rc1", "v0.7.1rc1", "v0.11.0rc0", None),
            _era(
                ">=0.11.0rc1,<0.24.0rc1",
                "v0.11.0rc1",
                "v0.23.0.post1",
                key("weight_prefetch_config.enabled"),
                "v0.11.0rc1:vllm_ascend/ascend_config.py:244 … "
                "v0.23.0.post1:PyPI:vllm_ascend-0.23.0.post1.tar.gz:vllm_ascend/ascend_config.py:719",
                "some tutorials of this era write `weight_prefetch_config.enable` (e.g. "
                "v0.23.0:docs/source/tutorials/features/suffix_speculative_decoding.md:99), which the code never "
                "reads: the plan spells `enabled`",
            ),
            _era(
                ">=0.24.0rc1",
                "v0.24.0rc1",
                "v0.25.1rc1",
                None,
                note="v0.24.0rc1 removed the feature (vllm-ascend #11949), yet tutorials still pass "
                "`weight_prefetch_config` (v0.25.1rc1:docs/source/tutorials/models/Qwen3-Dense.md:558), which the "
                "code ignores",
            ),
        ),
    ),
    Switch(
        "recompute_scheduler",
        "recompute scheduler",
        (
            _era("<0.11.0rc1", "v0.7.1rc1", "v0.11.0rc0", None),
            _era(
                ">=0.11.0rc1,<0.25.1rc1",
                "v0.11.0rc1",
                "v0.24.0rc1",
                key("recompute_scheduler_enable"),
                "v0.11.0rc1:vllm_ascend/ascend_config.py:74 … v0.24.0rc1:vllm_ascend/ascend_config.py:129",
            ),
            _era(
                ">=0.25.1rc1",
                "v0.25.1rc1",
                "v0.25.1rc1",
                key("scheduler_config.recompute_scheduler_enable"),
                "v0.25.1rc1:vllm_ascend/ascend_config.py:878",
                _V0251_SCHEDULER.format(
                    old="recompute_scheduler_enable",
                    also="",
                    example="v0.25.1rc1:docs/source/tutorials/features/pd_disaggregation_mooncake_multi_node.md:395",
                    src=_SCHEDULER_FALLBACK,
                ),
            ),
        ),
        needs=lambda intent: _decode_instance(intent, "the recompute scheduler"),
    ),
    Switch(
        "shared_expert_dp",
        "shared-expert data parallelism",
        (
            _era("<0.10.1rc1", "v0.7.1rc1", "v0.10.0rc1", None),
            _era(
                ">=0.10.1rc1",
                "v0.10.1rc1",
                "v0.25.1rc1",
                key("enable_shared_expert_dp"),
                "v0.10.1rc1:vllm_ascend/ascend_config.py:50 … v0.25.1rc1:vllm_ascend/ascend_config.py:102",
            ),
        ),
        needs=lambda i: (
            None
            if i.engine.parallel.expert
            else "every release ANDs it with expert parallelism (e.g. v0.23.0:vllm_ascend/ascend_config.py:114): "
            "without engine.parallel.expert it has no effect"
        ),
        models=("moe", "mla"),
        models_source="v0.23.0:vllm_ascend/ops/fused_moe/fused_moe.py:395, the fused-MoE layer",
    ),
    Switch(
        "dsa_cp",
        "DSA context parallelism (DeepSeek-V3.2-class sparse attention)",
        (
            _era("<0.20.2rc1", "v0.7.1rc1", "v0.19.1rc1", None),
            _era(
                ">=0.20.2rc1",
                "v0.20.2rc1",
                "v0.25.1rc1",
                key("enable_dsa_cp"),
                "v0.20.2rc1:vllm_ascend/utils.py:1402 … v0.25.1rc1:vllm_ascend/utils.py:1387",
            ),
        ),
        needs=lambda i: (
            None
            if i.engine.ascend.flashcomm1
            else "DSA context parallelism builds on FlashComm1 (v0.23.0:docs/source/user_guide/configuration/"
            "additional_config.md): set engine.ascend.flashcomm1: true as well"
        ),
        models=("mla",),
        models_source="v0.23.0:vllm_ascend/attention/sfa_v1.py:327, the sparse (DSA) attention of MLA models",
    ),
    Switch(
        "reduce_sample",
        "TP-partitioned reduce sampling",
        (
            _era("<0.20.2rc1", "v0.7.1rc1", "v0.19.1rc1", None),
            _era(
                ">=0.20.2rc1",
                "v0.20.2rc1",
                "v0.25.1rc1",
                key("enable_reduce_sample"),
                "v0.20.2rc1:vllm_ascend/ascend_config.py:272 … v0.25.1rc1:vllm_ascend/ascend_config.py:273",
            ),
        ),
    ),
    Switch(
        "mc2_hierarchy_comm",
        "hierarchical (RoCE) MC2 dispatch/combine",
        (
            _era("<0.18.0rc1", "v0.7.1rc1", "v0.17.0rc1", None),
            _era(
                ">=0.18.0rc1",
                "v0.18.0rc1",
                "v0.25.1rc1",
                key("enable_mc2_hierarchy_comm"),
                "v0.18.0rc1:vllm_ascend/ascend_config.py:169 … v0.25.1rc1:vllm_ascend/ascend_config.py:255",
            ),
        ),
        models=("moe", "mla"),
        models_source="v0.23.0:vllm_ascend/ops/fused_moe/token_dispatcher.py:136, the MoE token dispatcher",
    ),
    Switch(
        "multistream_dsa_preprocess",
        "DSA preprocessing multistream",
        (
            _era("<0.13.0rc3", "v0.7.1rc1", "v0.13.0rc2", None),
            _era(
                ">=0.13.0rc3,<0.13.0",
                "v0.13.0rc3",
                "v0.13.0rc3",
                key("multistream_dsa_preprocess"),
                "v0.13.0rc3:vllm_ascend/ascend_config.py:95",
            ),
            _era(">=0.13.0,<0.20.2rc1", "v0.13.0", "v0.19.1rc1", None),
            _era(
                ">=0.20.2rc1,<0.22.1rc1",
                "v0.20.2rc1",
                "v0.21.0rc1",
                key("multistream_dsa_preprocess"),
                "v0.20.2rc1:vllm_ascend/ascend_config.py:136 … v0.21.0rc1:vllm_ascend/ascend_config.py:136",
            ),
            _era(
                ">=0.22.1rc1",
                "v0.22.1rc1",
                "v0.25.1rc1",
                None,
                note="tutorials still pass `multistream_dsa_preprocess` "
                "(v0.23.0:docs/source/tutorials/models/DeepSeek-V4-Pro.md:519), which this code ignores",
            ),
        ),
        models=("mla",),
        models_source="v0.21.0rc1:vllm_ascend/attention/dsa_v1.py:1438, the DSA attention of MLA models",
    ),
    Switch(
        "dp_allreduce_on_npu",
        "data-parallel all-reduce on the NPU",
        (
            _era("<0.21.0rc1", "v0.7.1rc1", "v0.20.2rc1", None),
            _era(
                ">=0.21.0rc1,<0.25.1rc1",
                "v0.21.0rc1",
                "v0.24.0rc1",
                key("dp_allreduce_on_npu"),
                "v0.21.0rc1:vllm_ascend/ascend_config.py:267 … v0.24.0rc1:vllm_ascend/ascend_config.py:311",
            ),
            _era(">=0.25.1rc1", "v0.25.1rc1", "v0.25.1rc1", None),
        ),
    ),
    Switch(
        "prefetch_mlp",
        "MLP weight prefetch",
        (
            _era("<0.10.2rc1", "v0.7.1rc1", "v0.10.1rc1", None),
            _era(
                ">=0.10.2rc1,<0.18.0rc1",
                "v0.10.2rc1",
                "v0.17.0rc1",
                env("VLLM_ASCEND_ENABLE_PREFETCH_MLP"),
                "v0.10.2rc1:vllm_ascend/envs.py:139 … v0.17.0rc1:vllm_ascend/envs.py:81",
            ),
            _era(
                ">=0.18.0rc1",
                "v0.18.0rc1",
                "v0.25.1rc1",
                None,
                note="tutorials still export `VLLM_ASCEND_ENABLE_PREFETCH_MLP=1` "
                "(v0.23.0:docs/source/tutorials/models/Qwen3.5-397B-A17B.md:215), which this code does not define",
            ),
        ),
    ),
    Switch(
        "topk_optimize",
        "top-k sampling optimisation",
        (
            _era("<0.9.0rc1", "v0.7.1rc1", "v0.8.5rc1", None),
            _era(
                ">=0.9.0rc1,<0.9.2rc1",
                "v0.9.0rc1",
                "v0.9.1",
                env("VLLM_ASCEND_ENABLE_TOPK_OPTIMIZE"),
                "v0.9.0rc1:vllm_ascend/envs.py:60 … v0.9.1:vllm_ascend/envs.py:55",
            ),
            _era(
                ">=0.9.2rc1",
                "v0.9.2rc1",
                "v0.25.1rc1",
                None,
                note="tutorials still export `VLLM_ASCEND_ENABLE_TOPK_OPTIMIZE=1` "
                "(v0.25.1rc1:docs/source/tutorials/models/GLM4.x.md:134), which this code does not define",
            ),
        ),
    ),
    Switch(
        "fuse_norm_quant",
        "norm + quant fusion pass",
        (
            _era("<0.12.0rc1", "v0.7.1rc1", "v0.11.0", None),
            _era(
                ">=0.12.0rc1",
                "v0.12.0rc1",
                "v0.25.1rc1",
                key("ascend_compilation_config.fuse_norm_quant"),
                "v0.12.0rc1:vllm_ascend/ascend_config.py:225 … v0.25.1rc1:vllm_ascend/ascend_config.py:506",
            ),
        ),
        needs=_compiles,
    ),
    Switch(
        "fuse_qknorm_rope",
        "Q/K norm + RoPE fusion pass",
        (
            _era("<0.13.0rc1", "v0.7.1rc1", "v0.12.0rc1", None),
            _era(
                ">=0.13.0rc1",
                "v0.13.0rc1",
                "v0.25.1rc1",
                key("ascend_compilation_config.fuse_qknorm_rope"),
                "v0.13.0rc1:vllm_ascend/ascend_config.py:191 … v0.25.1rc1:vllm_ascend/ascend_config.py:507",
            ),
        ),
        needs=_compiles,
    ),
    Switch(
        "fuse_allreduce_rms",
        "matmul all-reduce + RMSNorm fusion pass",
        (
            _era("<0.14.0rc1", "v0.7.1rc1", "v0.13.0", None),
            _era(
                ">=0.14.0rc1,<0.25.1rc1",
                "v0.14.0rc1",
                "v0.24.0rc1",
                key("ascend_compilation_config.fuse_allreduce_rms"),
                "v0.14.0rc1:vllm_ascend/ascend_config.py:192 … v0.24.0rc1:vllm_ascend/ascend_config.py:483",
            ),
            _era(">=0.25.1rc1", "v0.25.1rc1", "v0.25.1rc1", None),
        ),
        needs=_compiles,
    ),
    Switch(
        "fuse_muls_add",
        "muls + add fusion pass",
        (
            _era("<0.16.0rc1", "v0.7.1rc1", "v0.15.0rc1", None),
            _era(
                ">=0.16.0rc1",
                "v0.16.0rc1",
                "v0.25.1rc1",
                key("ascend_compilation_config.fuse_muls_add"),
                "v0.16.0rc1:vllm_ascend/ascend_config.py:299 … v0.25.1rc1:vllm_ascend/ascend_config.py:548",
            ),
        ),
        needs=_compiles,
    ),
    Switch(
        "sparse_sfa_c8",
        "int8 (C8) sparse flash attention",
        (
            _era("<0.23.0rc1", "v0.7.1rc1", "v0.22.1rc1", None),
            _era(
                ">=0.23.0rc1,<0.24.0rc1",
                "v0.23.0rc1",
                "v0.23.0.post1",
                key("enable_sparse_sfa_c8"),
                "v0.23.0rc1:vllm_ascend/ascend_config.py:280 … "
                "v0.23.0.post1:PyPI:vllm_ascend-0.23.0.post1.tar.gz:vllm_ascend/ascend_config.py:280",
            ),
            _era(">=0.24.0rc1", "v0.24.0rc1", "v0.25.1rc1", None),
        ),
        models=("mla",),
        models_source="v0.23.0:vllm_ascend/attention/sfa_v1.py:665, the sparse (DSA) attention of MLA models",
    ),
    Switch(
        "sparse_li_c8",
        "int8 (C8) sparse lightning indexer",
        (
            _era("<0.23.0rc1", "v0.7.1rc1", "v0.22.1rc1", None),
            _era(
                ">=0.23.0rc1,<0.24.0rc1",
                "v0.23.0rc1",
                "v0.23.0.post1",
                key("enable_sparse_li_c8"),
                "v0.23.0rc1:vllm_ascend/ascend_config.py:281 … "
                "v0.23.0.post1:PyPI:vllm_ascend-0.23.0.post1.tar.gz:vllm_ascend/ascend_config.py:281",
            ),
            _era(">=0.24.0rc1", "v0.24.0rc1", "v0.25.1rc1", None),
        ),
        models=("mla",),
        models_source="v0.23.0:vllm_ascend/attention/sfa_v1.py:666, the sparse (DSA) attention's lightning indexer",
    ),
    Switch(
        "npugraph_ex",
        "npugraph_ex graph backend",
        (
            _era("<0.12.0rc1", "v0.7.1rc1", "v0.11.0", None),
            _era(
                ">=0.12.0rc1,<0.14.0rc1",
                "v0.12.0rc1",
                "v0.13.0",
                key("enable_npugraph_ex"),
                "v0.12.0rc1:vllm_ascend/ascend_config.py:148 … v0.13.0:vllm_ascend/ascend_config.py:131",
            ),
            _era(">=0.14.0rc1,<0.16.0rc1", "v0.14.0rc1", "v0.15.0rc1", None),
            _era(
                ">=0.16.0rc1",
                "v0.16.0rc1",
                "v0.25.1rc1",
                key("ascend_compilation_config.enable_npugraph_ex"),
                "v0.16.0rc1:vllm_ascend/ascend_config.py:263 … v0.25.1rc1:vllm_ascend/ascend_config.py:504",
            ),
        ),
        needs=_compiles_graph,
    ),
    Switch(
        "static_kernel",
        "static kernels",
        (
            _era("<0.16.0rc1", "v0.7.1rc1", "v0.15.0rc1", None),
            _era(
                ">=0.16.0rc1",
                "v0.16.0rc1",
                "v0.25.1rc1",
                key("ascend_compilation_config.enable_static_kernel"),
                "v0.16.0rc1:vllm_ascend/ascend_config.py:264 … v0.25.1rc1:vllm_ascend/ascend_config.py:505",
            ),
        ),
        needs=_compiles_graph,
    ),
)

SWITCH_FIELDS: tuple[str, ...] = tuple(s.field for s in SWITCHES)
JEMALLOC_TOPIC = f"{TOPIC_PREFIX}jemalloc"


def switch(name: str) -> Switch | None:
    """The switch a user names: `flashcomm1`, `engine.ascend.flashcomm1` or `cpu-binding` (case and `-`/`_`
    do not matter)."""
    text = name.strip().lower().replace("-", "_")
    text = text.removeprefix(FIELD_PREFIX).removeprefix(TOPIC_PREFIX)
    return next((s for s in SWITCHES if s.field == text), None)


def _tag(version: str | None) -> str:
    if version is None:
        return "?"
    return version if version.startswith("v") else f"v{version}"


def missing(sw: Switch, index: int, release: str | None) -> str:
    """Why release `release` (in era `index`) cannot turn `sw` on, naming the releases that can."""
    status = sw.status(index)
    first = sw.first_reader()
    here = f"vllm-ascend {_tag(release)}"
    if status == "absent":
        text = (
            f"{here} has no {sw.title} switch; the first release that reads one is {first.first} "
            f"(`{first.spelling.shown() if first.spelling else ''}`): pin {first.first} or newer, or leave it unset"
        )
    elif status == "removed":
        last = next(e for e in reversed(sw.eras) if e.spelling is not None)
        text = (
            f"{here} no longer reads a {sw.title} switch: read by {sw.readers()}, last as "
            f"`{last.spelling.shown() if last.spelling else ''}` in {last.last}"
        )
    else:
        text = f"{here} reads no {sw.title} switch (read by {sw.readers()})"
    note = sw.eras[index].note
    return f"{text} ({KEYS}){'; ' + note if note else ''}"


def _summary(sw: Switch, index: int) -> str:
    e = sw.eras[index]
    if e.spelling is None:
        if sw.status(index) == "absent":
            return f"✗ not available: first read by {sw.first_reader().first}"
        return f"✗ not read by these tags (read by {sw.readers()})"
    off = e.spelling.value(False)
    off_text = f"`{off}`" if e.spelling.kind == "env" else f"`{json.dumps(off)}`"
    return f"`{e.spelling.shown()}` (off: {off_text})"


def _name(sw: Switch, index: int) -> str:
    s = sw.eras[index].spelling
    if s is None:
        return {"absent": "absent", "not-read": "not read", "removed": "removed"}[sw.status(index)]
    return f"env {s.name}" if s.kind == "env" else f"key {s.name}"


def _apply(sw: Switch, index: int) -> Apply:
    e = sw.eras[index]

    def apply(intent: EngineIntent, b: CommandBuilder) -> None:
        on: bool | None = getattr(intent.engine.ascend, sw.field)
        if on is None:  # the release's own default: nothing to spell
            return
        why = intent.source(sw.path)
        if e.spelling is None:
            if on:
                b.fail(f"{sw.path}: {missing(sw, index, intent.vllm_ascend)}")
            else:
                b.decide(
                    sw.topic, f"{why}: false; {_tag(intent.vllm_ascend)} reads no {sw.title} switch, nothing to plan"
                )
            return
        # which spelling the release reads, and how its tutorials spell it instead, is `--why` material: the typed
        # switch is the recommended spelling, nothing to warn about
        spelled = f"{why} (spelled for vllm-ascend {e.releases}: {e.source}{'; ' + e.note if e.note else ''})"
        if e.spelling.kind == "env":
            b.env_default(e.spelling.name, str(e.spelling.value(on)), why=spelled, origin=sw.path)
        else:
            b.additional_key(e.spelling.name, e.spelling.value(on), why=spelled, origin=sw.path)
        if on and sw.advice:
            b.warn(f"{sw.path}: {sw.advice}")
        if on and sw.needs is not None and (missing_part := sw.needs(intent)) is not None:
            b.warn(f"{sw.path}: {missing_part}")
        if on and (elsewhere := sw.off_model(intent.load.arch)) is not None:
            b.warn(f"{sw.path}: {elsewhere}")

    return apply


def _register(sw: Switch) -> None:
    for i, e in enumerate(sw.eras):
        source = e.source if e.spelling is not None else f"{KEYS} ({e.releases} read none of its spellings)"
        traits = {
            "switch": sw.field,
            "status": sw.status(i),
            "kind": e.spelling.kind if e.spelling else None,
            "spelling": e.spelling.name if e.spelling else None,
            "shown": e.spelling.shown() if e.spelling else None,
            "first": e.first,
            "last": e.last,
            "note": e.note,
        }
        era(
            sw.topic,
            _name(sw, i),
            axis="vllm_ascend",
            spec=e.spec,
            backends=NPU,
            summary=_summary(sw, i),
            source=source,
            traits=traits,
        )(_apply(sw, i))
    # Migration help (a profile that spells a switch by hand is told to use the field) reads the same spellings
    # from `ascendctl_engine.typed_fields`; tests/test_ascend_switches.py holds the two to each other.


for _switch in SWITCHES:
    _register(_switch)


# ------------------------------------------------------------------------------------------------ jemalloc
@era(
    JEMALLOC_TOPIC,
    "LD_PRELOAD",
    axis="vllm_ascend",
    backends=NPU,
    summary="env `LD_PRELOAD=<engine.ascend.jemalloc>` (the same in every release)",
    source="the tutorials' `export LD_PRELOAD=/usr/lib/aarch64-linux-gnu/libjemalloc.so.2:$LD_PRELOAD` "
    "(e.g. v0.25.1rc1:docs/source/tutorials/models/Qwen3-235B-A22B.md:765)",
)
def jemalloc(intent: EngineIntent, b: CommandBuilder) -> None:
    path = intent.engine.ascend.jemalloc
    if path is None:
        return
    # The plan's env is literal (no shell expands `$LD_PRELOAD`), so the library replaces whatever the engine would
    # inherit; a profile that preloads more than jemalloc lists everything in runtime.env instead.
    b.env_default(
        "LD_PRELOAD",
        path,
        why=f"{intent.source('engine.ascend.jemalloc')} (jemalloc as the allocator of the engine processes; "
        "`ascendctl check PROFILE` verifies the file exists on the host)",
    )


# ------------------------------------------------------------------------------------------------ queries
@record
class SwitchSpelling:
    """One era of a switch as `matrix --explain` and the docs show it (from the era registry)."""

    era: Era
    status: Status
    shown: str | None  # `VLLM_ASCEND_X=1` / `--additional-config {...}`; None when the era reads none
    note: str
    first: str  # the oldest and newest tag of the era with a key table
    last: str

    @property
    def releases(self) -> str:
        """`v0.11.0rc1 … v0.19.1rc1`, or `v0.20.2rc1 and later` for an era without an upper bound."""
        return SwitchEra(self.era.spec, self.first, self.last, None).releases


def _spelling(e: Era) -> SwitchSpelling:
    t = e.traits
    return SwitchSpelling(e, t["status"], t["shown"], str(t["note"]), str(t["first"]), str(t["last"]))


def spelling_eras(sw: Switch) -> list[SwitchSpelling]:
    """Every era of `sw`, oldest first."""
    order = {e.spec: i for i, e in enumerate(sw.eras)}
    return sorted((_spelling(e) for e in eras_of(sw.topic)), key=lambda s: order[s.era.spec])


def spelling_for(sw: Switch, vllm_ascend: str) -> tuple[SwitchSpelling, str]:
    """The era of `sw` for one vllm-ascend release, and what it means for the switch turned on there (the
    spelling, or why it cannot be)."""
    chosen = era_for_release(sw.topic, "npu", "0", vllm_ascend)
    if chosen is None:  # pragma: no cover - every switch has npu eras
        raise LookupError(sw.topic)
    s = _spelling(chosen)
    if s.shown is not None:
        return s, s.shown
    index = next(i for i, e in enumerate(sw.eras) if e.spec == chosen.spec)
    return s, missing(sw, index, vllm_ascend)
