"""Building the support matrix from upstream extracts plus the hand-written knowledge and decisions layer.

    data, problems = build_matrix_data(knowledge, UPSTREAM)

`knowledge` is `ascendctl/facts/data/matrix.yaml` parsed: hardware, features, constraints, quantization metadata,
launch rules and model families are ours; an Ascend release row there holds only what no upstream file says
(notes, known issues) and its `decisions` — which value wins when upstream files disagree, and why. Every pin
of an Ascend row (vLLM, Python, CANN, torch, torch-npu, triton-ascend, Mooncake, transformers, base image,
date), its images and the first release of each quantization scheme come from the per-tag extracts in
`ascendctl/facts/data/upstream/` (`scripts/extract_upstream.py`), each with its `tag:path:line`.

A field whose candidates disagree and that has no decision is a *problem*: the build refuses it (the test
suite runs the build), so a new upstream disagreement can never slip into the matrix unrecorded. The result
is written to the JSON mirror (`python -m ascendctl.outputs.matrix_docs --write`), which is what the CLI loads.
"""

from __future__ import annotations

import copy
import datetime as dt
import re
from collections.abc import Mapping, Sequence
from dataclasses import field
from typing import Any, Protocol

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import Version

from ascendctl.facts import upstream as extracts
from ascendctl.facts.matrix.model_tables import family_keys, hardware_status, stated_hardware, support_row
from ascendctl.facts.matrix.names import _norm
from ascendctl.facts.matrix.schema import ModelFamily, as_data, validate_data

# The pins of an Ascend release row that upstream files state (`Release` fields of the same names).
from ascendctl.facts.upstream import RELEASE_FIELDS
from ascendctl_engine.records import record
from ascendctl_engine.versions import parse, parse_or_none
from ascendctl_engine.vocab import SOC_VERSION_CONTAINS, SOC_VERSIONS

# What an Ascend row of matrix.yaml may hold: everything else comes from the extract.
KNOWLEDGE_KEYS = frozenset({"version", "backend", "decisions", "known_issues", "notes"})
# Fields a release row must have; the rest may be absent upstream (null).
REQUIRED_FIELDS = frozenset({"vllm", "python", "cann", "torch", "torch_npu"})
IMAGE_REPOSITORY = "quay.io/ascend/vllm-ascend"


class FactLike(Protocol):
    @property
    def value(self) -> Any: ...
    @property
    def source(self) -> str: ...


class Upstream(Protocol):
    """The queries the build makes of the extracts (`ascendctl.facts.upstream` implements them)."""

    def extract_tags(self) -> tuple[str, ...]: ...
    def release_facts(self, tag: str) -> Mapping[str, Sequence[FactLike]]: ...
    def images(self, tag: str) -> Mapping[str, FactLike]: ...
    def unbuilt_images(self, tag: str) -> Mapping[str, FactLike]: ...
    def quantization_schemes(self, tag: str) -> Mapping[str, FactLike]: ...


@record(frozen=False)
class Built:
    data: dict[str, Any]
    problems: list[str] = field(default_factory=list)


def _normalise(name: str, value: Any) -> Any:
    """The comparable form of a candidate value (so `>=3.9, <3.12` equals `<3.12,>=3.9`)."""
    if value is None:
        return None
    text = str(value).strip()
    if name == "python":
        try:
            clauses = SpecifierSet(text.replace(" ", ""))
        except InvalidSpecifier:
            return text
        # Lower bounds first (`>=3.10,<3.13`), the way the matrix has always spelled ranges.
        return ",".join(sorted((str(c) for c in clauses), key=lambda c: (not c.startswith(">"), c)))
    if name == "cann":
        return text.replace(" ", "")
    return text


def _floor_of(text: str) -> str | None:
    """`>=2.7.1` → `2.7.1`; None for anything that is not a single lower bound."""
    m = re.fullmatch(r">=\s*([^,<>=!]+)", text.strip())
    return m.group(1).strip().lower() if m else None


