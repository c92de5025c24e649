"""The planner: a validated profile × the support matrix (× host facts, optional) → a `Plan`.

    plan = plan_profile(profile)                       # matrix loaded from package data, no host
    plan = plan_profile(profile, host=facts, release="v0.13.0", allow_unsupported=True)

Steps: pick the release row (the pinned version set); check model × hardware × release × quantization ×
features against the matrix; resolve the model source, read its config.json when it is a local
directory; fill the engine's `EngineIntent` (every value with its provenance); run the era adapters of
`ascendctl_engine.adapters` (one `EngineCommand` per node); run the lint rules. Every broken constraint
(matrix errors, adapter `unsupported`, lint errors) fails the plan with `UnsupportedPlan` — listing the
constraint and the nearest supported options — unless unsupported combinations are allowed, which turns
them into warnings. The planner does no I/O beyond the named boundaries it is given (matrix loader,
`read_model_config`, the prepared-model resolver).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel

from ascendctl.core.errors import UserInputError
from ascendctl.core.findings import Finding
from ascendctl.facts.matrix import (
    find_models,
    fit_row,
    hardware_by_id,
    hardware_supported,
    load_matrix,
    model_support,
    quantization_by_id,
    release_for_pin,
)
from ascendctl.facts.matrix.explainer import explain
from ascendctl.facts.matrix.features import constraint_hits
from ascendctl.facts.matrix.launch import hardware_traits
from ascendctl.facts.matrix.model_tables import judge
from ascendctl.facts.model_inspect import ModelConfig, identity_warnings, model_traits, read_model_config
from ascendctl.plan.fit.estimate import FitError, estimate
from ascendctl.plan.fit.inputs import fit_inputs
from ascendctl.plan.plan_rules import PlanFacts, plan_findings
from ascendctl.plan.types import Deployment, ModelFacts, NodeLayout, Plan, ReleasePin, Setting
from ascendctl.schema.profile import Profile
from ascendctl.schema.profile_rules import profile_findings
from ascendctl_engine.adapters import (
    AscendIntent,
    EngineIntent,
    EplbIntent,
    HardwareTraits,
    ModelIntent,
    NodeIntent,
    ParallelIntent,
    SchedulerIntent,
    ServerIntent,
    SpeculativeIntent,
    plan_commands,
)
from ascendctl_engine.adapters.intent import LoraIntent, ServingIntent
from ascendctl_engine.prepared_models import ModelError, model_dir, resolve_model_source
from ascendctl_engine.spec import RestartPolicy, SecretRef, Supervision

if TYPE_CHECKING:
    from ascendctl.facts.matrix.schema import Hardware, ModelFamily, Release, SupportMatrix
    from ascendctl.plan.fit.result import FitResult
    from ascendctl_engine.host.facts import HostFacts
    from ascendctl_engine.spec import EngineCommand

PREPARED = "prepared:"
_Intent = TypeVar("_Intent")
ConfigReader = Callable[[str], ModelConfig | None]


class UnsupportedPlan(UserInputError):
    """The profile asks for something the target release / hardware cannot do (exit 2)."""

    def __init__(self, problems: list[str], suggestions: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems
        self.suggestions = suggestions

    def lines(self) -> list[str]:
        out = [f"error: unsupported: {p}" for p in self.problems]
        if self.suggestions:
            out.append(f"error: nearest supported options: {'; '.join(self.suggestions)}")
        out.append("error: to plan it anyway: allow_unsupported: true in the profile, or --allow-unsupported")
        return out


# --------------------------------------------------------------------------------------------------
# provenance of profile values


def profile_settings(profile: Profile) -> dict[str, Setting]:
    """Every leaf of the profile with `user: <path>` when the profile (or --set) wrote it, else
    `profile default: <path>`."""
    out: dict[str, Setting] = {}
    for path, value, explicit in _walk(profile, ""):
        out[path] = Setting(value, f"{'user' if explicit else 'profile default'}: {path}")
    return out


def _walk(model: BaseModel, prefix: str) -> Iterator[tuple[str, Any, bool]]:
    for name in type(model).model_fields:
        value = getattr(model, name)
        path = f"{prefix}{name}"
        explicit = name in model.model_fields_set
        # Optional sub-objects (set or not as a whole) are one setting: their provenance is the object's.
        if isinstance(value, BaseModel) and name not in ("speculative", "lora"):
            yield from _walk(value, f"{path}.")
        elif isinstance(value, BaseModel):
            yield path, value.model_dump(), explicit
        elif isinstance(value, list) and value and isinstance(value[0], BaseModel):
            yield path, [v.model_dump() for v in value], explicit
        elif isinstance(value, dict) and any(isinstance(v, BaseModel) for v in value.values()):
            # runtime.secrets: NAME → its source (a reference, never a value)
            yield path, {k: v.model_dump() if isinstance(v, BaseModel) else v for k, v in value.items()}, explicit
        else:
            yield path, value, explicit


# --------------------------------------------------------------------------------------------------
# release, hardware, model


def _release_pin(row: Release, hardware: str | None, why: str) -> ReleasePin:
    return ReleasePin(
        version=row.version,
        backend=row.backend,
        package=row.package,
        status=row.status,
        vllm=row.vllm,
        vllm_ascend=row.vllm_ascend,
        python=row.python,
        cann=row.cann,
        torch=row.torch,
        torch_npu=row.torch_npu,
        triton_ascend=row.triton_ascend,
        mindie_turbo=row.mindie_turbo,
        transformers=row.transformers,
        image=row.images.get(hardware) if hardware else None,
        why=why,
    )


def resolve_source(source: str, data_root: Path | None, warnings: list[str]) -> str:
    """What vLLM loads. `prepared:NAME` → its directory under the data dir; when it is not prepared yet
    the plan still shows the directory it will use, with a warning (so `--dry-run` works anywhere)."""
    if not source.startswith(PREPARED):
        return source
    try:
        return resolve_model_source(source, root=data_root)
    except ModelError:
        name = source[len(PREPARED) :]
        if not name or "/" in name or ".." in name:
            raise UserInputError(f"model.source {source!r}: prepared names are plain names") from None
        warnings.append(f"model {name!r} is not prepared yet: run `ascendctl model prepare {name}` before serving")
        return str(model_dir(name, data_root))


def _family(
    matrix: SupportMatrix, source: str, config: ModelConfig | None, task: str, architecture: str | None = None
) -> ModelFamily | None:
    """The support-matrix family: by the model's name first (hub id or directory name), then by the
    Hugging Face architecture in config.json (coarser: one architecture spans several families)."""
    queries = [source.rstrip("/").rsplit("/", 1)[-1] if source.startswith(("/", ".", "~")) else source]
    queries += list(config.architectures if config else ([architecture] if architecture else []))
    for query in queries:
        hits = find_models(matrix, query, task=task)
        if hits:
            return hits[0]
    return None


def _quant_method(matrix: SupportMatrix, profile: Profile, config: ModelConfig | None) -> tuple[str | None, str]:
    """(`--quantization` method, why) for the profile's quantization."""
    q = profile.model.quantization
    if q == "auto":
        if config is None:
            return None, "auto: the model is not a local directory, the engine decides"
        if config.modelslim:
            return "ascend", "auto: quant_model_description.json found (ModelSlim weights)"
        if config.quant_method:
            return config.quant_method, f"auto: config.json quantization_config.quant_method = {config.quant_method}"
        return None, "auto: no quantization config in the model directory (float weights)"
    method = quantization_by_id(matrix, q).method
    return (None if method == "none" else method), f"matrix rule: {q} loads with method {method}"


