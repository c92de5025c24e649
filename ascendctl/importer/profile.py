"""A profile drafted from launch scripts: typed fields wherever one says the script's spelling, escape hatches
(`engine.extra_args`, `runtime.env`, `network.nodes[i]`) for the rest.

Pure but for one read: data in, data out (the ModelSlim description of a local model directory is read where the
name states no quantization). Which options become which fields is the table below (the inverse of what the era
adapters emit for those fields); everything else stays as written, so a plan of the draft can still reproduce
the script. `ascendctl.importer.run` plans the draft, drops the hatches the plan already reproduces on its own
(an `OMP_NUM_THREADS=1` ascendctl sets anyway) and reports what still differs.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import UnionType
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from ascendctl.core.dotted import dotted_get
from ascendctl.core.errors import UserInputError
from ascendctl.facts.checkpoint_names import QUANTIZATIONS, quantization_from_name
from ascendctl.facts.matrix import load_matrix
from ascendctl.facts.matrix.release_pins import release_for_pin
from ascendctl.facts.model_inspect import MODELSLIM_DESCRIPTION, described_quant_type
from ascendctl.importer.compare import MODEL_KEY
from ascendctl.importer.script import LaunchScript
from ascendctl.importer.switches import is_meaning_field, leaves, meaning, table_of, without
from ascendctl.schema.profile import Profile
from ascendctl.schema.secrets import API_KEY_VAR, secret_flags, secret_label
from ascendctl_engine.adapters.env import INTRA_NODE, TIMEOUT_VARIABLES
from ascendctl_engine.adapters.eplb import FIELD_OF as EPLB_FIELD_OF
from ascendctl_engine.adapters.eplb import TOP_LEVEL as EPLB_TOP_LEVEL
from ascendctl_engine.adapters.parser_snapshot import parser_distribution, snapshot_for
from ascendctl_engine.argv_items import ArgItem, parse_args
from ascendctl_engine.json_args import ADDITIONAL_CONFIG, ADDITIONAL_CONFIG_SHORTEST, spells
from ascendctl_engine.sections.fields import HUB_ID
from ascendctl_engine.typed_fields import owner

Converter = Callable[[ArgItem], Any]


def _value(item: ArgItem) -> Any:
    return item.value


def _switch(item: ArgItem) -> bool:
    """A switch (`--x`, `--x true`) is True; its `--no-x` / `--disable-x` spelling or a false value is False."""
    if item.flag.startswith(("--no-", "--disable-")):
        return False
    return item.value is None or item.value.strip().lower() not in ("false", "0", "no")


# More digits than any count or size an option takes (an int64 has 19), and far fewer than Python's int() reads
# (4300): a longer run is refused in these words, not int()'s.
MAX_DIGITS = 100


def _whole(text: str) -> int | None:
    """`text` as a whole number when it is ASCII digits (`²` is a digit to `str.isdigit`, not to int()), else
    None. Raises ValueError for more than MAX_DIGITS digits."""
    if not (text.isascii() and text.isdigit()):
        return None
    if len(text) > MAX_DIGITS:
        raise ValueError(f"an integer of {len(text)} digits (no option takes more than {MAX_DIGITS})")
    return int(text)


def _int(item: ArgItem) -> Any:
    text = item.value or ""
    number = _whole(text)
    return text if number is None else number


def _float(item: ArgItem) -> Any:
    try:
        return float(item.value or "")
    except ValueError:
        return item.value


# Option (canonical long flag, or the short spelling vLLM also takes) → (profile field, how its value becomes
# the field's). The adapters emit these flags from exactly these fields (adapters/model.py, parallel.py,
# scheduler.py, serving.py, graph.py, kv_cache.py); a value the schema refuses is left as written instead.
_FIELDS: dict[str, tuple[str, Converter]] = {
    "--served-model-name": ("model.served_name", _value),
    "--trust-remote-code": ("model.trust_remote_code", _switch),
    "--no-trust-remote-code": ("model.trust_remote_code", _switch),
    "--max-model-len": ("model.max_model_len", _int),
    "--dtype": ("model.dtype", _value),
    "--revision": ("model.revision", _value),
    "--hf-overrides": ("model.hf_overrides", lambda item: _json_object(item) or item.value),
    "--tensor-parallel-size": ("engine.parallel.tensor", _int),
    "-tp": ("engine.parallel.tensor", _int),
    "--pipeline-parallel-size": ("engine.parallel.pipeline", _int),
    "-pp": ("engine.parallel.pipeline", _int),
    "--data-parallel-size": ("engine.parallel.data", _int),
    "-dp": ("engine.parallel.data", _int),
    "--data-parallel-size-local": ("engine.parallel.data_per_node", _int),
    "-dpl": ("engine.parallel.data_per_node", _int),
    "--enable-expert-parallel": ("engine.parallel.expert", _switch),
    "-ep": ("engine.parallel.expert", _switch),
    "--distributed-executor-backend": ("engine.parallel.executor", _value),
    "--data-parallel-rpc-port": ("network.dp_rpc_port", _int),
    "--enforce-eager": ("engine.graph.mode", lambda item: "eager" if _switch(item) else "engine-default"),
    "--gpu-memory-utilization": ("engine.memory.device_utilization", _float),
    "--kv-cache-dtype": ("engine.memory.kv_cache_dtype", _value),
    "--max-num-seqs": ("engine.scheduler.max_num_seqs", _int),
    "--max-num-batched-tokens": ("engine.scheduler.max_num_batched_tokens", _int),
    "--enable-prefix-caching": ("engine.scheduler.prefix_caching", _switch),
    "--no-enable-prefix-caching": ("engine.scheduler.prefix_caching", _switch),
    "--enable-chunked-prefill": ("engine.scheduler.chunked_prefill", _switch),
    "--no-enable-chunked-prefill": ("engine.scheduler.chunked_prefill", _switch),
    "--async-scheduling": ("engine.scheduler.async_scheduling", _switch),
    "--no-async-scheduling": ("engine.scheduler.async_scheduling", _switch),
    "--host": ("server.host", _value),
    "--port": ("server.port", _int),
    "--tool-call-parser": ("serving.tool_call_parser", _value),
    "--reasoning-parser": ("serving.reasoning_parser", _value),
    "--chat-template": ("serving.chat_template", _value),
    "--enable-auto-tool-choice": ("serving.auto_tool_choice", _switch),
}
# Multi-node wiring the planner derives from `network` (each node's address and role); a script's own spelling is
# read into `network` (`import_scripts`) and not kept as an escape hatch.
_DERIVED = frozenset({"--data-parallel-address", "--data-parallel-start-rank", "--headless", "--data-parallel-rank"})
# Data-parallel wiring vLLM does not read when every rank runs on one node (`importer.compare`).
_ONE_NODE_UNUSED = frozenset({"--data-parallel-address", "--data-parallel-start-rank"})
# vLLM's `--compilation-config` `cudagraph_mode` → `engine.graph.mode`.
_GRAPH_MODES = {
    "NONE": "eager",
    "PIECEWISE": "piecewise",
    "FULL": "full",
    "FULL_DECODE_ONLY": "full-decode-only",
    "FULL_AND_PIECEWISE": "full-and-piecewise",
}
# `ASCEND_RT_VISIBLE_DEVICES=0,1,2,3` → the devices the profile targets.
_DEVICES_ENV = "ASCEND_RT_VISIBLE_DEVICES"


@dataclass
class Draft:
    """The drafted profile (plain data, YAML-ready), and every escape hatch it had to use."""

    document: dict[str, Any]
    hatches: list[str] = field(default_factory=list)  # "engine.extra_args: --foo 1", "runtime.env.X"
    notes: list[str] = field(default_factory=list)  # what the scripts said that the profile does not carry
    typed: dict[str, tuple[str, ...]] = field(default_factory=dict)  # field → the tokens it came from
    claimed: dict[str, tuple[str, ...]] = field(default_factory=dict)  # fields read through a claim: verified
    unread: dict[str, str] = field(default_factory=dict)  # a variable the release does not read → why (left out)
    parser: Any = None  # the release's real-parser snapshot (None: an unknown release); options at its default


def draft_profile(
    scripts: Sequence[LaunchScript], *, name: str, release: str, backend: str, hardware: str | None
) -> Draft:
    """The profile of `scripts` (node order: the first is node 0), before any planning."""
    head = scripts[0]
    argv = list(head.argv)
    doc: dict[str, Any] = {"apiVersion": "ascendctl/v1", "kind": "Profile", "metadata": {"name": name}}
    target: dict[str, Any] = {"backend": backend, "nodes": len(scripts)}
    if hardware:
        target["hardware"] = hardware
    doc["target"] = target
    doc["release"] = release
    draft = Draft(doc, parser=_parser(release, backend))
    model = argv.pop(0) if argv and not argv[0].startswith("-") else None
    try:
        _model(draft, model, argv)
        extra = _flags(draft, argv)
    except ValueError as exc:
        raise ValueError(f"line {head.line}: {exc}") from None
    if extra:
        _put(doc, "engine.extra_args", extra)
        draft.hatches.append("engine.extra_args: " + " ".join(extra))
    _devices(draft, head.env)
    _put(doc, "engine.graph.mode", dotted_get(doc, "engine.graph.mode") or "engine-default")
    return draft


def _model(draft: Draft, model: str | None, argv: list[str]) -> None:
    """`model.source` from the positional model (or `--model`); quantization from `--quantization` and the name."""
    items = _items(argv)
    named = next((i for i in items if i.flag == "--model" and i.value), None)
    source = model or (named.value if named else None)
    if source is None:
        raise ValueError("the script serves no model (no positional model and no --model)")
    _put(draft.document, "model.source", source)
    draft.typed["model.source"] = (source,)
    quant = next((i for i in items if i.flag == "--quantization" and i.value), None)
    if quant is not None and quant.value == "ascend":
        guess: str | None = quantization_from_name(source)
        said = f"read from the model name {source!r}"
        if guess is None:  # a directory's description says, else the plan detects it (or keeps the flag)
            guess, said = described_quantization(source)
        if guess is not None:
            _put(draft.document, "model.quantization", guess)
            draft.typed["model.quantization"] = quant.tokens
            draft.notes.append(f"model.quantization {guess}: {said} (--quantization ascend)")


def described_quantization(source: str) -> tuple[str, str]:
    """The quantization `--quantization ascend` loads when the model's name states none: the type its local
    ModelSlim description states, else `auto` (the plan reads the description where the model is)."""
    described = described_quant_type(source)
    if described is not None and described in QUANTIZATIONS:
        return described, f"read from {source}/{MODELSLIM_DESCRIPTION} (model_quant_type)"
    return "auto", "the model name states no ModelSlim type; the plan detects it in the model directory"


def _items(argv: Sequence[str]) -> tuple[ArgItem, ...]:
    try:
        return parse_args(list(argv))
    except ValueError as exc:
        raise ValueError(f"the serve command's arguments: {exc}") from None


def _flags(draft: Draft, argv: list[str]) -> list[str]:
    """Typed fields for the options the table knows; the tokens of every other option, as written (a JSON value
    written over several lines made one line, as vLLM reads it the same)."""
    extra: list[str] = []
    for item in _items(argv):
        try:
            extra += _flag(draft, item)
        except ValueError as exc:
            raise ValueError(f"`{item.as_written}`: {exc}") from None
    return extra


def _flag(draft: Draft, item: ArgItem) -> list[str]:
    """One option into its typed field; the tokens to keep as written (an escape hatch) when no field says it."""
    if item.flag == "--model" or (item.flag == "--quantization" and "model.quantization" in draft.typed):
        return []
    for secret in secret_flags([item]):  # any spelling vLLM reads: `--api_key=V`, `--api-k V`, `--hf-token V`
        _secret_reference(draft, secret.flag, secret.variable)
        return []
    if _wiring(draft, item):
        return []
    if item.flag == "--compilation-config" and _graph(draft, item):
        return []
    if item.flag == "--speculative-config" and _speculative(draft, item):
        return []
    if spells(item, ADDITIONAL_CONFIG, ADDITIONAL_CONFIG_SHORTEST):
        return _additional_switches(draft, item)
    known = _FIELDS.get(item.flag) or _FIELDS.get(item.as_written)
    if known is None:
        return _unlisted(draft, item)
    if item.key is not None:
        return [_one_line(t) for t in item.tokens]
    path, convert = known
    _put(draft.document, path, convert(item))
    draft.typed[path] = item.tokens
    return []


def _unlisted(draft: Draft, item: ArgItem) -> list[str]:
    """An option the table does not list: a field that claims it, nothing where it says vLLM's own default (the
    comparison says `default`), else kept as written."""
    if item.key is None and (_claimed_flag(draft, item) or _parser_default(draft.parser, item)):
        return []
    return [_one_line(t) for t in item.tokens]


def _wiring(draft: Draft, item: ArgItem) -> bool:
    """Multi-node wiring the planner derives from `network` (read there, not kept as written); on one node, the
    data-parallel wiring vLLM does not use (the comparison says so, with its source)."""
    nodes = draft.document["target"]["nodes"]
    if item.flag in _DERIVED and nodes > 1:
        draft.typed["network.nodes"] = (*draft.typed.get("network.nodes", ()), *item.tokens)
        return True
    return item.flag in _ONE_NODE_UNUSED and nodes == 1


def _parser(release: str, backend: str) -> Any:
    """The release's real-parser snapshot, None for a release the matrix does not know (the plan says why)."""
    try:
        row = release_for_pin(load_matrix(), backend, release)
        return snapshot_for(row.vllm, parser_distribution(row.backend))
    except (UserInputError, ValueError, KeyError):
        return None


