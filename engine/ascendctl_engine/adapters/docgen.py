"""Generates docs/intent-to-flags.md from the era registry and from planning sample intents, so the table
can never drift from the adapters (a test regenerates it and compares)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import field, replace
from typing import Any

from ascendctl_engine.adapters import plan_commands
from ascendctl_engine.adapters.ascend_switches import SWITCH_FIELDS
from ascendctl_engine.adapters.eras import REGISTRY, TOPICS
from ascendctl_engine.adapters.intent import EngineIntent, HardwareTraits, LoadedModel, intent_from_sections
from ascendctl_engine.flags import canonical_flag
from ascendctl_engine.mapping import deep_merge
from ascendctl_engine.records import record


@record
class ReleaseColumn:
    label: str  # e.g. "v0.13.0" or "cpu 0.32.0"
    backend: str
    vllm: str
    vllm_ascend: str | None
    cann: str | None = None
    # Hardware family → its traits (from the support matrix, passed in by the caller: engine/ imports no matrix).
    traits: Mapping[str, HardwareTraits] = field(default_factory=dict)


@record
class Sample:
    """One row of the table: a profile fragment (sections as an operator writes them, merged into the base
    profile) and what the planner would resolve beside it (`loaded` model facts, other intent values)."""

    name: str
    profile: Mapping[str, Any]
    loaded: Mapping[str, Any] = field(default_factory=dict)
    resolved: Mapping[str, Any] = field(default_factory=dict)
    npu_only: bool = False


def _at(path: str, value: Any) -> dict[str, Any]:
    """A nested profile fragment setting one dotted path."""
    *parents, leaf = path.split(".")
    out: dict[str, Any] = {leaf: value}
    for part in reversed(parents):
        out = {part: out}
    return out


def _sample(name: str, *settings: tuple[str, Any], **extra: Any) -> Sample:
    fragment: dict[str, Any] = {}
    for path, value in settings:
        fragment = deep_merge(fragment, _at(path, value))[0]
    return Sample(name, fragment, **extra)


_TWO_NODES = [{"address": "10.0.0.1", "interface": "eth0"}, {"address": "10.0.0.2", "interface": "eth0"}]

# Each sample differs from the base profile (dense model, one device, eager) by what its name says.
SAMPLES: tuple[Sample, ...] = (
    _sample("graph.mode auto (dense model)", ("engine.graph.mode", "auto")),
    _sample("graph.mode auto (DeepSeek-class, MLA)", ("engine.graph.mode", "auto"), loaded={"arch": "mla"}),
    _sample(
        "graph.mode piecewise + capture_sizes [1, 2, 4]",
        ("engine.graph.mode", "piecewise"),
        ("engine.graph.capture_sizes", [1, 2, 4]),
    ),
    _sample("graph.mode full", ("engine.graph.mode", "full")),
    _sample("graph.mode full-and-piecewise", ("engine.graph.mode", "full-and-piecewise")),
    _sample(
        "Atlas 300I Duo (CANN 9.1.0), full-decode-only",
        ("target.hardware", "300i-duo"),
        ("engine.graph.mode", "full-decode-only"),
        resolved={"cann": "9.1.0"},
        npu_only=True,
    ),
    _sample("model.quantization w8a8", ("model.quantization", "w8a8"), loaded={"quant_method": "ascend"}),
    _sample("model.task embed", ("model.task", "embed")),
    _sample("scheduler.prefix_caching false", ("engine.scheduler.prefix_caching", False)),
    _sample("scheduler.chunked_prefill false", ("engine.scheduler.chunked_prefill", False)),
    _sample("speculative mtp (1 token)", ("engine.speculative", {"method": "mtp", "num_tokens": 1})),
    _sample(
        "speculative qwen3_5_mtp (3 tokens), draft_eager",
        ("engine.speculative", {"method": "qwen3_5_mtp", "num_tokens": 3, "draft_eager": True}),
    ),
    _sample(
        "speculative eagle3 (model e3, 3 tokens), draft_tensor_parallel 1",
        ("engine.speculative", {"method": "eagle3", "num_tokens": 3, "model": "e3", "draft_tensor_parallel": 1}),
    ),
    _sample("graph.mode engine-default", ("engine.graph.mode", "engine-default")),
    _sample("memory.kv_cache_dtype fp8", ("engine.memory.kv_cache_dtype", "fp8")),
    _sample(
        "memory.kv_cache_dtype int8 + model.quantization w8a8",
        ("engine.memory.kv_cache_dtype", "int8"),
        ("model.quantization", "w8a8"),
        loaded={"quant_method": "ascend"},
    ),
    _sample("scheduler.async_scheduling false", ("engine.scheduler.async_scheduling", False)),
    _sample(
        "serving.tool_call_parser hermes + auto_tool_choice",
        ("serving.tool_call_parser", "hermes"),
        ("serving.auto_tool_choice", True),
    ),
    _sample("serving.reasoning_parser deepseek_r1", ("serving.reasoning_parser", "deepseek_r1")),
    _sample("serving.chat_template /srv/t.jinja", ("serving.chat_template", "/srv/t.jinja")),
    _sample(
        "serving.limit_mm_per_prompt {image: 1, video: 0}", ("serving.limit_mm_per_prompt", {"image": 1, "video": 0})
    ),
    _sample("serving.mm_processor_cache_gb 0", ("serving.mm_processor_cache_gb", 0)),
    _sample(
        "serving.lora (adapter sql=/a/sql, max_rank 64)",
        ("serving.lora", {"adapters": [{"name": "sql", "path": "/a/sql"}], "max_rank": 64}),
    ),
    _sample("serving.prefill_context_parallel 2", ("serving.prefill_context_parallel", 2)),
    _sample("serving.structured_outputs_backend xgrammar", ("serving.structured_outputs_backend", "xgrammar")),
    _sample("server.shutdown_timeout 60", ("server.shutdown_timeout", 60)),
    _sample(
        "eplb dynamic, 16 redundant (TP16 + EP)",
        ("engine.parallel", {"tensor": 16, "expert": True}),
        ("target.devices_per_node", 16),
        ("engine.eplb", {"mode": "dynamic", "redundant_experts": 16}),
    ),
    _sample(
        "2 nodes, DP4 × TP4: node 1",
        ("engine.parallel", {"tensor": 4, "data": 4}),
        ("target.nodes", 2),
        ("target.devices_per_node", 8),
        ("network.nodes", _TWO_NODES),
    ),
)

# The vllm-ascend switches (engine.ascend), each turned on: one row per switch shows its spelling per release.
SAMPLES += tuple(
    _sample(f"engine.ascend.{name} true", (f"engine.ascend.{name}", True), npu_only=True) for name in SWITCH_FIELDS
)
SAMPLES += (
    _sample(
        "engine.ascend.jemalloc /usr/lib/libjemalloc.so.2",
        ("engine.ascend.jemalloc", "/usr/lib/libjemalloc.so.2"),
        npu_only=True,
    ),
)


def _base_profile(col: ReleaseColumn) -> dict[str, Any]:
    target: dict[str, Any] = {"backend": col.backend}
    if col.backend == "npu":
        target["hardware"] = "a2"
    return {"model": {"source": "org/model"}, "target": target, "engine": {"graph": {"mode": "eager"}}}


def _intent(col: ReleaseColumn, sample: Sample | None = None) -> EngineIntent | None:
    """The base intent of a release column, changed by `sample` (None: the sample does not apply)."""
    if sample is not None and sample.npu_only and col.backend != "npu":
        return None
    document = deep_merge(_base_profile(col), sample.profile if sample else {})[0]
    loaded = {"source": "org/model", **(sample.loaded if sample else {})}
    resolved = {"vllm": col.vllm, "vllm_ascend": col.vllm_ascend, "cann": col.cann, "driver": "25.5.1"}
    resolved.update(sample.resolved if sample else {})
    intent = intent_from_sections(document, loaded=LoadedModel(**loaded), **resolved)
    hardware = intent.hardware
    return replace(intent, traits=col.traits.get(hardware, HardwareTraits())) if hardware else intent


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


def _cell(col: ReleaseColumn, sample: Sample) -> str:
    changed = _intent(col, sample)
    base = _intent(col)
    if changed is None or base is None:
        return "—"
    base_items, _, base_warnings = _items(base)
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
    for sample in SAMPLES:
        out.append(f"| {sample.name} | " + " | ".join(_cell(c, sample) for c in columns) + " |")
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
