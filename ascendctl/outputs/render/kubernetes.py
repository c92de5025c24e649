"""Kubernetes objects for a plan, built as Python data and dumped as YAML.

One node: a Deployment + Service. More nodes: a LeaderWorkerSet (sigs.k8s.io/lws) + a Service for the
leader, wired as vLLM's `docs/deployment/frameworks/lws.md` (vllm-project/vllm v0.33.0) does:
`LWS_LEADER_ADDRESS`, `LWS_WORKER_INDEX`, `RecreateGroupOnPodRestart`.

Kubernetes expands `$(VAR)` in a container's command, args and env values and reads `$$` as one `$`
(k8s.io/kubernetes third_party/forked/golang/expansion: `$$` is an escaped operator, `$(NAME)` a
reference, any other `$` is kept). So every planned string written there has each `$` doubled
(`k8s_literal`), and the only references left are the ones this module means: `$(POD_IP)`,
`$(LWS_LEADER_ADDRESS)`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ascendctl.core.errors import UserInputError
from ascendctl.outputs.quoting import Quoted, one_line, sh_word, shell_name, shell_product, shell_var
from ascendctl.outputs.render.context import MODEL_CACHE, PROBE_PERIOD_S, SHM, RenderContext, build_context
from ascendctl.outputs.render.options import RenderedFile
from ascendctl.outputs.render.yaml_out import dump_documents
from ascendctl.schema.secrets import API_KEY_VAR
from ascendctl_engine.records import record
from ascendctl_engine.spec import NodeAddress, NodeRankBase

if TYPE_CHECKING:
    from ascendctl.outputs.render.options import RenderOptions
    from ascendctl.plan.types import Plan
    from ascendctl_engine.spec import EngineCommand, SecretRef
    from ascendctl_engine.spec import Word as PlanWord

Json = dict[str, Any]


def render(plan: Plan, options: RenderOptions) -> list[RenderedFile]:
    ctx = build_context(plan, options)
    pods = pod_nodes(plan, SecretNames(ctx.api_key_secret, ctx.secrets_secret))
    if ctx.multi_node:
        documents = [_leader_worker_set(ctx, pods), _service(ctx, leader=True)]
    else:
        documents = [_deployment(ctx, pods[0]), _service(ctx, leader=False)]
    return [RenderedFile("k8s.yaml", dump_documents(_header(ctx), documents))]


def k8s_literal(text: str) -> str:
    """`text` as Kubernetes must see it in command/args/env to pass it on unchanged: every `$` doubled."""
    return text.replace("$", "$$")


# --- the comment block --------------------------------------------------------------------------------
# Why some fields are what they are; a YAML dumper keeps no comments next to the fields themselves.

_RERENDER = "Re-render instead of editing by hand: `ascendctl render PROFILE --target k8s`."
_LWS_INTRO = (
    "A LeaderWorkerSet (sigs.k8s.io/lws): the leader pod is node 0 (API server), each worker pod one more node.",
    "Needs the LWS controller installed. Re-render instead of editing: `ascendctl render PROFILE --target k8s`.",
)
_WHY_RECREATE = "strategy Recreate: accelerators are exclusive, never run the old and the new pod side by side."
_WHY_LWS_RESTART = "restartPolicy RecreateGroupOnPodRestart: one lost rank stalls the whole data/expert-parallel group."
_WHY_PROBES = "startupProbe: model load + graph capture can take many minutes; its budget is runtime.ready_timeout."
_WHY_GRACE = "terminationGracePeriodSeconds: server.shutdown_timeout (the drain) + 30 s."
_WHY_CPU = "SYS_NICE: vLLM's CPU backend binds OpenMP threads to NUMA nodes (get_mempolicy needs it)."


def _header(ctx: RenderContext) -> list[Quoted]:
    lines = [ctx.provenance()]
    lines += map(Quoted, _LWS_INTRO if ctx.multi_node else (_RERENDER,))
    if ctx.api_key_secret:
        secret = one_line(ctx.api_key_secret)
        lines.append(Quoted(f"API key: kubectl create secret generic {secret} --from-file=api-key=KEYFILE"))
    if ctx.secrets_secret:
        lines.append(_secrets_command(ctx, ctx.secrets_secret))
    why = [_WHY_LWS_RESTART if ctx.multi_node else _WHY_RECREATE, _WHY_PROBES, _WHY_GRACE]
    if ctx.backend == "cpu":
        why.append(_WHY_CPU)
    lines += map(Quoted, why)
    return lines + [Quoted(f"note: {note}") for note in ctx.comment_notes()]


# --- pod wiring ---------------------------------------------------------------------------------------
# On Kubernetes the pods' addresses are not known when rendering. The plan keeps every node address and
# rank it wrote as a reference (`EngineCommand.symbols`, position by position), and this module substitutes
# them: a node's own address becomes the pod IP (downward API), the head's address `LWS_LEADER_ADDRESS`,
# and a worker's first DP rank is computed from `LWS_WORKER_INDEX` (all workers share one pod template).
# Nothing is searched for in the argv: literal text stays literal even when it looks like an address.


@record
class Ref:
    """A value only the pod knows when it starts, expanded there."""

    shell: Quoted  # as the container's shell expands it: "${POD_IP}", "$((LWS_WORKER_INDEX * 2))"
    k8s: str | None = None  # as Kubernetes expands it in command/args: $(POD_IP); None: only a shell can

    def as_k8s(self) -> str:
        if self.k8s is None:
            raise ValueError(f"{self.shell} needs a shell; Kubernetes cannot expand it")
        return self.k8s


POD_IP = Ref(shell_var("POD_IP"), "$(POD_IP)")
LEADER_ADDRESS = Ref(shell_var("LWS_LEADER_ADDRESS"), "$(LWS_LEADER_ADDRESS)")

# One argv word: literal text and references, in order.
Word = tuple[str | Ref, ...]


@record
class PodNode:
    """One node as a container: its command (and args) already in Kubernetes' syntax, its env entries."""

    index: int
    role: str
    command: list[str]
    args: list[str] | None
    env: list[Json]

    @property
    def http(self) -> bool:
        return self.role == "head"  # workers are headless: no API server, no probes