def _parser_default(parser: Any, item: ArgItem) -> bool:
    """Whether `item` says what the release's vLLM does without it: `--no-X` where X is off by default, or a value
    equal to the option's default."""
    opt = parser.option(item.tokens[0]) if parser is not None else None
    if opt is None or opt.default is None or str(opt.default).startswith("repr:"):
        return False
    if item.flag in opt.negative:
        return opt.default is False
    if item.value is None:
        return opt.default is True
    return str(opt.default) == item.value.strip()


def _secret_reference(draft: Draft, flag: str, variable: str) -> None:
    """A secret-valued flag is never copied: the profile names the variable the engine reads the same secret
    from (`server.api_key` for the API key, `runtime.secrets` otherwise), set in the environment of `serve`."""
    if variable == API_KEY_VAR:
        _put(draft.document, "server.api_key", {"env": variable})
    else:
        _put(draft.document, f"runtime.secrets.{variable}", {"env": variable})
    draft.notes.append(f"{flag}: a secret; {secret_label(variable)} reads it from ${variable} (not copied)")


def _claimed_flag(draft: Draft, item: ArgItem) -> bool:
    """An option a typed field claims (`typed_fields`: `--block-size` is `engine.memory.block_size`), read into
    that field when its value is one the field takes; the caller plans the draft and puts the option back as
    written when the plan does not emit it with the script's value."""
    claim = owner("flag", item.flag)
    if claim is None or claim.field in draft.typed or dotted_get(draft.document, claim.field) is not None:
        return False
    value = _field_value(claim.field, item.value) if item.value is not None else _NO_VALUE
    if value is _NO_VALUE:
        return False
    _put(draft.document, claim.field, value)
    draft.typed[claim.field] = item.tokens
    draft.claimed[claim.field] = item.tokens
    return True


