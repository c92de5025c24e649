"""vLLM's model registry as data: what a Hugging Face architecture name is (MoE / MLA / multimodal / pooling /
hybrid), per pinned vLLM version.

`scripts/extract_architectures.py` (a maintainer script, run by hand) reads the registry of every vLLM version the
support matrix pins, from the vLLM sdists, and the architectures vllm-ascend registers itself, per tag, and writes
`ascendctl/facts/data/architectures.json`: per architecture, spans of versions with identical traits, each citing
its registry line (`tag:path:line`). This module reads that file once per process.

`architecture_traits(arch, vllm, vllm_ascend)` answers for one version, in this order:
1. the vLLM span holding `vllm` (a version recorded as not read, such as 0.11.0rc3, which PyPI does not publish, is
   looked up as the version its decision names, with a note);
2. the vllm-ascend span holding the tag `vllm_ascend` (or, without a tag, a tag pinned to `vllm`): architectures
   the plugin registers that vLLM's registry lacks at that version;
3. the nearest span (the latest one ending before the version, else the first), vLLM's before vllm-ascend's, with
   a note saying which versions it comes from.
Without a version (`vllm` None): the newest span. Unknown architecture: None. Versions are compared with
`ascendctl_engine.versions.parse`.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from packaging.version import Version

from ascendctl_engine.jsonio import read_json_resource
from ascendctl_engine.package_data import package_dir
from ascendctl_engine.records import record
from ascendctl_engine.versions import parse, parse_or_none
from ascendctl_engine.vocab import ModelArch

DATA = "data/architectures.json"
Origin = Literal["vLLM", "vllm-ascend"]


@record
class ArchitectureTraits:
    """One architecture at one version, as vLLM's registry (or vllm-ascend's registration) says."""

    architecture: str
    moe: bool
    mla: bool
    multimodal: bool
    pooling: bool
    hybrid: bool
    origin: Origin
    first: str  # the span of versions (vLLM) or tags (vllm-ascend) these traits hold for
    last: str
    model: str  # module:Class as registered
    source: str  # tag:path:line of the registry entry (the span's first version)
    note: str | None = None  # set when the answer is not the asked version's own

    @property
    def arch(self) -> ModelArch:
        """mla > moe > dense."""
        return "mla" if self.mla else ("moe" if self.moe else "dense")

    def cite(self) -> str:
        """`vLLM 0.10.2 registry: vllm/model_executor/models/registry.py:81` (the span's first version)."""
        tag, _, where = self.source.partition(":")
        if self.origin == "vLLM":
            return f"vLLM {tag.removeprefix('v')} registry: {where}"
        return f"vllm-ascend {tag} registration: {where}"


@record
class _Span:
    origin: Origin
    first: Version
    last: Version
    data: Mapping[str, Any]

    def holds(self, version: Version) -> bool:
        return self.first <= version <= self.last


@record
class _Table:
    entries: Mapping[str, Mapping[str, Any]]  # architecture → {"vllm": [spans], "vllm_ascend": [spans]}, as stored
    decisions: Mapping[str, Mapping[str, str]]  # version → what was decided (e.g. `use`)
    tags: Mapping[str, str]  # vllm-ascend tag → its vLLM pin
    versions: tuple[str, ...]  # the vLLM versions read, in version order


def _spans(origin: Origin, items: Sequence[Mapping[str, Any]]) -> tuple[_Span, ...]:
    return tuple(sorted((_Span(origin, parse(s["from"]), parse(s["to"]), s) for s in items), key=lambda s: s.first))


@functools.cache
def _table() -> _Table:
    data = read_json_resource(package_dir("ascendctl.facts").joinpath(DATA))  # package data: the one JSON reader
    decisions = {d["version"]: d for d in data["decisions"]}
    return _Table(data["architectures"], decisions, dict(data["vllm_ascend_tags"]), tuple(data["vllm_versions"]))


@functools.lru_cache(maxsize=256)
def _arch_spans(arch: str) -> tuple[tuple[_Span, ...], tuple[_Span, ...]] | None:
    """(vLLM spans, vllm-ascend spans) of one architecture, versions parsed on first use; None when unknown."""
    entry = _table().entries.get(arch)
    if entry is None:
        return None
    return _spans("vLLM", entry.get("vllm", [])), _spans("vllm-ascend", entry.get("vllm_ascend", []))


def known_versions() -> tuple[str, ...]:
    """The vLLM versions whose registry the data was read from, in version order."""
    return _table().versions


def _traits(arch: str, span: _Span, note: str | None) -> ArchitectureTraits:
    d = span.data
    return ArchitectureTraits(
        architecture=arch,
        moe=bool(d["moe"]),
        mla=bool(d["mla"]),
        multimodal=bool(d["multimodal"]),
        pooling=bool(d["pooling"]),
        hybrid=bool(d["hybrid"]),
        origin=span.origin,
        first=str(d["from"]),
        last=str(d["to"]),
        model=str(d["model"]),
        source=str(d["source"]),
        note=note,
    )


def _nearest(spans: Sequence[_Span], version: Version) -> _Span:
    """The latest span ending before `version`, else the first one (`spans` is sorted and not empty)."""
    earlier = [s for s in spans if s.last < version]
    return earlier[-1] if earlier else spans[0]


def _effective(table: _Table, vllm: str) -> tuple[Version | None, str | None]:
    """The version to look up for `vllm` (a recorded decision's `use` for a version not read), and the note."""
    decision = table.decisions.get(vllm) or table.decisions.get(vllm.removeprefix("v"))
    if decision is not None and decision.get("use"):
        why = str(decision.get("decision", "not read")).split(" (")[0].split(":")[0]
        return parse_or_none(decision["use"]), f"vLLM {vllm} was not read ({why}): looked up as {decision['use']}"
    return parse_or_none(vllm), None


def _tag_span(table: _Table, spans: Sequence[_Span], vllm: Version | None, tag: str | None) -> _Span | None:
    """The vllm-ascend span holding `tag`, or (no tag) holding a tag pinned to `vllm`."""
    if tag:
        wanted = [parse_or_none(tag)]
    else:
        wanted = [parse(t) for t, pin in table.tags.items() if vllm is not None and parse_or_none(pin) == vllm]
    for span in spans:
        if any(t is not None and span.holds(t) for t in wanted):
            return span
    return None


def _gap_note(table: _Table, arch: str, span: _Span, vllm: str, version: Version) -> str:
    """Why the answer is another version's."""
    first, last = span.data["from"], span.data["to"]
    if span.origin == "vllm-ascend":
        return f"{arch} is registered only by vllm-ascend {first}–{last}, not for vLLM {vllm}: those tags' traits"
    newest = table.versions[-1] if table.versions else None
    if newest is not None and version > parse(newest):
        return f"vLLM {vllm} is newer than the registries read (up to {newest}): traits of vLLM {first}–{last}"
    return f"{arch} is not in vLLM {vllm}'s registry: traits of vLLM {first}–{last}"


def architecture_traits(arch: str, vllm: str | None, vllm_ascend: str | None = None) -> ArchitectureTraits | None:
    """The traits of `arch` at vLLM `vllm` (and vllm-ascend tag `vllm_ascend`, for the plugin's own
    registrations); the order is the module docstring's. None when neither registry knows the name."""
    table = _table()
    found = _arch_spans(arch)
    if found is None:
        return None
    upstream, plugin = found
    newest = (upstream or plugin)[-1]
    if vllm is None:
        return _traits(arch, newest, None)
    version, note = _effective(table, vllm)
    if version is None:
        return _traits(arch, newest, f"vLLM {vllm!r} is not a version: the newest registry entry")
    exact = next((s for s in upstream if s.holds(version)), None)
    exact = exact or _tag_span(table, plugin, parse_or_none(vllm), vllm_ascend)
    if exact is not None:
        return _traits(arch, exact, note)
    span = _nearest(upstream or plugin, version)
    gap = _gap_note(table, arch, span, vllm, version)
    return _traits(arch, span, f"{note}; {gap}" if note else gap)
