"""Features and feature constraints: status per release and the constraint rules a combination runs into."""

from __future__ import annotations

from collections.abc import Iterable

from ascendctl.core.errors import UserInputError
from ascendctl.core.findings import kebab
from ascendctl.facts.matrix.names import _did_you_mean, _norm, _suggest
from ascendctl.facts.matrix.quantization import quantization_by_id
from ascendctl.facts.matrix.schema import (
    FeatureConstraint,
    FeatureStatus,
    ModelFamily,
    Release,
    SupportMatrix,
    in_range,
)
from ascendctl_engine.versions import parse as parse_version


def _feature_by_id(matrix: SupportMatrix, feature: str) -> str:
    ids = [f.id for f in matrix.features]
    key = _norm(feature)
    if key in ids:
        return key
    raise UserInputError(
        f"unknown feature {feature!r}{_suggest(_did_you_mean(feature, ids))} (known: {', '.join(ids)})"
    )


def feature_status(matrix: SupportMatrix, feature: str, release: Release) -> FeatureStatus | None:
    """Status of a feature at a release from the supported-features snapshots (None: not recorded)."""
    fid = _feature_by_id(matrix, feature)
    feat = next(f for f in matrix.features if f.id == fid)
    snaps = [(parse_version(v), s) for v, s in feat.status.items() if parse_version(v) <= release.key]
    return max(snaps)[1] if snaps and release.backend == "npu" else None


def _feature_blocked(matrix: SupportMatrix, feature: str, release: Release) -> bool:
    if release.backend != "npu":
        return True
    if feature_status(matrix, feature, release) in ("absent", "planned", "deprecated"):
        return True
    return any(
        c.verdict == "unsupported" and len(c.combination) == 1 and feature in c.combination[0].split("|")
        for c in matrix.feature_constraints
        if in_range(c.releases, release.version)
    )


_GRAPH_FEATURES = {"piecewise-graph", "full-graph", "full-decode-only-graph", "xlite-graph"}


def constraint_hits(
    matrix: SupportMatrix,
    release: Release,
    *,
    features: Iterable[str] = (),
    quant: str | None = None,
    model: ModelFamily | None = None,
    hardware: str | None = None,
) -> list[FeatureConstraint]:
    """The feature constraints a combination runs into on a release (every atom of the rule is present)."""
    atoms = {_feature_by_id(matrix, f) for f in features}
    if atoms & _GRAPH_FEATURES:
        atoms.add("graph")
    if quant:
        atoms.add(f"quant:{quantization_by_id(matrix, quant).id}")
    if model is not None:
        atoms |= {f"type:{t}" for t in model.types} | {f"model:{model.id}"}
        if model.modality == "multimodal":
            atoms.add("mm")
        if model.kind == "pooling":
            atoms.add("pooling")
    if hardware:
        atoms.add(f"hardware:{hardware}")
    hits = []
    for c in matrix.feature_constraints:
        if release.backend != "npu" or not in_range(c.releases, release.version):
            continue
        if all(any(alt in atoms for alt in atom.split("|")) for atom in c.combination):
            hits.append(c)
    return hits


def constraint_key(constraint: FeatureConstraint) -> str:
    """The constraint's finding key (`combination.quant-w4a8-and-eplb`): its atoms, as the matrix lists them."""
    atoms = ["-or-".join(kebab(part) for part in atom.split("|")) for atom in constraint.combination]
    return "combination." + "-and-".join(atoms)
