"""The planner: a validated profile × the support matrix (× host facts, optional) → a `Plan`.

    plan = plan_profile(profile)                       # matrix loaded from package data, no host
    plan = plan_profile(profile, host=facts, release="v0.13.0", allow=["plan.refused.graph"])
    require_startable(plan)                             # exit 2 (UnsupportedPlan) on a failing finding left

`plan_profile` is a short pipeline of named steps: the release row (the pinned version set) → the model (its
source, config.json, matrix family, traits, quantization method) → the node layout → the era adapters of
`ascendctl_engine.adapters` (one `EngineCommand` per node) → the instance's typed settings → the memory fit →
the findings (the matrix's verdict, the host, the adapters' refusals and the release's own rejections, then the
`plan.*` rules), each with an id from the one rule registry. It never raises on findings: a failing one the
profile's `allow` (or `--allow`) names becomes a warning, the rest stay failing in `Plan.blocking`, which
`plan`, `serve` and `render` refuse. The planner does no I/O beyond the named boundaries it is given (matrix
loader, `read_model_config`, the prepared-model resolver).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel

from ascendctl.core.errors import UserInputError
from ascendctl.core.findings import Finding, accepts, covers, is_id, rule_of
from ascendctl.facts.launches import verified_line
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
from ascendctl.facts.matrix.features import constraint_hits, constraint_key
from ascendctl.facts.matrix.launch import hardware_traits
from ascendctl.facts.matrix.model_tables import judge
from ascendctl.facts.model_inspect import (
    ModelConfig,
    ModelTraits,
    identity_warnings,
    model_traits,
    read_config_file,
    read_model_config,
)
from ascendctl.facts.published_shapes import model_shapes
from ascendctl.plan import pd_rules  # noqa: F401  (registers the plan.pd.* rules)
from ascendctl.plan.fit.estimate import FitError, estimate
from ascendctl.plan.fit.inputs import fit_inputs
from ascendctl.plan.pd_facts import PdFacts
from ascendctl.plan.plan_rules import Broken, PlanFacts, plan_findings
from ascendctl.plan.types import (
    Deployment,
    EngineSettings,
    Instance,
    InstanceRole,
    ModelFacts,
    NodeLayout,
    Plan,
    ReleasePin,
    Route,
    Service,
    Setting,
)
from ascendctl.schema.hccn_conf import hccn_conf_reason
from ascendctl.schema.instances import (
    group_sizes,
    instance_profile,
    kv_transfer,
    place,
    placed_settings,
    router_port,
)
from ascendctl.schema.profile import Profile
from ascendctl.schema.profile_rules import profile_findings
from ascendctl_engine.adapters import EngineIntent, HardwareTraits, LoadedModel, plan_commands
from ascendctl_engine.adapters.builder import AdapterResult
from ascendctl_engine.adapters.eras import era_for_release
from ascendctl_engine.adapters.intent import layout_nodes
from ascendctl_engine.adapters.kv_transfer import router_argv, router_metrics_port
from ascendctl_engine.paths import kv_shared_dir
from ascendctl_engine.pd import KvTransfer
from ascendctl_engine.prepared_models import ModelError, model_dir, resolve_model_source
from ascendctl_engine.records import record
from ascendctl_engine.spec import Listen, NodeAddress, RestartPolicy, Supervision

if TYPE_CHECKING:
    from ascendctl.facts.matrix.schema import Hardware, ModelFamily, Release, SupportMatrix
    from ascendctl.plan.fit.result import FitResult
    from ascendctl_engine.host.facts import HostFacts

PREPARED = "prepared:"
ConfigReader = Callable[[str], ModelConfig | None]


class UnsupportedPlan(UserInputError):
    """Failing findings nothing accepted: the profile asks for what the target release / hardware cannot do
    (exit 2). Each line names the finding's id, the one to accept it with when it can be accepted."""

    def __init__(self, blocking: Sequence[Finding], suggestions: Sequence[str] = ()) -> None:
        super().__init__("; ".join(f"{f.message} [{f.id}]" for f in blocking))
        self.findings = tuple(blocking)
        self.suggestions = tuple(suggestions)

    @property
    def problems(self) -> list[str]:
        return [f.message for f in self.findings]

    def lines(self) -> list[str]:
        out = []
        for f in self.findings:
            out.append(f"error: unsupported: {f.message} [{f.id}]")
            if f.fix and not (self.suggestions and f.fix.startswith("nearest supported")):
                out.append(f"error:   fix: {f.fix}")
        if self.suggestions:
            out.append(f"error: nearest supported options: {'; '.join(self.suggestions)}")
        ids = [f.id for f in self.findings if _allowable(f)]
        never = [f.id for f in self.findings if not _allowable(f)]
        if ids:
            listed = ", ".join(dict.fromkeys(ids))
            out.append(f"error: to plan it anyway, accept them by id: allow: [{listed}] in the profile, or --allow ID")
        if never:
            out.append(f"error: {', '.join(dict.fromkeys(never))}: cannot be accepted, the engine would not start")
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


def _whole(prefix: str, name: str) -> bool:
    """Whether a sub-object is one setting (set or not as a whole) rather than walked leaf by leaf."""
    return name in ("speculative", "lora") or (prefix.startswith("disaggregation.") and name in ("engine", "serving"))


