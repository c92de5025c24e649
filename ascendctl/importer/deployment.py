"""Which deployment a set of launch scripts forms: the instances, their roles and their hosts, read from each
script's own flags, whatever order the scripts come in.

- **Prefill/decode.** A script whose `--kv-transfer-config` says `kv_role: kv_producer` is a prefill node,
  `kv_consumer` a decode node (vLLM's KVTransferConfig roles); the connector, the KV port, the engine id and both
  groups' sizes come from the same JSON.
- **Instances.** Scripts of one role form one instance when they share its data-parallel group: the same
  `--data-parallel-address` (the group's head) and KV engine id; a script with neither is an instance alone.
- **Hosts.** An instance's scripts on one host (its `HCCL_IF_IP` / `VLLM_HOST_IP` / `LOCAL_IP`) are one host of
  it; the host with rank 0 (not `--headless`, `--data-parallel-start-rank 0`) is its head.
- **External data parallel** (vLLM's `--data-parallel-rank`: one process and one API server per rank) is planned as
  the group it forms: one process per host with `--data-parallel-size-local` ranks, the others `--headless` from
  their first rank. `HostScripts.merged` is that process's script; each original script is compared with it and
  what the regrouping changed is reported (`regrouped`), never silently.
- **Ray.** A script that runs only `ray start --address HEAD:PORT` is a worker host of the instance whose head runs
  `ray start --head` and `vllm serve … --distributed-executor-backend ray`.

Pure: scripts in, the deployment out.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from ascendctl.importer.argv_options import option_value, without_options
from ascendctl.importer.script import LaunchScript
from ascendctl_engine.pd import ASCEND_CONNECTOR_NAMES
from ascendctl_engine.records import record
from ascendctl_engine.vocab import KvConnectorKind, PdRole

KV_FLAG = "--kv-transfer-config"
# vLLM's KVTransferConfig `kv_role` values of a disaggregated pair (vllm/config/kv_transfer.py, KVRole)
ROLES: dict[str, PdRole] = {"kv_producer": "prefill", "kv_consumer": "decode"}
# Where a node's own address is read from its script (the first one set wins).
ADDRESS_ENV = ("HCCL_IF_IP", "VLLM_HOST_IP", "LOCAL_IP", "local_ip")
DEVICES_ENV = "ASCEND_RT_VISIBLE_DEVICES"
_RANK_FLAGS = ("--data-parallel-rank", "--data-parallel-size-local", "--headless", "--data-parallel-start-rank")
_CONNECTORS: dict[str, KvConnectorKind] = {name: kind for kind, name in ASCEND_CONNECTOR_NAMES.items()}


@record
class Member:
    """What one script's flags say of its place."""

    script: LaunchScript
    order: int  # its place in the list given
    role: PdRole | None
    kv: dict[str, Any] | None  # its `--kv-transfer-config`, parsed
    host: str | None  # its own address
    dp_address: str | None
    dp_rank: int | None  # `--data-parallel-rank` (external data parallel)
    start_rank: int  # `--data-parallel-start-rank`, 0 when absent
    headless: bool
    ray_worker: bool  # runs `ray start --address …` and no serve command

    @property
    def rank(self) -> int:
        return self.dp_rank if self.dp_rank is not None else self.start_rank


@record
class HostScripts:
    """One host of an instance: the scripts that run there and the one process the plan runs in their place."""

    scripts: tuple[LaunchScript, ...]
    merged: LaunchScript
    regrouped: tuple[str, ...] = ()  # what merging external DP ranks changed, for the report


@record
class InstanceScripts:
    role: PdRole | None  # None: a serving instance of no disaggregated pair
    hosts: tuple[HostScripts, ...]  # the head first
    kv: dict[str, Any] | None = None  # the head's `--kv-transfer-config`

    @property
    def scripts(self) -> tuple[LaunchScript, ...]:
        return tuple(s for h in self.hosts for s in h.scripts)


@record
class ScriptDeployment:
    instances: tuple[InstanceScripts, ...]  # prefill instances first, then decode
    connector: KvConnectorKind | None  # set when the scripts form a prefill/decode pair
    notes: tuple[str, ...] = ()

    @property
    def disaggregated(self) -> bool:
        return self.connector is not None

    def role(self, role: PdRole) -> tuple[InstanceScripts, ...]:
        return tuple(i for i in self.instances if i.role == role)


def recognize(scripts: Sequence[LaunchScript], registered: Mapping[str, str] | None = None) -> ScriptDeployment:
    """The deployment `scripts` form (see the module docstring). `registered`: class path (`module.Class`) → the
    name the release registers that connector under, so a script naming the class by its module
    (`kv_connector_module_path`) is the connector it loads. Raises ValueError, naming the script, where their
    flags contradict each other (two heads of one group) or no script serves."""
    members = [_member(s, i) for i, s in enumerate(scripts)]
    if all(m.ray_worker for m in members):
        raise ValueError(f"{scripts[0].path}: a Ray worker (`ray start --address`); give the head's script too")
    notes: list[str] = []
    roles = {m.role for m in members}
    connector = _connector(members, notes, registered or {}) if roles == {"prefill", "decode"} else None
    if connector is None:
        if roles - {None}:
            notes.append(
                "the scripts' --kv-transfer-config roles do not form a prefill/decode pair "
                f"({', '.join(sorted(str(r) for r in roles))}): imported as one deployment, the flag as written"
            )
        members = [replace(m, role=None) for m in members]
    groups: dict[tuple[Any, ...], list[Member]] = {}
    for m in members:
        groups.setdefault(_instance_key(m, connector is not None), []).append(m)
    if connector is None and len(groups) > 1:
        groups = {("one",): members}  # scripts of no pair are the nodes of one instance, as written
    instances = [_instance(group) for group in groups.values()]
    instances.sort(key=lambda i: (0 if i.role in (None, "prefill") else 1, _first(i, scripts)))
    return ScriptDeployment(tuple(instances), connector, tuple(notes))


