"""Scheduler eras (batch limits, prefix caching and chunked prefill spelled per vLLM tag, async
scheduling) and the `config-keys` topic: the profile's own `additional_config` keys and env vars checked
against the keys each vllm-ascend era removed or renamed.

Facts: vllm.md §2.1/§2.2/§2.5; vllm-ascend.md §6.1, §7.1, §11 #18.
"""

from __future__ import annotations

from collections.abc import Iterable

from ascendctl_engine.adapters.builder import CommandBuilder
from ascendctl_engine.adapters.eras import era
from ascendctl_engine.adapters.intent import EngineIntent


def _switch(intent: EngineIntent, b: CommandBuilder, *, field: str, on: str, off: str, value: bool | None) -> None:
    if value is None:
        return
    why = intent.source(f"engine.scheduler.{field}")
    if value:
        b.arg(on, why=why)
    else:
        b.arg(off, why=f"{why} (spelled for vLLM {intent.vllm}; a YAML `false` in --config would be dropped)")


def _scheduler(intent: EngineIntent, b: CommandBuilder, *, off_prefix: str) -> None:
    s = intent.scheduler
    if s.max_num_seqs is not None:
        b.arg("--max-num-seqs", s.max_num_seqs, why=intent.source("engine.scheduler.max_num_seqs"))
    if s.max_num_batched_tokens is not None:
        b.arg(
            "--max-num-batched-tokens",
            s.max_num_batched_tokens,
            why=intent.source("engine.scheduler.max_num_batched_tokens"),
        )
    _switch(
        intent,
        b,
        field="prefix_caching",
        on="--enable-prefix-caching",
        off=f"{off_prefix}prefix-caching",
        value=s.prefix_caching,
    )
    if b.ascend_scheduler and s.chunked_prefill is not None:
        b.additional_key(
            "ascend_scheduler_config.enable_chunked_prefill",
            s.chunked_prefill,
            why=f"{intent.source('engine.scheduler.chunked_prefill')} (the Ascend scheduler takes vLLM "
            "scheduler options, vllm-ascend.md §6.1)",
        )
    else:
        _switch(
            intent,
            b,
            field="chunked_prefill",
            on="--enable-chunked-prefill",
            off=f"{off_prefix}chunked-prefill",
            value=s.chunked_prefill,
        )
    if s.async_scheduling:
        b.arg("--async-scheduling", why=intent.source("engine.scheduler.async_scheduling"))
    elif s.async_scheduling is False:
        b.decide("scheduler.async_scheduling", "false: no flag emitted (the table has no verified negative flag)")


@era(
    "scheduler",
    "no-enable-x",
    axis="vllm",
    spec="<0.33",
    summary="`--max-num-seqs`, `--max-num-batched-tokens`, `--[no-]enable-prefix-caching`, "
    "`--[no-]enable-chunked-prefill`, `--async-scheduling`",
    source="vllm.md §2.1/§2.2 (boolean pairs `--x`/`--no-x` up to 0.23)",
)
def scheduler_old(intent: EngineIntent, b: CommandBuilder) -> None:
    _scheduler(intent, b, off_prefix="--no-enable-")


@era(
    "scheduler",
    "enable/disable-pairs",
    axis="vllm",
    spec=">=0.33",
    summary="as before, but off is `--disable-prefix-caching` / `--disable-chunked-prefill`",
    source="vllm.md §2.1 ([run] 0.33: `--enable-x`/`--disable-x` pairs; `--no-enable-x` hidden)",
)
def scheduler_new(intent: EngineIntent, b: CommandBuilder) -> None:
    _scheduler(intent, b, off_prefix="--disable-")


# ------------------------------------------------------------------------------------ config keys
OLD_EPLB_KEYS = (
    "dynamic_eplb",
    "num_iterations_eplb_update",
    "num_wait_worker_iterations",
    "gate_eplb",
    "expert_map_path",
    "expert_map_record_path",
    "init_redundancy_expert",
)
TORCHAIR_KEYS = ("torchair_graph_config", "ascend_scheduler_config")
SCHEDULER_KEYS = (
    "enable_balance_scheduling",
    "recompute_scheduler_enable",
    "profiling_chunk_config",
    "short_request_first_config",
)


def _present(intent: EngineIntent, keys: Iterable[str]) -> list[str]:
    return [k for k in keys if k in intent.additional_config]