def _walk(model: BaseModel, prefix: str) -> Iterator[tuple[str, Any, bool]]:
    for name in type(model).model_fields:
        value = getattr(model, name)
        path = f"{prefix}{name}"
        explicit = name in model.model_fields_set
        # Optional sub-objects (set or not as a whole) are one setting: their provenance is the object's. A role
        # group's `engine` is the overrides it writes, not a whole engine of defaults.
        if isinstance(value, BaseModel) and _whole(prefix, name):
            yield path, value.model_dump(exclude_unset=prefix.startswith("disaggregation.")), explicit
        elif isinstance(value, BaseModel):
            yield from _walk(value, f"{path}.")
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
) -> tuple[ModelFamily | None, str | None]:
    """(the support-matrix family, the architecture it was found by): by the model's name first (hub id or
    directory name), then by the Hugging Face architecture in config.json or `model.architecture` — coarser, one
    architecture spans several families, so such a family is a kin whose table rows only warn (`_verdict`)."""
    name = source.rstrip("/").rsplit("/", 1)[-1] if source.startswith(("/", ".", "~")) else source
    hits = find_models(matrix, name, task=task)
    if hits:
        return hits[0], None
    for arch in config.architectures if config else ([architecture] if architecture else []):
        hits = find_models(matrix, arch, task=task)
        if hits:
            return hits[0], arch
    return None, None


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

# Which profile intent uses which matrix feature (the matrix's `features` vocabulary): each entry is a test of the
# profile and the feature ids it adds.
_GRAPH_FEATURES = {
    "piecewise": ("piecewise-graph",),
    "full": ("full-graph",),
    "full-decode-only": ("full-decode-only-graph",),
    "full-and-piecewise": ("piecewise-graph", "full-graph"),
}
_FEATURE_TESTS: tuple[tuple[str, Callable[[Profile], bool]], ...] = (
    ("tp", lambda p: p.engine.parallel.tensor > 1),
    ("pp", lambda p: p.engine.parallel.pipeline > 1),
    ("dp", lambda p: p.engine.parallel.data > 1),
    ("ep", lambda p: p.engine.parallel.expert),
    ("ray", lambda p: p.engine.parallel.executor == "ray"),
    ("eplb", lambda p: p.engine.eplb.mode != "off" and p.engine.eplb.implementation != "upstream"),
    ("eplb-mrv2", lambda p: p.engine.eplb.mode != "off" and p.engine.eplb.implementation == "upstream"),
    ("speculative", lambda p: p.engine.speculative is not None),
    ("prefix-cache", lambda p: bool(p.engine.scheduler.prefix_caching)),
    ("chunked-prefill", lambda p: bool(p.engine.scheduler.chunked_prefill)),
    ("pooling", lambda p: p.model.task != "generate"),
    ("lora", lambda p: p.serving.lora is not None),
    ("pcp", lambda p: (p.serving.prefill_context_parallel or 1) > 1),
    ("dcp", lambda p: (p.serving.decode_context_parallel or 1) > 1),
)


def _features(profile: Profile) -> list[str]:
    graph = list(_GRAPH_FEATURES.get(profile.engine.graph.mode, ()))
    return graph + [feature for feature, uses in _FEATURE_TESTS if uses(profile)]


@record
class MatrixVerdict:
    """What the support matrix says of this combination: broken (or partly met) constraints, nearest options."""

    broken: tuple[Broken, ...] = ()
    suggestions: tuple[str, ...] = ()


# The constraints a family's own table row decides: a kin found by architecture does not decide them for a model.
_ROW_CONSTRAINTS = ("model", "feature.", "model-quantization")


def _verdict(matrix: SupportMatrix, profile: Profile, row: Release, model: ResolvedModel) -> MatrixVerdict:
    family = model.family
    if family is None:
        return _verdict_without_family(matrix, profile, row)
    verdict = _family_verdict(matrix, profile, row, family)
    if model.by_architecture is None:
        return verdict
    return _kin_verdict(verdict, profile.model.location, model.by_architecture, family)


def _kin_verdict(verdict: MatrixVerdict, source: str, arch: str, kin: ModelFamily) -> MatrixVerdict:
    """A family found by architecture only is a kin, not the model: what its table row says (an absent or
    unsupported row, a feature cell) warns, never refuses — so setting `model.architecture`, as the plan asks
    when no config.json is readable, can not move a model into a family that fails it."""
    name = source.rstrip("/").rsplit("/", 1)[-1]
    head = Broken(
        "model",
        f"matrix: {name} matches no model family by name; judged by its architecture {arch}, that of {kin.name} "
        "(support of this model not verified)",
        kin.source,
        "warning",
        f"if {name} is a fine-tune of a {kin.name} model, nothing changes; else try it on one host before serving",
    )
    kept = [
        replace(b, level="warning", message=f"{b.message} [judged by {kin.name}, which shares {arch}]")
        if b.level == "error" and b.key.startswith(_ROW_CONSTRAINTS)
        else b
        for b in verdict.broken
    ]
    return MatrixVerdict((head, *kept), verdict.suggestions)


