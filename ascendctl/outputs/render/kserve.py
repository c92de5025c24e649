"""A KServe `LLMInferenceService` for a plan: one object, `kserve.yaml`, built as Python data and dumped as YAML.

The object follows the CRD of kserve/kserve v0.20.0,
`config/crd/full/llmisvc/serving.kserve.io_llminferenceservices.yaml`, at its storage version
`serving.kserve.io/v1alpha2` (vendored: tests/fixtures/schemas/kserve-llminferenceservice-v1alpha2.json).
What the controller does with it is read from the same tag: `pkg/controller/v1alpha2/llmisvc/` and the presets in
`config/llmisvcconfig/`.

How the plan maps onto it:

- The pods are the plan's own: each container runs the planned command, args and env exactly as `--target k8s`
  writes them (`kubernetes.pod_nodes`: `$` doubled, node addresses as the pod IP and `LWS_LEADER_ADDRESS`, a
  worker's first rank from `LWS_WORKER_INDEX`; KServe runs a multi-node workload as a LeaderWorkerSet too).
  `spec.template` is an instance's head node, `spec.worker` (present only for a multi-node instance) its workers.
- KServe merges its preset LLMInferenceServiceConfigs (`kserve-config-llm-*`) into these pod specs by strategic
  merge: the container is named `main` so that ours replaces the preset's engine container (command, args, image)
  instead of running beside it, and `runAsNonRoot` is set false because the preset sets it true while the engine
  images run as root.
- `spec.model.uri`: KServe's storage initializer fetches `hf://`, `s3://`, `pvc://` and `oci://` URIs into
  /mnt/models, but the planned command loads the model itself, by the id or path the plan resolved. So the
  storage initializer is turned off (`spec.storageInitializer.enabled: false`, the controller then reads the URI
  no further) and the URI only records where the model comes from: `hf://ORG/NAME` for a Hugging Face id,
  `modelscope://ORG/NAME` for a ModelScope one (no KServe scheme exists for it), and for a local directory,
  for which KServe has no scheme either, `file:///PATH`, the directory itself being mounted from the host at the
  same path (hostPath), as `--target k8s` does. `spec.model.name`, the name requests carry, is the served name.
- `spec.parallelism` comes from the plan's settings (`engine.parallel.*`, per instance `<instance>:engine.parallel.*`
  in a prefill/decode plan). KServe feeds it to its presets' commands (replaced here) and sizes a multi-node
  workload's LeaderWorkerSet from it (data / dataLocal, or pipeline), so it must say how many nodes an instance
  has: a layout it cannot express is refused rather than rendered into a group of the wrong size.
- A prefill/decode plan is one object: the decode instances are the main workload (`spec.*`), the prefill
  instances `spec.prefill`, each with `replicas` = its number of instances (so those instances must run the same
  pods), and `spec.router` asks for KServe's managed scheduler, HTTPRoute and Gateway: KServe's scheduler (llm-d's
  endpoint picker) chooses the prefill and decode pods of a request, in place of the router the plan names.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ascendctl.core.errors import UserInputError
from ascendctl.outputs.quoting import Quoted, one_line
from ascendctl.outputs.render.context import build_context
from ascendctl.outputs.render.kubernetes import (
    _WHY_CPU,
    _WHY_GRACE,
    _WHY_PROBES,
    SecretNames,
    _metadata,
    _pod_spec,
    _secrets_command,
    pod_nodes,
)
from ascendctl.outputs.render.options import RenderedFile
from ascendctl.outputs.render.yaml_out import dump_documents

if TYPE_CHECKING:
    from ascendctl.outputs.render.context import RenderContext
    from ascendctl.outputs.render.kubernetes import PodNode
    from ascendctl.outputs.render.options import RenderOptions
    from ascendctl.plan.types import Instance, Plan

Json = dict[str, Any]

API_VERSION = "serving.kserve.io/v1alpha2"
KIND = "LLMInferenceService"
SOURCE = "kserve/kserve v0.20.0"
# The presets' engine container; a container of another name would run next to theirs, not replace it.
CONTAINER = "main"
# Where KServe v0.20.0 sends requests: its workload Service targets container port 8000
# (pkg/controller/v1alpha2/llmisvc/workload.go:131-148), and in a prefill/decode service the decode preset's
# llm-d routing sidecar takes 8000 and forwards to vLLM on 8001 (config-llm-decode-template.yaml).
EXPECTED_PORT = {"serve": 8000, "prefill": 8000, "decode": 8001}
_WHY_PORT = {
    "serve": "its workload Service and InferencePool target container port 8000",
    "prefill": "its workload Service and InferencePool target container port 8000",
    "decode": "the decode preset's llm-d routing sidecar takes port 8000 and forwards to vLLM on 8001",
}
_PORT_SETTING = {
    "serve": "server.port",
    "prefill": "disaggregation.prefill.port",
    "decode": "disaggregation.decode.port",
}


def render(plan: Plan, options: RenderOptions) -> list[RenderedFile]:
    ctx = build_context(plan, options)  # the deployment's name, namespace, Secrets and notes
    # One Secret name for every pod of the service, whichever instance it runs.
    secrets = SecretNames(ctx.api_key_secret, ctx.secrets_secret)
    main_role = "decode" if plan.disaggregated else "serve"
    main = _role(plan, main_role)
    spec: Json = {
        "model": _model(plan, main[0], ctx),
        "storageInitializer": {"enabled": False},  # the engine command loads the model itself
    }
    spec.update(_workload(plan, main, options, secrets))
    if plan.disaggregated:
        spec["prefill"] = _workload(plan, _role(plan, "prefill"), options, secrets)
        # KServe's managed router: without its scheduler no request would ever be sent to a prefill pod.
        spec["router"] = {"scheduler": {}, "route": {}, "gateway": {}}
    document = {"apiVersion": API_VERSION, "kind": KIND, "metadata": _metadata(ctx), "spec": spec}
    return [RenderedFile("kserve.yaml", dump_documents(_header(plan, ctx, spec), [document]))]


def _role(plan: Plan, role: str) -> list[Instance]:
    instances = [i for i in plan.instances if i.role == role]
    if not instances:
        raise UserInputError(f"--target kserve: the plan has no {role} instance")
    return instances


# --- the model ----------------------------------------------------------------------------------------


def _model(plan: Plan, instance: Instance, ctx: RenderContext) -> Json:
    model = plan.deployment.model
    if ctx.model_mount:  # a local directory, mounted at the same path (kubernetes._volumes)
        uri = f"file://{ctx.model_mount}"
    elif model.source.startswith("modelscope:"):
        uri = f"modelscope://{model.resolved}"
    else:
        uri = f"hf://{model.resolved}"
    served = _setting(plan, instance, "model.served_name")
    # Without --served-model-name vLLM serves the model under the id or path it was given.
    return {"uri": uri, "name": served or model.resolved}


def _setting(plan: Plan, instance: Instance, key: str) -> Any:
    """An instance's planned value of `key`: the plan's settings view keys a prefill/decode plan's instances
    `<instance>:<key>`, a one-instance plan's plainly."""
    name = f"{instance.name}:{key}" if plan.disaggregated else key
    try:
        return plan.deployment.settings[name].value
    except KeyError:
        raise TypeError(f"the plan's settings have no {name!r}") from None


