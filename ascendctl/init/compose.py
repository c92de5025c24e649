"""A profile for what the operator asks: from an upstream launch (read by `import`), retargeted and fitted, or
derived from the model's traits and the fit where no launch exists.

`Trial` is one planned, fit-checked profile: it fits when the plan is not refused and the memory fit leaves at least
10 % of the KV budget above what is asked (`--workload`, else one full-length sequence). `adapt` searches the
tensor × data layouts of the devices asked for, closest to the launch's tensor size first.
"""

from __future__ import annotations

import copy
import math
import re
from collections.abc import Callable, Mapping
from typing import Any

from ascendctl.core.errors import AscendctlError
from ascendctl.core.yamlio import YamlDocument
from ascendctl.facts.checkpoint_names import quantization_from_name
from ascendctl.facts.model_inspect import ModelConfig
from ascendctl.importer.hatches import is_engine_variable
from ascendctl.importer.launch_scripts import launch_scripts
from ascendctl.importer.profile import drop
from ascendctl.importer.run import import_scripts
from ascendctl.init.rank import Ask, Candidate
from ascendctl.plan.planner import plan_profile
from ascendctl.plan.types import Plan
from ascendctl.plan.workload import Workload
from ascendctl.schema.loader import validate_profile_document
from ascendctl_engine.records import record
from ascendctl_engine.sections.fields import is_ip_address

HEADROOM = 0.10  # the KV budget left above what is asked
ConfigReader = Callable[[str], ModelConfig | None]
# What a CI runner's environment carries about its own machine, never a setting of the deployment.
_RUNNER_ENV = re.compile(r"(_PORT|_IFNAME|_IP|^NIC_NAME|^DISAGGREGATED_PREFILL_PROXY_SCRIPT|^LD_LIBRARY_PATH)$")


@record(eq=False)
class Trial:
    document: dict[str, Any]
    plan: Plan | None
    headroom: float | None  # KV budget above what is asked (0.25: 25 % more); None: not estimated
    problem: str = ""  # why it does not fit or plan ("" when it does)

    @property
    def fits(self) -> bool:
        return not self.problem and self.headroom is not None and self.headroom >= HEADROOM

    @property
    def layout(self) -> str:
        p = self.document.get("engine", {}).get("parallel", {})
        expert = " + EP" if p.get("expert") else ""
        return f"TP{p.get('tensor', 1)} × DP{p.get('data', 1)}{expert}"

    def verdict(self) -> str:
        if self.problem:
            return self.problem
        if self.headroom is None:
            return "fit not estimated (no config.json or published shapes for the model)"
        held = f"the KV cache holds {1 + self.headroom:.2g}× what is asked, {1 + HEADROOM:.1f}× needed"
        return f"fits ({held})" if self.fits else f"does not fit ({held})"


def evaluate(document: Mapping[str, Any], workload: Workload | None, read_config: ConfigReader) -> Trial:
    """Validate, plan and fit-check one profile document."""
    doc = copy.deepcopy(dict(document))
    try:
        profile = validate_profile_document(YamlDocument("<init>", doc))
        plan = plan_profile(profile, read_config=read_config)
    except AscendctlError as exc:
        return Trial(doc, None, None, f"not planned: {str(exc).splitlines()[0]}")
    if plan.blocking:
        return Trial(doc, plan, None, f"refused: {plan.blocking[0].id}: {plan.blocking[0].message}")
    fit = plan.fit
    if fit is None:
        return Trial(doc, plan, None)
    need = 1.0  # one full-length sequence
    if workload is not None:  # its largest point, in full-length sequences
        need = max(p.concurrency * p.tokens_per_sequence for p in workload.points) / max(fit.max_model_len, 1)
    return Trial(doc, plan, fit.max_concurrency / need - 1)


def from_launch(candidate: Candidate, ask: Ask, read_config: ConfigReader) -> tuple[dict[str, Any], list[str]]:
    """The launch imported as a profile (`ascendctl import`), retargeted to what is asked; notes say what changed."""
    launch = candidate.launch
    result = import_scripts(
        launch_scripts(launch), release=launch.tag, hardware=launch.hardware, name="init", read_config=read_config
    )
    doc = copy.deepcopy(result.document)
    notes: list[str] = []
    model = doc.setdefault("model", {})
    if str(model.get("source", "")).removeprefix("modelscope:") != ask.model:
        model["source"] = ask.model
        model.pop("quantization", None)
        if quantization_from_name(ask.model) is not None:
            model["quantization"] = quantization_from_name(ask.model)
        notes.append(f"model.source {ask.model}: the launch serves {launch.model}")
    if launch.tag != ask.tag:
        notes.append(f"release {ask.tag}: the launch runs {launch.tag}; the plan spells its settings for {ask.tag}")
    doc["release"] = ask.tag
    doc["target"]["hardware"] = ask.hardware
    left = _without_runner_env(doc)
    if left:
        notes.append(f"left out the CI runner's own variables: {', '.join(left)}")
    doc.pop("server", None)  # the CI's 0.0.0.0 and test port: the profile's secure default (127.0.0.1:8000)
    return doc, notes