def _family_verdict(matrix: SupportMatrix, profile: Profile, row: Release, family: ModelFamily) -> MatrixVerdict:
    hw = profile.target.hardware
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
    fix = (
        f"nearest supported: {'; '.join(verdict.suggestions)}"
        if verdict.suggestions
        else f"`ascendctl matrix --explain {family.id}` lists where it runs; accept a warning by its id in `allow:`"
    )
    broken = tuple(
        Broken(
            r.constraint,
            f"matrix: {r.message} ({r.reference})",
            r.reference,
            "error" if r.level == "error" else "warning",
            fix,
            r.clause,
        )
        for r in verdict.reasons
        if r.level in ("error", "warning")
    )
    return MatrixVerdict(broken, tuple(dict.fromkeys(verdict.suggestions)))


def _verdict_without_family(matrix: SupportMatrix, profile: Profile, row: Release) -> MatrixVerdict:
    """No family to judge, but the combination rules still hold (a W4A8 checkpoint breaks EPLB whatever it is)."""
    hw = profile.target.hardware
    if row.backend != "npu" or hw is None:
        return MatrixVerdict()
    broken: list[Broken] = []
    hardware = hardware_by_id(matrix, hw)
    if not hardware_supported(hardware, row):
        text = f"{row.version} does not support {hardware.name} (supported: {hardware.releases})"
        fix = f"plan a release that supports {hardware.name} ({hardware.releases}): `release:` or `--release`"
        broken.append(Broken("hardware", text, "ascendctl/facts/data/matrix.yaml", fix=fix, clause="placement"))
    hits = constraint_hits(matrix, row, features=_features(profile), quant=profile.model.quantization, hardware=hw)
    for c in hits:
        level: Literal["error", "warning"] = "error" if c.verdict == "unsupported" and c.clause else "warning"
        text = f"matrix: {c.message} ({c.verdict}) ({c.source})"
        fix = "`ascendctl matrix --explain MODEL --release R` names what works instead; where the clause allows, "
        fix += "accept it by its id in `allow:`"
        broken.append(Broken(constraint_key(c), text, c.source, level, fix, c.clause))
    return MatrixVerdict(tuple(broken))


def _support_table(matrix: SupportMatrix, family: ModelFamily | None, row: Release, hardware: str | None) -> str | None:
    """Which release's model table judged the family (the row's `tag:path:line`, or the table when unlisted)."""
    if family is None or row.backend != "npu" or hardware is None:
        return None
    judged = judge(matrix, family, row, hardware)
    return judged.row.source if judged.row is not None else judged.table_ref


def _host_mismatch(profile: Profile, host: HostFacts | None) -> tuple[Broken, ...]:
    if host is None:
        return ()
    out: list[Broken] = []
    t = profile.target
    if host.backend != t.backend and t.backend != "cpu":  # a CPU plan runs anywhere
        has = "no accelerator" if host.backend == "cpu" else f"a {host.backend} accelerator"
        out.append(
            Broken(
                "backend",
                f"the profile targets {t.backend} but this host has {has} (it looks like {host.backend})",
                fix=f"run it on a host with the profile's {t.backend} devices; without a host, `ascendctl plan "
                "PROFILE` plans it and `ascendctl render` writes it for one",
            )
        )
    if t.backend == "npu" and host.family is not None and t.hardware is not None and host.family != t.hardware:
        out.append(
            Broken(
                "hardware",
                f"the profile targets {t.hardware} but this host has {host.family} NPUs",
                fix=f"set target.hardware: {host.family} to plan for this host, or run it on {t.hardware} hardware",
            )
        )
    return tuple(out)


# --------------------------------------------------------------------------------------------------
# intent