# --------------------------------------------------------------------------------------------------
# matrix verdict


_GRAPH_FEATURES = {
    "piecewise": ["piecewise-graph"],
    "full": ["full-graph"],
    "full-decode-only": ["full-decode-only-graph"],
    "full-and-piecewise": ["piecewise-graph", "full-graph"],
}


def _features(profile: Profile) -> list[str]:
    e = profile.engine
    out = list(_GRAPH_FEATURES.get(e.graph.mode, []))
    par = e.parallel
    if par.tensor > 1:
        out.append("tp")
    if par.pipeline > 1:
        out.append("pp")
    if par.data > 1:
        out.append("dp")
    if par.expert:
        out.append("ep")
    if par.executor == "ray":
        out.append("ray")
    if e.eplb.mode != "off":
        out.append("eplb-mrv2" if e.eplb.implementation == "upstream" else "eplb")
    if e.speculative is not None:
        out.append("speculative")
    if e.scheduler.prefix_caching:
        out.append("prefix-cache")
    if e.scheduler.chunked_prefill:
        out.append("chunked-prefill")
    if profile.model.task != "generate":
        out.append("pooling")
    serving = profile.serving
    if serving.lora is not None:
        out.append("lora")
    if (serving.prefill_context_parallel or 1) > 1:
        out.append("pcp")
    if (serving.decode_context_parallel or 1) > 1:
        out.append("dcp")
    return out


