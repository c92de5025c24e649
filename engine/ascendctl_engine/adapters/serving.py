"""Serving eras: the API-server options of the profile's `serving` section — tool calling, reasoning parsers,
the chat template, multimodal limits and processor cache, LoRA adapters, context parallelism and the
structured-output backend.

Every flag goes through `_emit`, which asks the real-parser snapshot of the target vLLM whether the flag exists
and whether it takes the value (its choices, the value classes its type accepts). A flag or value the release
lacks is a broken constraint that names the first vLLM whose snapshot has it, so the message says what to pin
instead. Spellings that changed between vLLM versions are eras (`--enable-reasoning`, the multimodal cache and
limits, `--guided-decoding-backend` → `--structured-outputs-config`); everything else is one era.

The typed fields' claims on these spellings are in `ascendctl_engine.typed_fields`, so the profile rule
`profile.migration.typed-field` can point an operator who passes them through an escape hatch at the field.

Facts: the snapshots in engine/ascendctl_engine/data/parsers/ (`vllm-<version>.json`), each dumped from that
vLLM wheel's own `vllm serve` parser.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from ascendctl_engine.adapters.builder import CommandBuilder
from ascendctl_engine.adapters.eras import era
from ascendctl_engine.adapters.intent import EngineIntent
from ascendctl_engine.adapters.parser_snapshot import (
    OptionInfo,
    ParserSnapshot,
    SnapshotMissing,
    snapshot_for,
    snapshot_versions,
    value_class,
)
from ascendctl_engine.sections.serving import LoraAdapter, LoraSpec
from ascendctl_engine.versions import parse

# ------------------------------------------------------------------------------ what the snapshots know
SnapshotTest = Callable[[ParserSnapshot, OptionInfo], bool]


def takes(snapshot: ParserSnapshot, opt: OptionInfo, value: str) -> bool:
    """Whether the option accepts `value` as its parser would: among its choices, of a class its type accepts (a
    class the snapshot did not sample is not judged, as in the replay)."""
    if opt.choices is not None and value not in {"None" if c is None else str(c) for c in opt.choices}:
        return False
    cls = value_class(value)
    return opt.accepts is None or cls in opt.accepts or cls not in snapshot.value_classes


def first_vllm_with(flag: str, *, after: str, test: SnapshotTest | None = None) -> ParserSnapshot | None:
    """The oldest vLLM snapshot newer than `after` whose parser has `flag` (and whose option passes `test`).

    Used only to word a failure, so it may read every snapshot: the plans that succeed never call it."""
    floor = parse(after)
    for version in snapshot_versions("vllm"):
        if parse(version) <= floor:
            continue
        try:
            snapshot = snapshot_for(version)
        except SnapshotMissing:
            continue
        opt = snapshot.option(flag)
        if opt is not None and (test is None or test(snapshot, opt)):
            return snapshot
    return None


def last_vllm_with(flag: str, *, before: str) -> ParserSnapshot | None:
    """The newest vLLM snapshot older than `before` whose parser has `flag` (a flag that was removed)."""
    ceiling = parse(before)
    for version in reversed(snapshot_versions("vllm")):
        if parse(version) >= ceiling:
            continue
        try:
            snapshot = snapshot_for(version)
        except SnapshotMissing:
            continue
        if snapshot.has(flag):
            return snapshot
    return None


def lacks_flag(parser: ParserSnapshot, flag: str) -> str:
    """`vLLM X has no `--flag` (snapshot); first in vLLM Y (snapshot)` — or when it was removed."""
    head = f"vLLM {parser.version} has no `{flag}` ({parser.source})"
    first = first_vllm_with(flag, after=parser.version)
    if first is not None:
        return f"{head}; the first vLLM with it is {first.version} ({first.source})"
    last = last_vllm_with(flag, before=parser.version)
    if last is not None:
        return f"{head}; vLLM {last.version} was the last to have it ({last.source})"
    return f"{head}; no vLLM snapshot has it"


def _refuses(parser: ParserSnapshot, opt: OptionInfo, value: str) -> str:
    if opt.choices is not None:
        listed = ", ".join("None" if c is None else str(c) for c in opt.choices)  # the parser's own order
        head = f"vLLM {parser.version} takes `{opt.flag}` from {listed} only, not {value!r} ({parser.source})"
    else:
        head = f"vLLM {parser.version}'s `{opt.flag}` ({opt.type or 'str'}) does not take {value!r} ({parser.source})"
    later = first_vllm_with(opt.flag, after=parser.version, test=lambda snap, o: takes(snap, o, value))
    if later is None:
        return f"{head}; no later vLLM snapshot takes it"
    chosen = later.option(opt.flag)
    if chosen is not None and chosen.choices is None and opt.choices is not None:
        return (
            f"{head}; from vLLM {later.version} the flag takes any name ({later.source}), which vLLM checks when "
            "the server starts"
        )
    return f"{head}; the first vLLM that takes it is {later.version} ({later.source})"


def _emit(
    intent: EngineIntent,
    b: CommandBuilder,
    field: str,
    flag: str,
    *values: str | int,
    check: str | None = None,
    why: str | None = None,
) -> bool:
    """Emit `flag` for `serving.<field>` if the release's parser has it and takes `check` (the value as text);
    otherwise a broken constraint that names the first vLLM that would. Returns whether it was emitted."""
    parser = b.accepted.parser
    opt = parser.option(flag)
    if opt is None:
        b.fail(f"serving.{field}: {lacks_flag(parser, flag)}", clause="engine-start")
        return False
    if check is not None and not takes(parser, opt, check):
        b.fail(f"serving.{field}: {_refuses(parser, opt, check)}", clause="engine-start")
        return False
    return b.arg(flag, *values, why=why or intent.source(f"serving.{field}"))


def _number(value: float) -> str:
    """A size as the CLI reads it: `0`, `4`, `2.5` (an integral float printed without `.0`, which an int-typed
    flag would refuse)."""
    return str(int(value)) if float(value).is_integer() else repr(float(value))


# ------------------------------------------------------------------------------------ tool calling, LoRA, CP
def lora_module(adapter: LoraAdapter) -> str:
    """One `--lora-modules` item: `name=path`, or a compact JSON object where `name=path` cannot say it (a
    base_model_name; a path holding `,`, which makes vLLM read the item as JSON, or `=`, where it splits). Every
    pinned vLLM reads both forms (eras topic `lora-modules`)."""
    if adapter.base_model_name is None and not {"=", ","} & set(adapter.path):
        return f"{adapter.name}={adapter.path}"
    item = {"name": adapter.name, "path": adapter.path}
    if adapter.base_model_name is not None:
        item["base_model_name"] = adapter.base_model_name
    return json.dumps(item, separators=(",", ":"))


def _lora(intent: EngineIntent, b: CommandBuilder, lora: LoraSpec) -> None:
    why = intent.source("serving.lora")  # the planner records the section as one setting
    if not _emit(intent, b, "lora", "--enable-lora", why=why):
        return
    if lora.adapters:
        modules = [lora_module(a) for a in lora.adapters]
        _emit(intent, b, "lora.adapters", "--lora-modules", *modules, why=why)
    if lora.max_rank is not None:
        _emit(intent, b, "lora.max_rank", "--max-lora-rank", lora.max_rank, check=str(lora.max_rank), why=why)
    if lora.max_loras is not None:
        _emit(intent, b, "lora.max_loras", "--max-loras", lora.max_loras, why=why)


def _context_parallel(intent: EngineIntent, b: CommandBuilder) -> None:
    s = intent.serving
    for field, flag, size in (
        ("prefill_context_parallel", "--prefill-context-parallel-size", s.prefill_context_parallel),
        ("decode_context_parallel", "--decode-context-parallel-size", s.decode_context_parallel),
    ):
        if size is None:
            continue
        if size == 1:
            # vLLM's default: no flag, so a release without context parallelism still plans a profile saying 1.
            b.decide(f"serving.{field}", "1 is vLLM's default (no context parallelism): no flag")
            continue
        _emit(intent, b, field, flag, size, check=str(size))


@era(
    "serving",
    "frontend-options",
    axis="vllm",
    summary=(
        "`--tool-call-parser`, `--enable-auto-tool-choice`, `--chat-template PATH`, `--enable-lora` + "
        "`--lora-modules name=path …` (a JSON item where name=path cannot say it) / `--max-lora-rank` / "
        "`--max-loras`, `--prefill-context-parallel-size` / "
        "`--decode-context-parallel-size` (sizes above 1), `--allowed-local-media-path`, `--mm-encoder-tp-mode`, "
        "`--cp-kv-cache-interleave-size` — each checked against the release's parser snapshot"
    ),
    source="engine/ascendctl_engine/data/parsers/ (tool-call parser choices at 0.10.0, "
    "--max-lora-rank choices "
    "from 0.12.0, --decode-context-parallel-size from 0.10.2, --prefill-context-parallel-size from 0.12.0, "
    "--mm-encoder-tp-mode from 0.10.2, --cp-kv-cache-interleave-size from 0.12.0)",
)
def serving_options(intent: EngineIntent, b: CommandBuilder) -> None:
    s = intent.serving
    if s.tool_call_parser:
        name = s.tool_call_parser
        _emit(intent, b, "tool_call_parser", "--tool-call-parser", name, check=name)
    if s.auto_tool_choice:
        if not s.tool_call_parser:
            b.fail(
                "serving.auto_tool_choice needs serving.tool_call_parser (vLLM refuses to start without one)",
                clause="engine-start",
            )
        else:
            _emit(intent, b, "auto_tool_choice", "--enable-auto-tool-choice")
    if s.chat_template:
        path = s.chat_template
        if _emit(intent, b, "chat_template", "--chat-template", path, check=path) and not path.startswith("/"):
            b.warn(
                f"serving.chat_template {path!r} is a relative path: vLLM resolves it against the engine's "
                "working directory (an absolute path works the same for `serve` and rendered artifacts)"
            )
    if s.lora is not None:
        _lora(intent, b, s.lora)
    _context_parallel(intent, b)
    for field, flag in ONE_FLAG_FIELDS:
        value = getattr(s, field)
        if value is not None:
            _emit(intent, b, field, flag, value, check=str(value))


# `serving` fields that are one flag each, passed as written (the release's parser checks the flag and its value).
ONE_FLAG_FIELDS = (
    ("allowed_local_media_path", "--allowed-local-media-path"),
    ("mm_encoder_tp_mode", "--mm-encoder-tp-mode"),
    ("cp_kv_cache_interleave_size", "--cp-kv-cache-interleave-size"),
)


# --------------------------------------------------------------------------------------------- reasoning
def _reasoning(intent: EngineIntent, b: CommandBuilder, *, switch: bool) -> None:
    name = intent.serving.reasoning_parser
    if name is None:
        return
    if _emit(intent, b, "reasoning_parser", "--reasoning-parser", name, check=name) and switch:
        why = f"{intent.source('serving.reasoning_parser')} (vLLM {intent.vllm} applies the parser only with it)"
        _emit(intent, b, "reasoning_parser", "--enable-reasoning", why=why)


@era(
    "reasoning",
    "enable-reasoning",
    axis="vllm",
    spec="<0.9",
    summary="`--enable-reasoning --reasoning-parser NAME` (the parser is read only with the switch)",
    source="engine/ascendctl_engine/data/parsers/vllm-0.7.1.json … vllm-0.8.5.post1.json (`--enable-reasoning` next to "
    "`--reasoning-parser`); vllm-0.9.0.json marks the switch deprecated",
)
def reasoning_switch(intent: EngineIntent, b: CommandBuilder) -> None:
    _reasoning(intent, b, switch=True)


@era(
    "reasoning",
    "parser-only",
    axis="vllm",
    spec=">=0.9",
    summary="`--reasoning-parser NAME` (reasoning follows the parser; choices checked where the snapshot lists them)",
    source="engine/ascendctl_engine/data/parsers/vllm-0.9.0.json (`--enable-reasoning` deprecated), "
    "vllm-0.10.0.json (gone)",
)
def reasoning_parser(intent: EngineIntent, b: CommandBuilder) -> None:
    _reasoning(intent, b, switch=False)


# -------------------------------------------------------------------------------------------- multimodal
def _limits_json(intent: EngineIntent, b: CommandBuilder) -> None:
    limits = intent.serving.limit_mm_per_prompt
    if limits:
        _emit(intent, b, "limit_mm_per_prompt", "--limit-mm-per-prompt", json.dumps(dict(limits)))


def _limits_text(intent: EngineIntent, b: CommandBuilder) -> None:
    limits = intent.serving.limit_mm_per_prompt
    if limits:
        why = f"{intent.source('serving.limit_mm_per_prompt')} (vLLM {intent.vllm} reads `modality=N,…`, not JSON)"
        text = ",".join(f"{name}={count}" for name, count in limits.items())
        _emit(intent, b, "limit_mm_per_prompt", "--limit-mm-per-prompt", text, why=why)


def _cache_gb(intent: EngineIntent, b: CommandBuilder) -> None:
    size = intent.serving.mm_processor_cache_gb
    if size is not None:
        text = _number(size)
        _emit(intent, b, "mm_processor_cache_gb", "--mm-processor-cache-gb", text, check=text)


def _cache_switch(intent: EngineIntent, b: CommandBuilder) -> None:
    size = intent.serving.mm_processor_cache_gb
    if size is None:
        return
    if size == 0:
        why = f"{intent.source('serving.mm_processor_cache_gb')} (0 GiB: vLLM {intent.vllm} can only switch it off)"
        _emit(intent, b, "mm_processor_cache_gb", "--disable-mm-preprocessor-cache", why=why)
        return
    parser = b.accepted.parser
    first = first_vllm_with("--mm-processor-cache-gb", after=parser.version)
    since = f", first in vLLM {first.version} ({first.source})" if first else ""
    b.fail(
        f"serving.mm_processor_cache_gb {_number(size)}: vLLM {parser.version} can only turn the multimodal "
        f"preprocessor cache off (`--disable-mm-preprocessor-cache`: give 0; {parser.source}); a size needs "
        f"`--mm-processor-cache-gb`{since}",
        clause="engine-start",
    )


@era(
    "multimodal",
    "kv-limits",
    axis="vllm",
    spec="<0.8.5",
    summary="`--limit-mm-per-prompt image=N,video=M` (key=value text); cache 0 → `--disable-mm-preprocessor-cache`",
    source="engine/ascendctl_engine/data/parsers/vllm-0.8.4.json (`--limit-mm-per-prompt` type "
    "nullable_kvs: `key=value,…`)",
)
def multimodal_kv(intent: EngineIntent, b: CommandBuilder) -> None:
    _limits_text(intent, b)
    _cache_switch(intent, b)


@era(
    "multimodal",
    "json-limits",
    axis="vllm",
    spec=">=0.8.5,<0.10.1",
    summary="`--limit-mm-per-prompt` JSON; cache 0 → `--disable-mm-preprocessor-cache` (no size flag yet)",
    source="engine/ascendctl_engine/data/parsers/vllm-0.8.5.post1.json (JSON limits) … vllm-0.10.0.json",
)
def multimodal_json(intent: EngineIntent, b: CommandBuilder) -> None:
    _limits_json(intent, b)
    _cache_switch(intent, b)


@era(
    "multimodal",
    "cache-gb",
    axis="vllm",
    spec=">=0.10.1",
    summary="`--limit-mm-per-prompt` JSON; `--mm-processor-cache-gb N` (0 = off)",
    source="engine/ascendctl_engine/data/parsers/vllm-0.10.1.1.json (`--mm-processor-cache-gb` added, "
    "`--disable-mm-preprocessor-cache` deprecated; gone at vllm-0.13.0.json)",
)
def multimodal_cache_gb(intent: EngineIntent, b: CommandBuilder) -> None:
    _limits_json(intent, b)
    _cache_gb(intent, b)


# ------------------------------------------------------------------------------------ structured outputs
@era(
    "structured-outputs",
    "guided-decoding-backend",
    axis="vllm",
    spec="<0.11",
    summary="`--guided-decoding-backend NAME` (choices checked per release)",
    source="engine/ascendctl_engine/data/parsers/vllm-0.7.1.json … vllm-0.10.2.json",
)
def guided_decoding(intent: EngineIntent, b: CommandBuilder) -> None:
    name = intent.serving.structured_outputs_backend
    if name is not None:
        _emit(intent, b, "structured_outputs_backend", "--guided-decoding-backend", name, check=name)


@era(
    "structured-outputs",
    "structured-outputs-config",
    axis="vllm",
    spec=">=0.11",
    summary='`--structured-outputs-config {"backend": NAME}`',
    source="engine/ascendctl_engine/data/parsers/vllm-0.11.0.json (`--structured-outputs-config` added, "
    "`--guided-decoding-backend` deprecated; gone at vllm-0.12.0.json)",
)
def structured_outputs(intent: EngineIntent, b: CommandBuilder) -> None:
    name = intent.serving.structured_outputs_backend
    if name is not None:
        value = json.dumps({"backend": name})
        _emit(intent, b, "structured_outputs_backend", "--structured-outputs-config", value)
