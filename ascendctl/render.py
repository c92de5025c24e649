"""Render a plan for Kubernetes, docker, compose, systemd or plain shell scripts.

All decisions are made here, in plain Python, from the planner's `Plan` (never a second translation of
the profile): which image, which device resources and mounts, how multi-node ranks and addresses are
wired. The jinja2 templates in `ascendctl/templates/` only lay the result out (StrictUndefined).

Container facts: device nodes and host mounts follow vllm-ascend's `docker run` line in
`docs/source/installation.md` (main, see ../shared/reference/vllm-ascend.md §8.3); LeaderWorkerSet wiring
(`LWS_LEADER_ADDRESS`, `LWS_WORKER_INDEX`, `RecreateGroupOnPodRestart`, a Service for the leader) follows
vLLM `docs/deployment/frameworks/lws.md` (reference/vllm.md §6).
"""

from __future__ import annotations

import json
import math
import re
import shlex
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ascendctl.errors import UserInputError

if TYPE_CHECKING:
    from ascendctl.models.matrix import SupportMatrix
    from ascendctl.models.plan import Plan
    from ascendctl.models.profile import Profile
    from ascendctl_engine.spec import EngineCommand

TARGETS = ("k8s", "docker", "compose", "systemd", "script")

# Ascend device-plugin resource names. Clusters differ (HAMi, Volcano vNPU, vllm-ascend's own CI uses
# `huawei.com/ascend-1980` for A3, vllm-ascend issue #3501), so `--resource-name` overrides this default.
DEFAULT_RESOURCE = {
    "a2": "huawei.com/Ascend910",
    "a3": "huawei.com/Ascend910",
    "300i-duo": "huawei.com/Ascend310P",
    "950": "huawei.com/Ascend950",
}
CUDA_RESOURCE = "nvidia.com/gpu"

# Images for the non-NPU rows (vLLM docs: `vllm/vllm-openai-cpu:v${V}-x86_64` for CPU and
# `vllm/vllm-openai` for CUDA; reference/vllm.md §7). NPU images come from the support matrix row.
NON_NPU_IMAGE = {"cpu": "vllm/vllm-openai-cpu:v{version}-x86_64", "cuda": "vllm/vllm-openai:v{version}"}

# Host paths every Ascend container needs (driver tools and libraries, install info), mounted read-only.
ASCEND_HOST_MOUNTS = (
    ("ascend-dcmi", "/usr/local/dcmi"),
    ("ascend-hccn-tool", "/usr/local/Ascend/driver/tools/hccn_tool"),
    ("ascend-npu-smi", "/usr/local/bin/npu-smi"),
    ("ascend-driver-lib64", "/usr/local/Ascend/driver/lib64"),
    ("ascend-driver-version", "/usr/local/Ascend/driver/version.info"),
    ("ascend-install-info", "/etc/ascend_install.info"),
)
ASCEND_CONTROL_DEVICES = ("/dev/davinci_manager", "/dev/devmm_svm", "/dev/hisi_hdc")
MODEL_CACHE = "/root/.cache"
PROBE_PERIOD_S = 10


@dataclass(frozen=True)
class RenderOptions:
    installed_profile: str | None = None  # where systemd units expect the profile; default /etc/ascendctl/<name>.yaml
    ascendctl_bin: str = "/usr/local/bin/ascendctl"
    resource_name: str | None = None
    namespace: str | None = None
    image: str | None = None
    api_key_secret: str | None = None  # k8s Secret holding the key (key `api-key`); default <name>-api-key


@dataclass(frozen=True)
class EnvVar:
    name: str
    value: str | None = None
    field_path: str | None = None  # k8s downward API
    secret: str | None = None  # k8s Secret name (key `api-key`)
    source: str = ""  # where the secret comes from outside k8s (env:NAME / file:PATH)


@dataclass(frozen=True)
class NodeView:
    """One node, laid out for templates."""

    index: int
    role: str
    argv: list[str]
    env: list[EnvVar]
    pre_commands: list[list[str]]
    shell: str | None = None  # `sh -c` script when the container must compute ranks/addresses at start


@dataclass(frozen=True)
class RenderContext:
    name: str
    namespace: str | None
    backend: str
    hardware: str | None
    image: str
    release: str
    vllm: str
    port: int
    host: str
    devices: int
    device_paths: list[str]
    resource_name: str | None
    mounts: list[tuple[str, str]]
    model_mount: str | None
    ready_failure_threshold: int
    grace_seconds: int
    shutdown_timeout: int
    nodes: list[NodeView]
    api_key: EnvVar | None
    installed_profile: str
    ascendctl_bin: str
    notes: list[str] = field(default_factory=list)

    @property
    def multi_node(self) -> bool:
        return len(self.nodes) > 1