def _floor_met(fact: FactLike, pins: Sequence[Version]) -> bool:
    """Whether `fact` is a floor (`>=X`) that some exact pin of the other candidates satisfies."""
    floor = _floor_of(str(fact.value)) if fact.value is not None else None
    low = parse_or_none(floor) if floor else None
    return low is not None and any(p >= low for p in pins)


def _lower_bounds_only(spec: str) -> set[str] | None:
    try:
        clauses = list(SpecifierSet(spec.replace(" ", "")))
    except InvalidSpecifier:
        return None
    if not clauses or any(c.operator != ">=" for c in clauses):
        return None
    return {c.version for c in clauses}


def _lower_bounds(spec: str) -> set[str]:
    try:
        return {c.version for c in SpecifierSet(spec.replace(" ", "")) if c.operator == ">="}
    except InvalidSpecifier:
        return set()


def consistent_candidates(name: str, candidates: Sequence[FactLike]) -> list[FactLike]:
    """The candidates that state something of their own. Dropped, because they do not contradict the others:

    - a floor (`>=2.4.0`, `>=8.2.rc1`) that another candidate's exact pin meets: a requirement's minimum, not a pin;
    - a Python range with only lower bounds (setup.py's `python_requires=">=3.10"`) whose bounds another
      candidate's range also has: it states less, not something else;
    - the tag's commit date, when a release note or policy row dates the release: it is only the fallback;
    - for `cann`, the base image of a Dockerfile other than the A2 `Dockerfile` (e.g. `Dockerfile.310p` on a
      CANN beta): it describes that family's image, not the release's CANN pin.
    """
    kept = [f for f in candidates if not (name == "cann" and _path(f.source).startswith("Dockerfile."))]
    kept = _without_met_floors(kept)
    if name == "python":
        kept = _without_weaker_python_ranges(kept)
    if name == "date" and any(":refs/tags/" not in f.source for f in kept):
        kept = [f for f in kept if ":refs/tags/" not in f.source]
    return kept


def _without_met_floors(kept: list[FactLike]) -> list[FactLike]:
    """Drop the floors (`>=2.4.0`) that another candidate's exact pin meets."""
    pins = [parse_or_none(str(f.value)) for f in kept if f.value is not None and _floor_of(str(f.value)) is None]
    return [f for f in kept if not _floor_met(f, [p for p in pins if p is not None])]


def _without_weaker_python_ranges(kept: list[FactLike]) -> list[FactLike]:
    """Drop the lower-bound-only Python ranges whose bounds another candidate's range also has."""
    ranges = [f for f in kept if _lower_bounds_only(str(f.value)) is None]
    return [
        f
        for f in kept
        if (bounds := _lower_bounds_only(str(f.value))) is None
        or not any(bounds <= _lower_bounds(str(r.value)) for r in ranges)
    ]


def _path(source: str) -> str:
    """`v0.13.0:Dockerfile.310p:18` → `Dockerfile.310p` (the path part of a `tag:path:line` source)."""
    parts = source.split(":")
    return parts[-2] if len(parts) >= 3 else source


def _decided(fields: Mapping[str, Any], key: str) -> Mapping[str, Any] | None:
    decision = fields.get(key)
    return decision if isinstance(decision, Mapping) else None