def _verdict(
    matrix: SupportMatrix, profile: Profile, row: Release, family: ModelFamily | None
) -> tuple[list[str], list[str], list[str]]:
    """(problems, warnings, suggestions) of the matrix for this combination."""
    problems: list[str] = []
    warnings: list[str] = []
    suggestions: list[str] = []
    hw = profile.target.hardware
    if family is None:
        # No family to judge, but the combination rules still hold (a W4A8 checkpoint breaks EPLB whatever it is).
        if row.backend == "npu" and hw is not None:
            hardware = hardware_by_id(matrix, hw)
            if not hardware_supported(hardware, row):
                problems.append(f"{row.version} does not support {hardware.name} (supported: {hardware.releases})")
            for c in constraint_hits(
                matrix, row, features=_features(profile), quant=profile.model.quantization, hardware=hw
            ):
                text = f"matrix: {c.message} ({c.verdict}) ({c.source})"
                (problems if c.verdict == "unsupported" else warnings).append(text)
        return problems, warnings, suggestions
    verdict = explain(
        matrix,
        model=family.id,
        release=row,
        hardware=hw if row.backend == "npu" else None,
        quant=profile.model.quantization,
        backend=row.backend,
        features=_features(profile),
        task=profile.model.task,
    )
    for reason in verdict.reasons:
        text = f"matrix: {reason.message} ({reason.reference})"
        if reason.level == "error":
            problems.append(text)
        elif reason.level == "warning":
            warnings.append(text)
    suggestions += verdict.suggestions
    return problems, warnings, suggestions


def _support_table(matrix: SupportMatrix, family: ModelFamily | None, row: Release, hardware: str | None) -> str | None:
    """Which release's model table judged the family (the row's `tag:path:line`, or the table when unlisted)."""
    if family is None or row.backend != "npu" or hardware is None:
        return None
    judged = judge(matrix, family, row, hardware)
    return judged.row.source if judged.row is not None else judged.table_ref


def _host_problems(profile: Profile, host: HostFacts | None) -> list[str]:
    if host is None:
        return []
    out: list[str] = []
    t = profile.target
    if host.backend != t.backend and t.backend != "cpu":  # a CPU plan runs anywhere
        out.append(f"the profile targets {t.backend} but this host looks like {host.backend}")
    if t.backend == "npu" and host.family is not None and t.hardware is not None and host.family != t.hardware:
        out.append(f"the profile targets {t.hardware} but this host has {host.family} NPUs")
    return out


# --------------------------------------------------------------------------------------------------
# intent


def _sources(settings: Mapping[str, Setting]) -> dict[str, str]:
    return {path: s.source for path, s in settings.items()}