@record
class SecretNames:
    """The Kubernetes Secrets a deployment's pods read: the API key's (key `api-key`) and runtime.secrets'
    (one Secret for the deployment, a key per variable, so every pod of it mounts the same object)."""

    api_key: str | None = None
    runtime: str | None = None


def pod_nodes(plan: Plan, secrets: SecretNames) -> list[PodNode]:
    multi_node = len(plan.deployment.nodes) > 1
    return [_pod_node(command, secrets, multi_node=multi_node) for command in plan.commands]


def pod_ref(part: NodeAddress | NodeRankBase, node: int) -> Ref:
    """What a plan reference is inside node `node`'s pod."""
    if isinstance(part, NodeRankBase):
        return Ref(shell_product("LWS_WORKER_INDEX", part.per_node))
    if part.node == node:
        return POD_IP
    if part.node == 0:
        return LEADER_ADDRESS
    raise UserInputError(f"node {node} refers to node {part.node}'s address, which no pod of a LeaderWorkerSet knows")


def pod_word(word: PlanWord, node: int) -> Word:
    return tuple(p if isinstance(p, str) else pod_ref(p, node) for p in word)


def _pod_node(command: EngineCommand, secrets: SecretNames, *, multi_node: bool) -> PodNode:
    symbols = command.symbols
    i = command.node
    argv = [pod_word(w, i) for w in symbols.argv] if symbols else [(a,) for a in command.argv]
    pre = (
        [[pod_word(w, i) for w in p] for p in symbols.pre_commands]
        if symbols
        else [[(a,) for a in p] for p in command.pre_commands]
    )
    env = _pod_env(command, secrets, multi_node=multi_node)
    # A shell is needed for pre-commands, and for references only a shell expands (the worker's DP rank).
    needs_shell = bool(pre) or any(isinstance(p, Ref) and p.k8s is None for w in argv for p in w)
    if needs_shell:
        script = _shell_script(pre, argv)
        return PodNode(i, command.role, ["/bin/sh", "-c", k8s_literal(script)], None, env)
    words = [_k8s_word(w) for w in argv]
    return PodNode(i, command.role, words[:1], words[1:], env)


