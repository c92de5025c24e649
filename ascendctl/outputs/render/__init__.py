"""Render a plan for Kubernetes, docker, compose, systemd or plain shell scripts.

Every renderer takes the plan only (`render(plan, target, options)`; never a second translation of the
profile) and is registered in `RENDERERS`, the one table `TARGETS`, the CLI's `--target` help and its
error message are built from. How values are kept from becoming code:

- Kubernetes and compose objects are Python data serialized by a YAML dumper (`yaml_out`), with each
  tool's own `$` expansion escaped (`kubernetes.k8s_literal`, `compose._escape`);
- shell scripts quote every word with `ascendctl.outputs.quoting.sh_word`, and their templates refuse any value
  not produced by a quoting filter (`templating.refuse_unquoted`);
- systemd units escape by systemd's rules (`systemd_syntax`);
- profile text in comments goes through `ascendctl.outputs.quoting.one_line`.

This module imports no renderer (each is imported when it is used): every `ascendctl` command builds
the `render` help from the table, so importing it must stay cheap.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

from ascendctl.core.errors import UserInputError
from ascendctl.outputs.render.options import RenderedFile, RenderOptions

if TYPE_CHECKING:
    from ascendctl.plan.types import Plan

RenderFunction = Callable[["Plan", RenderOptions], list[RenderedFile]]


@dataclass(frozen=True)
class Renderer:
    name: str
    help: str  # one line, shown by `ascendctl render --help`
    function: str  # `module:function`, `render(plan, options) -> list[RenderedFile]`, imported when used
    overrides: tuple[str, ...] = ()  # `--set` overrides the plan needs for this target
    resolves_addresses: bool = False  # fills in node addresses the plan leaves symbolic (Kubernetes: pod IPs)

    def render(self, plan: Plan, options: RenderOptions) -> list[RenderedFile]:
        module, _, name = self.function.partition(":")
        function = cast(RenderFunction, getattr(importlib.import_module(module), name))
        return function(plan, options)


# Inside a pod the API must listen on the pod's address, not loopback (the Service cannot reach 127.0.0.1).
K8S_HOST_OVERRIDE = "server.host=0.0.0.0"

RENDERERS: dict[str, Renderer] = {
    r.name: r
    for r in (
        Renderer(
            "k8s",
            "Kubernetes Deployment + Service (LeaderWorkerSet + Service for multi-node)",
            "ascendctl.outputs.render.kubernetes:render",
            (K8S_HOST_OVERRIDE,),
            resolves_addresses=True,
        ),
        Renderer("docker", "one `docker run` script per node", "ascendctl.outputs.render.shell:render_docker"),
        Renderer("compose", "one docker compose file per node", "ascendctl.outputs.render.compose:render"),
        Renderer(
            "systemd",
            "one unit per node running `ascendctl serve PROFILE --node N`",
            "ascendctl.outputs.render.systemd:render",
        ),
        Renderer(
            "script",
            "one shell script per node: exports + the engine command",
            "ascendctl.outputs.render.shell:render_script",
        ),
    )
}
TARGETS = tuple(RENDERERS)


def renderer(target: str) -> Renderer:
    try:
        return RENDERERS[target]
    except KeyError:
        raise UserInputError(f"--target {target!r}: choose one of {', '.join(TARGETS)}") from None


def render(plan: Plan, target: str, options: RenderOptions) -> list[RenderedFile]:
    """The files for `target`. Pure: nothing is written here."""
    chosen = renderer(target)
    if not chosen.resolves_addresses:
        missing = unresolved_addresses(plan)
        if missing:
            fields = ", ".join(f"network.nodes[{n}].address" for n in missing)
            raise UserInputError(
                f"--target {target} writes node addresses literally: set {fields} (only `--target k8s` fills them in)"
            )
    return chosen.render(plan, options)


def unresolved_addresses(plan: Plan) -> list[int]:
    """Nodes whose address the plan refers to but does not know."""
    return sorted({n for c in plan.commands if c.symbols for n in c.symbols.unresolved})


def render_overrides(target: str, overrides: Sequence[str]) -> list[str]:
    """The `--set` overrides to plan with for `target` (Kubernetes pods bind all interfaces)."""
    return [*overrides, *renderer(target).overrides]


def targets_help() -> str:
    """`name: help` for every target, for the CLI."""
    return "; ".join(f"{r.name}: {r.help}" for r in RENDERERS.values())


__all__ = ["RENDERERS", "TARGETS", "RenderOptions", "RenderedFile", "Renderer", "render", "render_overrides"]
