"""`profile.*` rules: cross-field rules of a profile that need no support matrix and no host.

Each problem points at the profile key it is about (`at`), so the loader reports it with `file:line`. Limits
of a hardware family (dtypes, fewest devices) are matrix facts and live in the `plan.*` rules.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping
from typing import Any

from ascendctl.core.findings import RULES, Finding, Outcome, evaluate, passed, problem, rule, skipped
from ascendctl.core.yamlio import KeyPath
from ascendctl.schema.declared_secrets import secret_sources
from ascendctl.schema.instances import PlacementError, instance_profile, place
from ascendctl.schema.profile import Profile
from ascendctl.schema.secrets import (
    ADDITIONAL_CONFIG,
    API_KEY_VAR,
    inline_secret_env,
    secret_config_args,
    secret_config_key,
    secret_flags,
)
from ascendctl_engine import typed_fields
from ascendctl_engine.argv_items import ArgItem
from ascendctl_engine.sections.fields import MAX_PORT
from ascendctl_engine.vocab import HARDWARE_FAMILIES, either


def profile_findings(profile: Profile) -> list[Finding]:
    """Every `profile.*` finding. A disaggregated profile is judged instance by instance (each as it is planned:
    its role's overrides, its nodes, its devices), once per distinct finding; a layout that cannot be placed is
    the one finding `profile.disaggregation.placement`."""
    if profile.disaggregation is None:
        return evaluate("profile", profile)
    placed = RULES["profile.disaggregation.placement"].findings(profile)
    if any(f.status == "fail" for f in placed):
        return placed
    out: dict[tuple[str, str], Finding] = {(f.id, f.message): f for f in placed}
    for one in place(profile):
        overrides = _overridden(profile, one.role)
        for f in evaluate("profile", instance_profile(profile, one)):
            at = f.at
            if at and at[0] == "engine" and tuple(at[1:]) in overrides:
                at = ("disaggregation", one.role, *at)
            message = f"{one.role}: {f.message}" if f.status in ("fail", "warn") else f.message
            out.setdefault((f.id, message), dataclasses.replace(f, at=at, message=message))
    return list(out.values())


def _overridden(profile: Profile, role: str) -> set[tuple[str, ...]]:
    """The engine paths a role group writes (prefixes included), to locate a finding where it was written."""
    assert profile.disaggregation is not None
    group = getattr(profile.disaggregation, role)
    paths: set[tuple[str, ...]] = set()

    def walk(data: Mapping[str, Any], prefix: tuple[str, ...]) -> None:
        for key, value in data.items():
            paths.add((*prefix, key))
            if isinstance(value, Mapping):
                walk(value, (*prefix, key))

    if group.engine is not None:
        walk(group.engine.model_dump(exclude_unset=True), ())
    return paths


@rule("profile.disaggregation.placement", "error", "The prefill and decode groups fill the target's nodes")
def placement(p: Profile) -> Outcome:
    if p.disaggregation is None:
        return skipped("one instance")
    try:
        placed = place(p)
    except PlacementError as exc:
        return problem(exc.message, _placement_fix(p, exc.at), at=exc.at)
    return passed(", ".join(f"{one.name} on node(s) {', '.join(map(str, one.hosts))}" for one in placed))


def _placement_fix(p: Profile, at: KeyPath) -> str:
    """The change that lets the layout be placed, by the setting `place` refused (`at`)."""
    per_node, key = p.target.devices_per_node, ".".join(map(str, at))
    if len(at) == 3 and at[2] == "devices":
        return f"set {key} to at most {per_node}, or raise target.devices_per_node"
    if len(at) == 2 and at[1] in ("prefill", "decode"):
        return f"remove {key}.devices or set it to {per_node}, or set {key}.nodes: 1"
    if at == ("disaggregation",):
        return (
            "set target.nodes to the node count the groups fill, or change disaggregation.prefill/decode "
            "instances, nodes and devices to fill its nodes"
        )
    return f"lower {key} so every port derived from it stays at most {MAX_PORT}"


# --- target ----------------------------------------------------------------------------------------


@rule("profile.target.hardware-needed", "error", "An npu target names its hardware family")
def hardware_needed(p: Profile) -> Outcome:
    if p.target.backend != "npu":
        return skipped(f"backend {p.target.backend}")
    if p.target.hardware is None:
        return problem(
            f"backend `npu` needs a hardware family: {either(HARDWARE_FAMILIES)}",
            f"set target.hardware: one of {either(HARDWARE_FAMILIES)}",
            at=("target", "hardware"),
        )
    return passed(f"hardware {p.target.hardware}")


@rule("profile.target.hardware-only-npu", "error", "Only npu targets name a hardware family")
def hardware_only_npu(p: Profile) -> Outcome:
    t = p.target
    if t.backend != "npu" and t.hardware is not None:
        return problem(
            f"hardware families are Ascend NPUs; remove it for backend `{t.backend}`",
            "remove target.hardware, or set target.backend: npu",
            at=("target", "hardware"),
        )
    return passed("consistent")


@rule("profile.target.visible-devices-count", "error", "The device mask lists devices_per_node devices")
def visible_devices_count(p: Profile) -> Outcome:
    t = p.target
    if t.visible_devices is None:
        return skipped("no device mask")
    if len(t.visible_devices) != t.devices_per_node:
        return problem(
            f"lists {len(t.visible_devices)} devices but devices_per_node is {t.devices_per_node}",
            f"list {t.devices_per_node} device ids in target.visible_devices, or set target.devices_per_node: "
            f"{len(t.visible_devices)}",
            at=("target", "visible_devices"),
        )
    return passed(f"{len(t.visible_devices)} devices")


@rule("profile.target.visible-devices-unique", "error", "The device mask names each device once")
def visible_devices_unique(p: Profile) -> Outcome:
    devices = p.target.visible_devices
    if devices is None:
        return skipped("no device mask")
    if len(set(devices)) != len(devices):
        repeated = ", ".join(str(d) for d in dict.fromkeys(devices) if devices.count(d) > 1)
        return problem(
            "a device id is listed twice",
            f"list each device id once in target.visible_devices (repeated: {repeated})",
            at=("target", "visible_devices"),
        )
    return passed("no repeats")


# --- parallel layout ---------------------------------------------------------------------------------


@rule("profile.parallel.capacity", "error", "tensor × pipeline × data ranks fit the target's devices")
def parallel_capacity(p: Profile) -> Outcome:
    par, t = p.engine.parallel, p.target
    world = par.tensor * par.pipeline * par.data
    capacity = t.devices_per_node * t.nodes
    if world > capacity:
        return problem(
            f"tensor×pipeline×data = {par.tensor}×{par.pipeline}×{par.data} = {world} ranks, but the target has "
            f"{t.devices_per_node} devices × {t.nodes} nodes = {capacity}",
            f"lower engine.parallel.tensor/pipeline/data so their product is at most {capacity}, or raise "
            "target.devices_per_node / target.nodes",
            at=("engine", "parallel"),
        )
    return passed(f"{world} ranks on {capacity} devices")


@rule("profile.parallel.data-per-node", "error", "data_per_node divides data and fits a node")
def data_per_node(p: Profile) -> Outcome:
    par, t = p.engine.parallel, p.target
    if par.data_per_node is None:
        return skipped("data_per_node not set")
    at = ("engine", "parallel", "data_per_node")
    if par.data % par.data_per_node:
        return problem(f"{par.data_per_node} does not divide data = {par.data}", _data_per_node_fix(p), at=at)
    if par.data_per_node * par.tensor * par.pipeline > t.devices_per_node:
        return problem(
            f"{par.data_per_node} ranks × tensor {par.tensor} × pipeline {par.pipeline} need more than "
            f"the {t.devices_per_node} devices of a node",
            _data_per_node_fix(p),
            at=at,
        )
    return passed(f"{par.data_per_node} data-parallel ranks per node")


def _data_per_node_fix(p: Profile) -> str:
    """The engine.parallel.data_per_node values that divide data and fit a node, or what to lower when none does."""
    par, per_node = p.engine.parallel, p.target.devices_per_node
    fits = [str(n) for n in range(1, par.data + 1) if par.data % n == 0 and n * par.tensor * par.pipeline <= per_node]
    if fits:
        return f"set engine.parallel.data_per_node: {either(fits)}, or remove it"
    return (
        f"lower engine.parallel.tensor × pipeline to at most {per_node} (the devices of a node), or raise "
        "target.devices_per_node"
    )


@rule("profile.parallel.data-over-nodes", "error", "data ranks split evenly over the nodes")
def data_over_nodes(p: Profile) -> Outcome:
    par, t = p.engine.parallel, p.target
    if par.data_per_node is not None or t.nodes == 1 or par.data == 1:
        return skipped("one node, one data rank, or data_per_node given")
    if par.data % t.nodes:
        return problem(
            f"data = {par.data} cannot be split evenly over {t.nodes} nodes",
            f"set engine.parallel.data to a multiple of {t.nodes} (target.nodes), or set engine.parallel.data_per_node",
            at=("engine", "parallel", "data"),
        )
    return passed(f"{par.data // t.nodes} data ranks per node")


# --- EPLB ----------------------------------------------------------------------------------------------


@rule("profile.eplb.needs-expert-parallel", "error", "EPLB runs with expert parallelism")
def eplb_needs_ep(p: Profile) -> Outcome:
    if p.engine.eplb.mode == "off":
        return skipped("EPLB off")
    if not p.engine.parallel.expert:
        return problem(
            "EPLB balances experts across EP ranks: set engine.parallel.expert: true",
            "set engine.parallel.expert: true, or engine.eplb.mode: off",
            at=("engine", "eplb", "mode"),
        )
    return passed("expert parallelism on")


@rule("profile.eplb.static-map", "error", "Static EPLB names its expert map")
def eplb_static_map(p: Profile) -> Outcome:
    eplb = p.engine.eplb
    if eplb.mode != "static":
        return skipped(f"EPLB {eplb.mode}")
    if not eplb.expert_map_path:
        return problem(
            "static EPLB replays an expert map: set expert_map_path",
            "set engine.eplb.expert_map_path: PATH (the expert map JSON), or engine.eplb.mode: dynamic",
            at=("engine", "eplb", "expert_map_path"),
        )
    return passed(f"expert map {eplb.expert_map_path}")


_EPLB_OPTIONAL = ("expert_map_path", "record_path", "heat_collection_interval", "algorithm_interval", "policy_type")


@rule("profile.eplb.settings-without-mode", "error", "No EPLB settings while EPLB is off")
def eplb_settings_when_off(p: Profile) -> Outcome:
    eplb = p.engine.eplb
    if eplb.mode != "off":
        return skipped(f"EPLB {eplb.mode}")
    given = ["redundant_experts"] if eplb.redundant_experts else []
    given += [name for name in _EPLB_OPTIONAL if getattr(eplb, name) is not None]
    if given:
        return problem(
            f"EPLB settings are given ({', '.join(given)}) but mode is `off`",
            f"remove {', '.join(f'engine.eplb.{name}' for name in given)}, or set engine.eplb.mode: static or dynamic",
            at=("engine", "eplb", "mode"),
        )
    return passed("none given")


# --- speculative decoding ------------------------------------------------------------------------------


@rule("profile.speculative.draft-tensor-parallel", "error", "The drafter runs with 1 or the target's tensor ranks")
def draft_tensor_parallel(p: Profile) -> Outcome:
    spec, tensor = p.engine.speculative, p.engine.parallel.tensor
    if spec is None or spec.draft_tensor_parallel is None:
        return skipped("no draft tensor-parallel size")
    # vLLM's SpeculativeConfig._verify_and_get_draft_tp refuses every other size, in every release.
    if spec.draft_tensor_parallel not in (1, tensor):
        return problem(
            f"draft_tensor_parallel {spec.draft_tensor_parallel}: vLLM runs the drafter with 1 or the target's "
            f"tensor-parallel size ({tensor})",
            f"set engine.speculative.draft_tensor_parallel: {' or '.join(dict.fromkeys(('1', str(tensor))))}",
            at=("engine", "speculative", "draft_tensor_parallel"),
        )
    return passed(f"draft TP {spec.draft_tensor_parallel}")


# --- escape hatches ------------------------------------------------------------------------------------

# Flags whose values the plan's consumers read from the profile (listen address, health URL, container port,
# Service): passing them through extra_args would move the engine but not what watches it.
_OWNED_FLAGS = {"--host": "server.host", "--port": "server.port"}


@rule("profile.engine.extra-args-server", "error", "engine.extra_args leaves the listen address to `server`")
def extra_args_server(p: Profile) -> Outcome:
    for where, at, items in _extra_arg_lists(p):
        owned = [(item.tokens[0], _OWNED_FLAGS[item.flag]) for item in items if item.flag in _OWNED_FLAGS]
        if owned:
            token, field = owned[0]
            return problem(
                f"`{token}` in {where}: set {field} instead (health checks, readiness, container ports and "
                "Services follow it)",
                f"remove `{token}` from {where} and set {field}",
                at=at,
            )
    return passed("no listen flags")


def _extra_arg_lists(p: Profile) -> Iterator[tuple[str, KeyPath, tuple[ArgItem, ...]]]:
    """(name, key path, parsed items) of every extra-args list: `engine.extra_args`, then each node's own."""
    yield "engine.extra_args", ("engine", "extra_args"), p.engine.arg_items
    for i, node in enumerate(p.network.nodes):
        if node.extra_args:
            yield f"network.nodes[{i}].extra_args", ("network", "nodes", i, "extra_args"), node.arg_items


def _env_maps(p: Profile) -> Iterator[tuple[str, KeyPath, Mapping[str, str]]]:
    """(name, key path, env) of every env map: `runtime.env`, then each node's own."""
    yield "runtime.env", ("runtime", "env"), p.runtime.env
    for i, node in enumerate(p.network.nodes):
        if node.env:
            yield f"network.nodes[{i}].env", ("network", "nodes", i, "env"), node.env


# --- serving -------------------------------------------------------------------------------------------


@rule("profile.serving.auto-tool-choice", "error", "Auto tool choice names its tool-call parser")
def auto_tool_choice(p: Profile) -> Outcome:
    s = p.serving
    if not s.auto_tool_choice:
        return skipped("auto tool choice off")
    if s.tool_call_parser is None:
        return problem(
            "auto_tool_choice needs tool_call_parser: vLLM refuses to start with `--enable-auto-tool-choice` alone",
            "set serving.tool_call_parser to the model's tool-call format (e.g. hermes, qwen3_coder), or "
            "serving.auto_tool_choice: false",
            at=("serving", "auto_tool_choice"),
        )
    return passed(f"tool-call parser {s.tool_call_parser}")


@rule("profile.serving.decode-context-parallel", "error", "Decode context parallelism divides the tensor ranks")
def decode_context_parallel(p: Profile) -> Outcome:
    dcp, tensor = p.serving.decode_context_parallel, p.engine.parallel.tensor
    if dcp is None or dcp == 1:
        return skipped("no decode context parallelism")
    # vLLM splits the KV cache of each tensor-parallel group over its ranks: the size must divide the group.
    if tensor % dcp:
        return problem(
            f"{dcp} does not divide engine.parallel.tensor = {tensor} (decode context parallelism splits the KV "
            "cache over the tensor-parallel ranks)",
            f"set serving.decode_context_parallel: {either([str(n) for n in range(1, tensor + 1) if tensor % n == 0])}",
            at=("serving", "decode_context_parallel"),
        )
    return passed(f"{dcp} divides tensor {tensor}")


@rule("profile.serving.context-parallel-capacity", "error", "Prefill context-parallel ranks fit the target's devices")
def context_parallel_capacity(p: Profile) -> Outcome:
    pcp = p.serving.prefill_context_parallel
    if pcp is None or pcp == 1:
        return skipped("no prefill context parallelism")
    par, t = p.engine.parallel, p.target
    # Prefill context parallelism adds ranks: vLLM's world size is pipeline × tensor × prefill-context.
    world = par.tensor * par.pipeline * pcp * par.data
    capacity = t.devices_per_node * t.nodes
    if world > capacity:
        return problem(
            f"tensor×pipeline×prefill_context_parallel×data = {par.tensor}×{par.pipeline}×{pcp}×{par.data} = "
            f"{world} ranks, but the target has {t.devices_per_node} devices × {t.nodes} nodes = {capacity}",
            f"lower serving.prefill_context_parallel or engine.parallel.tensor/pipeline/data so their product is "
            f"at most {capacity}, or raise target.devices_per_node / target.nodes",
            at=("serving", "prefill_context_parallel"),
        )
    return passed(f"{world} ranks on {capacity} devices")


# --- migration to typed fields -------------------------------------------------------------------------


def _key_paths(mapping: Mapping[str, object], prefix: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    """Every leaf key path of a nested `--additional-config` mapping (an empty mapping is a leaf)."""
    for key, value in mapping.items():
        path = (*prefix, str(key))
        if isinstance(value, Mapping) and value:
            yield from _key_paths(value, path)
        else:
            yield path


@rule("profile.migration.typed-field", "warn", "Escape hatches do not say what a typed field says")
def typed_field_migration(p: Profile) -> Outcome:
    e, env = p.engine, p.runtime.env
    if not (e.extra_args or e.additional_config or env or any(n.extra_args or n.env for n in p.network.nodes)):
        return skipped("no escape hatch in use")
    hits: list[tuple[KeyPath, str]] = []
    seen: set[typed_fields.Claim] = set()

    def found(kind: typed_fields.Kind, spelling: str, at: KeyPath, where: str) -> None:
        claim = typed_fields.owner(kind, spelling)
        if claim is not None and claim not in seen:
            seen.add(claim)
            hits.append((at, f"{where} `{spelling}`: use {claim.field}"))

    for where, at, items in _extra_arg_lists(p):
        for item in items:
            found("flag", item.flag, (*at, item.index), where)
    for path in _key_paths(e.additional_config):
        found("key", ".".join(path), ("engine", "additional_config", *path), "engine.additional_config")
    for where, at, env_map in _env_maps(p):
        for name in env_map:
            found("env", name, (*at, name), where)
    if not hits:
        return passed("no escape-hatch spelling has a typed field")
    (at, first), rest = hits[0], hits[1:]
    also = f" (also {'; '.join(message for _, message in rest)})" if rest else ""
    return problem(
        first + also,
        "the typed field is spelled for each release and checked against it; the escape hatch is passed on as written",
        at=at,
    )


# --- network -------------------------------------------------------------------------------------------


@rule("profile.network.node-count", "error", "network.nodes lists one address per node")
def network_node_count(p: Profile) -> Outcome:
    nodes = p.network.nodes
    if not nodes:
        return skipped("no node list")
    if len(nodes) != p.target.nodes:
        return problem(
            f"lists {len(nodes)} node addresses but target.nodes is {p.target.nodes}",
            f"list {p.target.nodes} addresses in network.nodes, or set target.nodes: {len(nodes)}",
            at=("network", "nodes"),
        )
    return passed(f"{len(nodes)} nodes")


@rule("profile.network.port-clash", "error", "The API port differs from the data-parallel RPC port")
def network_port_clash(p: Profile) -> Outcome:
    if p.target.nodes == 1:
        return skipped("one node")
    if p.server.port == p.network.dp_rpc_port:
        return problem(
            "the API port equals network.dp_rpc_port",
            f"set server.port or network.dp_rpc_port to a port other than {p.server.port}",
            at=("server", "port"),
        )
    return passed("distinct ports")


# --- secrets -------------------------------------------------------------------------------------------
# A value written in the profile is printed by `plan`, `serve --dry-run` and `validate --json`, written into
# every rendered file and shown by `ps`: a secret there is refused, pointing at a source read only at launch
# (`ascendctl.schema.secrets`). No message quotes a value, only names and positions.


@rule("profile.runtime.env-inline-secret", "error", "runtime.env holds no secret values")
def env_inline_secret(p: Profile) -> Outcome:
    for where, at, env in _env_maps(p):
        found = inline_secret_env(env)
        if found:
            return _inline_secret(where, at, found, API_KEY_VAR)
    return passed("no secret-looking names")


def _inline_secret(where: str, at: KeyPath, found: list[tuple[str, str]], api_key_var: str) -> Outcome:
    name, part = found[0]
    more = f" (also {', '.join(n for n, _ in found[1:])})" if len(found) > 1 else ""
    if name == api_key_var:
        instead = "set server.api_key (env or file) instead"
    else:
        instead = f"use runtime.secrets: {{{name}: {{env: VAR}}}} or {{{name}: {{file: PATH}}}}"
    return problem(
        f"`{name}` looks like a secret (its name has the part {part}), and {where} values are printed by plans "
        f"and written into rendered files: {instead}{more}",
        f"remove {name} from {where} and {instead}",
        at=(*at, name),
    )


@rule("profile.engine.extra-args-secret", "error", "engine.extra_args passes no secret")
def extra_args_secret(p: Profile) -> Outcome:
    for where, at, items in _extra_arg_lists(p):
        found = secret_flags(items)
        if found:
            first = found[0]
            return problem(
                f"`{first.flag}` in {where} puts a secret in the engine's argv, which plans print and any user "
                f"of the host can read: {first.instead}",
                f"remove `{first.flag}` from {where} and {first.instead}",
                at=(*at, first.index),
            )
        # the same secret-named keys `engine.additional_config` may not hold: passed through here they would
        # reach the same argv (the message names the key, never its value)
        in_config = secret_config_args(items)
        if in_config:
            hit = in_config[0]
            return problem(
                f"`{ADDITIONAL_CONFIG}` in {where} holds `{'.'.join(map(str, hit.path))}`, which looks like a "
                f"secret (its name has the part {hit.part}); the engine's argv is printed by plans, held by "
                "rendered files and readable by any user of the host: keep it out of the profile (runtime.secrets "
                "gives the engine a secret as an environment variable, read at launch)",
                f"remove `{'.'.join(map(str, hit.path))}` from the `{ADDITIONAL_CONFIG}` in {where}; give the engine "
                "the secret with runtime.secrets: {VAR: {env: VAR}} or {VAR: {file: PATH}}",
                at=(*at, hit.index),
            )
    return passed("no secret-valued flags")


@rule("profile.engine.additional-config-secret", "error", "engine.additional_config holds no secret values")
def additional_config_secret(p: Profile) -> Outcome:
    found = secret_config_key(p.engine.additional_config)
    if found is None:
        return passed("no secret-looking keys")
    path, part = found
    return problem(
        f"`{'.'.join(map(str, path))}` looks like a secret (its name has the part {part}), and --additional-config is "
        "part of the engine's argv, which plans print, rendered files hold and any user of the host can read: keep "
        "it out of the profile (runtime.secrets gives the engine a secret as an environment variable, read at launch)",
        f"remove engine.additional_config.{'.'.join(map(str, path))}; give the engine the secret with "
        "runtime.secrets: {VAR: {env: VAR}} or {VAR: {file: PATH}}",
        at=("engine", "additional_config", *path),
    )


@rule("profile.runtime.secrets-api-key", "error", "The API key comes from server.api_key")
def secrets_api_key(p: Profile) -> Outcome:
    if API_KEY_VAR in p.runtime.secrets:
        return problem(
            f"{API_KEY_VAR} is the API key: set server.api_key (env or file) instead (the plan exports it from there "
            "and clients and `serve` follow it)",
            f"remove runtime.secrets.{API_KEY_VAR} and set server.api_key: {{env: VAR}} or {{file: PATH}}",
            at=("runtime", "secrets", API_KEY_VAR),
        )
    return passed(f"no {API_KEY_VAR} entry")


@rule(
    "profile.runtime.secrets-collision",
    "error",
    "A variable is set once: by runtime.env / a node's env, or by a secret (server.api_key, runtime.secrets)",
)
def secrets_collision(p: Profile) -> Outcome:
    # Set twice, it would be written twice into every rendered file (`-e VAR` and a Secret's key), and which one
    # the engine sees would depend on the renderer.
    declared = {d.variable: d for d in secret_sources(p)}
    for where, _at, env in _env_maps(p):
        for name in env:
            if name in declared:
                d = declared[name]
                keep = "keep the runtime.secrets entry" if d.at[:2] == ("runtime", "secrets") else f"keep {d.label}"
                return problem(
                    f"`{name}` is in {where} and set by {d.label} too (the plan exports it from there): {keep}, "
                    f"remove {where}.{name}",
                    f"remove {name} from {where} ({d.label} sets it)",
                    at=d.at,
                )
    return passed(f"{len(declared)} secret variables, none also in an env map")


@rule(
    "profile.runtime.env-secret-source",
    "error",
    "No env map sets the variable a secret source reads ({env: VAR}): that value would be the secret, inline",
)
def env_secret_source(p: Profile) -> Outcome:
    # `{env: VAR}` is read from the shell that starts the engine; a VAR written into runtime.env is the secret
    # itself in the profile, printed by plans and written into rendered files, whatever its name says.
    sources = {d.source.env: d for d in secret_sources(p) if d.source.env}
    for where, at, env in _env_maps(p):
        for name in env:
            if name in sources:
                d = sources[name]
                return problem(
                    f"`{name}` is where {d.label} reads its value ({{env: {name}}}): a value in {where} would be "
                    f"the secret written inline, printed by plans and rendered files; export {name} in the shell "
                    "that runs the engine instead",
                    f"remove {name} from {where} and export {name} in the shell that runs the engine",
                    at=(*at, name),
                )
    return passed("no env map sets a secret's source variable")


# --- engine.ascend ---------------------------------------------------------------------------------


@rule("profile.engine.ascend-only-npu", "error", "vllm-ascend switches only on npu targets")
def ascend_only_npu(p: Profile) -> Outcome:
    if p.target.backend == "npu":
        return skipped("backend npu")
    a = p.engine.ascend
    chosen = [name for name in type(a).model_fields if getattr(a, name) is not None]
    if not chosen:
        return passed("no engine.ascend settings")
    # Planned for cpu/cuda they would be dropped without a word: vLLM itself reads none of them.
    return problem(
        f"engine.ascend.{chosen[0]} is a vllm-ascend setting; backend `{p.target.backend}` reads none of them: "
        "remove engine.ascend",
        f"remove engine.ascend ({', '.join(chosen)}), or set target.backend: npu",
        at=("engine", "ascend", chosen[0]),
    )