# --- workloads ----------------------------------------------------------------------------------------


def _workload(plan: Plan, instances: list[Instance], options: RenderOptions, secrets: SecretNames) -> Json:
    """The workload of one role: its instances as `replicas` of one set of pods."""
    shapes = [_instance_workload(plan, i, options, secrets) for i in instances]
    for instance, shape in zip(instances[1:], shapes[1:], strict=True):
        # KServe runs every replica from the one template: instances planned differently cannot share it.
        if shape != shapes[0]:
            raise UserInputError(
                f"--target kserve runs the {instances[0].role} instances as replicas of one pod template, but "
                f"{instance.name} is planned differently from {instances[0].name}: use --target k8s"
            )
    return {"replicas": len(instances), **shapes[0]}


def _instance_workload(plan: Plan, instance: Instance, options: RenderOptions, secrets: SecretNames) -> Json:
    sub = plan.instance_plan(instance)  # its nodes counted from 0, as its pods see them
    ctx = build_context(sub, options)  # its image, devices, port, mounts and probes
    head, *workers = pod_nodes(sub, secrets)
    workload: Json = {"parallelism": _parallelism(plan, instance)}
    workload["template"] = _pod_spec_main(ctx, head)
    if workers:
        # One worker template for all workers (a LeaderWorkerSet's): what differs between them must be a
        # reference the pod expands (its rank from LWS_WORKER_INDEX), never a literal.
        for pod in workers[1:]:
            if (pod.command, pod.args, pod.env) != (workers[0].command, workers[0].args, workers[0].env):
                raise UserInputError(
                    f"{instance.name}: worker nodes {workers[0].index} and {pod.index} run different commands, "
                    "which one worker template cannot: use --target k8s"
                )
        workload["worker"] = _pod_spec_main(ctx, workers[0])
    return workload