def _graph(draft: Draft, item: ArgItem) -> bool:
    """`--compilation-config '{"cudagraph_mode": M, "cudagraph_capture_sizes": [...]}'` → engine.graph; only when
    the object holds nothing else (a partial split would emit the flag twice)."""
    value = _json_object(item)
    if value is None or not value or set(value) - {"cudagraph_mode", "cudagraph_capture_sizes"}:
        return False
    if "engine.graph.mode" in draft.typed:  # `--enforce-eager` said it already, and wins over cudagraph_mode
        return False
    mode = _GRAPH_MODES.get(str(value.get("cudagraph_mode", "")).upper()) if "cudagraph_mode" in value else None
    if "cudagraph_mode" in value and mode is None:
        return False
    if mode is not None:
        _put(draft.document, "engine.graph.mode", mode)
    if "cudagraph_capture_sizes" in value:
        _put(draft.document, "engine.graph.capture_sizes", value["cudagraph_capture_sizes"])
    draft.typed["engine.graph"] = item.tokens
    return True


# `--speculative-config` keys → `engine.speculative` fields.
_SPECULATIVE_KEYS = {
    "method": "method",
    "num_speculative_tokens": "num_tokens",
    "model": "model",
    "enforce_eager": "draft_eager",  # the drafter's own eager switch (vLLM's SpeculativeConfig)
}


