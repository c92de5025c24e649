"""What the planner produces: a `Plan` of cooperating engine `Instance`s (today one, the `serve` instance; prefill
and decode groups build on it) and the `Service`s in front of them (a router; none today), each instance with
its nodes, their `EngineCommand`s and its resolved `EngineSettings` (typed: what fit, rules, render and serve
read), plus a `Deployment` (pinned release, backend, hardware, the dotted settings view `--why` prints, the
findings).

`Plan.to_json()` is the `--json` contract of `ascendctl plan` and `ascendctl serve --dry-run` (pinned by
tests; keys may be added; a rename or removal bumps `PLAN_JSON_SCHEMA`). The classes are output only:
frozen, compared by identity (`eq=False` keeps `ascendctl plan` start-up cheap).
"""

from __future__ import annotations

import dataclasses
import shlex
from collections.abc import Mapping
from dataclasses import field
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from ascendctl.core.findings import Finding
from ascendctl_engine.records import record
from ascendctl_engine.spec import REDACTED, EngineCommand, Listen, Unit
from ascendctl_engine.vocab import Role

if TYPE_CHECKING:
    from ascendctl.facts.matrix.schema import Hardware
    from ascendctl.plan.fit.result import FitResult
    from ascendctl_engine.adapters.acceptance import SettingVerdict

InstanceRole = Literal["serve", "prefill", "decode"]
# The rules that carry the verdicts gathered before the plan rules (`ascendctl.plan.plan_rules`).
VERDICT_RULES = ("plan.matrix", "plan.host", "plan.refused", "plan.rejected")

# The `plan --json` shape version: bump it (and say so in the CHANGELOG) whenever a key is renamed or removed
# or a value changes meaning. 2: `lint` (rule/level/reference) became `findings` (the one finding type).
# 3: `instances` and `services` added; `unsupported` removed (an accepted failing finding is a `warn` finding,
# its id listed in `allowed`); `plan.supported` split into one finding per constraint.
# 4: the memory fit's verdict `low-memory` became `tight` (fewer than two full-length sequences; fit schema 2).
# 5: every finding carries `clause` (the refusal policy: `engine-start`, `placement`, `known-failure`, or null for
# a finding that does not fail); a failing finding without one became a warning (docs/refusal-policy.md).
PLAN_JSON_SCHEMA = 5


@record(eq=False)
class Setting:
    """One effective value and where it came from: `user: …`, `profile default: …`, `ascend default: …`,
    `matrix rule: …` or `auto: <why>`."""

    value: Any
    source: str

    def to_json(self) -> dict[str, Any]:
        return {"value": self.value, "source": self.source}


@record(eq=False)
class ReleasePin:
    """The pinned version set of the chosen support-matrix row."""

    version: str  # the row's pin (vllm-ascend tag for npu, engine version for cpu/cuda)
    backend: str
    package: str
    status: str
    vllm: str
    vllm_ascend: str | None
    python: str
    cann: str | None
    torch: str
    torch_npu: str | None
    triton_ascend: str | None
    mindie_turbo: str | None
    transformers: str | None
    image: str | None  # container image for the hardware family (npu), when published
    why: str  # why this row: the pin as written, or latest-stable / --release

    def to_json(self) -> dict[str, Any]:
        return {
            "version": self.version,
            "package": self.package,
            "status": self.status,
            "vllm_ascend": self.vllm_ascend,
            "vllm": self.vllm,
            "python": self.python,
            "cann": self.cann,
            "torch": self.torch,
            "torch_npu": self.torch_npu,
            "triton_ascend": self.triton_ascend,
            "mindie_turbo": self.mindie_turbo,
            "transformers": self.transformers,
            "image": self.image,
            "source": self.why,
        }


@record(eq=False)
class NodeLayout:
    index: int
    role: Role
    address: str | None
    interface: str | None
    devices: int
    dp_ranks: int  # data-parallel ranks this node runs
    dp_start_rank: int

    def to_json(self) -> dict[str, Any]:
        return {
            "node": self.index,
            "role": self.role,
            "address": self.address,
            "interface": self.interface,
            "devices": self.devices,
            "dp_ranks": self.dp_ranks,
            "dp_start_rank": self.dp_start_rank,
        }


