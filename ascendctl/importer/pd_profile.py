"""One profile with a `disaggregation` section from the drafts of a prefill/decode deployment's two roles.

Each role's first instance is drafted like any deployment (`importer.run`); this module joins the two drafts:
what both roles say alike stays in the profile's `engine`, `runtime.env` and the rest; what one role says
otherwise goes to that role's `engine` block (`disaggregation.<role>.engine`, merged over the profile's key by
key) or, for a variable, to its hosts' `network.nodes[i].env`. The groups' sizes, API and RPC ports, the
connector, the first KV port and the connector's extra keys come from the scripts; the router is the release's
default (no script starts one: upstream's CI runs its own proxy). Pure: drafts in, a draft out.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from types import UnionType
from typing import Any, Union, get_args, get_origin

from pydantic import BaseModel

from ascendctl.core.dotted import dotted_get
from ascendctl.importer.deployment import ADDRESS_ENV, InstanceScripts, ScriptDeployment
from ascendctl.importer.kv_compare import EXTRA, script_consistency
from ascendctl.importer.profile import Draft, drop
from ascendctl_engine.defaults import SERVER_PORT
from ascendctl_engine.sections.deployment import EngineSpec
from ascendctl_engine.sections.disaggregation import DERIVED_EXTRA_KEYS
from ascendctl_engine.sections.fields import is_ip_address
from ascendctl_engine.sections.serving import ServingSpec
from ascendctl_engine.vocab import PD_ROLES, PdRole


def pd_draft(roles: Mapping[PdRole, Draft], deployment: ScriptDeployment) -> Draft:
    """The joined draft (see the module docstring); raises ValueError where the scripts' instances of one role
    span different numbers of hosts (a role's instances are planned alike)."""
    roles = _role_hatches(roles)
    prefill, decode = roles["prefill"], roles["decode"]
    doc = copy.deepcopy(prefill.document)
    notes = _union(prefill.notes, decode.notes)
    own = _apart(doc, roles)
    per_node = max(int(dotted_get(d.document, "target.devices_per_node") or 1) for d in roles.values())
    spec = _spec(roles, deployment, own, per_node)
    for path in ("server.port", "network.dp_rpc_port"):  # the roles' own now
        drop(doc, path)
    doc["target"]["nodes"] = sum(len(i.hosts) for i in deployment.instances)
    doc["target"]["devices_per_node"] = per_node
    if dotted_get(prefill.document, "target.visible_devices") != dotted_get(decode.document, "target.visible_devices"):
        drop(doc, "target.visible_devices")
    _nodes_and_env(doc, roles, deployment, notes)
    doc["disaggregation"] = spec
    notes += _notes(roles, deployment, spec, per_node)
    typed = {**{_moved(p, "decode", own["decode"]): t for p, t in decode.typed.items()}}
    typed.update({_moved(p, "prefill", own["prefill"]): t for p, t in prefill.typed.items()})
    hatches = _union(
        [h for h in prefill.hatches if h in decode.hatches],
        [f"prefill: {h}" for h in prefill.hatches if h not in decode.hatches],
        [f"decode: {h}" for h in decode.hatches if h not in prefill.hatches],
    )
    claimed = {**decode.claimed, **prefill.claimed}
    unread = {**decode.unread, **prefill.unread}
    return Draft(doc, hatches=hatches, notes=notes, typed=typed, claimed=claimed, unread=unread)


def _apart(doc: dict[str, Any], roles: Mapping[PdRole, Draft]) -> dict[PdRole, dict[str, Any]]:
    """What each role says otherwise — its `engine` and `serving` keys, its `max_model_len` — taken out of `doc`
    (which keeps what both say alike)."""
    own: dict[PdRole, dict[str, Any]] = {"prefill": {}, "decode": {}}
    prefill, decode = roles["prefill"].document, roles["decode"].document
    for section, model in (("engine", EngineSpec), ("serving", ServingSpec)):
        common, apart = _split(prefill.get(section, {}), decode.get(section, {}), model)
        doc.pop(section, None)
        if common:
            doc[section] = common
        for role in PD_ROLES:
            if apart[role]:
                own[role][section] = apart[role]
    lengths = {role: dotted_get(d.document, "model.max_model_len") for role, d in roles.items()}
    if lengths["prefill"] != lengths["decode"]:
        drop(doc, "model.max_model_len")
        own["prefill"].update({"max_model_len": lengths["prefill"]} if lengths["prefill"] is not None else {})
        own["decode"].update({"max_model_len": lengths["decode"]} if lengths["decode"] is not None else {})
    return own


def _spec(
    roles: Mapping[PdRole, Draft], deployment: ScriptDeployment, own: Mapping[PdRole, dict[str, Any]], per_node: int
) -> dict[str, Any]:
    """The `disaggregation` section: the connector, the first KV port and extra keys of the first prefill
    instance's JSON, each role's group, and a router port where the default one is an instance's."""
    spec: dict[str, Any] = {"connector": deployment.connector}
    kv = deployment.role("prefill")[0].kv or {}
    port = _port(kv.get("kv_port"))
    if port is not None:
        spec["kv_port"] = port
    extra = {k: v for k, v in (kv.get(EXTRA) or {}).items() if k not in DERIVED_EXTRA_KEYS}
    if extra:
        spec["connector_extra_config"] = extra
    for role in PD_ROLES:
        spec[role] = _group(role, roles[role], deployment.role(role), own[role], per_node)
    router = _router_port(spec)
    if router is not None:
        spec["router"] = {"port": router}
    return spec


def _notes(
    roles: Mapping[PdRole, Draft], deployment: ScriptDeployment, spec: Mapping[str, Any], per_node: int
) -> list[str]:
    router = spec.get("router", {}).get("port")
    said = f"port {router}" if router is not None else f"server.port ({SERVER_PORT})"
    notes = [
        f"disaggregation.router: no script starts a router (upstream's CI runs its own proxy); the plan's router "
        f"for this release listens on {said} in front of {len(deployment.instances)} instances"
    ]
    heads = [(_where(i), spec[str(i.role)].get("devices", per_node), i.kv or {}) for i in deployment.instances]
    notes += [f"the scripts contradict themselves: {p}" for p in script_consistency(heads)]
    models = [{k: v for k, v in d.document.get("model", {}).items() if k != "max_model_len"} for d in roles.values()]
    if models[0] != models[1]:
        notes.append("model: the decode scripts say otherwise than the prefill ones; the profile keeps prefill's")
    return notes


# What the roles take from the drafts as their own (their `engine` blocks, ports, sizes, hosts).
_ROLE_OWNED = (
    "engine.", "serving.", "server.port", "network.dp_rpc_port", "network.nodes", "network.ray_port", "target.",
)  # fmt: skip


def _role_hatches(roles: Mapping[PdRole, Draft]) -> dict[PdRole, Draft]:
    """A typed field outside `engine` that the roles set differently (`model.max_model_len`,
    `network.hccl.connect_timeout_s`) has no per-role place: each role keeps the script's own spelling instead, a
    variable in its hosts' environment, an option in its `engine.extra_args`."""
    out = {role: copy.deepcopy(d) for role, d in roles.items()}
    paths = set(out["prefill"].typed) | set(out["decode"].typed)
    for path in sorted(paths):
        if path.startswith(_ROLE_OWNED) or path in ("model.source", "model.max_model_len"):
            continue
        values = [dotted_get(d.document, path) for d in out.values()]
        if values[0] == values[1]:
            continue
        for d in out.values():
            tokens = d.typed.pop(path, ())
            drop(d.document, path)
            if not tokens:
                continue
            if all("=" in t and not t.startswith("-") for t in tokens):
                env = d.document.setdefault("runtime", {}).setdefault("env", {})
                env.update(t.split("=", 1) for t in tokens)
                d.hatches += [f"runtime.env.{t}" for t in tokens]
            else:
                d.document.setdefault("engine", {}).setdefault("extra_args", []).extend(tokens)
                d.hatches.append(f"engine.extra_args: {' '.join(tokens)} ({path} differs between the roles)")
    return out


def _group(
    role: PdRole, draft: Draft, instances: tuple[InstanceScripts, ...], own: dict[str, Any], per_node: int
) -> dict[str, Any]:
    nodes = {len(i.hosts) for i in instances}
    if len(nodes) > 1:
        raise ValueError(
            f"the {role} scripts form instances over {', '.join(str(n) for n in sorted(nodes))} hosts: ascendctl "
            "plans a role's instances alike; import each layout on its own"
        )
    group: dict[str, Any] = {}
    if len(instances) > 1:
        group["instances"] = len(instances)
    if nodes != {1}:
        group["nodes"] = nodes.pop()
    devices = int(dotted_get(draft.document, "target.devices_per_node") or per_node)
    if devices < per_node:
        group["devices"] = devices
    for field, path in (("port", "server.port"), ("dp_rpc_port", "network.dp_rpc_port")):
        value = dotted_get(draft.document, path)
        if value is not None:
            group[field] = value
    group.update(own)  # its `engine` and `serving` blocks, its `max_model_len`: what it says apart
    return group


def _split(
    a: Mapping[str, Any], b: Mapping[str, Any], model: Any
) -> tuple[dict[str, Any], dict[PdRole, dict[str, Any]]]:
    """What `a` (prefill) and `b` (decode) say alike, and what each says on its own, key by key; a section with a
    required key (`speculative` needs its method and tokens) moves whole, so each side still validates alone."""
    common: dict[str, Any] = {}
    own: dict[PdRole, dict[str, Any]] = {"prefill": {}, "decode": {}}
    for key in list(a) + [k for k in b if k not in a]:
        x, y = a.get(key), b.get(key)
        section = _section(model, key)
        if isinstance(x, dict) and isinstance(y, dict) and not _whole(section):
            inner, rest = _split(x, y, section)
            if inner:
                common[key] = inner
            for role in PD_ROLES:
                if rest[role]:
                    own[role][key] = rest[role]
        elif key in a and key in b and x == y:
            common[key] = copy.deepcopy(x)
        else:
            if key in a:
                own["prefill"][key] = copy.deepcopy(x)
            if key in b:
                own["decode"][key] = copy.deepcopy(y)
    return common, own


def _section(model: Any, key: str) -> Any:
    """The pydantic model of `model`'s field `key` (`X | None` unwrapped), None for a plain value."""
    fields = getattr(model, "model_fields", None)
    if fields is None or key not in fields:
        return None
    annotation = fields[key].annotation
    options = get_args(annotation) if get_origin(annotation) in (Union, UnionType) else (annotation,)
    return next((o for o in options if isinstance(o, type) and issubclass(o, BaseModel)), None)


def _whole(section: Any) -> bool:
    return section is not None and any(f.is_required() for f in section.model_fields.values())


def _moved(path: str, role: PdRole, own: Mapping[str, Any]) -> str:
    """Where a typed field of a role's draft lives in the joined profile: its role group, where the role says it
    apart (`model.max_model_len` is the group's `max_model_len`)."""
    if path == "model.max_model_len" and "max_model_len" in own:
        return f"disaggregation.{role}.max_model_len"
    if dotted_get(own, path) is not None:
        return f"disaggregation.{role}.{path}"
    return path


def _nodes_and_env(
    doc: dict[str, Any], roles: Mapping[PdRole, Draft], deployment: ScriptDeployment, notes: list[str]
) -> None:
    """`network.nodes` in the plan's placement order (prefill instances, then decode), each host's address from
    its script; a variable the roles set differently goes to each of that role's hosts."""
    envs = {role: dict(dotted_get(d.document, "runtime.env") or {}) for role, d in roles.items()}
    common = {k: v for k, v in envs["prefill"].items() if envs["decode"].get(k) == v}
    nodes: list[dict[str, Any]] = []
    for instance in deployment.instances:
        role = instance.role
        assert role is not None
        drafted = dotted_get(roles[role].document, "network.nodes") or []
        first = instance is deployment.role(role)[0]
        own = {k: v for k, v in envs[role].items() if k not in common}
        for h, host in enumerate(instance.hosts):
            node: dict[str, Any] = (
                copy.deepcopy(drafted[h]) if first and h < len(drafted) else {"address": _address(host.merged.env)}
            )
            _addressed(node, len(nodes), host.merged.path, notes)
            if own:  # what this role sets apart from the other: each host as its script has it (an address differs)
                node["env"] = {**{k: host.merged.env.get(k, v) for k, v in own.items()}, **(node.get("env") or {})}
            nodes.append(node)
    doc.setdefault("network", {})["nodes"] = nodes
    if common:
        doc.setdefault("runtime", {})["env"] = common
    else:
        drop(doc, "runtime.env")
    secrets = {**(dotted_get(roles["decode"].document, "runtime.secrets") or {})}
    secrets.update(dotted_get(roles["prefill"].document, "runtime.secrets") or {})
    if secrets:
        doc.setdefault("runtime", {})["secrets"] = secrets


def _addressed(node: dict[str, Any], index: int, path: str, notes: list[str]) -> None:
    if node.get("address") is None or not is_ip_address(str(node["address"])):
        stand_in = f"192.0.2.{index + 1}"  # RFC 5737 documentation range: never a real host
        notes.append(f"network.nodes[{index}] ({path}): no address; {stand_in}: replace it")
        node["address"] = stand_in


def _where(instance: InstanceScripts) -> str:
    head = instance.hosts[0].merged
    return _address(head.env) or head.path


def _address(env: Mapping[str, str]) -> str | None:
    return next((env[k] for k in ADDRESS_ENV if env.get(k)), None)


def _router_port(spec: Mapping[str, Any]) -> int | None:
    """None where the default router port is free on host 0; else the first free port above it."""
    taken: set[int] = set()
    for role in PD_ROLES:
        port = spec[role].get("port")
        if port is not None:
            count = spec[role].get("instances", 1)
            taken.update(range(int(port), int(port) + count))  # not all on host 0, but never worth a clash
    port = SERVER_PORT
    if port not in taken:
        return None
    while port in taken:
        port += 1
    return port


def _port(value: Any) -> int | None:
    text = str(value).strip() if value is not None else ""
    return int(text) if text.isdigit() and len(text) <= 5 else None


def _union(*lists: list[str]) -> list[str]:
    return list(dict.fromkeys(x for xs in lists for x in xs))


__all__ = ["pd_draft"]
