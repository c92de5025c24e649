"""systemd units: one per node, running `ascendctl serve PROFILE --node N` (template `systemd.service.j2`).

ascendctl supervises the engine itself (readiness, drain, restarts), so the unit carries no engine argv or
environment: only ascendctl's own command line, escaped by `systemd_syntax` like every other value.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ascendctl.outputs.render import systemd_syntax
from ascendctl.outputs.render.context import NodeView, RenderContext, build_context
from ascendctl.outputs.render.options import RenderedFile
from ascendctl.outputs.render.templating import render_template

if TYPE_CHECKING:
    from ascendctl.outputs.render.options import RenderOptions
    from ascendctl.plan.types import Plan


def render(plan: Plan, options: RenderOptions) -> list[RenderedFile]:
    ctx = build_context(plan, options)
    files = []
    for node in ctx.nodes:
        unit = f"ascendctl-{ctx.name}{ctx.suffix(node)}.service"
        files.append(RenderedFile(unit, _unit(ctx, node, unit)))
    return files


def _unit(ctx: RenderContext, node: NodeView, unit: str) -> str:
    exec_start = systemd_syntax.exec_line(
        [ctx.ascendctl_bin, "serve", ctx.installed_profile, "--node", str(node.index)],
        "--ascendctl-bin / --installed-profile in ExecStart=",
    )
    return render_template(
        "systemd.service.j2",
        ctx=ctx,
        node=node,
        unit=unit,
        description=_description(ctx, node),
        exec_start=exec_start,
        env_file=f"/etc/ascendctl/{ctx.name}.env",
    )


def _description(ctx: RenderContext, node: NodeView) -> str:
    where = f" node {node.index} ({node.role})" if ctx.multi_node else ""
    return f"ascendctl {ctx.name}{where}: vLLM {ctx.vllm} ({ctx.release})"
