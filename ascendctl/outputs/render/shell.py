"""Shell artifacts: `docker run` scripts and plain per-node scripts (templates `docker-run.sh.j2`,
`script.sh.j2`). Every word is quoted with `ascendctl.outputs.quoting.sh_word`; the templates refuse anything else.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ascendctl.core.errors import UserInputError
from ascendctl.outputs.quoting import Quoted, sh_join, sh_word, shell_name
from ascendctl.outputs.render.context import MODEL_CACHE, EnvVar, NodeView, RenderContext, build_context
from ascendctl.outputs.render.options import RenderedFile
from ascendctl.outputs.render.templating import render_template
from ascendctl.schema.secrets import API_KEY_VAR, secret_label
from ascendctl_engine.secret_names import POSIX_NAME_TEXT, is_posix_name

if TYPE_CHECKING:
    from ascendctl.outputs.render.options import RenderOptions
    from ascendctl.plan.types import Plan


def render_docker(plan: Plan, options: RenderOptions) -> list[RenderedFile]:
    ctx = build_context(plan, options)
    return [
        RenderedFile(f"docker-run{ctx.suffix(node)}.sh", _docker_script(ctx, node), executable=True)
        for node in ctx.nodes
    ]


def render_script(plan: Plan, options: RenderOptions) -> list[RenderedFile]:
    ctx = build_context(plan, options)
    return [
        RenderedFile(
            f"{ctx.name}{ctx.suffix(node)}.sh",
            render_template("script.sh.j2", ctx=ctx, node=node, secrets=_secret_exports(node)),
            executable=True,
        )
        for node in ctx.nodes
    ]


def _docker_script(ctx: RenderContext, node: NodeView) -> str:
    mounts = [bind_mount(path, path, read_only=True) for _, path in ctx.mounts]
    mounts.append(bind_mount(MODEL_CACHE, MODEL_CACHE, read_only=False))
    if ctx.model_mount:
        mounts.append(bind_mount(ctx.model_mount, ctx.model_mount, read_only=True))
    env = [sh_word(shell_name(e.name) if e.secret else f"{shell_name(e.name)}={e.value}") for e in node.env]
    return render_template(
        "docker-run.sh.j2",
        ctx=ctx,
        node=node,
        container=sh_word(f"{ctx.name}{ctx.suffix(node)}"),
        secrets=_secret_exports(node),
        mounts=[sh_word(m) for m in mounts],
        env=env,
        worker=sh_word(worker_script(node.pre_commands, node.argv)) if node.pre_commands else None,
    )


def worker_script(pre_commands: Sequence[Sequence[str]], argv: Sequence[str]) -> Quoted:
    """`pre && pre && exec argv` for `sh -c` (docker, compose): every word a literal."""
    return Quoted(" && ".join([*(sh_join(p) for p in pre_commands), "exec " + sh_join(argv)]))


def bind_mount(source: str, target: str, *, read_only: bool) -> str:
    """A docker/compose short-syntax volume `SRC:DST[:ro]`; a `:` inside a path would change its meaning."""
    for path in (source, target):
        if ":" in path:
            raise UserInputError(f"cannot mount {path!r} with docker: ':' separates the parts of a volume")
    return f"{source}:{target}:ro" if read_only else f"{source}:{target}"


def _secret_exports(node: NodeView) -> list[Quoted]:
    return [secret_export(e) for e in node.env if e.secret]


def secret_export(var: EnvVar) -> Quoted:
    """The shell line that loads a secret into the environment at start; the value never appears in argv."""
    name = shell_name(var.name)
    if var.secret is None:
        raise ValueError(f"{var.name} is not a secret")
    if var.secret.env is not None:
        origin = secret_label(var.name)
        if not is_posix_name(var.secret.env):
            # Not quoted back: what is not a variable name may be the secret itself, pasted in its place.
            raise UserInputError(f"{origin}.env is not a valid shell variable name ({POSIX_NAME_TEXT})")
        source = shell_name(var.secret.env, f"{origin}.env")
        what = "the API key" if var.name == API_KEY_VAR else f"the value of {origin}"
        return Quoted(f'export {name}="${{{source}:?set {source} to {what}}}"')
    # `--` so a key file whose name starts with `-` is read, not taken for an option of head.
    return Quoted(f'export {name}="$(head -n 1 -- {sh_word(var.secret.file or "")})"')
