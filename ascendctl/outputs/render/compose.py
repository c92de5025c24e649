"""docker compose files, one per node, built as Python data and dumped as YAML.

Compose interpolates `$NAME` and `${NAME}` in every value of the file and reads `$$` as one `$`
(compose-spec "Interpolation"); a lone `$` before anything else is an error. So every planned string has
each `$` doubled, and the only interpolation left is the one meant: a secret passed through from the
shell running `docker compose up`, marked `Interpolation`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ascendctl.outputs.quoting import Quoted, one_line, shell_name
from ascendctl.outputs.render.context import MODEL_CACHE, NodeView, RenderContext, build_context
from ascendctl.outputs.render.options import RenderedFile
from ascendctl.outputs.render.shell import bind_mount, worker_script
from ascendctl.outputs.render.yaml_out import dump_documents

if TYPE_CHECKING:
    from ascendctl.outputs.render.options import RenderOptions
    from ascendctl.plan.types import Plan

Json = dict[str, Any]


class Interpolation(str):
    """A value compose must interpolate (not escaped)."""

    __slots__ = ()


def render(plan: Plan, options: RenderOptions) -> list[RenderedFile]:
    ctx = build_context(plan, options)
    return [
        RenderedFile(f"compose{ctx.suffix(node)}.yaml", dump_documents(_header(ctx, node), [_project(ctx, node)]))
        for node in ctx.nodes
    ]


def _header(ctx: RenderContext, node: NodeView) -> list[Quoted]:
    lines = [ctx.provenance(node), Quoted("Re-render instead of editing: `ascendctl render PROFILE --target compose`.")]
    lines += [
        Quoted(
            f"{one_line(e.name)} is passed through from the shell running `docker compose up` ({one_line(e.source)})."
        )
        for e in node.env
        if e.secret
    ]
    return lines + [Quoted(f"note: {note}") for note in ctx.comment_notes()]


def _project(ctx: RenderContext, node: NodeView) -> Json:
    project: Json = {"name": ctx.name, "services": {"engine": _service(ctx, node)}}
    return {key: _escape(value) for key, value in project.items()}


def _service(ctx: RenderContext, node: NodeView) -> Json:
    service: Json = {
        "image": ctx.image,
        "network_mode": "host",
        "shm_size": "16gb",
        "stop_grace_period": f"{ctx.grace_seconds}s",
        "restart": "no",
    }
    if ctx.backend == "cpu":
        service["cap_add"] = ["SYS_NICE"]
        service["security_opt"] = ["seccomp=unconfined"]
    if ctx.device_paths:
        service["devices"] = list(ctx.device_paths)
    if ctx.backend == "cuda":
        gpus = {"driver": "nvidia", "count": "all", "capabilities": ["gpu"]}
        service["deploy"] = {"resources": {"reservations": {"devices": [gpus]}}}
    service["volumes"] = _volumes(ctx)
    service["environment"] = _environment(node)
    if node.pre_commands:
        service["entrypoint"] = ["/bin/sh", "-c"]
        service["command"] = [str(worker_script(node.pre_commands, node.argv))]
    else:
        service["entrypoint"] = [node.argv[0]]
        service["command"] = list(node.argv[1:])
    return service


def _volumes(ctx: RenderContext) -> list[str]:
    volumes = [bind_mount(MODEL_CACHE, MODEL_CACHE, read_only=False)]
    if ctx.model_mount:
        volumes.append(bind_mount(ctx.model_mount, ctx.model_mount, read_only=True))
    volumes += [bind_mount(path, path, read_only=True) for _, path in ctx.mounts]
    return volumes


def _environment(node: NodeView) -> Json:
    env: Json = {}
    for e in node.env:
        if e.secret:
            name = shell_name(e.name)
            env[e.name] = Interpolation(f"${{{name}:?set {name}}}")
        else:
            env[e.name] = e.value
    return env


def _escape(value: Any) -> Any:
    """Double every `$` in every string value (not in keys, which compose does not interpolate)."""
    if isinstance(value, Interpolation):
        return str(value)
    if isinstance(value, str):
        return value.replace("$", "$$")
    if isinstance(value, dict):
        return {k: _escape(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_escape(v) for v in value]
    return value
