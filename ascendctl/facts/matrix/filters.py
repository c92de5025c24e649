"""The row filters behind `ascendctl matrix [VIEW] --release/--model/--hardware/--quant/--feature`."""

from __future__ import annotations

from packaging.specifiers import InvalidSpecifier, SpecifierSet

from ascendctl.core.errors import UserInputError
from ascendctl.facts.matrix.features import _feature_blocked, _feature_by_id
from ascendctl.facts.matrix.hardware import hardware_by_id, hardware_supported
from ascendctl.facts.matrix.model_families import _model_keys, find_models, lookup_model
from ascendctl.facts.matrix.model_tables import _model_status
from ascendctl.facts.matrix.names import _norm, _suggest
from ascendctl.facts.matrix.quantization import quantization_by_id, quantization_support
from ascendctl.facts.matrix.release_pins import LATEST, LATEST_STABLE, _nearest_versions, release_for_pin, releases
from ascendctl.facts.matrix.schema import Hardware, ModelFamily, QuantizationType, Release, SupportMatrix, in_range
from ascendctl_engine.versions import parse_or_none as _version_or_none
from ascendctl_engine.versions import strip_v

_SPECIFIER_START = ("<", ">", "=", "!", "~")


def filter_releases(
    matrix: SupportMatrix,
    *,
    backend: str | None = None,
    release: str | None = None,
    hardware: str | None = None,
    model: str | None = None,
    quant: str | None = None,
    feature: str | None = None,
) -> list[Release]:
    """Rows for `ascendctl matrix releases`: every filter narrows the list (all optional).

    `release` is a pin (`latest-stable`, `v0.13.0`), a PEP 440 specifier (`>=0.13`) or a version prefix
    (`0.13` → every 0.13.x row). `hardware`/`model`/`quant`/`feature` keep the npu rows that support them.
    """
    rows = releases(matrix, backend)
    if release:
        rows = _rows_for_release_filter(matrix, rows, backend, release)
    hw = hardware_by_id(matrix, hardware) if hardware else None
    fam = lookup_model(matrix, model) if model else None
    qt = quantization_by_id(matrix, quant) if quant else None
    if feature:
        _feature_by_id(matrix, feature)
    out = []
    for r in rows:
        if r.backend != "npu" and (hw or fam or feature or (qt and r.backend not in qt.engines)):
            continue
        if hw and not hardware_supported(hw, r):
            continue
        if fam and not any(
            _model_status(matrix, fam, r, h.id)[0] not in ("unsupported", "absent")
            for h in ([hw] if hw else matrix.hardware)
            if hardware_supported(h, r)
        ):
            continue
        if (
            qt
            and r.backend == "npu"
            and not any(quantization_support(matrix, r, h.id, qt.id) for h in ([hw] if hw else matrix.hardware))
        ):
            continue
        if feature and _feature_blocked(matrix, feature, r):
            continue
        out.append(r)
    return out


def _rows_for_release_filter(
    matrix: SupportMatrix, rows: list[Release], backend: str | None, text: str
) -> list[Release]:
    text = text.strip()
    if text.startswith(_SPECIFIER_START):
        try:
            SpecifierSet(text)
        except InvalidSpecifier:
            raise UserInputError(f"--release: not a PEP 440 specifier: {text!r}") from None
        return [r for r in rows if in_range(text, r.version)]
    if text in (LATEST_STABLE, LATEST):
        backends = [backend] if backend else ["npu", "cpu", "cuda"]
        picked = {release_for_pin(matrix, b, text).version for b in backends}
        return [r for r in rows if r.version in picked]
    wanted = _version_or_none(text)
    complete = wanted is not None and (len(wanted.release) >= 3 or wanted.pre is not None)
    exact = [r for r in rows if complete and r.key == wanted]
    if exact:
        return exact
    prefix = strip_v(text).rstrip(".")
    by_prefix = [r for r in rows if strip_v(r.version) == prefix or strip_v(r.version).startswith(prefix + ".")]
    if by_prefix:
        return by_prefix
    hint = _nearest_versions(rows, text, wanted)
    raise UserInputError(f"no release matches {text!r}{_suggest(hint)}")


def filter_hardware(
    matrix: SupportMatrix, *, hardware: str | None = None, release: str | None = None
) -> list[Hardware]:
    """Families for `ascendctl matrix hardware` (optionally one family, or those a release supports)."""
    rows = [hardware_by_id(matrix, hardware)] if hardware else list(matrix.hardware)
    if release:
        rel = release_for_pin(matrix, "npu", release)
        rows = [h for h in rows if hardware_supported(h, rel)]
    return rows


def filter_models(
    matrix: SupportMatrix,
    *,
    model: str | None = None,
    hardware: str | None = None,
    feature: str | None = None,
    quant: str | None = None,
    release: str | None = None,
) -> list[ModelFamily]:
    """Families for `ascendctl matrix models`; `model` matches names/architectures by substring."""
    rows = list(matrix.models)
    if model:
        q = _norm(model)
        rows = [f for f in rows if any(q in _norm(k) for k in _model_keys(f))] or find_models(matrix, model)
        if not rows:
            lookup_model(matrix, model)  # raises with did-you-mean
    hw = hardware_by_id(matrix, hardware) if hardware else None
    if feature:
        _feature_by_id(matrix, feature)
    qt = quantization_by_id(matrix, quant) if quant else None
    rel = release_for_pin(matrix, "npu", release) if release else None
    out = []
    for f in rows:
        supports = [s for s in f.support if hw is None or hw.id in s.hardware or not s.hardware]
        if hw and not any(s.status != "unsupported" for s in supports):
            continue
        if feature and not any(s.features.get(feature) in ("yes", "experimental") for s in supports):
            continue
        if qt and qt.id not in ("none", "auto"):
            if qt.id.startswith("w8a8") and qt.id in ("w8a8", "w8a8_dynamic"):
                if not any(s.w8a8 == "yes" for s in supports):
                    continue
            elif not any(set(s.hardware) & {h for qs in qt.support for h in qs.hardware} for s in supports):
                continue
        if rel and not any(
            _model_status(matrix, f, rel, h.id)[0] not in ("unsupported", "absent")
            for h in ([hw] if hw else matrix.hardware)
            if hardware_supported(h, rel)
        ):
            continue
        out.append(f)
    return out


def filter_quantizations(
    matrix: SupportMatrix, *, quant: str | None = None, hardware: str | None = None, release: str | None = None
) -> list[QuantizationType]:
    """Types for `ascendctl matrix quantizations` (optionally those running on a hardware / release)."""
    rows = [quantization_by_id(matrix, quant)] if quant else list(matrix.quantizations)
    hw = hardware_by_id(matrix, hardware) if hardware else None
    rel = release_for_pin(matrix, "npu", release) if release else None
    out = []
    for q in rows:
        entries = [s for s in q.support if hw is None or hw.id in s.hardware]
        if rel is not None:
            entries = [s for s in entries if in_range(s.releases, rel.version)]
        if (hw or rel) and not entries:
            continue
        out.append(q)
    return out
