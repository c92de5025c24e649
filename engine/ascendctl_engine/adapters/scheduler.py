"""Scheduler eras: batch limits, prefix caching and chunked prefill spelled per vLLM tag, async scheduling.

Which `--additional-config` keys and variables a release reads is not stated here: the builder checks every
key against the tag's key table (`acceptance.ReleaseAcceptance`).

Facts: vLLM's `FlexibleArgumentParser` (vllm/utils/argparse_utils.py) and `EngineArgs` (vllm/engine/arg_utils.py),
as the parser snapshots in engine/ascendctl_engine/data/parsers/ record them; vllm-ascend's `ascend_scheduler_config`
(v0.9.1:docs/source/user_guide/configuration/additional_config.md).
"""

from __future__ import annotations

from ascendctl_engine.adapters.builder import CommandBuilder
from ascendctl_engine.adapters.eras import era
from ascendctl_engine.adapters.intent import EngineIntent
from ascendctl_engine.adapters.serving import lacks_flag


def _switch(intent: EngineIntent, b: CommandBuilder, *, field: str, on: str, off: str, value: bool | None) -> None:
    if value is None:
        return
    why = intent.source(f"engine.scheduler.{field}")
    if value:
        b.arg(on, why=why)
        return
    opt = b.accepted.parser.option(on)
    if not b.accepts(off) and opt is not None and opt.nargs == "?" and (opt.accepts is None or "bool" in opt.accepts):
        # vLLM < 0.8.5 has no `--no-enable-chunked-prefill`: its StoreBoolean flag takes the value (its snapshot).
        b.arg(on, "false", why=f"{why} (vLLM {intent.vllm} has no `{off}`; its `{on}` takes a value)")
        return
    b.arg(off, why=f"{why} (spelled for vLLM {intent.vllm}; a YAML `false` in --config would be dropped)")


def _scheduler(intent: EngineIntent, b: CommandBuilder, *, off_prefix: str) -> None:
    s = intent.engine.scheduler
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
            "scheduler options, v0.9.1:docs/source/user_guide/configuration/additional_config.md)",
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
    _async(intent, b, s.async_scheduling)
    if s.policy is not None:
        # Every parser snapshot (vLLM 0.7.1 … 0.33.0) has `--scheduling-policy {fcfs,priority}` (EngineArgs).
        b.arg("--scheduling-policy", s.policy, why=intent.source("engine.scheduler.policy"))


def _async(intent: EngineIntent, b: CommandBuilder, value: bool | None) -> None:
    if value is None:
        return
    why = intent.source("engine.scheduler.async_scheduling")
    if not b.accepts("--async-scheduling"):
        if value:
            b.fail(
                f"engine.scheduler.async_scheduling: {lacks_flag(b.accepted.parser, '--async-scheduling')}",
                clause="engine-start",
            )
        else:
            b.decide("scheduler.async_scheduling", f"false: vLLM {intent.vllm} has no async scheduling to turn off")
        return
    if value:
        b.arg("--async-scheduling", why=why)
    else:
        # Every snapshot with the flag has `--no-async-scheduling` (BooleanOptionalAction): off whatever the default.
        b.arg("--no-async-scheduling", why=f"{why} (the negative spelling of the release's parser)")


@era(
    "scheduler",
    "no-enable-x",
    axis="vllm",
    spec="<0.33",
    summary="`--max-num-seqs`, `--max-num-batched-tokens`, `--[no-]enable-prefix-caching`, "
    "`--[no-]enable-chunked-prefill`, `--[no-]async-scheduling`",
    source="vLLM `vllm serve --help` and engine/ascendctl_engine/data/parsers/vllm-0.23.0.json "
    "(boolean pairs `--x`/`--no-x` up to 0.23)",
)
def scheduler_old(intent: EngineIntent, b: CommandBuilder) -> None:
    _scheduler(intent, b, off_prefix="--no-enable-")


@era(
    "scheduler",
    "enable/disable-pairs",
    axis="vllm",
    spec=">=0.33",
    summary="as before, but off is `--disable-prefix-caching` / `--disable-chunked-prefill`",
    source="vLLM v0.33.0 EnableDisableAction (`--enable-x`/`--disable-x` pairs; `--no-enable-x` hidden); "
    "engine/ascendctl_engine/data/parsers/vllm-0.33.0.json",
)
def scheduler_new(intent: EngineIntent, b: CommandBuilder) -> None:
    _scheduler(intent, b, off_prefix="--disable-")