def _speculative(draft: Draft, item: ArgItem) -> bool:
    value = _json_object(item)
    if value is None or "method" not in value or set(value) - set(_SPECULATIVE_KEYS):
        return False
    for key, target in _SPECULATIVE_KEYS.items():
        if key in value:
            _put(draft.document, f"engine.speculative.{target}", value[key])
    draft.typed["engine.speculative"] = item.tokens
    return True


def _additional_switches(draft: Draft, item: ArgItem) -> list[str]:
    """The `engine.ascend` switches an `--additional-config` object turns on or off, each read into its field as the
    release reads the key (`ascendctl.importer.switches`); the rest of the object stays as written."""
    config = _json_object(item) if item.key is None else None
    if config is None:
        return [_one_line(t) for t in item.tokens]
    table = table_of(str(draft.document.get("release", "")))
    for path, value in leaves(config):
        said = meaning(table, "key", path, value)
        if said is None or said.field in draft.typed or dotted_get(draft.document, said.field) is not None:
            continue
        _put(draft.document, said.field, said.on)
        draft.typed[said.field] = (f"{ADDITIONAL_CONFIG} {path}={json.dumps(value)}",)
        without(config, path)
    _eplb(draft, config)
    for problem in table.check(config) if table is not None else ():
        if problem.kind == "not-read":  # the release ignores it: left out, reported as ignored with why
            draft.unread[f"{ADDITIONAL_CONFIG}.{problem.path}"] = problem.message
            without(config, problem.path)
    if not config:
        return []
    # what is left joins the plan's own object: a second `--additional-config` would replace the plan's whole one
    merged = dict(dotted_get(draft.document, "engine.additional_config") or {})
    merged.update(config)
    _put(draft.document, "engine.additional_config", merged)
    draft.hatches.append(f"engine.additional_config: {json.dumps(config, separators=(',', ':'))}")
    return []


