"""Generates docs/intent-to-flags.md from the era registry and from planning sample intents, so the table
can never drift from the adapters (a test regenerates it and compares)."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ascendctl_engine.adapters import plan_commands
from ascendctl_engine.adapters.ascend_switches import SWITCH_FIELDS
from ascendctl_engine.adapters.eras import REGISTRY, TOPICS
from ascendctl_engine.adapters.intent import (
    AscendIntent,
    EngineIntent,
    EplbIntent,
    HardwareTraits,
    LoraIntent,
    ModelIntent,
    NodeIntent,
    ParallelIntent,
    SchedulerIntent,
    ServerIntent,
    ServingIntent,
    SpeculativeIntent,
)
from ascendctl_engine.flags import canonical_flag


@dataclass(frozen=True)
class ReleaseColumn:
    label: str  # e.g. "v0.13.0" or "cpu 0.32.0"
    backend: str
    vllm: str
    vllm_ascend: str | None
    cann: str | None = None
    # Hardware family → its traits (from the support matrix, passed in by the caller: engine/ imports no matrix).
    traits: Mapping[str, HardwareTraits] = field(default_factory=dict)


Change = Callable[[EngineIntent], EngineIntent | None]  # None: the sample does not apply to that backend


def _model(**kw: Any) -> Change:
    return lambda i: replace(i, model=replace(i.model, **kw))


def _npu_only(change: Change) -> Change:
    return lambda i: change(i) if i.backend == "npu" else None


TWO_NODES = (NodeIntent(0, "10.0.0.1", "eth0"), NodeIntent(1, "10.0.0.2", "eth0"))

# (intent, how the sample differs from the base intent: dense model, one device, eager)
SAMPLES: tuple[tuple[str, Change], ...] = (
    ("graph.mode auto (dense model)", lambda i: replace(i, graph_mode="auto")),
    (
        "graph.mode auto (DeepSeek-class, MLA)",
        lambda i: replace(i, graph_mode="auto", model=replace(i.model, arch="mla")),
    ),
    (
        "graph.mode piecewise + capture_sizes [1, 2, 4]",
        lambda i: replace(i, graph_mode="piecewise", capture_sizes=(1, 2, 4)),
    ),
    ("graph.mode full", lambda i: replace(i, graph_mode="full")),
    ("graph.mode full-and-piecewise", lambda i: replace(i, graph_mode="full-and-piecewise")),
    (
        "Atlas 300I Duo (CANN 9.1.0), full-decode-only",
        _npu_only(lambda i: replace(i, hardware="300i-duo", graph_mode="full-decode-only", cann="9.1.0")),
    ),
    ("model.quantization w8a8", _model(quantization="w8a8", quant_method="ascend")),
    ("model.task embed", _model(task="embed")),
    ("scheduler.prefix_caching false", lambda i: replace(i, scheduler=SchedulerIntent(prefix_caching=False))),
    ("scheduler.chunked_prefill false", lambda i: replace(i, scheduler=SchedulerIntent(chunked_prefill=False))),
    ("speculative mtp (1 token)", lambda i: replace(i, speculative=SpeculativeIntent("mtp", 1))),
    (
        "speculative qwen3_5_mtp (3 tokens), draft_eager",
        lambda i: replace(i, speculative=SpeculativeIntent("qwen3_5_mtp", 3, draft_eager=True)),
    ),
    (
        "speculative eagle3 (model e3, 3 tokens), draft_tensor_parallel 1",
        lambda i: replace(i, speculative=SpeculativeIntent("eagle3", 3, model="e3", draft_tensor_parallel=1)),
    ),
    ("graph.mode engine-default", lambda i: replace(i, graph_mode="engine-default")),
    ("memory.kv_cache_dtype fp8", lambda i: replace(i, kv_cache_dtype="fp8")),
    (
        "memory.kv_cache_dtype int8 + model.quantization w8a8",
        lambda i: replace(i, kv_cache_dtype="int8", model=replace(i.model, quantization="w8a8", quant_method="ascend")),
    ),
    ("scheduler.async_scheduling false", lambda i: replace(i, scheduler=SchedulerIntent(async_scheduling=False))),
    (
        "serving.tool_call_parser hermes + auto_tool_choice",
        lambda i: replace(i, serving=ServingIntent(tool_call_parser="hermes", auto_tool_choice=True)),
    ),
    (
        "serving.reasoning_parser deepseek_r1",
        lambda i: replace(i, serving=ServingIntent(reasoning_parser="deepseek_r1")),
    ),
    ("serving.chat_template /srv/t.jinja", lambda i: replace(i, serving=ServingIntent(chat_template="/srv/t.jinja"))),
    (
        "serving.limit_mm_per_prompt {image: 1, video: 0}",
        lambda i: replace(i, serving=ServingIntent(limit_mm_per_prompt={"image": 1, "video": 0})),
    ),
    ("serving.mm_processor_cache_gb 0", lambda i: replace(i, serving=ServingIntent(mm_processor_cache_gb=0))),
    (
        "serving.lora (adapter sql=/a/sql, max_rank 64)",
        lambda i: replace(i, serving=ServingIntent(lora=LoraIntent(adapters=(("sql", "/a/sql"),), max_rank=64))),
    ),
    (
        "serving.prefill_context_parallel 2",
        lambda i: replace(i, serving=ServingIntent(prefill_context_parallel=2)),
    ),
    (
        "serving.structured_outputs_backend xgrammar",
        lambda i: replace(i, serving=ServingIntent(structured_outputs_backend="xgrammar")),
    ),
    (
        "server.shutdown_timeout 60",
        lambda i: replace(i, server=ServerIntent(shutdown_timeout=60, shutdown_timeout_explicit=True)),
    ),
    (
        "eplb dynamic, 16 redundant (TP16 + EP)",
        lambda i: replace(
            i,
            parallel=ParallelIntent(tensor=16, expert=True),
            devices_per_node=16,
            eplb=EplbIntent(mode="dynamic", redundant_experts=16),
        ),
    ),
    (
        "2 nodes, DP4 × TP4: node 1",
        lambda i: replace(i, parallel=ParallelIntent(tensor=4, data=4), nodes=TWO_NODES, devices_per_node=8),
    ),
)


def _ascend(name: str, value: bool | str) -> Change:
    settings: dict[str, Any] = {name: value}
    return _npu_only(lambda i: replace(i, ascend=AscendIntent(**settings)))


# The vllm-ascend switches (engine.ascend), each turned on: one row per switch shows its spelling per release.
SAMPLES += tuple((f"engine.ascend.{name} true", _ascend(name, True)) for name in SWITCH_FIELDS)
SAMPLES += (("engine.ascend.jemalloc /usr/lib/libjemalloc.so.2", _ascend("jemalloc", "/usr/lib/libjemalloc.so.2")),)


def _base(col: ReleaseColumn) -> EngineIntent:
    return _with_traits(col, _bare(col))


def _bare(col: ReleaseColumn) -> EngineIntent:
    return EngineIntent(
        backend=col.backend,  # type: ignore[arg-type]
        hardware="a2" if col.backend == "npu" else None,
        vllm=col.vllm,
        vllm_ascend=col.vllm_ascend,
        cann=col.cann,
        model=ModelIntent(source="org/model"),
        driver="25.5.1",
        graph_mode="eager",
    )


def _items(intent: EngineIntent) -> tuple[set[str], list[str], list[str]]:
    """What a plan emits, as comparable items (flag with value, env var, config key), plus problems."""
    result = plan_commands(intent)
    command = result.commands[-1]
    items: set[str] = set()
    argv = list(command.argv)
    i = 3 if argv[:2] == ["vllm", "serve"] else 0
    while i < len(argv):
        flag = argv[i]
        values = []
        while i + 1 < len(argv) and not (argv[i + 1].startswith("-") and canonical_flag(argv[i + 1])):
            values.append(argv[i + 1])
            i += 1
        i += 1
        if flag in ("--compilation-config", "--additional-config"):
            items |= {f"{flag} {k}" for k in _leaves(json.loads(values[0]))}
        elif flag == "--speculative-config":
            items.add(f"{flag} {json.dumps(json.loads(values[0]), separators=(',', ':'))}")
        else:
            items.add(" ".join([flag, *values]))
    items |= {f"env {k}={v}" for k, v in command.env.items()}
    return items, list(result.unsupported), list(result.warnings)


def _leaves(obj: Any, prefix: str = "") -> list[str]:
    if isinstance(obj, dict):
        out: list[str] = []
        for k, v in obj.items():
            out += _leaves(v, f"{prefix}.{k}" if prefix else str(k))
        return out
    return [f"{prefix}={json.dumps(obj)}"]


def _with_traits(col: ReleaseColumn, intent: EngineIntent) -> EngineIntent:
    if intent.hardware is None:
        return intent
    return replace(intent, traits=col.traits.get(intent.hardware, HardwareTraits()))


def _cell(col: ReleaseColumn, change: Change) -> str:
    changed = change(_base(col))
    if changed is None:
        return "—"
    changed = _with_traits(col, changed)
    base_items, _, base_warnings = _items(_base(col))
    items, problems, warnings = _items(changed)
    if problems:
        return "✗ unsupported"
    shown = [f"`{a}`" for a in sorted(items - base_items)]
    dropped = [
        w for w in warnings if w not in base_warnings and any(s in w for s in ("not emitted", "not applied", "ignored"))
    ]
    if dropped:
        shown.append("⚠ not applied on this vLLM")
    return "<br>".join(shown) if shown else "(nothing)"


def render(columns: Sequence[ReleaseColumn], *, command: str) -> str:
    out = [
        "# How intent maps to flags per release",
        "",
        f"<!-- Generated by `{command}` from the era adapters (engine/ascendctl_engine/adapters/). Do not "
        f"edit by hand: a test "
        "fails when this file is stale. -->",
        "",
        "A profile states intent once; the planner turns it into the flags and environment of the release it "
        "pins. Each topic below is a table of eras keyed by version ranges (vllm-ascend versions for Ascend, "
        "vLLM versions for the upstream engine); exactly one era applies per release. Every emitted flag is "
        "checked against the real-parser snapshot of that vLLM (`engine/ascendctl_engine/data/parsers/`) "
        "and, on Ascend, every "
        "`--additional-config` key and `VLLM_ASCEND_*` variable against the tag's key table "
        "(`engine/ascendctl_engine/data/ascend_keys/`).",
        "",
        "## Intent → what is planned, per release",
        "",
        "Each cell lists what the intent adds to a plain single-device eager plan of a dense model on that "
        "release (flags with their values, keys inside the JSON options, env vars); ✗ marks combinations the "
        "release cannot do (the planner fails unless unsupported combinations are allowed); ⚠ marks intent "
        "that release cannot express (dropped with a warning); — not applicable.",
        "",
        "| intent | " + " | ".join(c.label for c in columns) + " |",
        "|---|" + "---|" * len(columns),
    ]
    for name, change in SAMPLES:
        out.append(f"| {name} | " + " | ".join(_cell(c, change) for c in columns) + " |")
    out += ["", "## Eras by topic", ""]
    for topic in TOPICS:
        eras = [e for e in REGISTRY if e.topic == topic]
        out += [f"### {topic}", "", "| era | applies to | planned | source |", "|---|---|---|---|"]
        for e in eras:
            axis = "vllm-ascend" if e.axis == "vllm_ascend" else "vLLM"
            where = f"{axis} `{e.spec}`" if e.spec else f"every {axis}"
            where += f" ({', '.join(sorted(e.backends))})"
            out.append(f"| {e.name} | {where} | {e.summary.replace('|', '/')} | {e.source.replace('|', '/')} |")
        out.append("")
    return "\n".join(out).rstrip() + "\n"