def _pod_env(command: EngineCommand, secrets: SecretNames, *, multi_node: bool) -> list[Json]:
    symbolic = command.symbols.env if command.symbols else {}
    env: list[Json] = []
    for name, value in command.env.items():
        word = pod_word(symbolic[name], command.node) if name in symbolic else (value,)
        if word == (POD_IP,):
            env.append({"name": name, "valueFrom": _POD_IP_REF})
        else:
            env.append({"name": name, "value": _k8s_word(word)})
    if multi_node:
        env.append({"name": "POD_IP", "valueFrom": _POD_IP_REF})
    for name in command.secret_env:
        if name == API_KEY_VAR:
            ref = {"name": secrets.api_key, "key": "api-key"}
        else:
            ref = {"name": secrets.runtime, "key": name}
        env.append({"name": name, "valueFrom": {"secretKeyRef": ref}})
    return env


def _secrets_command(ctx: RenderContext, secret: str) -> Quoted:
    """The `kubectl create secret` line for runtime.secrets, one `--from-*` per variable from its own source:
    a file as it is, an env var expanded by the operator's shell (never its value written here)."""
    sources: dict[str, SecretRef] = {}
    for node in ctx.nodes:
        for var in node.env:
            if var.secret is not None and var.name != API_KEY_VAR:
                sources.setdefault(var.name, var.secret)
    words = [f"kubectl create secret generic {sh_word(secret)}"]
    for name, ref in sources.items():
        key = shell_name(name)
        if ref.env is not None:
            source = shell_name(ref.env, f"runtime.secrets.{name}.env")
            words.append(f'--from-literal={key}="${{{source}}}"')
        else:
            words.append(sh_word(f"--from-file={key}={ref.file}"))
    return Quoted(f"Secrets (runtime.secrets): {one_line(' '.join(words))}")


_POD_IP_REF: Json = {"fieldRef": {"fieldPath": "status.podIP"}}


def _k8s_word(word: Word) -> str:
    return "".join(p.as_k8s() if isinstance(p, Ref) else k8s_literal(p) for p in word)


def _shell_word(word: Word) -> str:
    # Literal text is single-quoted by sh_word; only the references are left for the shell to expand.
    return "".join(p.shell if isinstance(p, Ref) else sh_word(p) for p in word) or sh_word("")


def _shell_script(pre: Sequence[Sequence[Word]], argv: Sequence[Word]) -> str:
    steps = [" ".join(_shell_word(w) for w in p) for p in pre]
    steps.append("exec " + " ".join(_shell_word(w) for w in argv))
    return " && ".join(steps)


# --- objects ------------------------------------------------------------------------------------------


def _labels(ctx: RenderContext, role: str | None = None) -> Json:
    labels: Json = {
        "app.kubernetes.io/name": "ascendctl",
        "app.kubernetes.io/instance": ctx.name,
        "app.kubernetes.io/version": ctx.release,
    }
    if role:
        labels["ascendctl.dev/role"] = role
    return labels


def _metadata(ctx: RenderContext) -> Json:
    meta: Json = {"name": ctx.name}
    if ctx.namespace:
        meta["namespace"] = ctx.namespace
    meta["labels"] = _labels(ctx)
    return meta


def _deployment(ctx: RenderContext, pod: PodNode) -> Json:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": _metadata(ctx),
        "spec": {
            "replicas": 1,
            "strategy": {"type": "Recreate"},
            "selector": {"matchLabels": {"app.kubernetes.io/instance": ctx.name}},
            "template": {"metadata": {"labels": _labels(ctx)}, "spec": _pod_spec(ctx, pod)},
        },
    }