@record(eq=False)
class ModelFacts:
    source: str  # as the profile wrote it
    resolved: str  # what vLLM loads (prepared:NAME → its directory)
    family: str | None  # support-matrix family id
    arch: str  # dense / moe / mla
    multimodal: bool
    traits_from: str
    config_path: str | None  # config.json that was read, when local
    support_table: str | None = None  # `tag:path[:line]` of the model-table row (or table) that judged the family

    def to_json(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "resolved": self.resolved,
            "family": self.family,
            "arch": self.arch,
            "multimodal": self.multimodal,
            "traits_from": self.traits_from,
            "config": self.config_path,
            "support_table": self.support_table,
        }


@record(eq=False)
class EngineSettings:
    """One instance's resolved engine settings, each with why: what the fit, the rules, render and serve read
    (never the argv or env back). `paths` names each in the dotted settings view."""

    graph_mode: Setting  # resolved by the graph era: eager / piecewise / full / ... / torchair / default
    kv_cache_dtype: Setting
    hccl_buffer_mb: Setting  # None: HCCL's own default
    device_utilization: Setting  # None: vLLM's default
    cpu_kv_cache_gib: Setting  # the CPU backend's KV space (None elsewhere)
    max_model_len: Setting  # None: the model's own context
    max_num_seqs: Setting  # None: vLLM's batch defaults
    max_num_batched_tokens: Setting
    capture_sizes: Setting  # None: the engine's own list
    host: str
    port: int
    devices_per_node: int
    hardware: Hardware | None  # the support matrix's hardware family row (devices per server, HBM, limits)

    # each typed setting's key in the dotted view (`Deployment.settings`, which renders this object for `--why`)
    paths: ClassVar[Mapping[str, str]] = {
        "graph_mode": "engine.graph.mode",
        "kv_cache_dtype": "engine.memory.kv_cache_dtype",
        "hccl_buffer_mb": "engine.memory.hccl_buffer_mb",
        "device_utilization": "engine.memory.device_utilization",
        "cpu_kv_cache_gib": "engine.memory.cpu_kv_cache_gib",
        "max_model_len": "model.max_model_len",
        "max_num_seqs": "engine.scheduler.max_num_seqs",
        "max_num_batched_tokens": "engine.scheduler.max_num_batched_tokens",
        "capture_sizes": "engine.graph.capture_sizes",
    }

    @property
    def devices_per_server(self) -> int | None:
        return self.hardware.devices_per_server if self.hardware is not None else None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {name: getattr(self, name).to_json() for name in self.paths}
        out.update(
            host=self.host,
            port=self.port,
            devices_per_node=self.devices_per_node,
            hardware=self.hardware.id if self.hardware is not None else None,
            devices_per_server=self.devices_per_server,
        )
        return out


@record(eq=False)
class Instance:
    """One engine instance: its role, its nodes (layout and command each) and its resolved settings. A command's
    `node` counts the instance's own nodes (0 = its head); `nodes[i].index` is that node's place in the profile's
    node list (the host it runs on)."""

    name: str
    role: InstanceRole
    nodes: tuple[NodeLayout, ...]
    commands: tuple[EngineCommand, ...]
    settings: EngineSettings
    model: ModelFacts
    env_sources: Mapping[int, Mapping[str, str]] = field(default_factory=dict)  # per command node: variable → why
    # provenance key (`--flag`, `env:NAME`, `--additional-config.a.b`) → the profile field that asked for it
    origins: Mapping[str, str] = field(default_factory=dict)
    fit: FitResult | None = None  # this instance's memory fit
    fit_error: str | None = None
    # every `--additional-config` key and variable the instance passes, wherever written, as its release reads it
    reads: tuple[SettingVerdict, ...] = ()

    def host_of(self, command: EngineCommand) -> int:
        """The profile node (host) a command of this instance runs on."""
        return self.nodes[command.node].index

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "role": self.role,
            "nodes": [n.index for n in self.nodes],
            "model": self.model.to_json(),
            "settings": self.settings.to_json(),
            "fit": self.fit.to_json() if self.fit is not None else None,
            "fit_error": self.fit_error,
        }