def resolve_field(
    tag: str, name: str, candidates: Sequence[FactLike], decision: Mapping[str, Any] | None
) -> tuple[Any, str | None, list[dict[str, str]], str | None]:
    """(value, source, disagreements, problem) for one field of one release.

    Without a decision the candidates must agree; with one, its value wins — cited by the candidate that states
    it, or by the decision alone when no file says it — and every other value becomes a recorded disagreement.
    """
    distinct: dict[Any, FactLike] = {}
    for fact in consistent_candidates(name, candidates):
        distinct.setdefault(_normalise(name, fact.value), fact)
    if decision is None:
        if not distinct:
            return None, None, [], None
        if len(distinct) == 1:
            ((value, fact),) = distinct.items()
            return value, fact.source, [], None
        seen = "; ".join(f"{v!r} ({f.source})" for v, f in distinct.items())
        return None, None, [], f"{tag}: upstream disagrees on `{name}` and no decision is recorded: {seen}"
    value = decision.get("value")
    why = str(decision.get("why", "")).strip()
    if not why:
        return None, None, [], f"{tag}: the decision on `{name}` has no `why`"
    wanted = _normalise(name, value)
    backing = distinct.get(wanted)
    if backing is None and not decision.get("override"):
        stated = ", ".join(repr(v) for v in distinct) or "nothing"
        return (
            None,
            None,
            [],
            (
                f"{tag}: the decision on `{name}` ({value!r}) picks no upstream value (they state {stated}); "
                "mark it `override: true` if no file is right"
            ),
        )
    source = f"{backing.source} (decision: {why})" if backing is not None else f"decision: {why}"
    others = [
        {"field": name, "value": str(v), "source": f.source, "note": why} for v, f in distinct.items() if v != wanted
    ]
    if wanted is None:
        return None, source, others, None
    return wanted, source, others, None


def build_release(
    tag: str, knowledge: Mapping[str, Any], upstream: Upstream, suffixes: Mapping[str, str]
) -> tuple[dict[str, Any], list[str]]:
    """One Ascend release row: the extract's facts resolved through the row's decisions."""
    decisions = knowledge.get("decisions") or {}
    unknown = sorted(set(decisions) - {*RELEASE_FIELDS, "images"})
    problems = [f"{tag}: decision on unknown field {k!r}" for k in unknown]
    extra = sorted(set(knowledge) - KNOWLEDGE_KEYS)
    problems += [f"{tag}: a knowledge row may hold only {sorted(KNOWLEDGE_KEYS)}, not {k!r}" for k in extra]
    facts = upstream.release_facts(tag)
    row: dict[str, Any] = {
        "version": tag,
        "backend": "npu",
        "package": "vllm-ascend",
        "status": "rc" if "rc" in tag else "final",
    }
    sources: dict[str, str] = {}
    disagreements: list[dict[str, str]] = []
    for name in RELEASE_FIELDS:
        value, source, others, problem = resolve_field(tag, name, facts.get(name, ()), _decided(decisions, name))
        if problem:
            problems.append(problem)
            continue
        if value is None and name in REQUIRED_FIELDS:
            problems.append(f"{tag}: no upstream file states `{name}` and no decision supplies it")
        row[name] = dt.date.fromisoformat(value) if name == "date" and isinstance(value, str) else value
        if source:
            sources[name] = source
        disagreements += [d for d in others if d["field"] in _DISAGREEMENT_FIELDS]
    decided = _decided(decisions, "images")
    images, image_sources, image_problems = _images(tag, upstream.images(tag), decided, suffixes)
    problems += image_problems
    omitted, omit_problems = _omitted_images(tag, upstream.unbuilt_images(tag), images, decided)
    problems += omit_problems
    row["images"] = images
    sources.update(image_sources)
    row["disagreements"] = disagreements
    row["known_issues"] = list(knowledge.get("known_issues") or [])
    row["notes"] = list(knowledge.get("notes") or []) + omitted
    row["sources"] = sources
    row["source"] = f"ascendctl/facts/data/upstream/{tag}.json (per-field sources in `sources`)"
    return row, problems


# Fields the `Release.disagreements` model can name (the rest are reported through `sources` only).
_DISAGREEMENT_FIELDS = frozenset({"vllm", "python", "cann", "torch", "torch_npu", "triton_ascend", "mooncake", "date"})