def build_context(plan: Plan, profile: Profile, matrix: SupportMatrix, options: RenderOptions) -> RenderContext:
    d = plan.deployment
    name = d.name
    notes: list[str] = []
    backend = d.backend
    image = options.image or d.release.image or _non_npu_image(backend, d.release.version)
    if not image:
        raise UserInputError(f"no container image is published for {d.hardware} at {d.release.version}; pass --image")
    devices = profile.target.devices_per_node
    device_paths: list[str] = []
    resource = None
    mounts: list[tuple[str, str]] = []
    if backend == "npu":
        per_server = _devices_per_server(matrix, d.hardware) or devices
        device_paths = [f"/dev/davinci{i}" for i in range(per_server)] + list(ASCEND_CONTROL_DEVICES)
        resource = options.resource_name or DEFAULT_RESOURCE[d.hardware or "a2"]
        mounts = list(ASCEND_HOST_MOUNTS)
    elif backend == "cuda":
        resource = options.resource_name or CUDA_RESOURCE
    model_mount = d.model.resolved if d.model.resolved.startswith("/") else None
    if profile.model.source.startswith("prepared:"):
        notes.append(
            f"{profile.model.source} is a directory on the planning machine ({d.model.resolved}); "
            "copy it to the same path on every node"
        )
    api_key = None
    secret_name = options.api_key_secret or f"{name}-api-key"
    nodes = [_node_view(c, plan, secret_name) for c in plan.commands]
    for command in plan.commands:
        for var, ref in command.secret_env.items():
            api_key = EnvVar(var, secret=secret_name, source=ref.describe())
    return RenderContext(
        name=name,
        namespace=options.namespace,
        backend=backend,
        hardware=d.hardware,
        image=image,
        release=d.release.version,
        vllm=d.release.vllm,
        port=profile.server.port,
        host=profile.server.host,
        devices=devices,
        device_paths=device_paths,
        resource_name=resource,
        mounts=mounts,
        model_mount=model_mount,
        ready_failure_threshold=max(1, math.ceil(profile.runtime.ready_timeout / PROBE_PERIOD_S)),
        grace_seconds=profile.server.shutdown_timeout + 30,
        shutdown_timeout=profile.server.shutdown_timeout,
        nodes=nodes,
        api_key=api_key,
        installed_profile=options.installed_profile or f"/etc/ascendctl/{name}.yaml",
        ascendctl_bin=options.ascendctl_bin,
        notes=notes + list(plan.warnings),
    )


def _non_npu_image(backend: str, version: str) -> str | None:
    template = NON_NPU_IMAGE.get(backend)
    return template.format(version=version.removeprefix("v")) if template else None


def _devices_per_server(matrix: SupportMatrix, hardware: str | None) -> int | None:
    for hw in matrix.hardware:
        if hw.id == hardware:
            return hw.devices_per_server
    return None


def _node_view(command: EngineCommand, plan: Plan, secret_name: str) -> NodeView:
    env = [EnvVar(k, v) for k, v in command.env.items()]
    env += [EnvVar(k, secret=secret_name, source=ref.describe()) for k, ref in command.secret_env.items()]
    return NodeView(
        index=command.node,
        role=command.role,
        argv=list(command.argv),
        env=env,
        pre_commands=[list(p) for p in command.pre_commands],
    )


# --- Kubernetes wiring -------------------------------------------------------------------------------
# On Kubernetes the pods' addresses are not known when rendering: the address a node advertises becomes
# the pod IP (downward API), the head's address becomes `LWS_LEADER_ADDRESS`, and a worker's first DP rank
# is computed from `LWS_WORKER_INDEX` (all workers share one pod template).


def k8s_nodes(plan: Plan, secret_name: str) -> list[NodeView]:
    d = plan.deployment
    head_address = d.nodes[0].address if d.nodes else None
    views: list[NodeView] = []
    for command, layout in zip(plan.commands, d.nodes, strict=True):
        own = layout.address
        env: list[EnvVar] = []
        for k, v in command.env.items():
            if own and v == own:
                env.append(EnvVar(k, field_path="status.podIP"))
            else:
                env.append(EnvVar(k, v))
        if len(d.nodes) > 1:
            env.append(EnvVar("POD_IP", field_path="status.podIP"))
        env += [EnvVar(k, secret=secret_name, source=ref.describe()) for k, ref in command.secret_env.items()]
        if layout.role == "head":
            # The leader advertises its own pod IP (Ray's --node-ip-address, the DP address it binds).
            shell = bool(command.pre_commands)
            refs = [(own, _ref("POD_IP", shell))]
            argv = [_with_refs(a, refs) for a in command.argv]
            pre = [[_with_refs(a, refs) for a in p] for p in command.pre_commands]
            views.append(
                NodeView(layout.index, layout.role, argv, env, pre, _shell_script(pre, argv) if shell else None)
            )
        else:
            refs = [(head_address, _ref("LWS_LEADER_ADDRESS", True)), (own, _ref("POD_IP", True))]
            argv = _worker_argv(command.argv, refs, layout.dp_ranks)
            pre = [[_with_refs(a, refs) for a in p] for p in command.pre_commands]
            views.append(NodeView(layout.index, layout.role, argv, env, pre, _shell_script(pre, argv)))
    return views


