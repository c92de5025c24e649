"""What the planner produces: a `Deployment` (the resolution: pinned release, backend, hardware, node
layout, every effective setting with its provenance, the plan rules' findings) and a `Plan` (the deployment plus one
`EngineCommand` per node and the reasons for each flag and variable).

`Plan.to_json()` is the `--json` contract of `ascendctl plan` and `ascendctl serve --dry-run` (pinned by
tests; keys may be added; a rename or removal bumps `PLAN_JSON_SCHEMA`). The classes are output only:
frozen, compared by identity (`eq=False` keeps `ascendctl plan` start-up cheap).
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ascendctl.core.findings import Finding
from ascendctl_engine.spec import REDACTED, EngineCommand
from ascendctl_engine.vocab import Role

if TYPE_CHECKING:
    from ascendctl.plan.fit.result import FitResult

# The `plan --json` shape version: bump it (and say so in the CHANGELOG) whenever a key is renamed or removed
# or a value changes meaning. 2: `lint` (rule/level/reference) became `findings` (the one finding type).
PLAN_JSON_SCHEMA = 2


@dataclass(frozen=True, eq=False)
class Setting:
    """One effective value and where it came from: `user: …`, `profile default: …`, `ascend default: …`,
    `matrix rule: …` or `auto: <why>`."""

    value: Any
    source: str

    def to_json(self) -> dict[str, Any]:
        return {"value": self.value, "source": self.source}


@dataclass(frozen=True, eq=False)
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


@dataclass(frozen=True, eq=False)
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


@dataclass(frozen=True, eq=False)
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


@dataclass(frozen=True, eq=False)
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


@dataclass(frozen=True, eq=False)
class Plan:
    deployment: Deployment
    commands: tuple[EngineCommand, ...]
    provenance: Mapping[str, str]
    env_sources: Mapping[int, Mapping[str, str]]
    eras: Mapping[str, str]
    warnings: tuple[str, ...] = ()
    unsupported: tuple[str, ...] = ()  # broken constraints that were allowed (allow_unsupported)
    fit: FitResult | None = None  # the memory fit (`ascendctl fit`); None when it cannot be estimated
    fit_error: str | None = None  # why there is no fit

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
            "nodes": [_command_json(c, self.env_sources.get(c.node, {})) for c in self.commands],
            "warnings": list(self.warnings),
            "unsupported": list(self.unsupported),
            "findings": [f.to_dict() for f in d.findings],
            "eras": dict(self.eras),
            "settings": {k: s.to_json() for k, s in sorted(d.settings.items())},
            "provenance": dict(self.provenance),
            "fit": self.fit.to_json() if self.fit is not None else None,
            "fit_error": self.fit_error,
        }


def _command_json(command: EngineCommand, sources: Mapping[str, str]) -> dict[str, Any]:
    env = command.display_env()
    return {
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
    "ModelFacts",
    "NodeLayout",
    "Plan",
    "ReleasePin",
    "Setting",
]