def _images(
    tag: str, built: Mapping[str, FactLike], decision: Mapping[str, Any] | None, suffixes: Mapping[str, str]
) -> tuple[dict[str, str], dict[str, str], list[str]]:
    """Image key → image name, for exactly the families the tag's image workflow builds (a decision may add
    or drop keys, with its reason)."""
    keys = dict(built)
    problems: list[str] = []
    sources = {f"images.{k}": f.source for k, f in keys.items()}
    if decision is not None:
        why = str(decision.get("why", "")).strip()
        if not why:
            problems.append(f"{tag}: the decision on `images` has no `why`")
        for key in decision.get("drop") or []:
            if keys.pop(key, None) is None:
                problems.append(f"{tag}: decision drops image {key!r}, which the workflow does not build")
            sources.pop(f"images.{key}", None)
        for key in decision.get("add") or []:
            sources[f"images.{key}"] = f"decision: {why}"
            keys.setdefault(key, None)  # type: ignore[arg-type]
    unknown = sorted(k for k in keys if k.removesuffix("-openeuler") not in suffixes)
    problems += [f"{tag}: image key {k!r} names no hardware family" for k in unknown]
    names = {k: image_name(tag, k, suffixes) for k in sorted(keys) if k not in unknown}
    return names, sources, problems


def _omitted_images(
    tag: str, unbuilt: Mapping[str, FactLike], images: Mapping[str, str], decision: Mapping[str, Any] | None
) -> tuple[list[dict[str, str]], list[str]]:
    """A root Dockerfile whose image no workflow of the tag builds needs a recorded decision: `add` (the image
    exists all the same) or `omit` (it does not: the row says so in its notes, citing the Dockerfile)."""
    omit = set((decision or {}).get("omit") or [])
    why = str((decision or {}).get("why", "")).strip()
    notes: list[dict[str, str]] = []
    problems: list[str] = []
    for key, found in sorted(unbuilt.items()):
        if key in images:
            continue
        if key in omit:
            notes.append({"text": f"No {key} image at {tag}: {why}", "ref": found.source})
        else:
            problems.append(
                f"{tag}: {found.source} is the Dockerfile of image {key!r}, which no workflow of the tag builds; "
                "record a decision (`images: {add: [...]}` or `{omit: [...]}` with its `why`)"
            )
    stray = sorted(omit - set(unbuilt))
    problems += [f"{tag}: decision omits image {k!r}, which has no unbuilt Dockerfile" for k in stray]
    return notes, problems


def image_name(tag: str, key: str, suffixes: Mapping[str, str]) -> str:
    """`v0.13.0`, `a3-openeuler` → `quay.io/ascend/vllm-ascend:v0.13.0-a3-openeuler` (the family's tag suffix
    is the hardware table's `image_suffix`)."""
    openeuler = key.endswith("-openeuler")
    family = key.removesuffix("-openeuler")
    return f"{IMAGE_REPOSITORY}:{tag}{suffixes[family]}{'-openeuler' if openeuler else ''}"


class MatrixBuildError(ValueError):
    """The knowledge layer and the extracts do not make a matrix (an unrecorded disagreement, a bad decision)."""


def build_matrix(knowledge: Mapping[str, Any], upstream: Upstream) -> dict[str, Any]:
    """`build_matrix_data`, raising `MatrixBuildError` listing every problem."""
    built = build_matrix_data(knowledge, upstream)
    if built.problems:
        raise MatrixBuildError("the support matrix does not build:\n  " + "\n  ".join(built.problems))
    return built.data


def build_matrix_data(knowledge: Mapping[str, Any], upstream: Upstream) -> Built:
    """The whole matrix data (validated afterwards by `SupportMatrix`) and the problems the build found."""
    data = copy.deepcopy(dict(knowledge))
    rows = list(data.get("releases") or [])
    own = {str(r["version"]): r for r in rows if r.get("backend") == "npu"}
    out_rows = [r for r in rows if r.get("backend") != "npu"]
    suffixes = {str(h["id"]): str(h["image_suffix"]) for h in data.get("hardware") or []}
    problems: list[str] = []
    for tag in reversed(upstream.extract_tags()):  # newest first, like the policy table
        row, found = build_release(tag, own.pop(tag, {}), upstream, suffixes)
        out_rows.append(row)
        problems += found
    problems += [f"{tag}: a knowledge row names a release with no upstream extract" for tag in own]
    data["releases"] = out_rows
    spans = _registry_spans(upstream)
    first_of = {str(h["id"]): str(h["first_release"]) for h in data.get("hardware") or []}
    for quant in data.get("quantizations") or []:
        problems += _quant_support(quant, spans, first_of)
    problems += _model_overview(data, out_rows)
    problems += _feature_statuses(data)
    problems += _soc_spellings(data)
    return Built(data, problems)


