"""Render a plan for Kubernetes, docker, compose, systemd or plain shell scripts.

Every renderer takes the plan only (`render(plan, target, options)`; never a second translation of the
profile) and is registered in `RENDERERS`, which pairs each target of `ascendctl.outputs.targets` with its render
function. How values are kept from becoming code:

- Kubernetes and compose objects are Python data serialized by a YAML dumper (`yaml_out`), with each
  tool's own `$` expansion escaped (`kubernetes.k8s_literal`, `compose._escape`);
- shell scripts quote every word with `ascendctl.outputs.quoting.sh_word`, and their templates refuse any value
  not produced by a quoting filter (`templating.refuse_unquoted`);
- systemd units escape by systemd's rules (`systemd_syntax`);
- profile text in comments goes through `ascendctl.outputs.quoting.one_line`.

The targets themselves (names, help, the overrides each needs) are data in `ascendctl.outputs.targets`: the one
table the CLI's `--target` help and its error message are built from, read without importing the renderers.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ascendctl.core.errors import UserInputError
from ascendctl.outputs.render.options import RenderedFile, RenderOptions
from ascendctl.outputs.targets import TARGETS, TARGETS_BY_NAME, Target, find_target, render_overrides
from ascendctl_engine.records import record

if TYPE_CHECKING:
    from ascendctl.plan.types import Plan

RenderFunction = Callable[["Plan", RenderOptions], list[RenderedFile]]


def _renderer_module(name: str) -> Any:
    """`ascendctl.outputs.render.<name>`, imported on first use.

    A command renders one target, so only that renderer's module is loaded: the template targets (docker,
    compose, systemd, script) import jinja2 and compile templates, which `render -t k8s` and `-t kserve` never
    use (about a tenth of their start-up; `make bench`). The modules are named here, not imported at the top.
    """
    return importlib.import_module(f"{__name__}.{name}")


@record
class Renderer:
    target: Target
    module: str  # the module under ascendctl.outputs.render that renders the target
    attribute: str  # its function: `render(plan, options) -> list[RenderedFile]`

    @property
    def name(self) -> str:
        return self.target.name

    @property
    def help(self) -> str:
        return self.target.help

    @property
    def function(self) -> RenderFunction:
        function: RenderFunction = getattr(_renderer_module(self.module), self.attribute)
        return function

    def render(self, plan: Plan, options: RenderOptions) -> list[RenderedFile]:
        return self.function(plan, options)


# Target name → (module, function) of its renderer.
_FUNCTIONS: dict[str, tuple[str, str]] = {
    "k8s": ("kubernetes", "render"),
    "docker": ("shell", "render_docker"),
    "compose": ("compose", "render"),
    "systemd": ("systemd", "render"),
    "script": ("shell", "render_script"),
    "kserve": ("kserve", "render"),
}
RENDERERS: dict[str, Renderer] = {name: Renderer(find_target(name), *_FUNCTIONS[name]) for name in TARGETS}


def renderer(name: str) -> Renderer:
    return RENDERERS[find_target(name).name]  # refuses an unknown name


def render(plan: Plan, target: str, options: RenderOptions) -> list[RenderedFile]:
    """The files for `target`. Pure: nothing is written here."""
    chosen = renderer(target)
    if plan.disaggregated and not chosen.target.renders_instances:
        raise UserInputError(
            f"--target {target} does not render a prefill/decode deployment yet: use "
            f"{', '.join(t.name for t in TARGETS_BY_NAME.values() if t.renders_instances)}"
        )
    if not chosen.target.resolves_addresses:
        missing = unresolved_addresses(plan)
        if missing:
            fields = ", ".join(f"network.nodes[{n}].address" for n in missing)
            raise UserInputError(
                f"--target {target} writes node addresses literally: set {fields} (only `--target k8s` fills them in)"
            )
    if plan.disaggregated and not chosen.target.whole_plan:
        disaggregate: Callable[..., list[RenderedFile]] = _renderer_module("disaggregated").render
        return disaggregate(plan, chosen.name, chosen.function, options)
    return chosen.render(plan, options)


def unresolved_addresses(plan: Plan) -> list[int]:
    """Nodes whose address the plan refers to but does not know."""
    return sorted({n for c in plan.commands if c.symbols for n in c.symbols.unresolved})


__all__ = ["RENDERERS", "TARGETS", "RenderOptions", "RenderedFile", "Renderer", "render", "render_overrides"]