def _pod_spec_main(ctx: RenderContext, pod: PodNode) -> Json:
    spec = _pod_spec(ctx, pod)
    container = spec["containers"][0]
    container["name"] = CONTAINER
    # The preset's securityContext (runAsNonRoot: true) is merged into ours; the engine images run as root.
    container.setdefault("securityContext", {})["runAsNonRoot"] = False
    return spec


def _parallelism(plan: Plan, instance: Instance) -> Json:
    def value(key: str) -> Any:
        return _setting(plan, instance, f"engine.parallel.{key}")

    nodes = len(instance.nodes)
    tensor, pipeline, data, per_node = value("tensor"), value("pipeline"), value("data"), value("data_per_node")
    out: Json = {"tensor": tensor}
    # KServe reads any pipeline or data value as "pipeline / data parallel" and its webhook refuses both at
    # once (llm_inference_service_validation.go), so a dimension of 1 is left out rather than written.
    if pipeline > 1 and data > 1:
        raise UserInputError(
            f"{instance.name}: KServe cannot run pipeline parallel ({pipeline}) with data parallel ({data}): "
            "use --target k8s"
        )
    if pipeline > 1:
        out["pipeline"] = pipeline
    if data > 1:
        if per_node is None and nodes > 1:
            raise UserInputError(
                f"{instance.name}: KServe needs the data-parallel ranks per node (parallelism.dataLocal): "
                "set engine.parallel.data_per_node"
            )
        out["data"] = data
        out["dataLocal"] = per_node if per_node is not None else data  # one node: every rank is local
    if value("expert"):
        out["expert"] = True
    if nodes > 1:
        # KServe's LeaderWorkerSet has data/dataLocal pods (data parallel) or `pipeline` pods (pipeline
        # parallel, refused with data), and its webhook refuses a worker without either.
        size = data // out["dataLocal"] if data > 1 else pipeline if pipeline > 1 else None
        if size != nodes:
            layout = ", ".join(f"{k} {v}" for k, v in out.items())
            raise UserInputError(
                f"{instance.name} runs on {nodes} nodes, but KServe sizes a multi-node workload from parallelism "
                f"(data / dataLocal, or pipeline), which here ({layout}) gives {size or 'no multi-node group'}: "
                "use --target k8s"
            )
    return out


# --- the comment block --------------------------------------------------------------------------------
# Why some fields are what they are, and where KServe's behaviour differs from the plan's.