def _soc_spellings(data: dict[str, Any]) -> list[str]:
    """Fill each family's SOC_VERSION spellings from the engine's vocabulary (their one owner, which the host reader
    classifies with)."""
    problems = []
    for h in data.get("hardware") or []:
        if "soc_versions" in h or "soc_version_contains" in h:
            problems.append(f"hardware {h['id']}: SOC_VERSION spellings belong to engine/ascendctl_engine/vocab.py")
        h["soc_versions"] = sorted(SOC_VERSIONS.get(h["id"], ()))
        if h["id"] in SOC_VERSION_CONTAINS:
            h["soc_version_contains"] = SOC_VERSION_CONTAINS[h["id"]]
    return problems


def _feature_statuses(data: dict[str, Any]) -> list[str]:
    """`features[].status` from every tag's supported-features table: a snapshot where the status changes."""
    problems: list[str] = []
    tables = [(tag, extracts.feature_table(tag)) for tag in extracts.extract_tags()]
    for feature in data.get("features") or []:
        name = feature.get("table_name")
        if not name:
            continue
        if feature.get("status"):
            problems.append(f"feature {feature['id']}: `status` is built from the extracts; remove it from the YAML")
        status: dict[str, str] = {}
        sources: dict[str, str] = {}
        last: str | None = None
        for tag, table in tables:
            if table is None:
                continue
            row = table.find(name)
            now = (row.status or "absent") if row is not None else "absent"
            if now != last:
                status[tag] = now
                sources[tag] = row.source if row is not None else f"{tag}:{table.path} (not listed)"
                last = now
        feature["status"], feature["status_sources"] = status, sources
    return problems