@record(eq=False)
class Route:
    """One instance a service sends requests to: its role, the profile node its API runs on, that API's port."""

    instance: str
    role: InstanceRole
    host: int
    port: int

    def to_json(self) -> dict[str, Any]:
        return {"instance": self.instance, "role": self.role, "host": self.host, "port": self.port}


@record(eq=False)
class Service:
    """Something in front of instances (a router or proxy): where it listens and which instances it routes to.
    `command` is empty where the plan does not choose the program (the renderers and `serve` do)."""

    name: str
    kind: str
    routes_to: tuple[str, ...]
    command: tuple[str, ...]
    host: str = "127.0.0.1"
    port: int | None = None
    policy: str | None = None
    routes: tuple[Route, ...] = ()
    connector: str = ""  # the KV connector family the instances use (the router's protocol follows it)
    program: str = ""  # what runs it, for messages (`vllm-ascend's example proxy`, `vllm-router`), "" when none
    source: str = ""  # where that program comes from
    health_path: str = "/health"  # where that program answers readiness
    node: int = 0  # the profile node (host) it runs on
    metrics_port: int | None = None  # where it serves Prometheus metrics (on 127.0.0.1), None: it serves none

    def engine_command(self, like: EngineCommand) -> EngineCommand | None:
        """The router as one supervised process, supervised like the instance command `like` (the profile's
        runtime settings); None where the plan has no router program."""
        if not self.command or self.port is None:
            return None
        return EngineCommand(
            node=self.node,
            role="head",
            argv=self.command,
            listen=Listen(self.host, self.port, self.health_path),
            supervision=like.supervision,
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": self.kind,
            "routes_to": list(self.routes_to),
            "command": list(self.command),
            "host": self.host,
            "port": self.port,
            "policy": self.policy,
            "routes": [r.to_json() for r in self.routes],
            "connector": self.connector,
            "program": self.program,
            "source": self.source,
            "health_path": self.health_path,
            "node": self.node,
            "metrics_port": self.metrics_port,
        }


@record(eq=False)
class Deployment:
    name: str
    release: ReleasePin
    backend: str
    hardware: str | None
    model: ModelFacts
    nodes: tuple[NodeLayout, ...]
    settings: Mapping[str, Setting]
    warnings: tuple[str, ...] = ()
    findings: tuple[Finding, ...] = ()  # every plan.* rule applied (see `notable` for what a plan shows)
    hccn_conf: str | None = None  # why the engines read /etc/hccn.conf (renderers mount it), None: they do not


