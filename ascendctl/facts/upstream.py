"""Release facts drawn from upstream vllm-ascend: a reader over the checked-in extracts.

`scripts/extract_upstream.py` reads every release tag of vllm-project/vllm-ascend (and the PyPI-only post
release) and writes one JSON file per release into `ascendctl/facts/data/upstream/<tag>.json`. Every fact there is
`{"value": ..., "source": "TAG:path:line"}`. This module reads those files, lazily: a file is opened only when
a query names its tag (or, for `release_facts` and the `nearest_*` lookups, the tags it must look through),
and each file is parsed at most once per process.

Queries:

- `extract(tag)` the raw extract; `extract_tags()` every extracted release, in version order;
- `release_facts(tag)` every candidate value for the release fields of a matrix row, in precedence order;
- `images(tag)`, `unbuilt_images(tag)`, `quantization_schemes(tag)`, `quantization_cli_choice(tag)`;
- `tutorials(tag)` / `nearest_tutorials(tag)` (each page's title, served models and hardware phrases),
  `release_note_lines(tag)` (the bullets of the tag's own release-notes section);
- `model_table(tag)` / `nearest_model_table(tag)`, `feature_table(tag)` / `nearest_feature_table(tag)`,
  `feature_matrix(tag)` / `nearest_feature_matrix(tag)`.

Pure: stdlib + packaging, no network, no writes.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import field
from pathlib import Path
from typing import Any, cast

from packaging.version import InvalidVersion, Version

from ascendctl_engine.jsonio import read_json_resource
from ascendctl_engine.package_data import package_dir
from ascendctl_engine.records import record
from ascendctl_engine.versions import parse

DATA_PACKAGE = "ascendctl.facts"
DATA_FOLDER = "data/upstream"

# The release fields of a matrix row that `release_facts` gathers candidates for.
RELEASE_FIELDS: tuple[str, ...] = (
    "vllm",
    "python",
    "cann",
    "torch",
    "torch_npu",
    "triton_ascend",
    "mooncake",
    "mooncake_image",
    "mindie_turbo",
    "transformers",
    "base_image",
    "date",
)
# Policy-table columns that are release fields (the table names them the same way).
_POLICY_FIELDS = ("vllm", "python", "cann", "torch", "torch_npu", "triton_ascend", "mooncake", "mindie_turbo")
# Pins from the tag's own files that are release fields. `base_image` is read from the A2 `Dockerfile` only.
_PIN_FIELDS = ("vllm", "python", "cann", "torch", "torch_npu", "triton_ascend", "mooncake_image", "transformers")
# Within the tag's own files: Dockerfiles first (A2 `Dockerfile` before the others), then the Python
# package metadata in this order, then PyPI's JSON API (post release only); the README comes last.
_FILE_ORDER = ("Dockerfile", "requirements.txt", "pyproject.toml", "setup.py", "PKG-INFO")


class UpstreamMissing(LookupError):
    """No extract exists for the release asked about."""


@record
class Fact:
    """One upstream statement: a value and where it is written (`TAG:path:line`)."""

    value: Any
    source: str

    @property
    def tag(self) -> str:
        """The release whose files state it (the first part of `source`)."""
        return self.source.split(":", 1)[0]

    @property
    def path(self) -> str:
        """The file (for the PyPI post release: `PyPI:<sdist>:<path>` or `PyPI:<api>`)."""
        return self.source.split(":", 1)[1].rsplit(":", 1)[0]

    @property
    def line(self) -> int:
        """The 1-based line in `git show TAG:path` (or in the sdist file)."""
        return int(self.source.rsplit(":", 1)[1])


def _fact(data: Any) -> Fact:
    item = cast(Mapping[str, Any], data)
    return Fact(value=item["value"], source=str(item["source"]))


# ---------------------------------------------------------------------------------------------------------
# Loading.

_override: Path | None = None


def set_data_dir(path: Path | None) -> None:
    """Read extracts from `path` instead of the package data (None: back to the package data); clears caches."""
    global _override
    _override = path
    clear_cache()


def clear_cache() -> None:
    extract.cache_clear()
    extract_tags.cache_clear()
    model_table.cache_clear()
    feature_table.cache_clear()


def _root() -> Path:
    if _override is not None:
        return _override
    return package_dir(DATA_PACKAGE).joinpath(DATA_FOLDER)


def _strip_v(tag: str) -> str:
    return tag[1:] if tag[:1] in ("v", "V") and tag[1:2].isdigit() else tag


def _version(tag: str) -> Version:
    return parse(tag)


def _canonical_tag(tag: str) -> str:
    text = tag.strip()
    return text if text.startswith("v") else "v" + text


@functools.lru_cache(maxsize=1)
def extract_tags() -> tuple[str, ...]:
    """Every release with an extract, sorted by version (PEP 440, so `v0.23.0.post1` follows `v0.23.0`)."""
    root = _root()
    tags = []
    if root.is_dir():
        for entry in root.iterdir():
            name = entry.name
            if not name.endswith(".json"):
                continue
            tag = name[: -len(".json")]
            try:
                _version(tag)
            except InvalidVersion:
                continue
            tags.append(tag)
    return tuple(sorted(tags, key=_version))


@functools.cache
def extract(tag: str) -> dict[str, Any]:
    """The raw extract of one release (`v0.23.0`, `0.23.0` and `v0.23.0.post1` all work)."""
    name = _canonical_tag(tag)
    entry = _root().joinpath(f"{name}.json")
    if not entry.is_file():
        raise UpstreamMissing(f"no upstream extract for {name} (known: {', '.join(extract_tags()) or 'none'})")
    data = read_json_resource(entry)  # package data: the one JSON reader, without the depth pre-check
    if not isinstance(data, dict) or data.get("tag") != name:
        raise UpstreamMissing(f"{name}.json is not the extract of {name}")
    return cast(dict[str, Any], data)


# ---------------------------------------------------------------------------------------------------------
# Release facts.


def _dedupe_key(field_name: str, value: Any) -> str:
    text = re.sub(r"\s+", "", str(value)).lower()
    if field_name == "python":
        return ",".join(sorted(text.split(",")))
    return _strip_v(text)


def _is_version_like(value: Any) -> bool:
    return isinstance(value, str) and bool(re.match(r"^v?\d", value))


def _later_in_time(tag: str) -> list[str]:
    """The other extracted releases cut on or after `tag` (commit / upload date), nearest in time first.

    Earlier releases are left out: what their documents say about a release that did not exist yet is a
    plan (release windows list planned dates), not a fact about it.
    """
    own = str(extract(tag)["commit_date"]["value"])
    dated = []
    for other in extract_tags():
        if other == tag:
            continue
        when = str(extract(other)["commit_date"]["value"])
        if when >= own:
            dated.append((when, _version(other), other))
    return [other for _, _, other in sorted(dated)]


def _policy_facts(tag: str, source_tags: Iterable[str]) -> Iterator[tuple[str, Fact]]:
    for other in source_tags:
        for row in extract(other).get("policy_rows", []):
            value = row["value"]
            if value.get("release") != tag:
                continue
            for name in _POLICY_FIELDS:
                cell = value.get(name)
                for item in cell if isinstance(cell, list) else [cell]:
                    if item is not None:
                        yield name, Fact(item, row["source"])


def _file_rank(source: str) -> tuple[int, str]:
    path = Fact(None, source).path.rsplit(":", 1)[-1]
    if path == "Dockerfile":
        return 0, path
    if path.startswith("Dockerfile"):
        return 1, path
    if path in _FILE_ORDER:
        return 2 + _FILE_ORDER.index(path), path
    return 9, path


def _pin_facts(data: Mapping[str, Any]) -> Iterator[tuple[str, Fact]]:
    pins = cast(Mapping[str, list[Any]], data.get("pins", {}))
    readme: list[tuple[str, Fact]] = []
    own: list[tuple[tuple[int, str], int, str, Fact]] = []
    order = 0
    for name in _PIN_FIELDS:
        for item in pins.get(name, []):
            pin = _fact(item)
            if pin.value == "(unpinned)":
                continue
            value = _as_field_value(name, pin.value)
            if pin.path.endswith("README.md"):
                readme.append((name, Fact(value, pin.source)))
            else:
                own.append((_file_rank(pin.source), order, name, Fact(value, pin.source)))
            order += 1
    for item in pins.get("base_image", []):
        pin = _fact(item)
        if pin.path.rsplit(":", 1)[-1] == "Dockerfile":
            own.append(((0, "Dockerfile"), order, "base_image", pin))
            order += 1
    for _, _, name, pin in sorted(own, key=lambda entry: (entry[0], entry[1])):
        yield name, pin
    json_pins = cast(Mapping[str, list[Any]], data.get("pypi_json_pins", {}))
    for name in _PIN_FIELDS:
        for item in json_pins.get(name, []):
            pin = _fact(item)
            yield name, Fact(_as_field_value(name, pin.value), pin.source)
    yield from readme


def _as_field_value(name: str, value: Any) -> Any:
    """Matrix spelling: `transformers` is a specifier (`==5.14.1`), version fields carry no `v` prefix."""
    text = str(value)
    if name == "transformers" and _is_version_like(text):
        return "==" + _strip_v(text)
    if name in ("vllm", "mooncake", "mooncake_image"):
        return _strip_v(text)
    return value


def release_facts(tag: str) -> dict[str, list[Fact]]:
    """Every candidate value for each release field of the matrix row of `tag`, best first.

    Precedence, per field (a later source adds a candidate only when its value differs from every earlier
    one; equal values, compared without spaces, case or a leading `v`, collapse to the first source):

    1. the tag's own versioning-policy row for itself;
    2. the policy rows for this release in the extracts of releases cut later (by commit date; the post
       release by its upload date), nearest in time first;
    3. the tag's own files: the A2 `Dockerfile`, the other Dockerfiles, requirements.txt, pyproject.toml,
       setup.py, PKG-INFO; then (post release) PyPI's JSON API;
    4. the README prerequisites.

    `date`: the release-notes heading of the tag's own notes, then the notes of releases cut later (nearest
    first), then the versioning policy's release-window rows (own, then later), then the tag's commit date
    (for the PyPI release: the upload date). `base_image` comes from the A2 `Dockerfile` only. A policy cell
    listing several versions (`v0.10.1/v0.10.1.1`) gives one candidate per version. `transformers`
    candidates are specifiers (`==5.5.4`, `>=4.57.4,<5`), like the matrix field.
    """
    name = _canonical_tag(tag)
    own = extract(name)
    others = _later_in_time(name)
    out: dict[str, list[Fact]] = {f: [] for f in RELEASE_FIELDS}
    seen: dict[str, set[str]] = {f: set() for f in RELEASE_FIELDS}

    def add(field_name: str, item: Fact) -> None:
        key = _dedupe_key(field_name, item.value)
        if key not in seen[field_name]:
            seen[field_name].add(key)
            out[field_name].append(item)

    for field_name, item in _policy_facts(name, [name, *others]):
        add(field_name, Fact(_as_field_value(field_name, item.value), item.source))
    for field_name, item in _pin_facts(own):
        add(field_name, item)
    for source_tag in [name, *others]:
        entry = extract(source_tag).get("release_notes", {}).get(name)
        if entry and entry["value"].get("date"):
            add("date", Fact(entry["value"]["date"], entry["source"]))
    for source_tag in [name, *others]:
        for row in extract(source_tag).get("release_window", []):
            if row["value"].get("release") == name:
                add("date", Fact(row["value"]["date"], row["source"]))
    commit_date = own.get("commit_date")
    if commit_date and commit_date.get("value"):
        add("date", _fact(commit_date))
    return out


# ---------------------------------------------------------------------------------------------------------
# Images and quantization.


def images(tag: str) -> dict[str, Fact]:
    """Image key (`a2`, `a2-openeuler`, `a3`, `300i-duo`, `950`, ...) -> the workflow line that builds it.

    The value is `{"dockerfile", "workflow", "tag_trigger"}`; `tag_trigger` says whether that workflow runs on
    a tag push (some tags only build images by manual dispatch). Dockerfiles no workflow builds are in
    `extract(tag)["dockerfiles_unbuilt"]`.
    """
    data = extract(tag)
    return {key: _fact(item) for key, item in sorted(data.get("images", {}).items())}


def unbuilt_images(tag: str) -> dict[str, Fact]:
    """Image key -> the root Dockerfile of the tag that no image workflow of the tag builds."""
    data = extract(tag)
    return {key: _fact(item) for key, item in sorted(data.get("dockerfiles_unbuilt", {}).items())}


def quantization_schemes(tag: str) -> dict[str, Fact]:
    """ModelSlim quant types the code registers at `tag`.

    Key: the type upper-cased (`W8A8_DYNAMIC`); types of the Atlas 300I (310P) registry are keyed
    `310p:<TYPE>` (`310p:W8A8SC`), separate from the general registry, since the two are distinct. Value:
    `{"type": as spelled in the code, "layers": [...], "scope": "all" | "310p", "registry": ...}` with
    `layers` the layer kinds registered (`linear`, `moe`, `attention`, or the code's own names); source: the
    first registration line.
    """
    out: dict[str, Fact] = {}
    layers: dict[str, list[str]] = {}
    for item in extract(tag).get("quantization_schemes", []):
        value = item["value"]
        key = ("310p:" if value.get("scope") == "310p" else "") + str(value["type"]).upper()
        if key not in out:
            layers[key] = []
            out[key] = Fact(
                {"type": value["type"], "layers": layers[key], "scope": value["scope"], "registry": value["registry"]},
                item["source"],
            )
        if value.get("layer") and value["layer"] not in layers[key]:
            layers[key].append(value["layer"])
    for values in layers.values():
        values.sort()
    return dict(sorted(out.items()))


def quantization_cli_choice(tag: str) -> Fact:
    """Whether the platform's parser hook adds `ascend` to `--quantization` (value `adds_ascend`, `hook`, ...)."""
    return _fact(extract(tag)["quantization_cli"])


# ---------------------------------------------------------------------------------------------------------
# Support tables.


@record
class ModelRow:
    name: str
    category: str  # the heading path it sits under ("Text-Only Language Models / Generative Models / ...")
    group: str  # the hardware tab it sits in ("A2/A3", "Atlas 300I DUO", ...), "" when the table has none
    status: str  # supported | experimental | untested | unsupported
    status_raw: str
    cells: Mapping[str, str]  # column -> yes | no | untested | experimental ("" for absent columns)
    cells_raw: Mapping[str, str]  # column -> raw text where it is not the plain symbol
    note: str
    hardware: str
    max_model_len: str
    issues: tuple[str, ...]
    source: str
    links: tuple[str, ...] = ()  # repository paths of the pages the row links (its tutorial)

    def cell(self, column: str) -> str:
        return self.cells.get(column, "")


@record
class ModelTable:
    tag: str
    path: str
    rows: tuple[ModelRow, ...]
    columns: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # "category | group" -> headers

    def find(self, name: str, group: str | None = None) -> list[ModelRow]:
        """Rows whose model name equals `name` (case-insensitive), optionally in one hardware group."""
        want = name.strip().lower()
        return [r for r in self.rows if r.name.lower() == want and (group is None or r.group == group)]


_CANONICAL = {"supported": "✅", "unsupported": "❌", "untested": "🟡", "experimental": "🔵"}
_CELL_SYMBOL = {"yes": "✅", "no": "❌", "untested": "🟡", "experimental": "🔵"}


@functools.cache
def model_table(tag: str) -> ModelTable | None:
    """The supported-models table(s) of `tag` itself (None when the tag has none)."""
    data = extract(tag).get("models")
    if not data:
        return None
    tables = [_fact(t) for t in data.get("tables", [])]
    rows = []
    for item in data.get("rows", []):
        value = item["value"]
        table = tables[value["table"]].value if value.get("table") is not None else {}
        status = value["status"]
        rows.append(
            ModelRow(
                name=value["name"],
                category=table.get("category", ""),
                group=table.get("group", ""),
                status=status,
                status_raw=value.get("status_raw", _CANONICAL.get(status, "")),
                cells=dict(value.get("cells", {})),
                cells_raw={
                    k: value.get("cells_raw", {}).get(k, _CELL_SYMBOL.get(v, ""))
                    for k, v in {**value.get("cells", {}), **value.get("cells_raw", {})}.items()
                },
                note=value.get("note", ""),
                hardware=value.get("hardware", ""),
                max_model_len=value.get("max_model_len", ""),
                issues=tuple(value.get("issues", [])),
                source=item["source"],
                links=tuple(value.get("links", [])),
            )
        )
    columns = {f"{t.value['category']} | {t.value['group']}": tuple(t.value["columns"]) for t in tables}
    return ModelTable(tag=extract(tag)["tag"], path=data["path"], rows=tuple(rows), columns=columns)


def _nearest(tag: str, getter: Any) -> tuple[str, Any] | None:
    me = _version(_canonical_tag(tag))
    for other in reversed(extract_tags()):
        if _version(other) <= me:
            found = getter(other)
            if found is not None:
                return other, found
    return None


def nearest_model_table(tag: str) -> tuple[str, ModelTable] | None:
    """The tag's own models table, else the one of the nearest earlier extracted tag that has one."""
    return cast("tuple[str, ModelTable] | None", _nearest(tag, model_table))


@record
class Tutorial:
    """One tutorial page of a tag: its title, the models its commands serve, the hardware phrases it uses."""

    path: str
    title: str
    models: tuple[str, ...]
    hardware: tuple[str, ...]
    source: str


@functools.cache
def tutorials(tag: str) -> tuple[Tutorial, ...]:
    """The tutorial pages of `tag` itself (empty when the extract has none)."""
    out = []
    for item in extract(tag).get("tutorials") or []:
        value = item["value"]
        out.append(
            Tutorial(value["path"], value["title"], tuple(value["models"]), tuple(value["hardware"]), item["source"])
        )
    return tuple(out)


def nearest_tutorials(tag: str) -> tuple[str, tuple[Tutorial, ...]] | None:
    """The tag's own tutorial pages, else those of the nearest earlier extracted tag that has any."""
    return cast("tuple[str, tuple[Tutorial, ...]] | None", _nearest(tag, lambda t: tutorials(t) or None))


def release_note_lines(tag: str) -> tuple[Fact, ...]:
    """The bullet lines of the tag's own release-notes section (what the release says it added or fixed)."""
    return tuple(_fact(item) for item in extract(tag).get("release_note_lines") or [])


@record
class FeatureRow:
    name: str
    status: str  # functional | experimental | wip | planned | deprecated | absent | "" (not stated)
    status_raw: str
    statuses: Mapping[str, str]  # every status column -> normalised status (old tables have V0/V1 columns)
    note: str
    issues: tuple[str, ...]
    source: str


@record
class FeatureTable:
    tag: str
    path: str
    status_columns: tuple[str, ...]
    rows: tuple[FeatureRow, ...]

    def find(self, name: str) -> FeatureRow | None:
        want = name.strip().lower()
        return next((r for r in self.rows if r.name.lower() == want), None)


@functools.cache
def feature_table(tag: str) -> FeatureTable | None:
    """The supported-features table of `tag` itself (None when the tag has none)."""
    data = extract(tag).get("features")
    if not data:
        return None
    rows = []
    for item in data.get("rows", []):
        value = item["value"]
        statuses = {k: v["status"] for k, v in value.get("statuses", {}).items()}
        rows.append(
            FeatureRow(
                name=value["name"],
                status=value["status"],
                status_raw=value.get("status_raw", ""),
                statuses=statuses,
                note=value.get("note", ""),
                issues=tuple(value.get("issues", [])),
                source=item["source"],
            )
        )
    return FeatureTable(
        tag=extract(tag)["tag"],
        path=data["path"],
        status_columns=tuple(data.get("status_columns", [])),
        rows=tuple(rows),
    )


def nearest_feature_table(tag: str) -> tuple[str, FeatureTable] | None:
    """The tag's own features table, else the one of the nearest earlier extracted tag that has one."""
    return cast("tuple[str, FeatureTable] | None", _nearest(tag, feature_table))


@record
class FeatureMatrixRow:
    name: str
    cells: Mapping[str, str]  # column feature -> full | partial | none | unknown (absent: blank cell)
    cells_raw: Mapping[str, str]
    source: str


@record
class FeatureMatrix:
    tag: str
    path: str
    columns: tuple[str, ...]
    rows: tuple[FeatureMatrixRow, ...]
    footnotes: Mapping[str, Fact]

    def cell(self, a: str, b: str) -> str:
        """The compatibility of two features, whichever of them is the row (the table is a triangle)."""
        for row_name, column in ((a, b), (b, a)):
            row = next((r for r in self.rows if r.name.lower() == row_name.lower()), None)
            if row is not None:
                for key, value in row.cells.items():
                    if key.lower() == column.lower():
                        return value
        return ""


def feature_matrix(tag: str) -> FeatureMatrix | None:
    """The feature x feature compatibility table of `tag` (from v0.20.2rc1 on; None before)."""
    data = extract(tag).get("feature_matrix")
    if not data:
        return None
    rows = tuple(
        FeatureMatrixRow(
            name=item["value"]["name"],
            cells=dict(item["value"].get("cells", {})),
            cells_raw=dict(item["value"].get("cells_raw", {})),
            source=item["source"],
        )
        for item in data.get("rows", [])
    )
    footnotes = {key: _fact(item) for key, item in data.get("footnotes", {}).items()}
    return FeatureMatrix(
        tag=extract(tag)["tag"], path=data["path"], columns=tuple(data["columns"]), rows=rows, footnotes=footnotes
    )


def nearest_feature_matrix(tag: str) -> tuple[str, FeatureMatrix] | None:
    return cast("tuple[str, FeatureMatrix] | None", _nearest(tag, feature_matrix))
