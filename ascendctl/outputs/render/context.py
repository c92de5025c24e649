"""What every renderer reads, taken from the plan alone (never a second translation of the profile).

All decisions are made here, in plain Python: which image, which device resources and mounts, how long
the probes wait. The profile's values come from `plan.deployment.settings` (every leaf of the profile
with its provenance, as planned); the one fact that is not in the plan, how many devices a server of the
hardware family exposes, is read from the support matrix's hardware table.

Container facts: device nodes and host mounts follow vllm-ascend's `docker run` line in
`docs/source/installation.md` (vllm-project/vllm-ascend main; also main:docs/source/quick_start.md).
"""

from __future__ import annotations

import math
from dataclasses import field
from typing import TYPE_CHECKING

from ascendctl.core.errors import UserInputError
from ascendctl.outputs.quoting import Quoted, one_line
from ascendctl.outputs.render.options import RenderOptions
from ascendctl.schema.secrets import API_KEY_VAR
from ascendctl_engine.records import record

if TYPE_CHECKING:
    from ascendctl.plan.types import Deployment, EngineSettings, Plan
    from ascendctl_engine.spec import EngineCommand, SecretRef

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
# `vllm/vllm-openai` for CUDA; vllm-project/vllm v0.33.0:docs/getting_started/installation/cpu.md). NPU images
# come from the support matrix row.
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
# Where the engines read the NPU NICs' addresses (multi-node HCCL, Mooncake): mounted read-only when the plan says so.
HCCN_CONF_MOUNT = ("hccn-conf", "/etc/hccn.conf")
ASCEND_CONTROL_DEVICES = ("/dev/davinci_manager", "/dev/devmm_svm", "/dev/hisi_hdc")
MODEL_CACHE = "/root/.cache"
SHM = "/dev/shm"  # noqa: S108 - the container's shared-memory mount point, not a temporary file
PROBE_PERIOD_S = 10


@record
class EnvVar:
    """One variable of a node: a planned value, or a secret loaded at start (`secret` set, no value)."""

    name: str
    value: str | None = None
    secret: SecretRef | None = None

    @property
    def source(self) -> str:
        return self.secret.describe() if self.secret else ""


@record
class NodeView:
    index: int
    role: str
    argv: tuple[str, ...]
    env: tuple[EnvVar, ...]
    pre_commands: tuple[tuple[str, ...], ...]


@record
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
    device_paths: tuple[str, ...]
    resource_name: str | None
    mounts: tuple[tuple[str, str], ...]
    model_mount: str | None
    ready_failure_threshold: int
    grace_seconds: int
    shutdown_timeout: int
    nodes: tuple[NodeView, ...]
    api_key_secret: str | None  # the k8s Secret's name when the plan loads an API key, else None
    secrets_secret: str | None  # the k8s Secret holding runtime.secrets (a key per variable), else None
    installed_profile: str
    ascendctl_bin: str
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def multi_node(self) -> bool:
        return len(self.nodes) > 1

    def suffix(self, node: NodeView) -> str:
        """`-nodeN` for multi-node deployments (file and container names), else empty."""
        return f"-node{node.index}" if self.multi_node else ""

    def provenance(self, node: NodeView | None = None, *, backend: bool = True) -> Quoted:
        """The first comment line of every artifact: which profile, node, release and engine."""
        where = f" (node {node.index}, {node.role})" if node is not None and self.multi_node else ""
        tail = f", backend {self.backend}" if backend else ""
        if backend and self.hardware:
            tail += f", hardware {self.hardware}"
        return one_line(
            f"Rendered by ascendctl from profile {self.name}{where}: release {self.release} (vLLM {self.vllm}){tail}."
        )

    def comment_notes(self) -> tuple[Quoted, ...]:
        return tuple(one_line(n) for n in self.notes)


def _image(d: Deployment, options: RenderOptions) -> str:
    """--image, else the release's image for the hardware, else the non-NPU backend's; refused when none."""
    image = options.image or d.release.image or _non_npu_image(d.backend, d.release.version)
    if not image:
        raise UserInputError(f"no container image is published for {d.hardware} at {d.release.version}; pass --image")
    return image