@record(eq=False)
class Plan:
    deployment: Deployment
    instances: tuple[Instance, ...]
    provenance: Mapping[str, str]
    eras: Mapping[str, str]
    services: tuple[Service, ...] = ()
    warnings: tuple[str, ...] = ()
    allowed: tuple[str, ...] = ()  # ids of failing findings the profile's `allow` or `--allow` accepted
    suggestions: tuple[str, ...] = ()  # the matrix's nearest supported options, when a matrix constraint broke
    fit: FitResult | None = None  # the memory fit (`ascendctl fit`); None when it cannot be estimated
    fit_error: str | None = None  # why there is no fit
    decisive_eras: tuple[str, ...] = ()  # the era topics that emitted, suppressed or decided something in this plan

    @property
    def commands(self) -> tuple[EngineCommand, ...]:
        """Every node's command, instance by instance."""
        return tuple(c for i in self.instances for c in i.commands)

    @property
    def serving(self) -> Instance:
        """The first instance (the only one unless the profile disaggregates prefill and decode)."""
        return self.instances[0]

    @property
    def disaggregated(self) -> bool:
        return any(i.role != "serve" for i in self.instances)

    @property
    def verdict_notes(self) -> tuple[str, ...]:
        """The verdicts that hold with a caveat (a matrix warning, an accepted failure): what a rendered file notes."""
        return tuple(
            f.message for f in self.deployment.findings if f.status == "warn" and f.id.startswith(VERDICT_RULES)
        )

    @property
    def blocking(self) -> tuple[Finding, ...]:
        """The failing findings nothing accepted: `plan`, `serve` and `render` refuse the plan while any remain."""
        return tuple(f for f in self.deployment.findings if f.status == "fail")

    def instance(self, name: str) -> Instance:
        for instance in self.instances:
            if instance.name == name:
                return instance
        raise KeyError(name)

    def instance_plan(self, instance: Instance) -> Plan:
        """This plan seen as one instance alone (named `<deployment>-<instance>`, its own nodes counted from 0, no
        services): what a renderer made for one engine instance renders per instance of a disaggregated plan."""
        d = self.deployment
        nodes = tuple(dataclasses.replace(n, index=i) for i, n in enumerate(instance.nodes))
        deployment = dataclasses.replace(d, name=f"{d.name}-{instance.name}", nodes=nodes)
        return dataclasses.replace(
            self,
            deployment=deployment,
            instances=(instance,),
            services=(),
            fit=instance.fit,
            fit_error=instance.fit_error,
        )

    def units_on(self, host: int) -> tuple[tuple[Unit, EngineCommand], ...]:
        """What a prefill/decode deployment runs on one host, in start order: each instance's command there, then
        the router where it lives. Empty for a single-instance plan (its nodes are not units)."""
        if not self.disaggregated:
            return ()
        out = [(Unit(i.name, i.role, host), c) for i in self.instances for c in i.commands if i.host_of(c) == host]
        like = self.instances[0].commands[0]
        for service in self.services:
            command = service.engine_command(like)
            if command is not None and service.node == host:
                out.append((Unit(service.name, "router", host), command))
        return tuple(out)

    def command_for(self, node: int) -> EngineCommand:
        for command in self.commands:
            if command.node == node:
                return command
        raise KeyError(node)

    def to_json(self) -> dict[str, Any]:
        d = self.deployment
        return {
            "schema": PLAN_JSON_SCHEMA,
            "name": d.name,
            "release": d.release.to_json(),
            "backend": d.backend,
            "hardware": d.hardware,
            "model": d.model.to_json(),
            "layout": [n.to_json() for n in d.nodes],
            "instances": [i.to_json() for i in self.instances],
            "services": [s.to_json() for s in self.services],
            "nodes": [_command_json(i, c) for i in self.instances for c in i.commands],
            "warnings": list(self.warnings),
            "findings": [f.to_dict() for f in d.findings],
            "allowed": list(self.allowed),
            "eras": dict(self.eras),
            "settings": {k: s.to_json() for k, s in sorted(d.settings.items())},
            "provenance": dict(self.provenance),
            "fit": self.fit.to_json() if self.fit is not None else None,
            "fit_error": self.fit_error,
        }


def _command_json(instance: Instance, command: EngineCommand) -> dict[str, Any]:
    env = command.display_env()
    sources = instance.env_sources.get(command.node, {})
    return {
        "instance": instance.name,
        "host": instance.host_of(command),
        "node": command.node,
        "role": command.role,
        "argv": list(command.argv),
        "command": shlex.join(command.argv),
        "env": env,
        "env_sources": {name: sources.get(name, "") for name in env},
        "secret_env": {name: ref.describe() for name, ref in command.secret_env.items()},
        "health_url": command.health_url,
        "listen": {"host": command.listen.host, "port": command.listen.port} if command.listen else None,
        "supervision": _supervision_json(command),
        "pre_commands": [list(p) for p in command.pre_commands],
    }


def _supervision_json(command: EngineCommand) -> dict[str, Any] | None:
    sup = command.supervision
    if sup is None:
        return None
    restart = sup.restart
    return {
        "ready_timeout": sup.ready_timeout,
        "shutdown_timeout": sup.shutdown_timeout,
        "restart": {
            "policy": restart.policy,
            "max_restarts": restart.max_restarts,
            "backoff_seconds": restart.backoff_seconds,
            "backoff_max_seconds": restart.backoff_max_seconds,
        },
    }


__all__ = [
    "PLAN_JSON_SCHEMA",
    "REDACTED",
    "Deployment",
    "EngineSettings",
    "Instance",
    "InstanceRole",
    "ModelFacts",
    "NodeLayout",
    "Plan",
    "ReleasePin",
    "Route",
    "Service",
    "Setting",
]