def _model_overview(data: dict[str, Any], rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """Fill every family's `support` from the model table of the newest final release (the overview `matrix
    models` and the docs show), and refuse a row of any extracted table that matches no family."""
    families = [validate_data(ModelFamily, f) for f in data.get("models") or []]
    keys = [family_keys(f) for f in families]
    problems = _unmatched_table_rows(keys)
    found = _overview_table(rows)
    if found is None:
        return [*problems, "no model table for the newest final release"]
    tag, table = found
    data["model_overview"] = f"{tag}:{table.path}"
    columns = data.get("model_table_columns") or {}
    for raw, fam_keys in zip(data.get("models") or [], keys, strict=True):
        raw["support"] = _overview_support(table, fam_keys, columns)
    return problems


def _unmatched_table_rows(keys: Sequence[set[str]]) -> list[str]:
    """A problem for every row of any extracted model table that matches no family's keys."""
    problems: list[str] = []
    for tag in extracts.extract_tags():
        table = extracts.model_table(tag)
        for row in table.rows if table else ():
            if not any(_norm(row.name) in k for k in keys):
                problems.append(f"{row.source}: model {row.name!r} matches no family (add it, or a `table_names`)")
    return problems


def _overview_table(rows: Sequence[Mapping[str, Any]]) -> tuple[str, extracts.ModelTable] | None:
    """(tag, table): the model table of the newest final npu release (or the nearest earlier), or None."""
    finals = [r for r in rows if r.get("backend") == "npu" and r.get("status") == "final"]
    newest = max(finals, key=lambda r: parse(str(r["version"])), default=None)
    return extracts.nearest_model_table(str(newest["version"])) if newest else None


def _overview_support(
    table: extracts.ModelTable, fam_keys: set[str], columns: Mapping[str, str]
) -> list[dict[str, Any]]:
    """One family's overview `support` rows (as JSON) from the table rows naming it."""
    covered: set[str] = set()
    support: list[dict[str, Any]] = []
    for r in table.rows:  # the first row naming a family on a hardware wins, as in `model_tables.judge`
        hardware = [h for h in stated_hardware(r) if h not in covered]
        if _norm(r.name) not in fam_keys or not hardware:
            continue
        covered.update(hardware)
        by_status: dict[str, list[str]] = {}
        for h in hardware:  # "A2/A3/Ascend950 (Ascend950 experimental)": one overview row per status
            by_status.setdefault(hardware_status(r, h), []).append(h)
        for hws in by_status.values():
            support.append(as_data(support_row(r, hws, columns), exclude_defaults=True))
    return support


# `releases: from-registry` in a quantization support row: from the first tag whose scheme registry registers the
# type (the 310P registry for 300i-duo rows), and not before the row's hardware exists (the earliest
# `first_release` of its families), minus later tags that dropped it.
FROM_REGISTRY = "from-registry"


def _registry_spans(upstream: Upstream) -> dict[str, list[tuple[str, FactLike | None]]]:
    """Registry key (`W8A8`, `310p:W8A8S`) → every extracted tag in version order, with its registration or None."""
    tags = upstream.extract_tags()
    per_tag = {tag: upstream.quantization_schemes(tag) for tag in tags}
    keys = sorted({k for schemes in per_tag.values() for k in schemes})
    return {k: [(tag, per_tag[tag].get(k)) for tag in tags] for k in keys}


def _registry_key(row: Mapping[str, Any], modelslim_type: str) -> str:
    return ("310p:" if list(row.get("hardware") or []) == ["300i-duo"] else "") + modelslim_type.upper()


def _quant_support(
    quant: dict[str, Any], spans: Mapping[str, list[tuple[str, FactLike | None]]], first_of: Mapping[str, str]
) -> list[str]:
    """Resolve `from-registry` ranges; an explicit range differs from the registry only with a recorded `decision`
    (e.g. a hardware family that gained the type later, or v0.7.3's MindIE Turbo quantizer)."""
    qtype = quant.get("modelslim_type")
    problems: list[str] = []
    for row in quant.get("support") or []:
        where = f"quantization {quant['id']} on {'/'.join(row.get('hardware') or [])}"
        problem = _quant_support_row(row, where, qtype, spans, first_of)
        if problem is not None:
            problems.append(problem)
    return problems


def _quant_support_row(
    row: dict[str, Any],
    where: str,
    qtype: str | None,
    spans: Mapping[str, list[tuple[str, FactLike | None]]],
    first_of: Mapping[str, str],
) -> str | None:
    """Resolve one support row's `from-registry` range in place; the problem with the row, or None."""
    if not qtype:
        return f"{where}: `from-registry` needs a modelslim_type" if row.get("releases") == FROM_REGISTRY else None
    key = _registry_key(row, qtype)
    span = spans.get(key) or spans.get(qtype.upper()) or []
    registered = [(tag, fact) for tag, fact in span if fact is not None]
    if not registered:
        return f"{where}: no extracted tag registers {key}"
    first_tag, first_fact = registered[0]
    if row.get("releases") == FROM_REGISTRY:
        start, why = _registry_start(row, key, first_tag, first_of)
        gaps = [tag for tag, fact in span if fact is None and parse(tag) > parse(start)]
        row["releases"] = ",".join([f">={start.lstrip('v')}", *(f"!={t.lstrip('v')}" for t in gaps)])
        row["source"] = f"{first_fact.source} ({why})"
        return None
    if not str(row.get("decision", "")).strip():
        return (
            f"{where}: range {row.get('releases')!r} is not `from-registry` (first registered: {first_tag}) "
            "and records no `decision`"
        )
    return None


def _registry_start(row: Mapping[str, Any], key: str, first_tag: str, first_of: Mapping[str, str]) -> tuple[str, str]:
    """(first tag, why) of a `from-registry` range: the first registering tag, or later its hardware's first release."""
    hardware_first = [first_of[h] for h in row.get("hardware") or [] if h in first_of]
    start, why = first_tag, f"first tag whose scheme registry has {key}"
    if hardware_first and parse(min(hardware_first, key=parse)) > parse(first_tag):
        start = min(hardware_first, key=parse)
        why += f"; {'/'.join(row['hardware'])} support starts at {start}"
    return start, why