def _leader_worker_set(ctx: RenderContext, pods: Sequence[PodNode]) -> Json:
    return {
        "apiVersion": "leaderworkerset.x-k8s.io/v1",
        "kind": "LeaderWorkerSet",
        "metadata": _metadata(ctx),
        "spec": {
            "replicas": 1,
            "leaderWorkerTemplate": {
                "size": len(pods),
                "restartPolicy": "RecreateGroupOnPodRestart",
                "leaderTemplate": {"metadata": {"labels": _labels(ctx, "leader")}, "spec": _pod_spec(ctx, pods[0])},
                "workerTemplate": {"metadata": {"labels": _labels(ctx, "worker")}, "spec": _pod_spec(ctx, pods[1])},
            },
        },
    }


def _service(ctx: RenderContext, *, leader: bool) -> Json:
    selector: Json = (
        {"leaderworkerset.sigs.k8s.io/name": ctx.name, "ascendctl.dev/role": "leader"}
        if leader
        else {"app.kubernetes.io/instance": ctx.name}
    )
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": _metadata(ctx),
        "spec": {"selector": selector, "ports": [{"name": "http", "port": ctx.port, "targetPort": "http"}]},
    }


def _pod_spec(ctx: RenderContext, pod: PodNode) -> Json:
    return {
        "terminationGracePeriodSeconds": ctx.grace_seconds,
        "containers": [_container(ctx, pod)],
        "volumes": _volumes(ctx),
    }


def _container(ctx: RenderContext, pod: PodNode) -> Json:
    container: Json = {"name": "engine", "image": ctx.image, "command": pod.command}
    if pod.args is not None:
        container["args"] = pod.args
    if pod.http:
        container["ports"] = [{"name": "http", "containerPort": ctx.port}]
    container["env"] = pod.env
    if ctx.resource_name:
        container["resources"] = {"limits": {ctx.resource_name: ctx.devices}}
    if ctx.backend == "cpu":
        container["securityContext"] = {"capabilities": {"add": ["SYS_NICE"]}}
    container["volumeMounts"] = _volume_mounts(ctx)
    if pod.http:
        container.update(_probes(ctx))
    return container


def _probes(ctx: RenderContext) -> Json:
    health = {"path": "/health", "port": "http"}
    return {
        "startupProbe": {
            "httpGet": dict(health),
            "periodSeconds": PROBE_PERIOD_S,
            "failureThreshold": ctx.ready_failure_threshold,
        },
        "readinessProbe": {"httpGet": dict(health), "periodSeconds": 10, "failureThreshold": 3},
        "livenessProbe": {"httpGet": dict(health), "periodSeconds": 30, "timeoutSeconds": 10, "failureThreshold": 5},
    }


def _volume_mounts(ctx: RenderContext) -> list[Json]:
    mounts: list[Json] = [{"name": "shm", "mountPath": SHM}, {"name": "model-cache", "mountPath": MODEL_CACHE}]
    if ctx.model_mount:
        mounts.append({"name": "model", "mountPath": ctx.model_mount, "readOnly": True})
    mounts += [{"name": name, "mountPath": path, "readOnly": True} for name, path in ctx.mounts]
    return mounts


def _volumes(ctx: RenderContext) -> list[Json]:
    volumes: list[Json] = [
        {"name": "shm", "emptyDir": {"medium": "Memory", "sizeLimit": "16Gi"}},
        {"name": "model-cache", "hostPath": {"path": MODEL_CACHE, "type": "DirectoryOrCreate"}},
    ]
    if ctx.model_mount:
        volumes.append({"name": "model", "hostPath": {"path": ctx.model_mount, "type": "Directory"}})
    volumes += [{"name": name, "hostPath": {"path": path}} for name, path in ctx.mounts]
    return volumes
