"""A prefill/decode plan rendered instance by instance, plus its router.

Each instance is rendered by the target's own renderer from `plan.instance_plan(instance)` (the plan seen as that
instance alone, named `<deployment>-<instance>`), so an instance's files are exactly what a one-instance plan of the
same layout gets; their names take the instance as a prefix (`prefill-0-k8s.yaml`, `decode-0-compose-node1.yaml`).
The router runs the program the release offers (the plan's `Service`: vllm-ascend's example proxy in the release
image, vLLM's router elsewhere) with every instance's API address as the target reaches it: the instance's Service
name on Kubernetes, the node's address elsewhere (`router-k8s.yaml`, `docker-run-router.sh`, `compose-router.yaml`,
`router.sh`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ascendctl.core.errors import UserInputError
from ascendctl.outputs.quoting import Quoted, one_line, sh_word
from ascendctl.outputs.render import compose, kubernetes
from ascendctl.outputs.render.context import build_context
from ascendctl.outputs.render.options import RenderedFile
from ascendctl.outputs.render.yaml_out import dump_documents
from ascendctl.plan.planner import router_command
from ascendctl_engine.spec import Listen

if TYPE_CHECKING:
    from ascendctl.outputs.render.context import RenderContext
    from ascendctl.outputs.render.options import RenderOptions
    from ascendctl.plan.types import Plan, Route, Service

RenderFunction = Callable[["Plan", "RenderOptions"], list[RenderedFile]]
MAX_NAME = 63  # an RFC 1035 label: a Kubernetes Service name, a compose project name


def render(plan: Plan, target: str, function: RenderFunction, options: RenderOptions) -> list[RenderedFile]:
    files: list[RenderedFile] = []
    for instance in plan.instances:
        sub = plan.instance_plan(instance)
        if len(sub.deployment.name) > MAX_NAME:
            raise UserInputError(
                f"metadata.name {plan.deployment.name!r}: with the instance name {sub.deployment.name!r} is longer "
                f"than {MAX_NAME} characters; shorten metadata.name"
            )
        for f in function(sub, options):  # a file already named after the instance's deployment keeps its name
            name = f.name if sub.deployment.name in f.name else f"{instance.name}-{f.name}"
            files.append(RenderedFile(name, f.content, f.executable))
    for service in plan.services:
        files += _ROUTERS[target](plan, service, options)
    return files


def _command(plan: Plan, service: Service, address: Callable[[Route], str]) -> tuple[str, ...]:
    r = plan.deployment.release
    return router_command(r.backend, r.vllm, r.vllm_ascend, service, address)


def _node_address(plan: Plan) -> Callable[[Route], str]:
    """The instance's API as the router on node 0 reaches it: on node 0 where it binds, elsewhere its node's address."""
    by_host = {n.index: n.address for n in plan.deployment.nodes}

    def address(route: Route) -> str:
        if route.host == 0:
            return Listen(plan.instance(route.instance).settings.host, route.port).poll_host
        found = by_host.get(route.host)
        if found is None:
            raise UserInputError(f"the router needs network.nodes[{route.host}].address (where {route.instance} runs)")
        return found

    return address


def _note(plan: Plan, service: Service) -> str:
    if not service.program:
        return f"{plan.deployment.release.version} ships no router ({service.source}): put your own in front"
    return f"router: {service.program} ({service.source}), {service.policy}"


def _router_context(plan: Plan, options: RenderOptions) -> RenderContext:
    # The image, mounts and names of the first instance: the router runs in the release image (the proxy is there).
    return build_context(plan.instance_plan(plan.instances[0]), options)


def _k8s_router(plan: Plan, service: Service, options: RenderOptions) -> list[RenderedFile]:
    ctx = _router_context(plan, options)
    name = f"{plan.deployment.name}-{service.name}"
    argv = _command(plan, service, lambda r: f"{plan.deployment.name}-{r.instance}")
    if not argv:
        return [RenderedFile("router-k8s.yaml", dump_documents([one_line(_note(plan, service))], []))]
    meta: dict[str, Any] = {
        "name": name,
        "labels": {"app.kubernetes.io/name": "ascendctl", "app.kubernetes.io/instance": name},
    }
    if options.namespace:
        meta["namespace"] = options.namespace
    container = {
        "name": "router",
        "image": ctx.image,
        "command": [kubernetes.k8s_literal(argv[0])],
        "args": [kubernetes.k8s_literal(a) for a in argv[1:]],
        "ports": [{"name": "http", "containerPort": service.port}],
        "readinessProbe": {"tcpSocket": {"port": "http"}, "periodSeconds": 10},
    }
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": meta,
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app.kubernetes.io/instance": name}},
            "template": {"metadata": {"labels": meta["labels"]}, "spec": {"containers": [container]}},
        },
    }
    svc = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": meta,
        "spec": {
            "selector": {"app.kubernetes.io/instance": name},
            "ports": [{"name": "http", "port": service.port, "targetPort": "http"}],
        },
    }
    header = [
        one_line(f"Rendered by ascendctl from profile {plan.deployment.name}: the router."),
        one_line(_note(plan, service)),
    ]
    return [RenderedFile("router-k8s.yaml", dump_documents(header, [deployment, svc]))]


def _router_shell(plan: Plan, service: Service, name: str, words: tuple[str, ...], hint: str = "") -> RenderedFile:
    """A router script on node 0: `exec` of `words`, or `exit 1` when the release offers no router."""
    where = f"Rendered by ascendctl from profile {plan.deployment.name}: the router, on node 0."
    lines = ["#!/bin/sh", f"# {one_line(where)}", f"# {one_line(_note(plan, service))}"]
    lines += [f"# {hint}"] if hint and words else []
    lines.append("exec " + " ".join(sh_word(w) for w in words) if words else "exit 1")
    return RenderedFile(name, "\n".join(lines) + "\n", executable=True)


def _script_router(plan: Plan, service: Service, options: RenderOptions) -> list[RenderedFile]:
    hint = "The program is in the release image (run it there, or `--target docker`)."
    return [_router_shell(plan, service, "router.sh", _command(plan, service, _node_address(plan)), hint)]


def _docker_router(plan: Plan, service: Service, options: RenderOptions) -> list[RenderedFile]:
    argv = _command(plan, service, _node_address(plan))
    name = f"{plan.deployment.name}-{service.name}"
    image = _router_context(plan, options).image
    words = ("docker", "run", "--rm", "--name", name, "--net=host", image, *argv) if argv else ()
    return [_router_shell(plan, service, "docker-run-router.sh", words)]


def _compose_router(plan: Plan, service: Service, options: RenderOptions) -> list[RenderedFile]:
    ctx = _router_context(plan, options)
    argv = _command(plan, service, _node_address(plan))
    name = f"{plan.deployment.name}-{service.name}"
    header: list[Quoted] = [
        one_line(f"Rendered by ascendctl from profile {plan.deployment.name}: the router, on node 0."),
        one_line(_note(plan, service)),
    ]
    if not argv:
        return [RenderedFile("compose-router.yaml", dump_documents(header, []))]
    project = {
        "name": name,
        "services": {
            "router": {
                "image": ctx.image,
                "network_mode": "host",
                "command": [compose._escape(a) for a in argv],  # the one escaping rule of compose files
                "restart": "unless-stopped",
            }
        },
    }
    return [RenderedFile("compose-router.yaml", dump_documents(header, [project]))]


_ROUTERS: dict[str, Callable[[Plan, Service, RenderOptions], list[RenderedFile]]] = {
    "k8s": _k8s_router,
    "script": _script_router,
    "docker": _docker_router,
    "compose": _compose_router,
}