def _ref(var: str, shell: bool) -> str:
    # Kubernetes expands `$(VAR)` in command/args itself; inside an `sh -c` script the shell expands `${VAR}`.
    return f"${{{var}}}" if shell else f"$({var})"


def _with_refs(arg: str, refs: Sequence[tuple[str | None, str]]) -> str:
    """Replace whole addresses (not prefixes of longer ones: 10.0.0.1 inside 10.0.0.12) by references."""
    for address, ref in refs:
        if address:
            # `ref` is passed through a function so its `$`/`\` are never read as a replacement template.
            arg = re.sub(rf"(?<![\w.]){re.escape(address)}(?![\w.])", _constant(ref), arg)
    return arg


def _constant(text: str) -> Callable[[re.Match[str]], str]:
    return lambda _match: text


def _worker_argv(argv: Sequence[str], refs: Sequence[tuple[str | None, str]], dp_ranks: int) -> list[str]:
    out: list[str] = []
    previous = ""
    for arg in argv:
        if previous == "--data-parallel-start-rank":
            out.append(f"$((LWS_WORKER_INDEX * {dp_ranks}))")
        else:
            out.append(_with_refs(arg, refs))
        previous = arg
    return out


def _shell_script(pre: Sequence[Sequence[str]], argv: Sequence[str]) -> str:
    # Quote every word except the `${VAR}` / `$((...))` references the shell must expand.
    def word(arg: str) -> str:
        if "$" not in arg:
            return shlex.quote(arg)
        return '"' + arg.replace('"', '\\"') + '"'

    steps = [" ".join(word(a) for a in p) for p in pre]
    steps.append("exec " + " ".join(word(a) for a in argv))
    return " && ".join(steps)


# --- rendering -----------------------------------------------------------------------------------------


def render(plan: Plan, profile: Profile, matrix: SupportMatrix, target: str, options: RenderOptions) -> dict[str, str]:
    """Return {file name: content} for `target`. Pure: no files are written here."""
    if target not in TARGETS:
        raise UserInputError(f"--target {target!r}: choose one of {', '.join(TARGETS)}")
    ctx = build_context(plan, profile, matrix, options)
    env = _jinja()
    if target == "k8s":
        nodes = k8s_nodes(plan, options.api_key_secret or f"{ctx.name}-api-key")
        template = "k8s-lws.yaml.j2" if ctx.multi_node else "k8s-deployment.yaml.j2"
        return {"k8s.yaml": env.get_template(template).render(ctx=ctx, nodes=nodes)}
    files: dict[str, str] = {}
    for node in ctx.nodes:
        suffix = f"-node{node.index}" if ctx.multi_node else ""
        if target == "docker":
            files[f"docker-run{suffix}.sh"] = env.get_template("docker-run.sh.j2").render(ctx=ctx, node=node)
        elif target == "compose":
            files[f"compose{suffix}.yaml"] = env.get_template("compose.yaml.j2").render(ctx=ctx, node=node)
        elif target == "systemd":
            unit = f"ascendctl-{ctx.name}{suffix}.service"
            files[unit] = env.get_template("systemd.service.j2").render(ctx=ctx, node=node)
        else:
            files[f"{ctx.name}{suffix}.sh"] = env.get_template("script.sh.j2").render(ctx=ctx, node=node)
    return files


def _jinja() -> Any:
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("ascendctl", "templates"),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,  # noqa: S701 - output is YAML/shell/ini, quoted by the filters below
    )
    env.filters["sh"] = shlex.quote
    env.filters["shjoin"] = shlex.join
    env.filters["json"] = lambda v: json.dumps(v, ensure_ascii=False)
    env.filters["systemd_quote"] = _systemd_quote
    env.filters["secret_export"] = secret_export
    return env


def secret_export(var: EnvVar) -> str:
    """The shell line that loads a secret into the environment at start; the value never appears in argv."""
    kind, _, where = var.source.partition(":")
    if kind == "env":
        return f'export {var.name}="${{{where}:?set {where} to the API key}}"'
    return f'export {var.name}="$(head -n 1 {shlex.quote(where)})"'


def _systemd_quote(arg: str) -> str:
    # systemd splits ExecStart like a shell but expands `%` specifiers and `$VAR`; escape both.
    escaped = arg.replace("\\", "\\\\").replace('"', '\\"').replace("%", "%%").replace("$", "$$")
    return f'"{escaped}"' if any(c in arg for c in " \t'\"") or not arg else escaped


def env_mapping(env: Sequence[EnvVar]) -> Mapping[str, str]:
    return {e.name: e.value for e in env if e.value is not None}


# Inside a pod the API must listen on the pod's address, not loopback (the Service cannot reach 127.0.0.1).
K8S_HOST_OVERRIDE = "server.host=0.0.0.0"


def render_overrides(target: str, overrides: Sequence[str]) -> list[str]:
    """The `--set` overrides to plan with for `target`: Kubernetes pods bind all interfaces."""
    if target == "k8s":
        return [*overrides, K8S_HOST_OVERRIDE]
    return list(overrides)
