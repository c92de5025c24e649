"""Text rendering of a `Plan` for `ascendctl plan` / `ascendctl serve --dry-run` and of a pinned
requirement set for `ascendctl pin`. Pure: returns lines; commands are shell-quoted for display only
(the launcher runs argv lists, never a shell string)."""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ascendctl.core.findings import Finding
from ascendctl.plan.fit.report import summary_line
from ascendctl.plan.types import Instance, Plan

if TYPE_CHECKING:
    from ascendctl.facts.matrix.schema import Release
    from ascendctl_engine.install_plan import InstallPlan
    from ascendctl_engine.spec import EngineCommand


def _release_line(plan: Plan) -> str:
    r = plan.deployment.release
    if r.backend == "npu":
        parts = [f"vLLM {r.vllm}", f"CANN {r.cann}", f"torch {r.torch}", f"torch-npu {r.torch_npu}"]
        if r.triton_ascend:
            parts.append(f"triton-ascend {r.triton_ascend}")
        return f"vllm-ascend {r.version} ({', '.join(parts)}; Python {r.python})"
    return f"{r.package} {r.version} (vLLM {r.vllm}, torch {r.torch}; Python {r.python})"


def _fit_line(plan: Plan) -> str:
    if plan.fit is None:
        return f"not estimated ({plan.fit_error})"
    return summary_line(plan.fit) + "  [`ascendctl fit` for the table]"


def _command_lines(plan: Plan, instance: Instance, command: EngineCommand) -> list[str]:
    """One node's section: its env (each variable with its source), commands run before, argv and health URL."""
    layout = instance.nodes[command.node]
    addr = f", {layout.address}" if layout.address else ""
    if plan.disaggregated:
        head = f"{instance.name} ({instance.role}) node {command.node} ({command.role}, host {layout.index}{addr}):"
    else:
        head = f"node {command.node} ({command.role}{addr}):"
    out = ["", head]
    sources = instance.env_sources.get(command.node, {})
    env = command.display_env()
    if env:
        out.append("  env:")
        width = max(len(f"{k}={v}") for k, v in env.items())
        for name, value in env.items():
            text = f"{name}={value}"
            out.append(f"    {text:<{width}}  # {sources.get(name, '')}")
    for pre in command.pre_commands:
        out.append(f"  before: {shlex.join(pre)}")
    out.append(f"  run: {shlex.join(command.argv)}")
    out.append(f"  health: {command.health_url or '(none: this node serves no HTTP)'}")
    return out


def _service_lines(plan: Plan) -> list[str]:
    out = []
    for service in plan.services:
        where = f"{service.host}:{service.port}" if service.port is not None else "(no port)"
        out += ["", f"{service.name} ({service.kind}, {service.policy or 'default'}) on host 0, {where}:"]
        out.append(f"  routes to: {', '.join(f'{r.instance} (host {r.host}:{r.port})' for r in service.routes)}")
        if service.command:
            out.append(f"  run: {shlex.join(service.command)}  # {service.program}: {service.source}")
        else:
            out.append(f"  run: (the release ships no router: {service.source}; put your own in front)")
    return out


def _why_lines(plan: Plan, all_eras: bool = False) -> list[str]:
    """Where each planned value came from; of the release's eras, those that decided something in this plan (an era
    whose topic emitted, dropped, resolved, warned or refused), or every one with `all_eras`."""
    decided = set(plan.decisive_eras)
    shown, idle = [], 0
    for key, text in plan.provenance.items():
        if key.startswith("era:") and not all_eras and key.removeprefix("era:") not in decided:
            idle += 1
            continue
        shown.append(f"  {key}: {text}")
    if idle:
        shown.append(f"  ({idle} more eras of this release decided nothing in this plan: --why --all lists them)")
    return ["", "why:", *shown]


def _findings_lines(plan: Plan) -> list[str]:
    """The notable findings that do not refuse the plan, and the plan's warnings."""
    out: list[str] = []
    # failures are refusals (or, allowed, warnings below); show what works but deserves a look
    findings = [f for f in plan.deployment.findings if f.notable and f.status != "fail"]
    if findings:
        out.append("")
        out.append("findings:")
        out += [f"  [{'info' if f.undecided else f.status}] {f.id}: {f.message}" for f in findings]
    if plan.warnings:
        out.append("")
        out += [f"warning: {w}" for w in plan.warnings]
    return out + advice_lines([f for f in plan.deployment.findings if f.advice])


def advice_lines(advice: Sequence[Finding]) -> list[str]:
    """What upstream's evidence suggests the profile add (`plan.recipe.*`): each with the line that says it."""
    if not advice:
        return []
    out = ["", "advice (never applied: each line is what the profile would say to take it):"]
    for source in dict.fromkeys(f.source for f in advice):
        out.append(f"  set by upstream's verified launch {source}, not by this profile:")
        out += [f"    {f.fix}  [{f.id}]" for f in advice if f.source == source]
    return out


def render_plan(plan: Plan, *, node: int | None = None, why: bool = False, all_eras: bool = False) -> list[str]:
    d = plan.deployment
    where = f"{d.hardware} (npu)" if d.hardware else d.backend
    out = [
        f"plan: {d.name} on {where}",
        f"release: {_release_line(plan)}  [{d.release.why}]",
        f"model: {d.model.resolved} ({d.model.arch}{', multimodal' if d.model.multimodal else ''}; "
        f"{d.model.traits_from})",
    ]
    if d.release.image:
        out.append(f"image: {d.release.image}")
    graph = plan.serving.settings.graph_mode
    out.append(f"graph: {graph.value}  [{graph.source}]")
    out.append(f"fit: {_fit_line(plan)}")
    for instance in plan.instances:
        for command in instance.commands:
            if node is None or instance.host_of(command) == node:
                out += _command_lines(plan, instance, command)
    if node is None or node == 0:
        out += _service_lines(plan)
    if why:
        out += _why_lines(plan, all_eras)
    out += _findings_lines(plan)
    return out


def render_pins(row: Release, install: InstallPlan, image: str | None, family: str | None) -> list[str]:
    """The pinned requirement set of a release's engine environment, in install order."""
    out = [f"# engine environment for {row.package} {row.version} ({row.backend}); Python {row.python}"]
    if row.backend == "npu":
        out.append(f"# host: Ascend driver + CANN {row.cann} (not pip-installable)")
        out.append(
            "# install order matters on Ascend: vLLM first, then vllm-ascend with the torch / torch-npu pins "
            "(vllm-ascend does not depend on vllm; vllm-project/vllm-ascend#5710)"
        )
    for i, step in enumerate(install.steps, 1):
        env = " ".join(f"{k}={v}" for k, v in step.env.items())
        command = shlex.join(["pip", *step.pip_args])
        out.append(f"{i}. {env + ' ' if env else ''}{command}")
        out.append(f"   # {step.reason}")
    if row.backend == "npu":
        label = family or "(no hardware family declared)"
        out.append(f"image ({label}): {image or 'none published for this release and family'}")
    return out