def _header(plan: Plan, ctx: RenderContext, spec: Json) -> list[Quoted]:
    lines = [ctx.provenance()]
    multi_node = any(len(i.nodes) > 1 for i in plan.instances)
    lines += map(
        Quoted,
        (
            f"A KServe {KIND} ({API_VERSION}, the CRD of {SOURCE}): needs KServe's {KIND} controller"
            + (", and LeaderWorkerSet's (a multi-node workload runs as one)." if multi_node else "."),
            "Re-render instead of editing by hand: `ascendctl render PROFILE --target kserve`.",
            f"Container `{CONTAINER}`: KServe merges its preset (LLMInferenceServiceConfig kserve-config-llm-*) "
            "into the pods by container and volume name; the planned command, args and image replace the preset's.",
            "securityContext.runAsNonRoot false: the preset sets it true, and the engine image runs as root.",
            "storageInitializer disabled: the engine command loads the model itself, as planned; spec.model.uri "
            "only records where it comes from.",
            "The engine serves plain HTTP: leave KServe's enableLLMInferenceServiceTLS off (with it on, KServe's "
            "Service and probes speak HTTPS).",
        ),
    )
    lines += map(one_line, _port_notes(plan))
    lines += map(one_line, _pipeline_notes(plan, spec))
    lines.append(one_line(_router_note(plan, ctx)))
    if ctx.api_key_secret:
        secret = one_line(ctx.api_key_secret)
        lines.append(Quoted(f"API key: kubectl create secret generic {secret} --from-file=api-key=KEYFILE"))
    if ctx.secrets_secret:
        lines.append(_secrets_command(ctx, ctx.secrets_secret))
    why = [_WHY_PROBES, _WHY_GRACE]
    if ctx.backend == "cpu":
        why.append(_WHY_CPU)
    lines += map(Quoted, why)
    return lines + [Quoted(f"note: {note}") for note in ctx.comment_notes()]


def _port_notes(plan: Plan) -> list[str]:
    """Where KServe will send requests and the plan listens elsewhere: said, not silently rendered."""
    notes = []
    for instance in plan.instances:
        expected = EXPECTED_PORT[instance.role]
        if instance.settings.port != expected:
            notes.append(
                f"port: {instance.name} listens on {instance.settings.port}, but {SOURCE} sends to {expected} "
                f"({_WHY_PORT[instance.role]}); set {_PORT_SETTING[instance.role]}={expected} to serve through KServe"
            )
    return notes


def _pipeline_notes(plan: Plan, spec: Json) -> list[str]:
    """A pipeline-parallel multi-node workload makes the controller look up a preset that v0.20.0 does not ship
    (config_merge.go lists it as not yet well-known): without one the service never becomes ready."""
    workloads = {"decode": spec, "prefill": spec["prefill"]} if plan.disaggregated else {"": spec}
    notes = []
    for role, workload in workloads.items():
        if "worker" in workload and "pipeline" in workload["parallelism"]:
            preset = "-".join(filter(None, ("kserve-config-llm", role, "worker-pipeline-parallel")))
            notes.append(
                f"pipeline parallel over nodes: {SOURCE} looks up the LLMInferenceServiceConfig {preset} but ships "
                "none; create it in this namespace or in `kserve` (`spec: {}` will do)"
            )
    return notes


def _router_note(plan: Plan, ctx: RenderContext) -> str:
    if not plan.disaggregated:
        return (
            f"No spec.router: KServe makes only the Service {ctx.name}-kserve-workload-svc (port 8000); add "
            "`router: {route: {}, gateway: {}}` to publish it on a Gateway."
        )
    planned = ", ".join(f"{s.name} ({s.program or 'no program'}, port {s.port})" for s in plan.services) or "none"
    return (
        "spec.router: KServe's managed scheduler (llm-d's endpoint picker, which picks each request's prefill "
        "and decode pods), HTTPRoute and Gateway. The plan's router is not rendered, KServe's takes its place "
        f"(planned: {planned}); the decode preset's routing sidecar speaks the NIXL-style kv_transfer_params "
        "protocol (--kv-connector=nixlv2), check it against the planned KV connector."
    )
