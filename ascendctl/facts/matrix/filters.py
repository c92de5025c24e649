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
from ascendctl.facts.matrix.schema import (
    Hardware,
    ModelFamily,
    ModelSupport,
    QuantizationType,
    Release,
    SupportMatrix,
    in_range,
)
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
    return [r for r in rows if _release_kept(matrix, r, hw, fam, qt, feature)]


def _release_kept(
    matrix: SupportMatrix,
    r: Release,
    hw: Hardware | None,
    fam: ModelFamily | None,
    qt: QuantizationType | None,
    feature: str | None,
) -> bool:
    """Whether release row `r` passes every `filter_releases` filter given."""
    if _outside_npu_filters(r, hw, fam, qt, feature):
        return False
    if hw and not hardware_supported(hw, r):
        return False
    if fam and not _family_listed(matrix, fam, r, hw):
        return False
    if qt and r.backend == "npu" and not any(quantization_support(matrix, r, h.id, qt.id) for h in _scope(matrix, hw)):
        return False
    return not (feature and _feature_blocked(matrix, feature, r))


def _outside_npu_filters(
    r: Release, hw: Hardware | None, fam: ModelFamily | None, qt: QuantizationType | None, feature: str | None
) -> bool:
    """Whether a non-npu row is dropped: the hardware/model/feature filters speak of npu rows only, and a
    quantization keeps a non-npu row only when that engine loads it."""
    return r.backend != "npu" and bool(hw or fam or feature or (qt and r.backend not in qt.engines))


def _scope(matrix: SupportMatrix, hw: Hardware | None) -> list[Hardware]:
    """The hardware families a filter looks at: the one asked for, else all."""
    return [hw] if hw else matrix.hardware


def _family_listed(matrix: SupportMatrix, fam: ModelFamily, rel: Release, hw: Hardware | None) -> bool:
    """Whether `rel`'s model table lists `fam` as runnable on some family in scope that `rel` supports."""
    return any(
        _model_status(matrix, fam, rel, h.id)[0] not in ("unsupported", "absent")
        for h in _scope(matrix, hw)
        if hardware_supported(h, rel)
    )


def _rows_for_release_filter(
    matrix: SupportMatrix, rows: list[Release], backend: str | None, text: str
) -> list[Release]:
    """The rows a `--release` filter keeps: a PEP 440 specifier, a pin, or a version (exact, else a prefix)."""
    text = text.strip()
    if text.startswith(_SPECIFIER_START):
        return _rows_in_specifier(rows, text)
    if text in (LATEST_STABLE, LATEST):
        return _rows_for_pin(matrix, rows, backend, text)
    return _rows_for_version(rows, text)


def _rows_in_specifier(rows: list[Release], text: str) -> list[Release]:
    """The rows a PEP 440 specifier (`>=0.13`) admits; a malformed one raises."""
    try:
        SpecifierSet(text)
    except InvalidSpecifier:
        raise UserInputError(f"--release: not a PEP 440 specifier: {text!r}") from None
    return [r for r in rows if in_range(text, r.version)]


def _rows_for_pin(matrix: SupportMatrix, rows: list[Release], backend: str | None, pin: str) -> list[Release]:
    """The rows a pin (`latest-stable`, `latest`) names, per backend (every backend when none is given)."""
    backends = [backend] if backend else ["npu", "cpu", "cuda"]
    picked = {release_for_pin(matrix, b, pin).version for b in backends}
    return [r for r in rows if r.version in picked]


def _rows_for_version(rows: list[Release], text: str) -> list[Release]:
    """The row a complete version names, else the rows under a version prefix (`0.13`); none raises."""
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
    rows = _families_named(matrix, model) if model else list(matrix.models)
    hw = hardware_by_id(matrix, hardware) if hardware else None
    if feature:
        _feature_by_id(matrix, feature)
    qt = quantization_by_id(matrix, quant) if quant else None
    rel = release_for_pin(matrix, "npu", release) if release else None
    return [f for f in rows if _family_kept(matrix, f, hw, feature, qt, rel)]


def _families_named(matrix: SupportMatrix, model: str) -> list[ModelFamily]:
    """The families whose names/architectures contain `model`, else those `find_models` finds (none raises)."""
    q = _norm(model)
    rows = [f for f in matrix.models if any(q in _norm(k) for k in _model_keys(f))] or find_models(matrix, model)
    if not rows:
        lookup_model(matrix, model)  # raises with did-you-mean
    return rows


def _family_kept(
    matrix: SupportMatrix,
    f: ModelFamily,
    hw: Hardware | None,
    feature: str | None,
    qt: QuantizationType | None,
    rel: Release | None,
) -> bool:
    """Whether family `f` passes every `filter_models` filter given (judged on its support rows for `hw`)."""
    supports = _support_rows_on(f, hw)
    if hw and not any(s.status != "unsupported" for s in supports):
        return False
    if feature and not any(s.features.get(feature) in ("yes", "experimental") for s in supports):
        return False
    if qt and qt.id not in ("none", "auto") and not _quantization_listed(qt, supports):
        return False
    return not (rel and not _family_listed(matrix, f, rel, hw))


def _support_rows_on(f: ModelFamily, hw: Hardware | None) -> list[ModelSupport]:
    """`f`'s support rows that speak of `hw` (a row naming no hardware speaks of all; no `hw`: every row)."""
    return [s for s in f.support if hw is None or hw.id in s.hardware or not s.hardware]


def _quantization_listed(qt: QuantizationType, supports: list[ModelSupport]) -> bool:
    """Whether the support rows allow `qt`: the W8A8 column for W8A8 types, else hardware the type runs on."""
    if qt.id in ("w8a8", "w8a8_dynamic"):
        return any(s.w8a8 == "yes" for s in supports)
    runs_on = {h for qs in qt.support for h in qs.hardware}
    return any(set(s.hardware) & runs_on for s in supports)


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
