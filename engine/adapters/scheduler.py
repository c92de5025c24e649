"""Scheduler eras: batch limits, prefix caching and chunked prefill spelled per vLLM tag, async scheduling.

Which `--additional-config` keys and variables a release reads is not stated here: the builder checks every
key against the tag's key table (`acceptance.ReleaseAcceptance`).

Facts: vllm.md §2.1/§2.2/§2.5; vllm-ascend.md §6.1.
"""

from __future__ import annotations

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