def _nodes(profile: Profile) -> tuple[NodeLayout, ...]:
    par = profile.engine.parallel
    local = par.data_per_node or max(1, par.data // profile.target.nodes)
    return tuple(
        NodeLayout(
            index=n.index,
            role="head" if n.index == 0 else "worker",
            address=n.address,
            interface=n.interface,
            devices=profile.target.devices_per_node,
            dp_ranks=local,
            dp_start_rank=n.index * local,
        )
        for n in layout_nodes(profile.target, profile.network)
    )


def _traits(matrix: SupportMatrix, hardware: str | None) -> HardwareTraits:
    """The target family's limits from the matrix's hardware table (the adapters read these, not family names)."""
    return hardware_traits(hardware_by_id(matrix, hardware)) if hardware else HardwareTraits()


def build_intent(
    profile: Profile,
    row: Release,
    *,
    matrix: SupportMatrix,
    loaded: LoadedModel,
    sources: Mapping[str, str],
    host: HostFacts | None,
    kv_transfer: KvTransfer | None = None,
) -> EngineIntent:
    """The engine's intent for one profile on one release row (pure): the profile's sections as they are, and
    what the planner resolved beside them."""
    cann = (host.cann.version if host and host.cann.version else None) or row.cann
    return EngineIntent(
        vllm=row.vllm,
        model=profile.model,
        target=profile.target,
        engine=profile.engine,
        network=profile.network,
        server=profile.server,
        serving=profile.serving,
        runtime=profile.runtime,
        loaded=loaded,
        traits=_traits(matrix, profile.target.hardware),
        vllm_ascend=row.vllm_ascend,
        cann=cann,
        driver=host.driver.version if host else None,
        nodes=layout_nodes(profile.target, profile.network),
        cpu_cores=host.cpu.cores if host else None,
        supervision=supervision_of(profile),
        kv_transfer=kv_transfer,
        sources=sources,
    )


def supervision_of(profile: Profile) -> Supervision:
    """How every node's engine is supervised: the profile's settings under the profile's own names."""
    return Supervision(
        ready_timeout=float(profile.runtime.ready_timeout),
        shutdown_timeout=float(profile.server.shutdown_timeout),
        restart=RestartPolicy(**profile.runtime.restart.model_dump()),
    )


# --------------------------------------------------------------------------------------------------
# the steps


@record
class ReleaseChoice:
    row: Release
    why: str


def choose_release(profile: Profile, matrix: SupportMatrix, release: str | None) -> ReleaseChoice:
    """The support-matrix row the plan pins (`--release` wins over the profile's), and why."""
    pin = release or profile.release
    row = release_for_pin(matrix, profile.target.backend, pin)
    if release:
        why = f"--release {pin}"
    else:
        why = f"{'user' if 'release' in profile.model_fields_set else 'profile default'}: release {pin}"
    if row.version != pin:
        why += f" → {row.version}"
    return ReleaseChoice(row, why)


@record(eq=False)
class ResolvedModel:
    """The model as the plan loads it: its source, config.json, matrix family, traits and quantization method."""

    resolved: str
    is_local: bool
    config: ModelConfig | None
    family: ModelFamily | None
    traits: ModelTraits
    quant_method: str | None
    quant_why: str
    warnings: tuple[str, ...]
    # set when `family` was found by the Hugging Face architecture alone (the model's name matches no family)
    by_architecture: str | None = None
    config_file: str | None = None  # `config` came from this file (`--config FILE`), not from the model's own

    def loaded(self) -> LoadedModel:
        c = self.config
        return LoadedModel(
            source=self.resolved,
            quant_method=self.quant_method,
            arch=self.traits.arch,
            multimodal=self.traits.multimodal,
            num_heads=c.num_attention_heads if c else None,
            num_experts=c.num_experts if c else None,
        )


def resolve_model(
    profile: Profile,
    matrix: SupportMatrix,
    data_root: Path | None,
    read_config: ConfigReader,
    release: Release | None = None,
    config_file: Path | None = None,
) -> ResolvedModel:
    m = profile.model
    warnings: list[str] = []
    name = m.location  # `hf:` / `modelscope:` stripped: what vLLM loads and the matrix knows
    resolved = resolve_source(name, data_root, warnings)
    is_local = resolved != name or resolved.startswith(("/", ".", "~"))
    if config_file is not None:  # `--config FILE`: the model's shapes from that file, nothing looked up
        config, error = read_config_file(config_file)
        if config is None:
            raise UserInputError(f"--config {config_file}: {error}")
    elif is_local:
        config = read_config(resolved)
    else:  # a hub id: its config.json from the Hugging Face / ModelScope cache when there (a few stats when not)
        config = read_model_config(resolved, m.revision, m.scheme) if read_config is read_model_config else None
    # The matrix records model support for Ascend only: cpu/cuda plans take their traits from config.json.
    npu = profile.target.backend == "npu"
    family, by_architecture = _family(matrix, name, config, m.task, m.architecture) if npu else (None, None)
    types = tuple(family.types) if family else None
    # vLLM's registry at the release's vLLM pin (and, on npu, the vllm-ascend tag's own registrations)
    vllm_pin = release.vllm if release else None
    ascend_pin = release.version if release and release.package == "vllm-ascend" else None
    fam_id = family.id if family else None
    traits = model_traits(
        name,
        config,
        types,
        fam_id,
        m.architecture,
        vllm_pin,
        ascend_pin,
        expert_parallel=profile.engine.parallel.expert,
    )
    warnings += identity_warnings(name, traits, config, m.architecture)
    method, why = _quant_method(matrix, profile, config)
    given = str(config_file) if config_file is not None else None
    return ResolvedModel(
        resolved, is_local, config, family, traits, method, why, tuple(warnings), by_architecture, given
    )


def engine_settings(
    profile: Profile, result: AdapterResult, settings: Mapping[str, Setting], hardware: Hardware | None
) -> EngineSettings:
    """The instance's resolved settings, typed: the profile's values with the adapters' resolutions over them, and
    what `runtime.env` overrides (it wins over every default the plan injects)."""

    def setting(path: str) -> Setting:
        if path in result.resolved:
            value, why = result.resolved[path]
            return Setting(value, why)
        return settings[path]

    return EngineSettings(
        graph_mode=Setting(result.graph_mode, result.graph_why),
        kv_cache_dtype=setting("engine.memory.kv_cache_dtype"),
        hccl_buffer_mb=_hccl_buffer(profile, result),
        device_utilization=setting("engine.memory.device_utilization"),
        cpu_kv_cache_gib=_cpu_kv_gib(profile, setting("engine.memory.cpu_kv_cache_gib")),
        max_model_len=setting("model.max_model_len"),
        max_num_seqs=setting("engine.scheduler.max_num_seqs"),
        max_num_batched_tokens=setting("engine.scheduler.max_num_batched_tokens"),
        capture_sizes=setting("engine.graph.capture_sizes"),
        host=profile.server.host,
        port=profile.server.port,
        devices_per_node=profile.target.devices_per_node,
        hardware=hardware,
    )


def _env_mb(profile: Profile, name: str) -> Setting | None:
    """A whole number `runtime.env` sets for `name`, which wins over the plan's own value."""
    value = profile.runtime.env.get(name)
    if value is not None and value.strip().isdigit():
        return Setting(int(value), f"user: runtime.env {name}")
    return None


def _hccl_buffer(profile: Profile, result: AdapterResult) -> Setting:
    planned = Setting(*result.hccl_buffer_mb) if result.hccl_buffer_mb else Setting(None, "HCCL's default")
    return _env_mb(profile, "HCCL_BUFFSIZE") or planned


def _cpu_kv_gib(profile: Profile, planned: Setting) -> Setting:
    return _env_mb(profile, "VLLM_CPU_KVCACHE_SPACE") or planned


def _plan_settings(
    given: Mapping[str, Setting],
    release: ReleaseChoice,
    model: ResolvedModel,
    result: AdapterResult,
    engine: EngineSettings,
) -> dict[str, Setting]:
    """The dotted view `--why` and `--json` print: every profile leaf (`given`), the planner's and the adapters'
    resolutions over them, and the instance's typed settings at their paths."""
    settings = dict(given)
    settings["release"] = Setting(release.row.version, release.why)
    settings["model.quant_method"] = Setting(model.quant_method, model.quant_why)
    if "decision:eplb.implementation" in result.provenance:
        settings["engine.eplb.implementation"] = Setting("ascend", result.provenance["decision:eplb.implementation"])
    for path, (value, why) in result.resolved.items():
        settings[path] = Setting(value, why)
    settings.update({path: getattr(engine, name) for name, path in EngineSettings.paths.items()})
    settings["model.source"] = Setting(model.resolved, settings["model.source"].source)
    return settings


def _adapt(
    profile: Profile,
    given: Mapping[str, Setting],
    release: ReleaseChoice,
    matrix: SupportMatrix,
    model: ResolvedModel,
    host: HostFacts | None,
    kv_transfer: KvTransfer | None = None,
) -> AdapterResult:
    """The era adapters' commands for this profile on this release (provenance from the profile's settings)."""
    sources = {path: s.source for path, s in given.items()}
    sources["release"] = release.why
    sources["model.quant_method"] = model.quant_why
    nodes = profile.target.nodes
    if profile.engine.parallel.data_per_node is None and nodes > 1:
        local = max(1, profile.engine.parallel.data // nodes)
        sources["engine.parallel.data_per_node"] = f"profile default: data / nodes = {local}"
    intent = build_intent(
        profile, release.row, matrix=matrix, loaded=model.loaded(), sources=sources, host=host, kv_transfer=kv_transfer
    )
    return plan_commands(intent)


def _verified_len(model: ResolvedModel, hardware: str | None) -> int | None:
    if model.family is None or hardware is None:
        return None
    support = model_support(model.family, hardware)
    return support.max_len if support else None


@record(eq=False)
class _Judged:
    findings: tuple[Finding, ...]
    allowed: tuple[str, ...]
    notes: tuple[str, ...]  # what the deprecated allow_unsupported covered


def _findings(facts: PlanFacts, profile: Profile, allow: Sequence[str], allow_unsupported: bool) -> _Judged:
    """Every `plan.*` finding, the profile's own warnings first; failing ones the allow list accepts lowered."""
    raw = [*(f for f in profile_findings(profile) if f.status == "warn"), *plan_findings(facts)]
    accepted = [*profile.allow, *allow]
    everything = allow_unsupported or profile.allow_unsupported
    out: list[Finding] = []
    allowed: list[str] = []
    for f in raw:
        if f.status == "fail" and (accepts(accepted, f.id, f.clause) or (everything and _allowable(f))):
            allowed.append(f.id)
            f = dataclasses.replace(f, severity="warn", status="warn", message=f"{f.message} (allowed: {f.id})")
        out.append(f)
    notes = [note for note in map(_unknown_allow, accepted) if note]
    if everything:
        covered = ", ".join(allowed) or "nothing here"
        notes.append(f"allow_unsupported is deprecated: it accepted {covered}; name them in `allow:` (or --allow)")
    return _Judged(tuple(out), tuple(dict.fromkeys(allowed)), tuple(notes))


def _allowable(finding: Finding) -> bool:
    owner = rule_of(finding.id)
    never = finding.clause == "engine-start" or (owner is not None and not owner.allowable)
    return finding.scope == "plan" and not never


def _unknown_allow(allow_id: str) -> str:
    owner = rule_of(allow_id)
    if owner is None:
        ids = "`ascendctl plan --json` findings[].id, docs/reference/rules.md"
        return f"allow: {allow_id} names no finding (ids: {ids})"
    if not owner.allowable:
        return f"allow: {allow_id} can never be accepted: the release would not start with it (engine-start)"
    return ""


def plan_profile(
    profile: Profile,
    *,
    matrix: SupportMatrix | None = None,
    host: HostFacts | None = None,
    release: str | None = None,
    allow: Sequence[str] = (),
    allow_unsupported: bool = False,
    data_root: Path | None = None,
    read_config: ConfigReader = read_model_config,
    model_config: Path | None = None,
) -> Plan:
    """Resolve `profile` into a `Plan` (see the module docstring). Raises `UserInputError` for an unknown
    release or model name; broken constraints are findings (`Plan.blocking`), never exceptions. `model_config`: a
    config.json to read the model's shapes from instead of the model's own (`--config FILE`)."""
    for finding_id in allow:
        if not is_id(finding_id):
            raise UserInputError(f"--allow {finding_id!r}: not a finding id (the ids `ascendctl plan` prints)")
    matrix = matrix or load_matrix()
    chosen = choose_release(profile, matrix, release)
    model = resolve_model(profile, matrix, data_root, read_config, chosen.row, model_config)
    hw_id = profile.target.hardware
    hardware = hardware_by_id(matrix, hw_id) if hw_id is not None else None
    units = _units(profile, model, data_root, chosen.row)
    planned = [_plan_unit(u, chosen, matrix, model, hardware, host, allow, allow_unsupported) for u in units]
    plan = _assemble(profile, chosen, model, planned, host, matrix)
    stale = _unneeded_allows([*profile.allow, *allow], planned, chosen.row.version)
    if not stale:
        return plan
    warnings = (*plan.warnings, *stale)
    return replace(plan, warnings=warnings, deployment=replace(plan.deployment, warnings=warnings))


def _unneeded_allows(allow: Sequence[str], planned: Sequence[_Planned], release: str) -> list[str]:
    """An `allow` entry that accepts no failing finding of any instance is stale: it may hide a future refusal."""
    accepted = [i for one in planned for i in one.judged.allowed]
    out = []
    for entry in dict.fromkeys(allow):
        owner = rule_of(entry)
        if owner is None or not owner.allowable or any(covers(entry, i) for i in accepted):
            continue  # unknown or never-accepted entries have their own note (`_unknown_allow`)
        out.append(f"allow: {entry} is no longer needed: nothing it names fails at {release}; remove it")
    return out


@record(eq=False)
class _Unit:
    """One engine instance to plan: its name and role, the profile it is planned from, the profile nodes it runs
    on, its KV-transfer part (PD only) and the whole PD layout every instance's rules see."""

    name: str
    role: InstanceRole
    profile: Profile
    hosts: tuple[int, ...]
    kv: KvTransfer | None = None
    pd: PdFacts | None = None
    placed: Mapping[str, str] | None = None  # dotted path → why, for what the placement set


def _units(profile: Profile, model: ResolvedModel, data_root: Path | None, row: Release) -> list[_Unit]:
    """The instances of the deployment: the one `serve` instance, or the prefill and decode groups placed on the
    nodes (`ascendctl.schema.instances`)."""
    if profile.disaggregation is None:
        return [_Unit("serve", "serve", profile, tuple(range(profile.target.nodes)))]
    placements = place(profile)
    profiles = {p.name: instance_profile(profile, p) for p in placements}
    firsts = {p.role: profiles[p.name] for p in reversed(placements)}
    sizes = group_sizes({role: firsts[role] for role in ("prefill", "decode")})
    shared = str(kv_shared_dir(profile.metadata.name, data_root))
    router = era_for_release("pd-router", row.backend, row.vllm, row.vllm_ascend)
    traits = router.traits if router is not None else {}  # no router planned: no metrics, no key handling
    pd = PdFacts(
        connector=profile.disaggregation.connector,
        placements=placements,
        profiles=profiles,
        router_port=router_port(profile),
        devices_per_node=profile.target.devices_per_node,
        hybrid=model.traits.hybrid,
        router_metrics_port=router_metrics_port(traits, profile.disaggregation.router.metrics_port),
        router_metrics_asked=profile.disaggregation.router.metrics_port,
        router_auth=traits.get("auth"),
    )
    return [
        _Unit(
            p.name,
            p.role,
            profiles[p.name],
            p.hosts,
            kv_transfer(profile, p, sizes, shared),
            pd,
            placed_settings(profile, p),
        )
        for p in placements
    ]


@record(eq=False)
class _Planned:
    """One instance planned: the adapters' result, its typed settings, its fit and its findings."""

    unit: _Unit
    given: Mapping[str, Setting]
    result: AdapterResult
    engine: EngineSettings
    layout: tuple[NodeLayout, ...]
    fit: FitResult | None
    fit_error: str | None
    verdict: MatrixVerdict
    judged: _Judged


def _plan_unit(
    unit: _Unit,
    chosen: ReleaseChoice,
    matrix: SupportMatrix,
    model: ResolvedModel,
    hardware: Hardware | None,
    host: HostFacts | None,
    allow: Sequence[str],
    allow_unsupported: bool,
) -> _Planned:
    p = unit.profile
    given = profile_settings(p)  # walked once: the adapters' provenance and the dotted view both start here
    for path, why in (unit.placed or {}).items():
        given[path] = Setting(given[path].value, why)
    result = _adapt(p, given, chosen, matrix, model, host, unit.kv)
    engine = engine_settings(p, result, given, hardware)
    fit, fit_error = _fit(p, engine, chosen.row, model, host)
    if fit is not None and unit.kv is not None:
        fit = _role_suggestions(fit, unit.kv.role)
    verdict = _verdict(matrix, p, chosen.row, model)
    facts = PlanFacts(
        profile=p,
        graph_mode=result.graph_mode,
        arch=model.traits.arch,
        config=model.config,
        model_is_local=model.is_local,
        shapes=model_shapes(p.model.location, model.config, model.config_file is not None),
        hardware=hardware,
        in_matrix=model.family is not None,
        verified_max_len=_verified_len(model, p.target.hardware),
        env={**(dict(host.env) if host is not None else {}), **p.runtime.env},
        matrix=verdict.broken,
        host=_host_mismatch(p, host),
        refusals=result.refusals,
        reads=result.reads,
        release=chosen.row,
        fit=fit,
        kv_role=_KV_ROLES.get(unit.role),
        pd=unit.pd,
    )
    judged = _findings(facts, p, allow, allow_unsupported)
    layout = tuple(replace(n, index=unit.hosts[n.index]) for n in _nodes(p))
    return _Planned(unit, given, result, engine, layout, fit, fit_error, verdict, judged)


def _role_suggestions(fit: FitResult, role: str) -> FitResult:
    """A role instance's fit suggestions as `--set`s of the profile: its engine keys are the role group's."""

    def key(assignment: str) -> str:
        return f"disaggregation.{role}.{assignment}" if assignment.startswith("engine.") else assignment

    suggestions = tuple(replace(s, sets=tuple(map(key, s.sets))) for s in fit.suggestions)
    return replace(fit, suggestions=suggestions)


_KV_ROLES: Mapping[str, str] = {"prefill": "kv_producer", "decode": "kv_consumer"}


def _shared_or_named(views: Sequence[tuple[str, Mapping[str, str]]]) -> dict[str, str]:
    """Several instances' provenance as one view: a key every instance gives the same text stays as it is, any
    other is named per instance (`prefill-0:--max-num-seqs`)."""
    if len(views) == 1:
        return dict(views[0][1])
    out: dict[str, str] = {}
    keys = dict.fromkeys(k for _, view in views for k in view)
    for key in keys:
        texts = {view.get(key) for _, view in views}
        if len(texts) == 1 and None not in texts:
            out[key] = views[0][1][key]
        else:
            out.update({f"{name}:{key}": view[key] for name, view in views if key in view})
    return out


def _merged_findings(planned: Sequence[_Planned]) -> tuple[Finding, ...]:
    """Every instance's findings, one per distinct message; a failure or warning that only some instances have
    names them (the layout-wide `plan.pd.*` findings, and most others, are the same on every instance)."""
    seen: dict[tuple[str, str], tuple[Finding, list[str]]] = {}
    for one in planned:
        for f in one.judged.findings:
            seen.setdefault((f.id, f.message), (f, []))[1].append(one.unit.name)
    out = []
    for f, names in seen.values():
        if len(names) < len(planned) and f.status in ("fail", "warn"):
            f = dataclasses.replace(f, message=f"{', '.join(names)}: {f.message}")
        out.append(f)
    return tuple(out)


def _union(groups: Iterable[Sequence[str]]) -> tuple[str, ...]:
    """Every text of every group, once each, in order."""
    return tuple(dict.fromkeys(text for group in groups for text in group))


def _warnings(model: ResolvedModel, planned: Sequence[_Planned], host_changes: Sequence[str]) -> tuple[str, ...]:
    notes = _union(one.judged.notes for one in planned)
    return _union([model.warnings, notes, host_changes, *(one.result.warnings for one in planned)])


def _model_facts(profile: Profile, model: ResolvedModel, matrix: SupportMatrix, row: Release) -> ModelFacts:
    return ModelFacts(
        source=profile.model.source,
        resolved=model.resolved,
        family=model.family.id if model.family else None,
        arch=model.traits.arch,
        multimodal=model.traits.multimodal,
        traits_from=model.traits.why,
        config_path=model.config.path if model.config else None,
        support_table=_support_table(matrix, model.family, row, profile.target.hardware),
    )


def _instance(one: _Planned, facts: ModelFacts) -> Instance:
    return Instance(
        one.unit.name,
        one.unit.role,
        one.layout,
        one.result.commands,
        one.engine,
        facts,
        env_sources=one.result.env_sources,
        origins=one.result.origins,
        reads=one.result.reads,
        fit=one.fit,
        fit_error=one.fit_error,
    )


def _deployment_settings(
    profile: Profile, chosen: ReleaseChoice, model: ResolvedModel, planned: Sequence[_Planned]
) -> dict[str, Setting]:
    """The dotted view: the one instance's; for several, the profile's leaves as written and each instance's own
    engine/model view under its name (`decode-0:engine.scheduler.max_num_seqs`)."""
    if len(planned) == 1:
        one = planned[0]
        return _plan_settings(one.given, chosen, model, one.result, one.engine)
    settings = dict(profile_settings(profile))
    settings["release"] = Setting(chosen.row.version, chosen.why)
    for one in planned:
        view = _plan_settings(one.given, chosen, model, one.result, one.engine)
        settings.update({f"{one.unit.name}:{k}": v for k, v in view.items() if k.startswith(("engine.", "model."))})
    return settings


def _assemble(
    profile: Profile,
    chosen: ReleaseChoice,
    model: ResolvedModel,
    planned: Sequence[_Planned],
    host: HostFacts | None,
    matrix: SupportMatrix,
) -> Plan:
    hardware, row = profile.target.hardware, chosen.row
    first = planned[0]
    warnings = _warnings(model, planned, _host_changes(matrix, row, host))
    facts = _model_facts(profile, model, matrix, row)
    instances = tuple(_instance(one, facts) for one in planned)
    settings = _deployment_settings(profile, chosen, model, planned)
    deployment = Deployment(
        name=profile.metadata.name,
        release=_release_pin(row, hardware, chosen.why),
        backend=profile.target.backend,
        hardware=hardware,
        model=facts,
        nodes=tuple(n for one in planned for n in one.layout),
        settings=settings,
        warnings=warnings,
        findings=_merged_findings(planned),
        hccn_conf=hccn_conf_reason(profile),
    )
    provenance = {"release": chosen.why, **_shared_or_named([(o.unit.name, o.result.provenance) for o in planned])}
    eras = {topic: label for one in planned for topic, label in one.result.eras.items()}
    provenance.update({f"era:{topic}": label for topic, label in eras.items()})
    if row.backend == "npu":  # what upstream's CI runs on hardware for this model, quantization and hardware
        family = model.family.id if model.family else None
        quant, location = profile.model.quantization, profile.model.location
        provenance["decision:verified"] = verified_line(family, quant, hardware, row.version, location)
    return Plan(
        deployment=deployment,
        instances=instances,
        provenance=provenance,
        eras=eras,
        services=_services(profile, row, instances),
        warnings=warnings,
        allowed=_union(one.judged.allowed for one in planned),
        suggestions=_union(one.verdict.suggestions for one in planned),
        fit=first.fit,
        fit_error=first.fit_error,
        decisive_eras=_union(one.result.decisive for one in planned),
    )


def _services(profile: Profile, row: Release, instances: Sequence[Instance]) -> tuple[Service, ...]:
    """The router in front of a prefill/decode deployment, on profile node 0: what the release offers
    (`pd-router` era), with every instance's API address (`<nodeN-address>` where the profile names none)."""
    spec = profile.disaggregation
    if spec is None:
        return ()
    routes = tuple(Route(i.name, i.role, i.nodes[0].index, i.settings.port) for i in instances)
    chosen = era_for_release("pd-router", row.backend, row.vllm, row.vllm_ascend)
    service = Service(
        name="router",
        kind="pd-router",
        routes_to=tuple(r.instance for r in routes),
        command=(),
        host=profile.server.host,
        port=router_port(profile),
        policy=spec.router.policy,
        routes=routes,
        connector=spec.connector,
        program=chosen.name if chosen is not None and chosen.traits.get("program") else "",
        source=chosen.source if chosen is not None else "",
        health_path=str(chosen.traits.get("health") or "/health") if chosen is not None else "/health",
        metrics_port=router_metrics_port(chosen.traits, spec.router.metrics_port) if chosen is not None else None,
    )

    def address(r: Route) -> str:
        if r.host == 0:  # on the router's own node: where the instance's API binds, as a client there reaches it
            return Listen(profile.server.host, r.port).poll_host
        node = profile.network.nodes[r.host] if r.host < len(profile.network.nodes) else None
        return node.address if node is not None else NodeAddress(r.host).placeholder

    return (replace(service, command=router_command(row.backend, row.vllm, row.vllm_ascend, service, address)),)


def router_command(
    backend: str, vllm: str, vllm_ascend: str | None, service: Service, address: Callable[[Route], str]
) -> tuple[str, ...]:
    """The router's argv for this release with each instance's API at `address(route)` (the plan's node addresses;
    a renderer's service names): () when the release offers no router."""
    chosen = era_for_release("pd-router", backend, vllm, vllm_ascend)
    if chosen is None or service.port is None:
        return ()
    return router_argv(
        chosen.traits,
        service.connector,
        service.host,
        service.port,
        [(address(r), r.port) for r in service.routes if r.role == "prefill"],
        [(address(r), r.port) for r in service.routes if r.role == "decode"],
        service.policy or "round-robin",
        service.metrics_port,
    )


def _host_changes(matrix: SupportMatrix, row: Release, host: HostFacts | None) -> list[str]:
    if host is None or host.backend != row.backend:
        return []
    return [f"host: {c} (plan against the host's facts; `ascendctl matrix --here` lists what fits)"
            for c in fit_row(matrix, row, host).host_changes]  # fmt: skip


def require_startable(plan: Plan) -> None:
    """Raise `UnsupportedPlan` (exit 2) when a failing finding is left that nothing accepted."""
    if plan.blocking:
        raise UnsupportedPlan(plan.blocking, plan.suggestions)


def _fit(
    profile: Profile, engine: EngineSettings, row: Release, model: ResolvedModel, host: HostFacts | None
) -> tuple[FitResult | None, str | None]:
    """The memory fit of the resolved plan (`ascendctl.plan.fit`), or why there is none."""
    try:
        inputs = fit_inputs(
            profile, engine=engine, vllm=row.vllm, vllm_ascend=row.version if row.backend == "npu" else None,
            model_source=model.resolved, facts=host, config=model.config if model.config_file else None,
        )  # fmt: skip
        return estimate(inputs), None
    except FitError as exc:
        return None, str(exc)
