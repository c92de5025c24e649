"""`explain`: whether model × quantization × hardware × release (× features) is supported, and why."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from ascendctl.core.errors import UserInputError
from ascendctl.core.findings import kebab
from ascendctl.facts.launches import ARGV_FEATURES, evidence_for, verified
from ascendctl.facts.matrix.features import _feature_by_id, constraint_hits, constraint_key, feature_status
from ascendctl.facts.matrix.hardware import hardware_by_id, hardware_supported
from ascendctl.facts.matrix.launch import QuantLaunch, quantization_launch
from ascendctl.facts.matrix.model_families import find_models, lookup_model
from ascendctl.facts.matrix.model_tables import TableJudgement, _model_status, judge
from ascendctl.facts.matrix.names import _did_you_mean, _suggest
from ascendctl.facts.matrix.quantization import quantization_by_id, quantization_support
from ascendctl.facts.matrix.release_pins import latest_stable, release_for_pin, releases
from ascendctl.facts.matrix.schema import (
    Hardware,
    ModelFamily,
    QuantizationType,
    QuantSupport,
    Release,
    SupportMatrix,
)
from ascendctl.facts.matrix.verdicts import Level, Reason, Verdict
from ascendctl_engine.adapters.ascend_switches import SWITCH_FIELDS, Switch, spelling_eras, spelling_for, switch
from ascendctl_engine.records import record
from ascendctl_engine.versions import parse as parse_version
from ascendctl_engine.vocab import HARDWARE_FAMILIES, either


def explain(
    matrix: SupportMatrix,
    *,
    model: str,
    release: str | Release,
    hardware: str | None = None,
    quant: str = "none",
    backend: str = "npu",
    features: Sequence[str] = (),
    task: str | None = None,
) -> Verdict:
    """Whether `model` × `quant` × `hardware` × `release` (× `features`) is supported, and why.

    `release` is a pin (`latest-stable`, `v0.13.0`) or a `Release` row; `hardware` is required for npu.
    Unknown names (release, hardware, model, quant, feature) raise `UserInputError` with did-you-mean.
    The verdict is unsupported when any reason is an error; warnings (experimental, untested, partial
    combinations, facts recorded for another release) do not block.
    """
    rel = release if isinstance(release, Release) else release_for_pin(matrix, backend, release)
    backend = rel.backend
    fam = lookup_model(matrix, model, task=task)
    qt = quantization_by_id(matrix, quant)
    switches, features = _split_switches(matrix, features)
    reasons: list[Reason] = []
    suggestions: list[str] = []
    others = [f.name for f in find_models(matrix, model, task=task)[1:]]
    if others:
        reasons.append(
            Reason(
                f"{model!r} also matches {', '.join(others)}; explained for {fam.name}",
                fam.source,
                "warning",
                constraint="model-name",
            )
        )
    if backend != "npu":
        hw_id = None
        if hardware:
            raise UserInputError(f"--hardware names an Ascend family; backend {backend} takes none")
        reasons.append(
            Reason(
                f"the matrix tracks model support for Ascend NPUs only; {fam.name} on {backend} is not verified",
                fam.source,
                "warning",
                constraint="model-backend",
            )
        )
        if qt.id not in ("none", "auto") and backend not in qt.engines:
            reasons.append(
                Reason(
                    f"{qt.name} weights load only on Ascend (vllm-ascend)",
                    qt.source,
                    "error",
                    constraint="quantization",
                    clause="engine-start",  # no `ascend` quantization method outside vllm-ascend
                )
            )
            suggestions.append("use float weights (quant none) or a compressed-tensors checkpoint")
        else:
            reasons.append(Reason(f"{qt.name}: loadable by the {rel.package} {rel.version} engine", qt.source, "ok"))
    else:
        if not hardware:
            raise UserInputError(f"backend npu needs --hardware ({either(HARDWARE_FAMILIES)})")
        hw = hardware_by_id(matrix, hardware)
        hw_id = hw.id
        _explain_npu(matrix, rel, hw, fam, qt, features, reasons, suggestions)
    for sw in switches:
        _explain_switch(rel, sw, reasons, suggestions)
    reasons = _policy(matrix, rel, hw_id, fam, qt, features, reasons)
    supported = not any(r.level == "error" for r in reasons)
    return Verdict(supported, backend, rel.version, hw_id, fam.id, qt.id, reasons, list(dict.fromkeys(suggestions)))


def _policy(
    matrix: SupportMatrix,
    rel: Release,
    hw_id: str | None,
    fam: ModelFamily,
    qt: QuantizationType,
    features: Sequence[str],
    reasons: list[Reason],
) -> list[Reason]:
    """The refusal policy over the reasons (docs/refusal-policy.md): an error refuses only with a clause; one
    without (a document's claim) warns with its source, and so does one that a launch upstream runs at this tag
    contradicts (a verified launch of the family × quantization × hardware using the asked argv features), naming
    both sources."""
    launch = None
    if hw_id is not None:
        own = verified(fam.id, qt.id, hw_id, [f for f in features if f in ARGV_FEATURES], tag=rel.version)
        launch = own[0] if own else None
    out = []
    for r in reasons:
        if r.level == "error" and launch is not None and r.constraint != "verified":
            text = f"{r.message} — contradicted by a launch upstream runs: {launch.mark()} ({launch.source})"
            r = replace(r, level="warning", message=text)
        elif r.level == "error" and r.clause is None:
            r = replace(r, level="warning", message=f"{r.message} — a document's claim: it warns, never refuses")
        out.append(r)
    return out


@record
class _NpuAsk:
    """One npu question to `explain`: the rows it names, and the release's model-table judgement of the family."""

    matrix: SupportMatrix
    rel: Release
    hw: Hardware
    fam: ModelFamily
    qt: QuantizationType
    features: Sequence[str]
    judged: TableJudgement


# A step checks one constraint of an npu question, appending its reasons and suggestions in order.
_Step = Callable[[_NpuAsk, list[Reason], list[str]], None]
# A feature step checks one constraint of one asked feature (the steps run per feature, in order).
_FeatureStep = Callable[[_NpuAsk, str, list[Reason], list[str]], None]


def _explain_npu(
    matrix: SupportMatrix,
    rel: Release,
    hw: Hardware,
    fam: ModelFamily,
    qt: QuantizationType,
    features: Sequence[str],
    reasons: list[Reason],
    suggestions: list[str],
) -> None:
    """Run every npu step, in order: hardware × release, model × hardware × release, quantization, constraints."""
    ask = _NpuAsk(matrix, rel, hw, fam, qt, features, judge(matrix, fam, rel, hw.id))
    for step in _NPU_STEPS:
        step(ask, reasons, suggestions)


# 1. hardware × release


def _release_supports_hardware(ask: _NpuAsk, reasons: list[Reason], suggestions: list[str]) -> None:
    """The release supports the hardware family (else: the newest final release that does)."""
    rel, hw = ask.rel, ask.hw
    if hardware_supported(hw, rel):
        reasons.append(Reason(f"{rel.version} supports {hw.name}", hw.source, "ok", constraint="hardware"))
        return
    reasons.append(
        Reason(
            f"{rel.version} does not support {hw.name} (supported: {hw.releases})",
            hw.source,
            "error",
            constraint="hardware",
            clause="placement",
        )
    )
    newer = [r.version for r in releases(ask.matrix, "npu") if hardware_supported(hw, r) and r.status == "final"]
    if newer:
        suggestions.append(f"use release {newer[0]} (newest final release supporting {hw.id})")


def _prebuilt_image(ask: _NpuAsk, reasons: list[Reason], suggestions: list[str]) -> None:
    """A release that supports the family publishes an image for it."""
    rel, hw = ask.rel, ask.hw
    if hardware_supported(hw, rel) and hw.id not in rel.images:
        reasons.append(
            Reason(
                f"no prebuilt {hw.id} image is published for {rel.version}", rel.source, "warning", constraint="image"
            )
        )


def _hardware_maturity(ask: _NpuAsk, reasons: list[Reason], suggestions: list[str]) -> None:
    """The hardware family's support is not experimental."""
    if ask.hw.status == "experimental":
        reasons.append(
            Reason(f"{ask.hw.name} support is experimental", ask.hw.source, "warning", constraint="hardware-maturity")
        )


def _hardware_dtypes(ask: _NpuAsk, reasons: list[Reason], suggestions: list[str]) -> None:
    """The hardware family runs bfloat16 weights (else: the dtype to set)."""
    hw = ask.hw
    if "bfloat16" not in hw.limits.dtypes:
        dtypes = "/".join(hw.limits.dtypes)
        reasons.append(
            Reason(
                f"{hw.name} runs {dtypes} weights only (set dtype {dtypes})",
                hw.source,
                "warning",
                constraint="hardware-dtype",
            )
        )


# 2. model × hardware × release (the release's model table, from the upstream extracts: NPU families only)


def _model_table_judgement(ask: _NpuAsk, reasons: list[Reason], suggestions: list[str]) -> None:
    """The release's model table lists the family on the hardware (else: hardware or releases where it runs)."""
    matrix, rel, hw, fam = ask.matrix, ask.rel, ask.hw, ask.fam
    status, found = _model_status(matrix, fam, rel, hw.id)
    reasons += [replace(r, constraint="model") for r in found]
    if status not in ("unsupported", "absent"):
        return
    ok_hw = sorted({h for s in fam.support if s.status in ("supported", "experimental") for h in s.hardware})
    if ok_hw and hw.id not in ok_hw:
        suggestions.append(f"run {fam.name} on {', '.join(ok_hw)}")
    if fam.first_release and rel.key < parse_version(fam.first_release):
        suggestions.append(f"use release {fam.first_release} or newer")
    stable = latest_stable(matrix, "npu")
    if rel.key < stable.key:
        suggestions.append(f"use release {stable.version}")


def _verified_launches(ask: _NpuAsk, reasons: list[Reason], suggestions: list[str]) -> None:
    """What upstream's CI runs on hardware for this combination (`ascendctl.facts.launches`): the release's own
    launches, else the nearest tag's, named with its tag. Evidence in favour; it never blocks."""
    own, others = evidence_for(ask.fam.id, ask.qt.id, ask.hw.id, ask.rel.version, ask.features)
    for launch in own[:3]:
        reasons.append(Reason(launch.mark(), launch.source, "ok", constraint="verified"))
    if len(own) > 3:
        reasons.append(Reason(f"{len(own) - 3} more launches at {ask.rel.version}", own[3].source, "ok", "verified"))
    for launch in others[:1]:
        reasons.append(Reason(launch.mark(ask.rel.version), launch.source, "ok", constraint="verified"))


def _asked_features(ask: _NpuAsk, reasons: list[Reason], suggestions: list[str]) -> None:
    """Every feature step for each asked feature in turn (a feature's reasons stay together)."""
    for f in ask.features:
        for step in _FEATURE_STEPS:
            step(ask, f, reasons, suggestions)


def _feature_in_model_table(ask: _NpuAsk, f: str, reasons: list[Reason], suggestions: list[str]) -> None:
    """The model table's cell for the feature, on the family's row for the hardware."""
    row, fam, hw_id, judged = ask.judged.support, ask.fam, ask.hw.id, ask.judged
    cell = row.features.get(f) if row else None
    if cell == "no":
        reasons.append(
            Reason(
                f"{f} is not supported for {fam.name} on {hw_id}",
                _cite(judged),
                "error",
                constraint=f"feature.{kebab(f)}",
            )
        )
        suggestions.append(f"drop {f}")
    elif cell in ("untested", "experimental"):
        reasons.append(
            Reason(
                f"{f} is {cell} for {fam.name} on {hw_id}", _cite(judged), "warning", constraint=f"feature.{kebab(f)}"
            )
        )
    elif cell == "yes":
        reasons.append(
            Reason(f"{f} is supported for {fam.name} on {hw_id}", _cite(judged), "ok", constraint=f"feature.{kebab(f)}")
        )
    elif row is not None and f in ask.matrix.model_table_columns.values():
        msg = f"{judged.table_tag}'s model table states nothing about {f} for {fam.name} on {hw_id}"
        reasons.append(Reason(msg, judged.table_ref, "warning", constraint=f"feature.{kebab(f)}"))


def _feature_in_release(ask: _NpuAsk, f: str, reasons: list[Reason], suggestions: list[str]) -> None:
    """The release ships the feature (its supported_features.md status)."""
    fstat = feature_status(ask.matrix, f, ask.rel)
    if fstat in ("absent", "planned", "deprecated"):
        reasons.append(
            Reason(
                f"{f} is {fstat} in {ask.rel.version}",
                "supported_features.md at that tag",
                "error",
                constraint=f"release-feature.{kebab(f)}",
            )
        )


# 3. quantization × hardware × release


def _quantized(ask: _NpuAsk) -> bool:
    """Whether the question names a quantization (not float weights, not auto-detection)."""
    return ask.qt.id not in ("none", "auto")


def _quant_entry(ask: _NpuAsk) -> QuantSupport | None:
    """The support entry that lets the quantization run on the hardware with the release, or None."""
    return quantization_support(ask.matrix, ask.rel, ask.hw.id, ask.qt.id)


def _quantization_runs_on_hardware(ask: _NpuAsk, reasons: list[Reason], suggestions: list[str]) -> None:
    """The quantization runs on the hardware with the release (else: other types, or a release where it does)."""
    rel, hw, qt = ask.rel, ask.hw, ask.qt
    if not _quantized(ask):
        reasons.append(Reason(f"{qt.name}: no quantization flag needed", qt.source, "ok", constraint="quantization"))
        return
    sup = _quant_entry(ask)
    if sup is not None:
        reasons.append(
            Reason(f"{qt.name} runs on {hw.id} with {rel.version}", sup.source, "ok", constraint="quantization")
        )
        if sup.note:
            reasons.append(Reason(f"{qt.name}: {sup.note}", sup.source, "warning", constraint="quantization"))
        return
    where = "; ".join(f"{', '.join(s.hardware)} ({s.releases or 'all'})" for s in qt.support)
    reasons.append(
        Reason(
            f"{qt.name} does not run on {hw.id} with {rel.version} (runs on: {where})",
            qt.source,
            "error",
            constraint="quantization",
            clause="known-failure",  # the release's scheme registry (code) has no such scheme for that hardware
        )
    )
    alts = _other_quantizations(ask)
    if alts:
        suggestions.append(f"use quantization {' or '.join(alts[:4])}")
    newer = _releases_running_quantization(ask)
    if newer:
        suggestions.append(f"use release {newer[0]} for {qt.id} on {hw.id}")


def _other_quantizations(ask: _NpuAsk) -> list[str]:
    """The other quantization types that run on the hardware with the release."""
    matrix, rel, hw, qt = ask.matrix, ask.rel, ask.hw, ask.qt
    return [
        q.id
        for q in matrix.quantizations
        if q.id not in ("none", "auto", qt.id) and quantization_support(matrix, rel, hw.id, q.id)
    ]


def _releases_running_quantization(ask: _NpuAsk) -> list[str]:
    """The npu releases, newest first, on which the quantization runs on the hardware."""
    matrix, hw, qt = ask.matrix, ask.hw, ask.qt
    return [
        r.version
        for r in releases(matrix, "npu")
        if hardware_supported(hw, r) and quantization_support(matrix, r, hw.id, qt.id)
    ]


def _quantization_launch(ask: _NpuAsk, reasons: list[Reason], suggestions: list[str]) -> None:
    """How the plan switches a quantization that runs on (hardware, release) on, and what it installs."""
    if not _quantized(ask) or _quant_entry(ask) is None:
        return
    launch = quantization_launch(ask.matrix, ask.rel, ask.qt.id)
    how = _launch_phrase(launch)
    pk = f"; install {', '.join(f'{k}=={v}' for k, v in launch.packages.items())}" if launch.packages else ""
    reasons.append(Reason(f"launch: {how}{pk}", launch.reference, "ok", constraint="quantization"))


def _model_quantization_since(ask: _NpuAsk, reasons: list[Reason], suggestions: list[str]) -> None:
    """The release is at or after the one from which the family supports the quantization."""
    fam, qt = ask.fam, ask.qt
    since = fam.quant_since.get(qt.id) if _quantized(ask) else None
    if since and ask.rel.key < parse_version(since):
        reasons.append(
            Reason(f"{fam.name} supports {qt.id} from {since}", fam.source, "error", constraint="model-quantization")
        )
        suggestions.append(f"use release {since} or newer")


def _model_w8a8(ask: _NpuAsk, reasons: list[Reason], suggestions: list[str]) -> None:
    """A W8A8 quantization needs the model table's W8A8 column for the family on the hardware."""
    row = ask.judged.support
    if ask.qt.id in ("w8a8", "w8a8_dynamic") and row is not None and row.w8a8 == "no":
        reasons.append(
            Reason(
                f"{ask.fam.name} has no W8A8 support on {ask.hw.id}",
                _cite(ask.judged),
                "error",
                constraint="model-quantization",
            )
        )


# 4. feature constraints


def _feature_constraints(ask: _NpuAsk, reasons: list[Reason], suggestions: list[str]) -> None:
    """The combination (features, quantization, model, hardware) meets no unsupported feature constraint."""
    hits = constraint_hits(
        ask.matrix, ask.rel, features=ask.features, quant=ask.qt.id, model=ask.fam, hardware=ask.hw.id
    )
    for c in hits:
        level: Level = "error" if c.verdict == "unsupported" else "warning"
        reasons.append(
            Reason(f"{c.message} ({c.verdict})", c.source, level, constraint=constraint_key(c), clause=c.clause)
        )
        if level == "error" and c.clause:  # a document's claim warns (the refusal policy): nothing to avoid
            suggestions.append(f"avoid combining {' + '.join(c.combination)}")


_FEATURE_STEPS: tuple[_FeatureStep, ...] = (_feature_in_model_table, _feature_in_release)
_NPU_STEPS: tuple[_Step, ...] = (
    _release_supports_hardware,
    _prebuilt_image,
    _hardware_maturity,
    _hardware_dtypes,
    _model_table_judgement,
    _verified_launches,
    _asked_features,
    _quantization_runs_on_hardware,
    _quantization_launch,
    _model_quantization_since,
    _model_w8a8,
    _feature_constraints,
)


def _split_switches(matrix: SupportMatrix, features: Sequence[str]) -> tuple[list[Switch], list[str]]:
    """(the engine.ascend switches named, the matrix features named). A name may be both (`mlapo`: a feature of
    the support tables and a switch); an unknown name raises with both vocabularies."""
    if not features:
        return [], []
    switches: list[Switch] = []
    rest: list[str] = []
    for f in features:
        sw = switch(f)
        if sw is not None:
            switches.append(sw)
        try:
            _feature_by_id(matrix, f)
        except UserInputError:
            if sw is None:
                known = [x.id for x in matrix.features] + list(SWITCH_FIELDS)
                raise UserInputError(
                    f"unknown feature {f!r}{_suggest(_did_you_mean(f, known))} (features: "
                    f"{', '.join(x.id for x in matrix.features)}; engine.ascend switches: {', '.join(SWITCH_FIELDS)})"
                ) from None
            continue
        rest.append(f)
    return switches, rest


def _explain_switch(rel: Release, sw: Switch, reasons: list[Reason], suggestions: list[str]) -> None:
    """How `rel` spells switch `sw` (asked of the adapters' era, so the plan emits the same), and every era."""
    name = sw.path
    if rel.backend != "npu" or rel.vllm_ascend is None:
        reasons.append(
            Reason(
                f"{name} is a vllm-ascend switch: {rel.backend} has none",
                sw.topic,
                "error",
                constraint=f"switch.{kebab(name)}",
            )
        )
        return
    chosen, text = spelling_for(sw, rel.vllm_ascend)
    if chosen.status == "read":
        reasons.append(
            Reason(
                f"{name}: {rel.version} reads `{text}` when on (0 / false when off)",
                chosen.era.source,
                constraint=f"switch.{kebab(name)}",
            )
        )
        if chosen.note:
            reasons.append(
                Reason(f"{name}: {chosen.note}", chosen.era.source, "warning", constraint=f"switch.{kebab(name)}")
            )
    else:
        reasons.append(Reason(f"{name}: {text}", chosen.era.source, "error", constraint=f"switch.{kebab(name)}"))
        first = sw.first_reader().first
        if chosen.status == "absent":
            suggestions.append(f"use release {first} or newer for {name}")
        else:
            suggestions.append(f"leave {name} unset on {rel.version} (read by {sw.readers()})")
    per_era = "; ".join(f"{s.releases}: {s.shown or 'none'}" for s in spelling_eras(sw))
    reasons.append(
        Reason(
            f"{name} per vllm-ascend release: {per_era}",
            "docs/intent-to-flags.md",
            "ok",
            constraint=f"switch.{kebab(name)}",
        )
    )


def _cite(judged: TableJudgement) -> str:
    """The table row a model fact comes from (`tag:path:line`), or the table when no row matched."""
    return judged.row.source if judged.row is not None else judged.table_ref


def _launch_phrase(launch: QuantLaunch) -> str:
    """What the plan does to switch a quantization on (the adapters' era decides; the plan emits the same)."""
    if not launch.argv:
        return "no --quantization flag needed" + (" (auto-detected)" if launch.auto_detect else "")
    args = " ".join(launch.argv)
    if "--quantization" in launch.argv and not launch.flag_required:
        return f"pass {args} (optional: the release also detects it; the plan keeps it explicit)"
    return f"pass {args}"