def _check_keys(
    intent: EngineIntent,
    b: CommandBuilder,
    *,
    torchair_gone: bool = False,
    eplb: str = "current",  # "current" | "deprecated" | "removed"
    balance_env: str | None = None,
    scheduler_config: bool = False,
) -> None:
    if torchair_gone:
        for key in _present(intent, TORCHAIR_KEYS):
            b.fail(
                f"engine.additional_config.{key} was removed in v0.12.0rc1 (TorchAir and the Ascend scheduler are "
                "gone; use engine.graph.mode), RN v0.12.0rc1"
            )
    old = _present(intent, OLD_EPLB_KEYS)
    if old and eplb == "deprecated":
        b.warn(f"engine.additional_config {old}: top-level EPLB keys are deprecated, use `eplb_config` (RN v0.13.0rc2)")
    elif old and eplb == "removed":
        b.fail(f"engine.additional_config {old}: top-level EPLB keys were removed in v0.14.0rc1; use `eplb_config`")
    if "eplb_config" in intent.additional_config and eplb == "top-level":
        b.warn("engine.additional_config.eplb_config arrives in v0.13.0rc2; this release reads top-level EPLB keys")
    if balance_env and intent.user_env.get("VLLM_ASCEND_BALANCE_SCHEDULING", "0") not in ("", "0"):
        b.warn(
            "runtime.env VLLM_ASCEND_BALANCE_SCHEDULING is deprecated from v0.20.2rc1 (vllm-ascend.md §6.1 "
            f"migration): use engine.additional_config `{balance_env}: true`"
        )
    moved = _present(intent, SCHEDULER_KEYS)
    if scheduler_config and moved:
        b.warn(
            f"engine.additional_config {moved}: deprecated top-level keys; v0.25.1rc1+ reads them under "
            "`scheduler_config`"
        )
    if not scheduler_config and "scheduler_config" in intent.additional_config:
        b.warn("engine.additional_config.scheduler_config is read from v0.25.1rc1 on; this release ignores it")


@era(
    "config-keys",
    "torchair-era",
    axis="vllm_ascend",
    spec="<0.12.0rc1",
    backends={"npu"},
    summary="checks only (top-level EPLB keys, torchair/ascend_scheduler configs are current)",
    source="vllm-ascend.md §6.1 (v0.9.1–v0.11.0 key lists)",
)
def keys_torchair(intent: EngineIntent, b: CommandBuilder) -> None:
    _check_keys(intent, b, eplb="top-level")


@era(
    "config-keys",
    "no-torchair",
    axis="vllm_ascend",
    spec=">=0.12.0rc1,<0.13.0rc2",
    backends={"npu"},
    summary="fails on `torchair_graph_config` / `ascend_scheduler_config` (removed v0.12.0rc1)",
    source="RN v0.12.0rc1 (vllm-ascend.md §6.1, §11 #18)",
)
def keys_v12(intent: EngineIntent, b: CommandBuilder) -> None:
    _check_keys(intent, b, torchair_gone=True, eplb="top-level")


@era(
    "config-keys",
    "eplb_config (old keys deprecated)",
    axis="vllm_ascend",
    spec=">=0.13.0rc2,<0.14.0rc1",
    backends={"npu"},
    summary="warns on top-level EPLB keys (moved into `eplb_config`)",
    source="RN v0.13.0rc2 (vllm-ascend.md §6.1)",
)
def keys_v13(intent: EngineIntent, b: CommandBuilder) -> None:
    _check_keys(intent, b, torchair_gone=True, eplb="deprecated")


@era(
    "config-keys",
    "eplb_config only",
    axis="vllm_ascend",
    spec=">=0.14.0rc1,<0.20.2rc1",
    backends={"npu"},
    summary="fails on top-level EPLB keys (removed v0.14.0rc1)",
    source="RN v0.14.0rc1 (vllm-ascend.md §6.1)",
)
def keys_v14(intent: EngineIntent, b: CommandBuilder) -> None:
    _check_keys(intent, b, torchair_gone=True, eplb="removed")


@era(
    "config-keys",
    "env→config migration",
    axis="vllm_ascend",
    spec=">=0.20.2rc1,<0.25.1rc1",
    backends={"npu"},
    summary="also warns on `VLLM_ASCEND_BALANCE_SCHEDULING` (→ `enable_balance_scheduling`)",
    source="v0.20.2rc1 additional_config.md, PR #9064 (vllm-ascend.md §6.1)",
)
def keys_v20(intent: EngineIntent, b: CommandBuilder) -> None:
    _check_keys(intent, b, torchair_gone=True, eplb="removed", balance_env="enable_balance_scheduling")


@era(
    "config-keys",
    "scheduler_config",
    axis="vllm_ascend",
    spec=">=0.25.1rc1",
    backends={"npu"},
    summary="scheduler options live under `scheduler_config` (top-level ones deprecated)",
    source="v0.25.1rc1 additional_config.md (vllm-ascend.md §6.1)",
)
def keys_v25(intent: EngineIntent, b: CommandBuilder) -> None:
    _check_keys(
        intent,
        b,
        torchair_gone=True,
        eplb="removed",
        balance_env="scheduler_config.enable_balance_scheduling",
        scheduler_config=True,
    )