def _nodes(profile: Profile) -> tuple[NodeLayout, ...]:
    t, par, net = profile.target, profile.engine.parallel, profile.network
    local = par.data_per_node or max(1, par.data // t.nodes)
    out = []
    for i in range(t.nodes):
        entry = net.nodes[i] if i < len(net.nodes) else None
        out.append(
            NodeLayout(
                index=i,
                role="head" if i == 0 else "worker",
                address=entry.address if entry else None,
                interface=(entry.interface if entry and entry.interface else None) or net.interface,
                devices=t.devices_per_node,
                dp_ranks=local,
                dp_start_rank=i * local,
            )
        )
    return tuple(out)


def _traits(matrix: SupportMatrix, hardware: str | None) -> HardwareTraits:
    """The target family's limits from the matrix's hardware table (the adapters read these, not family names)."""
    return hardware_traits(hardware_by_id(matrix, hardware)) if hardware else HardwareTraits()


def build_intent(
    profile: Profile,
    row: Release,
    *,
    matrix: SupportMatrix,
    model_source: str,
    traits_arch: str,
    multimodal: bool,
    quant_method: str | None,
    config: ModelConfig | None,
    nodes: tuple[NodeLayout, ...],
    sources: Mapping[str, str],
    host: HostFacts | None,
) -> EngineIntent:
    """The engine's intent for one profile on one release row (pure)."""
    m, e, t, s = profile.model, profile.engine, profile.target, profile.server
    api_key = SecretRef(env=s.api_key.env, file=s.api_key.file) if s.api_key else None
    cann = (host.cann.version if host and host.cann.version else None) or row.cann
    return EngineIntent(
        backend=t.backend,
        hardware=t.hardware,
        traits=_traits(matrix, t.hardware),
        vllm=row.vllm,
        vllm_ascend=row.vllm_ascend,
        cann=cann,
        driver=host.driver.version if host else None,
        model=_section(
            ModelIntent,
            m,
            source=model_source,
            quant_method=quant_method,
            arch=traits_arch,
            multimodal=multimodal,
            num_heads=config.num_attention_heads if config else None,
            num_experts=config.num_experts if config else None,
        ),
        graph_mode=e.graph.mode,
        capture_sizes=tuple(e.graph.capture_sizes) if e.graph.capture_sizes else None,
        parallel=_section(ParallelIntent, e.parallel, executor_explicit="executor" in e.parallel.model_fields_set),
        nodes=tuple(_node_intent(profile, n) for n in nodes),
        devices_per_node=t.devices_per_node,
        visible_devices=tuple(t.visible_devices) if t.visible_devices is not None else None,
        dp_rpc_port=profile.network.dp_rpc_port,
        ray_port=profile.network.ray_port,
        eplb=_section(EplbIntent, e.eplb),
        scheduler=_section(SchedulerIntent, e.scheduler),
        speculative=_section(SpeculativeIntent, e.speculative) if e.speculative else None,
        ascend=_section(AscendIntent, e.ascend),
        serving=_serving(profile),
        device_utilization=e.memory.device_utilization,
        cpu_kv_cache_gib=e.memory.cpu_kv_cache_gib,
        kv_cache_dtype=e.memory.kv_cache_dtype,
        cpu_cores=host.cpu.cores if host else None,
        seed=e.seed,
        server=_section(
            ServerIntent, s, api_key=api_key, shutdown_timeout_explicit="shutdown_timeout" in s.model_fields_set
        ),
        supervision=supervision_of(profile),
        extra_args=tuple(e.extra_args),
        additional_config=dict(e.additional_config),
        user_env=dict(profile.runtime.env),
        secret_env={n: SecretRef(env=src.env, file=src.file) for n, src in profile.runtime.secrets.items()},
        sources=sources,
    )


def _node_intent(profile: Profile, node: NodeLayout) -> NodeIntent:
    """A node's layout with its per-node overrides (`network.nodes[i]`: memory fraction, env, extra args)."""
    entry = profile.network.nodes[node.index] if node.index < len(profile.network.nodes) else None
    if entry is None:
        return NodeIntent(node.index, node.address, node.interface)
    return NodeIntent(
        node.index,
        node.address,
        node.interface,
        device_utilization=entry.device_utilization,
        env=dict(entry.env),
        extra_args=tuple(entry.extra_args),
    )


def _section(cls: type[_Intent], section: BaseModel, **computed: Any) -> _Intent:
    """An intent dataclass from the profile section that spells its fields the same way (one name per concept
    end to end, no default restated here); `computed` gives what the planner derives or converts."""
    names = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    copied = {n: getattr(section, n) for n in names if n in type(section).model_fields and n not in computed}
    return cls(**copied, **computed)


def _serving(profile: Profile) -> ServingIntent:
    """The `serving` section as the engine's intent (LoRA adapters as (name, path) pairs)."""
    s = profile.serving
    lora = None
    if s.lora is not None:
        lora = _section(LoraIntent, s.lora, adapters=tuple((a.name, a.path) for a in s.lora.adapters))
    return _section(ServingIntent, s, limit_mm_per_prompt=dict(s.limit_mm_per_prompt), lora=lora)


def _allowed(finding: Finding) -> Finding:
    return dataclasses.replace(
        finding, severity="warn", status="warn", message=f"{finding.message} (allowed by allow_unsupported)"
    )


def supervision_of(profile: Profile) -> Supervision:
    """How every node's engine is supervised: the profile's settings under the profile's own names."""
    return Supervision(
        ready_timeout=float(profile.runtime.ready_timeout),
        shutdown_timeout=float(profile.server.shutdown_timeout),
        restart=RestartPolicy(**profile.runtime.restart.model_dump()),
    )


# --------------------------------------------------------------------------------------------------
# the planner


def plan_profile(
    profile: Profile,
    *,
    matrix: SupportMatrix | None = None,
    host: HostFacts | None = None,
    release: str | None = None,
    allow_unsupported: bool = False,
    data_root: Path | None = None,
    read_config: ConfigReader = read_model_config,
) -> Plan:
    """Resolve `profile` into a `Plan` (see the module docstring). Raises `UserInputError` for an unknown
    release and `UnsupportedPlan` for broken constraints (unless allowed)."""
    matrix = matrix or load_matrix()
    backend = profile.target.backend
    pin = release or profile.release
    row = release_for_pin(matrix, backend, pin)
    release_why = (
        f"--release {pin}"
        if release
        else (f"user: release {pin}" if "release" in profile.model_fields_set else f"profile default: release {pin}")
    )
    if row.version != pin:
        release_why += f" → {row.version}"
    hardware = profile.target.hardware
    warnings: list[str] = []
    settings = profile_settings(profile)
    settings["release"] = Setting(row.version, release_why)

    resolved = resolve_source(profile.model.source, data_root, warnings)
    is_local = resolved != profile.model.source or resolved.startswith(("/", ".", "~"))
    if is_local:
        config = read_config(resolved)
    else:  # a hub id: its config.json from the Hugging Face / ModelScope cache when there (a few stats when not)
        config = read_model_config(resolved, profile.model.revision) if read_config is read_model_config else None
    architecture = profile.model.architecture
    # The matrix records model support for Ascend only: cpu/cuda plans take their traits from config.json.
    family = (
        _family(matrix, profile.model.source, config, profile.model.task, architecture) if backend == "npu" else None
    )
    traits = model_traits(
        profile.model.source,
        config,
        tuple(family.types) if family else None,
        family.id if family else None,
        architecture,
    )
    warnings += identity_warnings(profile.model.source, traits, config, architecture)
    quant_method, quant_why = _quant_method(matrix, profile, config)
    settings["model.quant_method"] = Setting(quant_method, quant_why)

    problems, matrix_warnings, suggestions = _verdict(matrix, profile, row, family)
    warnings += matrix_warnings
    problems += _host_problems(profile, host)
    if host is not None and host.backend == row.backend:
        warnings += [f"host: {c} (plan against the host's facts; `ascendctl matrix --here` lists what fits)"
                     for c in fit_row(matrix, row, host).host_changes]  # fmt: skip
    nodes = _nodes(profile)
    sources = _sources(settings)
    if profile.engine.parallel.data_per_node is None and profile.target.nodes > 1:
        sources["engine.parallel.data_per_node"] = f"profile default: data / nodes = {nodes[0].dp_ranks}"
    intent = build_intent(
        profile,
        row,
        matrix=matrix,
        model_source=resolved,
        traits_arch=traits.arch,
        multimodal=traits.multimodal,
        quant_method=quant_method,
        config=config,
        nodes=nodes,
        sources=sources,
        host=host,
    )
    result = plan_commands(intent)
    problems += list(result.unsupported)
    warnings += list(result.warnings)

    verified_len = None
    if family is not None and hardware is not None:
        support = model_support(family, hardware)
        verified_len = support.max_len if support else None
    graph_why = result.provenance.get("decision:graph.mode") or next(
        (
            result.provenance[k]
            for k in ("--enforce-eager", "--compilation-config.cudagraph_mode")
            if k in result.provenance
        ),
        settings["engine.graph.mode"].source,
    )
    settings["engine.graph.mode"] = Setting(result.graph_mode, graph_why)
    if "decision:eplb.implementation" in result.provenance:
        settings["engine.eplb.implementation"] = Setting("ascend", result.provenance["decision:eplb.implementation"])
    for path, (value, why) in result.resolved.items():
        settings[path] = Setting(value, why)
    settings["model.source"] = Setting(resolved, settings["model.source"].source)
    hw = hardware_by_id(matrix, hardware) if hardware is not None else None
    fit, fit_error = _fit(profile, settings, result.commands, row, resolved, hw, host)
    host_env = dict(host.env) if host is not None else {}
    findings = plan_findings(
        PlanFacts(
            profile=profile,
            graph_mode=result.graph_mode,
            arch=traits.arch,
            config=config,
            model_is_local=is_local,
            hardware=hw,
            in_matrix=family is not None,
            verified_max_len=verified_len,
            env={**host_env, **profile.runtime.env},
            broken=tuple(problems),
            release=row,
            fit=fit,
        )
    )
    problems += [
        f"{f.message} [{f.id}; {f.source}]" for f in findings if f.status == "fail" and f.id != "plan.supported"
    ]

    allowed = allow_unsupported or profile.allow_unsupported
    if problems and not allowed:
        raise UnsupportedPlan(list(dict.fromkeys(problems)), list(dict.fromkeys(suggestions)))
    if problems:
        warnings = [f"unsupported (allowed): {p}" for p in dict.fromkeys(problems)] + warnings
    if profile.allow_unsupported:
        # The profile itself accepts its broken constraints: they are warnings wherever findings are shown
        # (`check PROFILE` included), not failures. A `--allow-unsupported` flag lowers nothing: it is a one-off.
        findings = [_allowed(f) if f.status == "fail" else f for f in findings]

    deployment = Deployment(
        name=profile.metadata.name,
        release=_release_pin(row, hardware, release_why),
        backend=backend,
        hardware=hardware,
        model=ModelFacts(
            source=profile.model.source,
            resolved=resolved,
            family=family.id if family else None,
            arch=traits.arch,
            multimodal=traits.multimodal,
            traits_from=traits.why,
            config_path=config.path if config else None,
            support_table=_support_table(matrix, family, row, profile.target.hardware),
        ),
        nodes=nodes,
        settings=settings,
        warnings=tuple(dict.fromkeys(warnings)),
        # The profile's own warnings (e.g. a typed field said through an escape hatch) print with the plan's.
        findings=(*(f for f in profile_findings(profile) if f.status == "warn"), *findings),
    )
    provenance = {"release": release_why, **result.provenance}
    for topic, label in result.eras.items():
        provenance[f"era:{topic}"] = label
    return Plan(
        deployment=deployment,
        commands=result.commands,
        provenance=provenance,
        env_sources=result.env_sources,
        eras=result.eras,
        warnings=tuple(dict.fromkeys(warnings)),
        unsupported=tuple(dict.fromkeys(problems)) if allowed else (),
        fit=fit,
        fit_error=fit_error,
    )


def _fit(
    profile: Profile,
    settings: Mapping[str, Setting],
    commands: Sequence[EngineCommand],
    row: Release,
    resolved: str,
    hardware: Hardware | None,
    host: HostFacts | None,
) -> tuple[FitResult | None, str | None]:
    """The memory fit of the resolved plan (`ascendctl.plan.fit`), or why there is none."""
    try:
        inputs = fit_inputs(
            profile, settings=settings, env=commands[0].env if commands else {}, vllm=row.vllm,
            vllm_ascend=row.version if row.backend == "npu" else None, model_source=resolved,
            hardware=hardware, facts=host,
        )  # fmt: skip
        return estimate(inputs), None
    except FitError as exc:
        return None, str(exc)
