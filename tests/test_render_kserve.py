"""`--target kserve`: every curated profile as a KServe LLMInferenceService, checked against the real CRD schema
(kserve/kserve v0.20.0, tests/fixtures/schemas/kserve-llminferenceservice-v1alpha2.json) and its pod specs against
Kubernetes' own, and compared with the plan it came from."""

from __future__ import annotations

import copy
import dataclasses
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from consumers import k8s_expand, run_worker_shell

from ascendctl.core.errors import UserInputError
from ascendctl.facts.matrix import load_matrix
from ascendctl.outputs.render import RenderOptions, render, render_overrides
from ascendctl.outputs.render.kubernetes import k8s_literal
from ascendctl.plan.planner import plan_profile
from ascendctl.plan.types import Plan
from ascendctl.schema.loader import load_profile

ROOT = Path(__file__).resolve().parents[1]
PROFILES = sorted((ROOT / "profiles").glob("*.yaml"))
SCHEMA = json.loads((ROOT / "tests/fixtures/schemas/kserve-llminferenceservice-v1alpha2.json").read_text())
K8S_VERSION = "1.33.0"
DATA_ROOT = Path("/var/lib/ascendctl")  # as tests/test_render.py: prepared-model paths do not depend on $HOME


def _strict(schema: Any) -> Any:
    """The schema as `kubectl apply` applies it (server-side field validation `Strict`, kubectl's default): a
    field the schema does not name is an error, not silently pruned. So every object schema that lists its
    properties and neither allows extra ones nor preserves unknown fields gets `additionalProperties: false`."""
    if isinstance(schema, list):
        return [_strict(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: _strict(v) for k, v in schema.items()}
    if (
        "properties" in out
        and "additionalProperties" not in out
        and not out.get("x-kubernetes-preserve-unknown-fields")
    ):
        out["additionalProperties"] = False
    return out


STRICT_SCHEMA = _strict(SCHEMA)
# `jsonschema.validate(obj, schema)` checks the (900 kB) schema itself on every call: check it once, then
# validate with the same validator class it picks.
_Validator = jsonschema.validators.validator_for(SCHEMA)
_Validator.check_schema(SCHEMA)
_Validator.check_schema(STRICT_SCHEMA)
CRD = _Validator(SCHEMA)
STRICT = _Validator(STRICT_SCHEMA)


def _render(profile_path: Path, *sets: str) -> tuple[dict[str, Any], str, Plan]:
    profile = load_profile(profile_path, render_overrides("kserve", list(sets)))
    plan = plan_profile(profile, matrix=load_matrix(), data_root=DATA_ROOT)
    [file] = render(plan, "kserve", RenderOptions())
    assert file.name == "kserve.yaml"
    [obj] = [doc for doc in yaml.safe_load_all(file.content) if doc]
    return obj, file.content, plan


def _pod_specs(obj: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Every PodSpec in the object, by where it is."""
    spec = obj["spec"]
    found = {key: spec[key] for key in ("template", "worker") if key in spec}
    prefill = spec.get("prefill", {})
    found.update({f"prefill.{key}": prefill[key] for key in ("template", "worker") if key in prefill})
    return found


def _container(pod_spec: dict[str, Any]) -> dict[str, Any]:
    [container] = pod_spec["containers"]
    assert container["name"] == "main"  # the name KServe's presets merge into
    return container


@pytest.mark.parametrize("profile_path", PROFILES, ids=lambda p: p.stem)
def test_every_profile_renders_an_object_the_crd_and_kubernetes_accept(profile_path: Path) -> None:
    import kubernetes_validate

    obj, _, plan = _render(profile_path)
    assert obj["apiVersion"] == "serving.kserve.io/v1alpha2" and obj["kind"] == "LLMInferenceService"
    CRD.validate(obj)
    STRICT.validate(obj)  # no field the CRD would prune
    pods = _pod_specs(obj)
    assert "template" in pods
    for where, pod_spec in pods.items():
        template = {
            "apiVersion": "v1",
            "kind": "PodTemplate",
            "metadata": {"name": f"{obj['metadata']['name']}-{where.replace('.', '-')}"},
            "template": {"spec": pod_spec},
        }
        kubernetes_validate.validate(template, K8S_VERSION, strict=True)
    # The workloads are the plan's instances: one multi-node instance has a worker template.
    main_role = "decode" if plan.disaggregated else "serve"
    main = [i for i in plan.instances if i.role == main_role]
    assert obj["spec"]["replicas"] == len(main)
    assert ("worker" in obj["spec"]) == (len(main[0].nodes) > 1)
    assert ("prefill" in obj["spec"]) == plan.disaggregated


def test_schema_validation_catches_a_broken_object() -> None:
    obj, _, _ = _render(ROOT / "profiles/qwen3-32b-w8a8-a2.yaml")
    misspelled = copy.deepcopy(obj)
    misspelled["spec"]["parallelism"]["tensorSize"] = misspelled["spec"]["parallelism"].pop("tensor")
    CRD.validate(misspelled)  # the CRD itself would only prune it ...
    with pytest.raises(jsonschema.ValidationError, match="tensorSize"):
        STRICT.validate(misspelled)  # ... which kubectl's strict field validation refuses
    wrong_type = copy.deepcopy(obj)
    wrong_type["spec"]["replicas"] = "1"
    with pytest.raises(jsonschema.ValidationError, match="'1' is not of type 'integer'"):
        CRD.validate(wrong_type)
    below_minimum = copy.deepcopy(obj)
    below_minimum["spec"]["parallelism"]["tensor"] = 0
    with pytest.raises(jsonschema.ValidationError):
        CRD.validate(below_minimum)
    no_uri = copy.deepcopy(obj)
    del no_uri["spec"]["model"]["uri"]
    with pytest.raises(jsonschema.ValidationError, match="'uri' is a required property"):
        CRD.validate(no_uri)


def _kv_role(argv: list[str]) -> str:
    return json.loads(argv[argv.index("--kv-transfer-config") + 1])["kv_role"]


def _argv(container: dict[str, Any], pod: dict[str, str], tmp_path: Path) -> list[str]:
    """The argv the container's process gets in a pod with `pod`'s variables: Kubernetes expands command and
    args, and a `sh -c` script (a worker's, its rank computed from LWS_WORKER_INDEX) runs with a fake `vllm`
    that prints the argv it was given."""
    raw = [*container["command"], *container.get("args", [])]
    if raw[:2] != ["/bin/sh", "-c"]:
        return [k8s_expand(w, pod) for w in raw]
    return run_worker_shell(raw[2], tmp_path, pod)


def test_prefill_decode_profile_is_one_object_with_decode_as_main_and_prefill_beside_it(tmp_path: Path) -> None:
    obj, _, plan = _render(ROOT / "profiles/glm-5-2-pd-a3.yaml")
    spec = obj["spec"]
    prefill = spec["prefill"]
    assert spec["replicas"] == 1 and prefill["replicas"] == 1
    for workload in (spec, prefill):
        parallelism = workload["parallelism"]
        assert (parallelism["tensor"], parallelism["data"], parallelism["dataLocal"]) == (8, 4, 2)
        assert parallelism["expert"] is True
        assert "worker" in workload and "template" in workload
    assert spec["router"] == {"scheduler": {}, "route": {}, "gateway": {}}  # KServe's scheduler picks P and D

    # Every pod runs its node's planned command: the head with the pod IP for its own address, the worker
    # (one template for all workers, as KServe's LeaderWorkerSet runs it) with its rank from LWS_WORKER_INDEX.
    by_role = {i.role: i for i in plan.instances}
    roles = ((spec, by_role["decode"], "kv_consumer"), (prefill, by_role["prefill"], "kv_producer"))
    for workload, instance, kv_role in roles:
        layout = plan.instance_plan(instance).deployment.nodes
        head_address, worker_address = str(layout[0].address), str(layout[1].address)
        head = _container(workload["template"])
        head_argv = _argv(head, {"POD_IP": head_address}, tmp_path)
        assert head_argv == list(instance.commands[0].argv)
        assert _kv_role(head_argv) == kv_role
        assert head["ports"] == [{"name": "http", "containerPort": instance.settings.port}]
        worker = _container(workload["worker"])
        assert "ports" not in worker and "startupProbe" not in worker  # headless
        pod = {"LWS_WORKER_INDEX": "1", "LWS_LEADER_ADDRESS": head_address, "POD_IP": worker_address}
        worker_argv = _argv(worker, pod, tmp_path)
        assert worker_argv == list(instance.commands[1].argv)
        assert _kv_role(worker_argv) == kv_role
    # The local model directory is mounted from the host; KServe's storage initializer stays off.
    assert spec["model"] == {"uri": "file:///models/GLM-5.2-w8a8", "name": "glm-52"}
    assert spec["storageInitializer"] == {"enabled": False}
    for pod_spec in _pod_specs(obj).values():
        assert "/models/GLM-5.2-w8a8" in {m["mountPath"] for m in _container(pod_spec)["volumeMounts"]}


def test_prefill_decode_header_says_where_kserve_differs_from_the_plan() -> None:
    _, text, _ = _render(ROOT / "profiles/glm-5-2-pd-a3.yaml")
    header = [line for line in text.splitlines() if line.startswith("#")]
    assert any("decode-0 listens on 9900" in line and "8001" in line for line in header)
    assert any("prefill-0 listens on 9081" in line and "8000" in line for line in header)
    assert any(line.startswith("# spec.router:") and "router (" in line for line in header)


def test_single_node_profile_has_no_prefill_nor_worker_and_runs_the_planned_command() -> None:
    obj, text, plan = _render(ROOT / "profiles/qwen3-32b-w8a8-a2.yaml")
    spec = obj["spec"]
    assert "prefill" not in spec and "worker" not in spec and "router" not in spec
    assert spec["replicas"] == 1
    assert spec["parallelism"] == {"tensor": plan.deployment.settings["engine.parallel.tensor"].value}
    assert spec["model"] == {"uri": "hf://vllm-ascend/Qwen3-32B-W8A8", "name": "qwen3"}
    [head] = plan.commands
    container = _container(spec["template"])
    assert [*container["command"], *container["args"]] == [k8s_literal(a) for a in head.argv]
    env = {e["name"]: e["value"] for e in container["env"]}
    assert env == dict(head.env)
    assert container["resources"]["limits"] == {"huawei.com/Ascend910": 4}
    assert container["securityContext"] == {"runAsNonRoot": False}  # the preset's `true` would refuse root
    assert "# port:" not in text  # it listens on 8000, where KServe sends


def test_a_dollar_in_the_plan_reaches_the_engine_unexpanded() -> None:
    obj, _, plan = _render(
        ROOT / "profiles/qwen3-32b-w8a8-a2.yaml", "engine.extra_args=['--served-model-name', '$(HOME)$x']"
    )
    container = _container(obj["spec"]["template"])
    assert container["args"][-1] == "$$(HOME)$$x"
    assert k8s_expand(container["args"][-1], {"HOME": "/root"}) == plan.commands[0].argv[-1] == "$(HOME)$x"


def test_a_modelscope_id_is_recorded_as_such() -> None:
    obj, _, _ = _render(ROOT / "profiles/qwen3-vl-30b-a3b-a3.yaml")
    assert obj["spec"]["model"]["uri"] == "modelscope://Qwen/Qwen3-VL-30B-A3B-Instruct"


def test_pipeline_parallel_over_nodes_names_the_preset_kserve_lacks() -> None:
    obj, text, _ = _render(ROOT / "tests/fixtures/profiles/qwen3-235b-a22b-ray-2node-a2.yaml")
    assert obj["spec"]["parallelism"]["pipeline"] == 2 and "data" not in obj["spec"]["parallelism"]
    assert "worker" in obj["spec"]
    assert "kserve-config-llm-worker-pipeline-parallel" in text
    STRICT.validate(obj)


def test_a_layout_kserve_cannot_size_is_refused() -> None:
    # Two nodes holding one data-parallel group of 4 ranks, 4 per node, would make KServe start a one-pod group.
    profile_path = ROOT / "profiles/deepseek-r1-w8a8-2node-a2.yaml"
    profile = load_profile(profile_path, render_overrides("kserve", []))
    plan = plan_profile(profile, matrix=load_matrix(), data_root=DATA_ROOT)
    settings = dict(plan.deployment.settings)
    key = "engine.parallel.data_per_node"
    settings[key] = type(settings[key])(4, "test")
    broken = dataclasses.replace(plan, deployment=dataclasses.replace(plan.deployment, settings=settings))
    with pytest.raises(UserInputError, match="KServe sizes a multi-node workload"):
        render(broken, "kserve", RenderOptions())


def test_hostile_profile_strings_stay_data() -> None:
    # Past the profile loader (which refuses most of these), as tests/test_render_hostile.py does for k8s.
    profile = load_profile(ROOT / "profiles/deepseek-r1-w8a8-2node-a2.yaml", render_overrides("kserve", []))
    hostile_env = {"YAMLY": "x\n---\nkind: Pod\nmetadata: {name: evil}", "K8S_REFS": "$(POD_IP) $$ ${HOME} $"}
    hostile_arg = "x\n---\nkind: Pod\n$(reboot) `id` $HOME ${POD_IP} $(POD_IP) '\"\\"
    hostile = profile.model_copy(
        update={
            "model": profile.model.model_copy(update={"served_name": "served\n---\nkind: Pod"}),
            "engine": profile.engine.model_copy(update={"extra_args": ["--chat-template", hostile_arg]}),
            "runtime": profile.runtime.model_copy(update={"env": {**profile.runtime.env, **hostile_env}}),
        }
    )
    plan = plan_profile(hostile, matrix=load_matrix(), data_root=DATA_ROOT)
    plan = dataclasses.replace(plan, warnings=(*plan.warnings, "note\n---\nkind: Pod"))
    [file] = render(plan, "kserve", RenderOptions())
    [obj] = list(yaml.safe_load_all(file.content))  # one document: no value opened another
    STRICT.validate(obj)
    assert obj["spec"]["model"]["name"] == "served\n---\nkind: Pod"
    head = _container(obj["spec"]["template"])
    address = str(plan.deployment.nodes[0].address)
    assert [k8s_expand(w, {"POD_IP": address}) for w in [*head["command"], *head["args"]]] == list(
        plan.commands[0].argv
    )
    env = {e["name"]: k8s_expand(e["value"], {}) for e in head["env"] if "value" in e}
    assert {k: env[k] for k in hostile_env} == hostile_env
    assert [line for line in file.content.splitlines() if line.startswith("# note: note")] == [
        "# note: note\\n---\\nkind: Pod"
    ]