def _first(instance: InstanceScripts, scripts: Sequence[LaunchScript]) -> int:
    return min(scripts.index(s) for s in instance.scripts)


def connector_name(kv: Mapping[str, Any], registered: Mapping[str, str]) -> str:
    """The registered name of the connector a `--kv-transfer-config` loads: vLLM imports `kv_connector` from
    `kv_connector_module_path` when one is given (vllm/distributed/kv_transfer/kv_connector/factory.py), else
    looks the name up in its registry."""
    name = str(kv.get("kv_connector"))
    module = kv.get("kv_connector_module_path")
    return registered.get(f"{module}.{name}", name) if module else name


def _connector(members: Sequence[Member], notes: list[str], registered: Mapping[str, str]) -> KvConnectorKind | None:
    names = {connector_name(m.kv, registered) for m in members if m.kv is not None}
    if len(names) != 1:
        notes.append(f"the prefill and decode scripts name different KV connectors ({', '.join(sorted(names))})")
        return None
    name = names.pop()
    kind = _CONNECTORS.get(name)
    if kind is None:
        notes.append(f"kv_connector {name!r} is none of {', '.join(_CONNECTORS)}: imported as written")
    return kind


def _instance_key(m: Member, paired: bool) -> tuple[Any, ...]:
    if m.ray_worker:
        return ("ray",)
    if m.dp_address:  # one data-parallel group, whatever engine ids its hosts' scripts give
        return (m.role, m.dp_address)
    engine = str(m.kv.get("engine_id", "")) if paired and m.kv is not None else ""
    return (m.role, engine, m.host or f"script {m.order}")


def _instance(members: list[Member]) -> InstanceScripts:
    by_host: dict[str, list[Member]] = {}
    for m in members:
        by_host.setdefault(m.host or m.dp_address or f"script {m.order}", []).append(m)
    hosts = sorted(by_host.values(), key=lambda ms: (min(m.ray_worker for m in ms), min(m.rank for m in ms)))
    heads = [ms for ms in hosts if any(not m.headless and not m.ray_worker for m in ms)]
    if len(heads) > 1 and len(members) == len({m.rank for m in members}) and any(m.dp_rank is None for m in members):
        paths = ", ".join(ms[0].script.path for ms in heads)
        raise ValueError(f"{paths}: more than one head of one data-parallel group (none is --headless)")
    out = [_host(ms, start, i == 0) for i, (ms, start) in enumerate(_starts(hosts))]
    head = hosts[0][0]
    return InstanceScripts(head.role, tuple(out), head.kv)


def _starts(hosts: list[list[Member]]) -> list[tuple[list[Member], int]]:
    out, start = [], 0
    for ms in hosts:
        ms.sort(key=lambda m: m.rank)
        out.append((ms, ms[0].rank if any(m.dp_rank is not None or m.start_rank for m in ms) else start))
        start += len(ms)
    return out


def _host(members: list[Member], start: int, head: bool) -> HostScripts:
    scripts = tuple(m.script for m in members)
    if not any(m.dp_rank is not None for m in members):
        return HostScripts(scripts, scripts[0])
    first = members[0]
    argv = [*without_options(first.script.argv, _RANK_FLAGS), "--data-parallel-size-local", str(len(members))]
    if not head:
        argv += ["--headless", "--data-parallel-start-rank", str(start)]
    env = dict(first.script.env)
    devices = [m.script.env.get(DEVICES_ENV) for m in members]
    if all(devices):
        env[DEVICES_ENV] = ",".join(d for d in devices if d)
    merged = replace(first.script, argv=tuple(argv), env=env, path=first.script.path)
    ranks = ", ".join(str(m.rank) for m in members)
    said = (
        f"external data parallel: ranks {ranks} each run their own process and API in the scripts; the plan runs "
        f"them in one process (--data-parallel-size-local {len(members)}{'' if head else ', --headless'})"
    )
    return HostScripts(scripts, merged, (said,))


def _member(script: LaunchScript, order: int) -> Member:
    argv = list(script.argv)
    kv = _json(option_value(argv, KV_FLAG))
    role = ROLES.get(str(kv.get("kv_role"))) if kv is not None else None
    host = next((script.env[k] for k in ADDRESS_ENV if script.env.get(k)), None)
    rank = _int(option_value(argv, "--data-parallel-rank"), script, "--data-parallel-rank")
    start = _int(option_value(argv, "--data-parallel-start-rank"), script, "--data-parallel-start-rank") or 0
    return Member(
        script=script,
        order=order,
        role=role,
        kv=kv,
        host=host,
        dp_address=option_value(argv, "--data-parallel-address"),
        dp_rank=rank,
        start_rank=start,
        headless="--headless" in argv,
        ray_worker=script.ray_worker,
    )


def _json(text: str | None) -> dict[str, Any] | None:
    if text is None:
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _int(text: str | None, script: LaunchScript, flag: str) -> int | None:
    if text is None:
        return None
    if not (text.isascii() and text.isdigit() and len(text) < 10):
        raise ValueError(f"{script.path}:{script.line}: {flag} {text[:40]!r} is not a rank")
    return int(text)


__all__ = [
    "ADDRESS_ENV",
    "KV_FLAG",
    "HostScripts",
    "InstanceScripts",
    "ScriptDeployment",
    "recognize",
]