def _without_runner_env(doc: dict[str, Any]) -> list[str]:
    """Drop the runner's addresses, ports and interfaces (and pass-through paths with `$`) from every env."""
    left: list[str] = []
    envs = [doc.get("runtime", {}).get("env", {})]
    envs += [n.get("env", {}) for n in doc.get("network", {}).get("nodes", [])]
    for env in envs:
        for name, value in list(env.items()):
            if is_engine_variable(name):
                continue
            if _RUNNER_ENV.search(name) or is_ip_address(str(value)) or "$" in str(value):
                env.pop(name)
                left.append(name)
    for node in doc.get("network", {}).get("nodes", []):
        if not node.get("env"):
            node.pop("env", None)
    if not doc.get("runtime", {}).get("env"):
        drop(doc, "runtime.env")
    return sorted(set(left))


def derived(ask: Ask) -> dict[str, Any]:
    """A profile from the model's traits alone (no launch): the planner's documented graph mode (`auto`), expert
    parallelism for MoE (the plan's model traits decide it in `adapt`), the release's Ascend defaults."""
    doc: dict[str, Any] = {
        "apiVersion": "ascendctl/v1",
        "kind": "Profile",
        "metadata": {"name": "init"},
        "model": {"source": ask.model},
        "target": {"backend": "npu", "hardware": ask.hardware, "devices_per_node": ask.devices, "nodes": ask.nodes},
        "release": ask.tag,
        "engine": {"graph": {"mode": "auto"}, "parallel": {"tensor": 1}},
    }
    quant = quantization_from_name(ask.model)
    if quant is not None:
        doc["model"]["quantization"] = quant
    return doc


def layouts(devices: int, nodes: int, tensor0: int) -> list[tuple[int, int]]:
    """(tensor, data) over `devices` per node × `nodes`: tensor a power of two within one node, data the rest;
    closest to the launch's tensor size `tensor0` first."""
    out = []
    t = 1
    while t <= devices:
        if devices % t == 0:
            out.append((t, devices * nodes // t))
        t *= 2
    return sorted(out, key=lambda td: (abs(math.log2(td[0]) - math.log2(max(tensor0, 1))), -td[0]))


def with_layout(doc: Mapping[str, Any], ask: Ask, tensor: int, data: int, expert: bool) -> dict[str, Any]:
    out = copy.deepcopy(dict(doc))
    target = out["target"]
    target.update(devices_per_node=ask.devices, nodes=ask.nodes)
    target.pop("visible_devices", None)
    parallel = out.setdefault("engine", {}).setdefault("parallel", {})
    parallel.clear()
    parallel.update(tensor=tensor, data=data)
    if ask.nodes > 1:
        parallel["data_per_node"] = data // ask.nodes
        nodes = out.setdefault("network", {}).get("nodes", [])
        out["network"]["nodes"] = [
            nodes[i] if i < len(nodes) else {"address": f"192.0.2.{i + 1}"} for i in range(ask.nodes)
        ]
    else:
        out.get("network", {}).pop("nodes", None)
        if not out.get("network"):
            out.pop("network", None)
    if expert:
        parallel["expert"] = True
    return out


def adapt(
    doc: Mapping[str, Any], ask: Ask, workload: Workload | None, read_config: ConfigReader
) -> tuple[Trial, list[Trial]]:
    """The launch's own layout where the devices are the launch's and it fits; else the first tensor × data
    layout that fits, the launch's tensor size first (every layout tried is returned too)."""
    own = evaluate(_sized(doc, ask), workload, read_config)
    parallel = doc.get("engine", {}).get("parallel", {})
    same = (doc["target"].get("devices_per_node"), doc["target"].get("nodes", 1)) == (ask.devices, ask.nodes)
    if same and (own.fits or (own.headroom is None and not own.problem)):
        return own, [own]
    expert = bool(parallel.get("expert")) or _moe(own.plan)
    tried = [
        evaluate(with_layout(doc, ask, t, d, expert), workload, read_config)
        for t, d in layouts(ask.devices, ask.nodes, int(parallel.get("tensor", 1)))
    ]
    fitting = [t for t in tried if t.fits]
    if fitting:
        return fitting[0], tried
    unchecked = [t for t in tried if not t.problem and t.headroom is None]
    return (unchecked or tried or [own])[0], tried


def _sized(doc: Mapping[str, Any], ask: Ask) -> dict[str, Any]:
    out = copy.deepcopy(dict(doc))
    out["target"].setdefault("devices_per_node", ask.devices)
    return out


def _moe(plan: Plan | None) -> bool:
    return plan is not None and plan.deployment.model.arch in ("moe", "mla")


__all__ = ["HEADROOM", "Trial", "adapt", "derived", "evaluate", "from_launch", "layouts", "with_layout"]
