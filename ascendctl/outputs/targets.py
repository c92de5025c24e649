"""The render targets as data: each target's name, its one-line help and what the plan needs for it.

`ascendctl.outputs.render` pairs every target here with its renderer (`RENDERERS`); this module imports none
of them, so the CLI builds the `render --target` help and error message from it without loading a renderer
(every `ascendctl --help` builds that help).
"""

from __future__ import annotations

from collections.abc import Sequence

from ascendctl.core.errors import UserInputError
from ascendctl_engine.records import record


@record
class Target:
    name: str
    help: str  # one line, shown by `ascendctl render --help`
    overrides: tuple[str, ...] = ()  # `--set` overrides the plan needs for this target
    resolves_addresses: bool = False  # fills in node addresses the plan leaves symbolic (Kubernetes: pod IPs)
    renders_instances: bool = True  # renders a prefill/decode plan (instance by instance, plus the router)
    whole_plan: bool = False  # renders a prefill/decode plan as one object itself (not instance by instance)


# Inside a pod the API must listen on the pod's address, not loopback (the Service cannot reach 127.0.0.1).
K8S_HOST_OVERRIDE = "server.host=0.0.0.0"

TARGETS_BY_NAME: dict[str, Target] = {
    t.name: t
    for t in (
        Target(
            "k8s",
            "Kubernetes Deployment + Service (LeaderWorkerSet + Service for multi-node)",
            (K8S_HOST_OVERRIDE,),
            resolves_addresses=True,
        ),
        Target("docker", "one `docker run` script per node"),
        Target("compose", "one docker compose file per node"),
        Target("systemd", "one unit per node running `ascendctl serve PROFILE --node N`", renders_instances=False),
        Target("script", "one shell script per node: exports + the engine command"),
        Target(
            "kserve",
            "KServe LLMInferenceService (serving.kserve.io), one object for the deployment",
            (K8S_HOST_OVERRIDE,),
            resolves_addresses=True,
            whole_plan=True,
        ),
    )
}
TARGETS = tuple(TARGETS_BY_NAME)


def find_target(name: str) -> Target:
    try:
        return TARGETS_BY_NAME[name]
    except KeyError:
        raise UserInputError(f"--target {name!r}: choose one of {', '.join(TARGETS)}") from None


def render_overrides(name: str, overrides: Sequence[str]) -> list[str]:
    """The `--set` overrides to plan with for target `name` (Kubernetes pods bind all interfaces)."""
    return [*overrides, *find_target(name).overrides]


def targets_help() -> str:
    """`name: help` for every target, for the CLI."""
    return "; ".join(f"{t.name}: {t.help}" for t in TARGETS_BY_NAME.values())