def _device_resources(
    d: Deployment, options: RenderOptions, engine: EngineSettings
) -> tuple[tuple[str, ...], str | None, tuple[tuple[str, str], ...]]:
    """The container's device nodes, the device-plugin resource name and the host mounts of the backend."""
    if d.backend == "npu":
        per_server = engine.devices_per_server or engine.devices_per_node
        device_paths = (*(f"/dev/davinci{i}" for i in range(per_server)), *ASCEND_CONTROL_DEVICES)
        mounts = (*ASCEND_HOST_MOUNTS, HCCN_CONF_MOUNT) if d.hccn_conf else ASCEND_HOST_MOUNTS
        return device_paths, options.resource_name or DEFAULT_RESOURCE[d.hardware or "a2"], mounts
    if d.backend == "cuda":
        return (), options.resource_name or CUDA_RESOURCE, ()
    return (), None, ()


def build_context(plan: Plan, options: RenderOptions) -> RenderContext:
    d = plan.deployment
    image = _image(d, options)
    engine = plan.serving.settings
    devices = engine.devices_per_node
    device_paths, resource, mounts = _device_resources(d, options, engine)
    head = plan.commands[0]
    if head.listen is None or head.supervision is None:
        raise TypeError("the plan's head command has no listen address or supervision settings")
    shutdown_timeout = int(head.supervision.shutdown_timeout)
    secret_names = {name for c in plan.commands for name in c.secret_env}
    has_api_key = API_KEY_VAR in secret_names
    has_runtime_secrets = bool(secret_names - {API_KEY_VAR})
    return RenderContext(
        name=d.name,
        namespace=options.namespace,
        backend=d.backend,
        hardware=d.hardware,
        image=image,
        release=d.release.version,
        vllm=d.release.vllm,
        port=head.listen.port,
        host=head.listen.host,
        devices=devices,
        device_paths=device_paths,
        resource_name=resource,
        mounts=mounts,
        model_mount=_model_mount(d.model.resolved),
        ready_failure_threshold=max(1, math.ceil(head.supervision.ready_timeout / PROBE_PERIOD_S)),
        grace_seconds=shutdown_timeout + 30,
        shutdown_timeout=shutdown_timeout,
        nodes=tuple(_node_view(c) for c in plan.commands),
        api_key_secret=(options.api_key_secret or f"{d.name}-api-key") if has_api_key else None,
        secrets_secret=(options.secrets_secret or f"{d.name}-secrets") if has_runtime_secrets else None,
        installed_profile=options.installed_profile or f"/etc/ascendctl/{d.name}.yaml",
        ascendctl_bin=options.ascendctl_bin,
        notes=(*_model_notes(plan), *plan.warnings, *plan.verdict_notes),
    )


def _node_view(command: EngineCommand) -> NodeView:
    env = [EnvVar(k, v) for k, v in command.env.items()]
    env += [EnvVar(k, secret=ref) for k, ref in command.secret_env.items()]
    return NodeView(command.node, command.role, tuple(command.argv), tuple(env), tuple(command.pre_commands))


def _model_mount(resolved: str) -> str | None:
    """The host directory to mount at the same path, for a local model; None for a hub id. A relative local
    path means nothing inside a container (nor on another host): refused rather than silently not mounted."""
    if resolved.startswith("/"):
        return resolved
    if resolved.startswith((".", "~")):
        raise UserInputError(
            f"model.source {resolved!r} is a relative path: give the absolute path of the model directory "
            "(the artifacts mount it at the same path on the target host)"
        )
    return None


def _model_notes(plan: Plan) -> list[str]:
    model = plan.deployment.model
    if not model.source.startswith("prepared:"):
        return []
    where = f"{model.source} is a directory on the planning machine ({model.resolved})"
    return [f"{where}; copy it to the same path on every node"]


def _non_npu_image(backend: str, version: str) -> str | None:
    template = NON_NPU_IMAGE.get(backend)
    return template.format(version=version.removeprefix("v")) if template else None