def _eplb(draft: Draft, config: dict[str, Any]) -> None:
    """vllm-ascend's EPLB keys (`eplb_config.*`, or the v0.11 era's top-level names) → `engine.eplb`: dynamic where
    `dynamic_eplb` is true, static where only an expert map is loaded (the spellings are `adapters.eplb`'s); only
    where the release reads them and the plan spells them the same way."""
    given = _eplb_keys(config)
    if not given or "engine.eplb" in draft.typed or not _spelled_as_planned(draft, given):
        return
    dynamic = given.get("dynamic_eplb", ("", False))[1] is True
    mode = "dynamic" if dynamic else ("static" if "expert_map_path" in given else None)
    if mode is None:
        return
    fields: dict[str, Any] = {"mode": mode}
    fields.update({EPLB_FIELD_OF[key]: value for key, (_, value) in given.items() if EPLB_FIELD_OF[key] != "mode"})
    _put(draft.document, "engine.eplb", fields)
    draft.typed["engine.eplb"] = tuple(f"{ADDITIONAL_CONFIG} {path}={json.dumps(v)}" for path, v in given.values())
    for path, _ in given.values():
        without(config, path)


def _eplb_keys(config: Mapping[str, Any]) -> dict[str, tuple[str, Any]]:
    """`eplb_config` name → (the key path as written, its value); {} where a key has no `engine.eplb` field."""
    nested = config.get("eplb_config")
    given: dict[str, tuple[str, Any]] = {}
    if isinstance(nested, dict):
        given.update({key: (f"eplb_config.{key}", value) for key, value in nested.items()})
    given.update({EPLB_TOP_LEVEL[key]: (key, value) for key, value in config.items() if key in EPLB_TOP_LEVEL})
    return given if all(key in EPLB_FIELD_OF for key in given) else {}


def _spelled_as_planned(draft: Draft, given: Mapping[str, tuple[str, Any]]) -> bool:
    """Whether the release reads every key as written and the plan would write the same spellings (`eplb_config`
    where the release has it, the top-level names before)."""
    table = table_of(str(draft.document.get("release", "")))
    if table is None:
        return False
    nested = table.key("eplb_config") is not None
    return all(table.key(path) is not None and path.startswith("eplb_config.") == nested for path, _ in given.values())


def _one_line(token: str) -> str:
    """A JSON value as compact JSON (a tutorial's pretty-printed `--additional-config`); other tokens as written."""
    if "\n" not in token:
        return token
    try:
        return json.dumps(json.loads(token), separators=(",", ":"))
    except ValueError:
        return " ".join(token.split())


def _json_object(item: ArgItem) -> dict[str, Any] | None:
    if item.key is not None or item.value is None:
        return None
    try:
        value = json.loads(item.value)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _devices(draft: Draft, env: Mapping[str, str]) -> None:
    """`ASCEND_RT_VISIBLE_DEVICES` → `target.visible_devices` and `devices_per_node` (else the parallel sizes)."""
    text = env.get(_DEVICES_ENV, "")
    try:
        found = [_whole(part.strip()) for part in text.split(",")] if text else []
    except ValueError as exc:
        raise ValueError(f"`{_DEVICES_ENV}`: {exc}") from None
    ids = [n for n in found if n is not None]
    target = draft.document["target"]
    if ids and len(ids) == len(text.split(",")):
        target["devices_per_node"] = len(ids)
        if ids != list(range(len(ids))):
            target["visible_devices"] = ids
        draft.typed["target.visible_devices"] = (f"{_DEVICES_ENV}={text}",)
        return
    nodes = int(target.get("nodes") or 1)
    tensor = dotted_get(draft.document, "engine.parallel.tensor") or 1
    pipeline = dotted_get(draft.document, "engine.parallel.pipeline") or 1
    data = dotted_get(draft.document, "engine.parallel.data") or 1
    local = dotted_get(draft.document, "engine.parallel.data_per_node")
    context = dotted_get(draft.document, "serving.prefill_context_parallel") or 1  # a rank group of its own
    sizes = [tensor, pipeline, context, local or data]
    count = 1
    for size in sizes:
        count *= size if isinstance(size, int) else 1
    if nodes > 1 and local is None:
        # spread over the nodes: data-parallel ranks evenly, or one model over every node's devices (Ray, --nnodes)
        count = max(1, count // nodes)
    target["devices_per_node"] = count


def typed_env(draft: Draft, env: Mapping[str, str]) -> dict[str, str]:
    """Node 0's variables a typed field claims (`typed_fields`: `VLLM_ASCEND_ENABLE_FLASHCOMM1` is
    `engine.ascend.flashcomm1`), read into that field: {variable: field}. The caller plans the draft and gives a
    variable back to `runtime.env` when the plan does not set it to the script's value."""
    out: dict[str, str] = {}
    for name, text in env.items():
        claim = owner("env", name)
        if claim is not None and claim.field == "model.source":
            if _modelscope_source(draft, name, text):
                out[name] = "model.source"
            continue
        if claim is None or claim.field in draft.typed or dotted_get(draft.document, claim.field) is not None:
            continue
        if claim.field in _FROM_ENV:  # a field spelled by several variables, or in another unit
            value, names = _FROM_ENV[claim.field](env)
            if value is not _NO_VALUE:
                _put(draft.document, claim.field, value)
                draft.typed[claim.field] = tuple(f"{n}={env[n]}" for n in names)
                out[name] = claim.field
            continue
        if is_meaning_field(claim.field):  # as the release's getter reads it, where it reads it at all
            said = meaning(table_of(str(draft.document.get("release", ""))), "env", name, text)
            value = _NO_VALUE if said is None else said.on
        else:
            try:
                value = _field_value(claim.field, text)
            except ValueError as exc:
                raise ValueError(f"`{name}`: {exc}") from None
        if value is _NO_VALUE:
            continue
        _put(draft.document, claim.field, value)
        draft.typed[claim.field] = (f"{name}={text}",)
        out[name] = claim.field
    return out


def _intra_node(env: Mapping[str, str]) -> tuple[Any, tuple[str, ...]]:
    """`network.hccl.intra_node` from the pair of variables the plan sets for it (`adapters.env.INTRA_NODE`)."""
    for mode, pairs in INTRA_NODE.items():
        if all(env.get(var, "").strip() == value for var, value in pairs):
            return mode, tuple(var for var, _ in pairs)
    return _NO_VALUE, ()


def _timeout(field: str) -> Callable[[Mapping[str, str]], tuple[Any, tuple[str, ...]]]:
    """A `runtime.timeouts` field (seconds) from its variable, in the variable's unit (`VLLM_RPC_TIMEOUT` is ms)."""
    variable, factor = TIMEOUT_VARIABLES[field]

    def read(env: Mapping[str, str]) -> tuple[Any, tuple[str, ...]]:
        number = _whole(env.get(variable, "").strip())
        if number is None or number % factor or number < factor:
            return _NO_VALUE, ()
        return number // factor, (variable,)

    return read


_FROM_ENV: dict[str, Callable[[Mapping[str, str]], tuple[Any, tuple[str, ...]]]] = {
    "network.hccl.intra_node": _intra_node,
    **{f"runtime.timeouts.{field}": _timeout(field) for field in TIMEOUT_VARIABLES},
}


def _modelscope_source(draft: Draft, name: str, text: str) -> bool:
    """`VLLM_USE_MODELSCOPE=True` with a hub id `ORG/NAME` is the source `modelscope:ORG/NAME`."""
    source = str(dotted_get(draft.document, "model.source") or "")
    if text.strip().lower() != "true" or ":" in source or not re.fullmatch(HUB_ID, source):
        return False
    _put(draft.document, "model.source", f"modelscope:{source}")
    draft.typed["model.source"] = (*draft.typed.get("model.source", ()), f"{name}={text}")
    return True


_NO_VALUE = object()
_TRUE, _FALSE = ("1", "true", "yes", "on"), ("0", "false", "no", "off")


def _field_value(path: str, text: str) -> Any:
    """`text` as the field's type (a switch from `1` / `true`, a number, one of its words), or `_NO_VALUE` when
    it is none of the plain types the field takes."""
    for kind in field_types(path):
        value = _as(kind, text)
        if value is not _NO_VALUE:
            return value
    return _NO_VALUE


def _as(kind: Any, text: str) -> Any:
    low = text.strip().lower()
    if kind is bool:
        return True if low in _TRUE else (False if low in _FALSE else _NO_VALUE)
    if kind is int:
        number = _whole(low)
        return _NO_VALUE if number is None else number
    if kind is float:
        try:
            return float(low)
        except ValueError:
            return _NO_VALUE
    if get_origin(kind) is Literal:
        return text if text in get_args(kind) else _NO_VALUE
    return text if kind is str else _NO_VALUE


def field_types(path: str) -> tuple[Any, ...]:
    """The plain types (bool, int, float, str, a Literal) a profile field takes, ints before words; () for a
    section, a list or a mapping."""
    model: Any = Profile
    annotation: Any = None
    for part in path.split("."):
        fields = getattr(model, "model_fields", None)
        if fields is None or part not in fields:
            return ()
        annotation = _unwrap(fields[part].annotation)
        model = annotation
    options = get_args(annotation) if get_origin(annotation) in (Union, UnionType) else (annotation,)
    plain = [_unwrap(a) for a in options if a is not type(None)]
    kept = [a for a in plain if a in (bool, int, float, str) or get_origin(a) is Literal]
    return tuple(sorted(kept, key=lambda a: 0 if a is int else (1 if a is float else 2)))


def _unwrap(annotation: Any) -> Any:
    """`X | None` → X; `Annotated[X, ...]` → X (repeatedly)."""
    while True:
        origin = get_origin(annotation)
        if origin is Annotated:
            annotation = get_args(annotation)[0]
        elif origin in (Union, UnionType):
            rest = [a for a in get_args(annotation) if a is not type(None)]
            if len(rest) != 1:
                return annotation
            annotation = rest[0]
        else:
            return annotation


def _put(doc: dict[str, Any], path: str, value: Any) -> None:
    *parents, leaf = path.split(".")
    node = doc
    for part in parents:
        node = node.setdefault(part, {})
    node[leaf] = value


def drop(doc: dict[str, Any], path: str) -> None:
    """Remove a dotted path (and parents it leaves empty)."""
    *parents, leaf = path.split(".")
    chain: list[dict[str, Any]] = [doc]
    for part in parents:
        nxt = chain[-1].get(part)
        if not isinstance(nxt, dict):
            return
        chain.append(nxt)
    chain[-1].pop(leaf, None)
    for depth in range(len(parents), 0, -1):
        if not chain[depth]:
            chain[depth - 1].pop(parents[depth - 1], None)


__all__ = ["MODEL_KEY", "Draft", "draft_profile", "drop", "field_types", "quantization_from_name", "typed_env"]
