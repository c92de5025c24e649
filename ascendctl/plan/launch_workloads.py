"""`--workload launch:CASE[@TAG[/HARDWARE]]`: the load upstream's nightly CI measures a launch with, as a workload.

vllm-ascend's CI benchmarks its performance launches with AISBench; `ascendctl.facts.launches` keeps each launch's
entries (`benchmarks.performance`: dataset, input length read from the dataset's name, `max_out_len`,
`num_prompts`, `batch_size` = the client's concurrency, `request_rate`, 0 = unpaced). Every measured entry becomes
one point; warm-ups (`warm_up`, `*_warmup`, upstream's `perf_wram_up`) only prepare the engine and are skipped.
Entries that differ only in their dataset (`prefix0` and `prefix75` of one length) are the same load with random
prompts: the workload keeps one point of them.

Which launches: the case's at TAG (default: the newest tag where the case has a measured entry), on HARDWARE when
given. The same case on several hardware families with different workloads needs HARDWARE, as the numbers differ
by machine. The same case twice on one hardware family (a nightly and a weekly config) contributes both launches'
points, once each; a launch whose entries are the dataset's real text (no input length in its name) cannot be
replayed with random prompts and is left out, an error when nothing else is left.

The prompts are random token ids of the same lengths, not the dataset's text, and the engine is the operator's, so
the workload carries a caveat: its numbers are not comparable to upstream's.

This module reads the launches (`read_launch_load`); `ascendctl.plan.workload` turns what it read into a `Workload`,
held to the bounds every workload is (this module imports no workload code, so the one entry point imports it).
"""

from __future__ import annotations

import difflib
import functools
import re
from collections.abc import Mapping, Sequence
from typing import Any

from ascendctl.core.errors import UserInputError
from ascendctl.facts.launches import Launch, content_of, launch_index, tag_distance
from ascendctl_engine.records import record
from ascendctl_engine.versions import parse as parse_version
from ascendctl_engine.versions import parse_or_none, same_release

# `--workload launch:CASE[@TAG[/HARDWARE]]`
LAUNCH_PREFIX = "launch:"
# warm-up entries by name: `warm_up`, `perf_short_warmup`, and the misspelt `perf_wram_up` upstream ships
_WARM_UP = re.compile(r"w(?:ar|ra)m", re.IGNORECASE)
# a dataset whose prompts share a prefix says so in its name (`GSM8K_prefix90_in32768_...`): random prompts share
# none, so prefix caching helps upstream's run and not this one
_SHARED_PREFIX = re.compile(r"prefix(\d{1,3})", re.IGNORECASE)
# why a case can have no measured entry (said with the error)
_WHY = " (upstream runs it for accuracy only, without a performance benchmark, or only warms up)"
SUGGESTIONS = 3  # close case names offered for an unknown one
TAGS_SHOWN = 5  # tags named when the asked one has no launch of the case


@record
class LaunchSpec:
    """`launch:CASE[@TAG[/HARDWARE]]` as given (tag and hardware None when not named)."""

    case: str
    tag: str | None = None
    hardware: str | None = None


@record
class Entry:
    """One measured performance entry of a launch."""

    launch: Launch
    dataset: str
    input_len: int | None  # None: the dataset's real text, no length in its name
    output_len: int
    concurrency: int
    requests: int
    request_rate: float | None  # None: as fast as concurrency allows (upstream writes 0 or nothing)


@record
class MeasuredPoint:
    """One measured entry that random prompts can replay: its shape, and where it comes from (for errors)."""

    input_len: int
    output_len: int
    concurrency: int
    requests: int
    request_rate: float | None
    dataset: str
    source: str  # the launch's `tag:file:line`


@record
class LaunchLoad:
    """What `launch:...` names: the measured points in upstream's order, and the workload's texts."""

    name: str  # `launch:CASE@TAG` (`/HARDWARE` when given): names the same load again
    points: tuple[MeasuredPoint, ...]
    description: str
    source: str
    caveat: str


def read_launch_load(text: str) -> LaunchLoad:
    """The load `--workload launch:...` names (see the module docstring); a one-line `UserInputError` when the
    launch is unknown, measures nothing, or cannot be replayed with random prompts."""
    spec = parse_spec(text, launch_index())
    launches = _case_launches(text, spec)
    tag = _tag(text, spec, launches)
    at_tag = [launch for launch in launches if launch.tag == tag]
    measured = {launch: _measured(launch) for launch in at_tag}
    chosen = _one_hardware(text, spec, tag, {k: v for k, v in measured.items() if v})
    entries = _replayable(text, chosen)
    hardware = f"/{spec.hardware}" if spec.hardware else ""
    return LaunchLoad(
        name=f"{LAUNCH_PREFIX}{spec.case}@{tag}{hardware}",
        points=tuple(_point(entry) for entry in entries),
        description=_description(spec.case, tag, entries),
        source=_source(entries),
        caveat=_caveat(entries),
    )


# ------------------------------------------------------------------------------------------------ the spec


def parse_spec(text: str, launches: Sequence[Launch]) -> LaunchSpec:
    """`launch:CASE@TAG/HARDWARE` split; without `@TAG`, `CASE/HARDWARE` only where CASE is no case itself (one
    case has a `/` in its name)."""
    body = text.removeprefix(LAUNCH_PREFIX).strip()
    if "@" in body:
        case, _, at = body.rpartition("@")
        tag, slash, hardware = at.partition("/")
        if not case or not tag or (slash and not hardware):
            raise UserInputError(f"--workload {text}: expected {LAUNCH_PREFIX}CASE[@TAG[/HARDWARE]]")
        return LaunchSpec(case, tag, hardware.lower() or None)
    if not body:
        raise UserInputError(f"--workload {text}: expected {LAUNCH_PREFIX}CASE[@TAG[/HARDWARE]]")
    case, _, hardware = body.rpartition("/")
    if case and hardware.lower() in {launch.hardware for launch in launches} and body not in _cases(launches):
        return LaunchSpec(case, None, hardware.lower())
    return LaunchSpec(body)


def _cases(launches: Sequence[Launch]) -> set[str]:
    return {launch.case for launch in launches}


def _case_launches(text: str, spec: LaunchSpec) -> list[Launch]:
    """The case's launches (on the named hardware); an unknown case offers the closest names."""
    every = launch_index()
    launches = [launch for launch in every if launch.case == spec.case]
    if not launches:
        close = difflib.get_close_matches(spec.case, sorted(_cases(every)), n=SUGGESTIONS)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise UserInputError(f"--workload {text}: no upstream CI launch has the case {spec.case!r}{hint}")
    if spec.hardware is None:
        return launches
    on_hardware = [launch for launch in launches if launch.hardware == spec.hardware]
    if not on_hardware:
        runs_on = ", ".join(sorted({launch.hardware for launch in launches}))
        raise UserInputError(f"--workload {text}: {spec.case} runs on {runs_on}, not {spec.hardware}")
    return on_hardware


# ------------------------------------------------------------------------------------------------ which launches


@functools.cache  # every tag of a case is looked at to find the newest measured one
def _measured(launch: Launch) -> tuple[Entry, ...]:
    """The launch's measured performance entries, warm-ups left out."""
    raw: Sequence[Mapping[str, Any]] = (content_of(launch).get("benchmarks") or {}).get("performance") or ()
    return tuple(_entry(launch, item) for item in raw if not _WARM_UP.search(str(item.get("name", ""))))


def _entry(launch: Launch, item: Mapping[str, Any]) -> Entry:
    rate = item.get("request_rate")
    return Entry(
        launch=launch,
        dataset=str(item["dataset"]),
        input_len=item.get("input_len"),
        output_len=int(item["max_out_len"]),
        concurrency=int(item["batch_size"]),
        requests=int(item["num_prompts"]),
        request_rate=float(rate) if rate else None,  # AISBench's 0 (or none) is unpaced
    )


def _tag(text: str, spec: LaunchSpec, launches: Sequence[Launch]) -> str:
    """The asked tag as the data spells it, else the newest tag where the case has a measured entry."""
    tags = sorted({launch.tag for launch in launches}, key=parse_version, reverse=True)
    measured = [tag for tag in tags if any(_measured(launch) for launch in launches if launch.tag == tag)]
    if spec.tag is None:
        if not measured:
            raise UserInputError(f"--workload {text}: {spec.case} has no measured performance entry at any tag{_WHY}")
        return measured[0]
    same = next((tag for tag in tags if same_release(spec.tag, tag)), None)
    if same is None:
        raise UserInputError(
            f"--workload {text}: {spec.case} has no launch at {spec.tag}; {_tags_hint(spec.tag, tags)}"
        )
    if same not in measured:
        elsewhere = f"; it has one at {', '.join(measured[:TAGS_SHOWN])}" if measured else ""
        raise UserInputError(
            f"--workload {text}: {spec.case} has no measured performance entry at {same}{_WHY}{elsewhere}"
        )
    return same


def _tags_hint(asked: str, tags: Sequence[str]) -> str:
    """The case's tags, nearest the asked one first when it is a version (else newest first)."""
    if parse_or_none(asked) is not None:
        tags = sorted(tags, key=lambda tag: abs(tag_distance(tag, asked)))
    more = f" (+{len(tags) - TAGS_SHOWN} more)" if len(tags) > TAGS_SHOWN else ""
    return f"it has launches at {', '.join(tags[:TAGS_SHOWN])}{more}"


def _one_hardware(
    text: str, spec: LaunchSpec, tag: str, measured: Mapping[Launch, tuple[Entry, ...]]
) -> Mapping[Launch, tuple[Entry, ...]]:
    """The measuring launches, when they are one hardware family's or all measure the same shapes; else the
    hardware has to be named (upstream sizes the load to each machine: taking one, or both, would be a guess)."""
    shapes: dict[str, set[tuple[object, ...]]] = {launch.hardware: set() for launch in measured}
    for launch, entries in measured.items():
        shapes[launch.hardware] |= {_shape(entry) for entry in entries}
    if len(shapes) > 1 and len({frozenset(s) for s in shapes.values()}) > 1:
        choices = " or ".join(f"{LAUNCH_PREFIX}{spec.case}@{tag}/{hardware}" for hardware in sorted(shapes))
        raise UserInputError(
            f"--workload {text}: {spec.case} at {tag} measures different workloads on {', '.join(sorted(shapes))}; "
            f"name one: {choices}"
        )
    return measured


def _shape(entry: Entry) -> tuple[object, ...]:
    return (entry.dataset, entry.input_len, entry.output_len, entry.concurrency, entry.requests, entry.request_rate)


def _replayable(text: str, measured: Mapping[Launch, tuple[Entry, ...]]) -> list[Entry]:
    """The entries of the launches whose every entry has an input length; an error when no launch has."""
    kept = [entries for entries in measured.values() if all(entry.input_len is not None for entry in entries)]
    if not kept:
        dataset = next(entry.dataset for entries in measured.values() for entry in entries if entry.input_len is None)
        raise UserInputError(
            f"--workload {text}: upstream measures it with the dataset {dataset}, whose name gives no input "
            "length: real dataset text cannot be reproduced with random prompts"
        )
    return [entry for entries in kept for entry in entries]


# ------------------------------------------------------------------------------------------------ the load


def _point(entry: Entry) -> MeasuredPoint:
    assert entry.input_len is not None  # `_replayable` kept only entries with one
    return MeasuredPoint(
        entry.input_len,
        entry.output_len,
        entry.concurrency,
        entry.requests,
        entry.request_rate,
        entry.dataset,
        entry.launch.source,
    )


def _unique(values: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(values))


def _description(case: str, tag: str, entries: Sequence[Entry]) -> str:
    hardware = ", ".join(_unique([entry.launch.hardware for entry in entries]))
    inputs = "; ".join(
        f"input {length:,} tokens read from the dataset name {dataset}"
        for dataset, length in dict.fromkeys((entry.dataset, entry.input_len) for entry in entries)
    )
    return (
        f"upstream CI's measured load of {case} at {tag} on {hardware}: {inputs}; "
        "random prompts, not the dataset's text"
    )


def _source(entries: Sequence[Entry]) -> str:
    """Each launch's `tag:file:line` with the datasets it measures."""
    datasets: dict[str, list[str]] = {}
    for entry in entries:
        datasets.setdefault(entry.launch.source, []).append(entry.dataset)
    return "; ".join(f"{source} ({', '.join(_unique(names))})" for source, names in datasets.items())


def _caveat(entries: Sequence[Entry]) -> str:
    launches = _unique([f"{entry.launch.model} on {entry.launch.layout}" for entry in entries])
    tag = entries[0].launch.tag
    said = (
        f"Not comparable to upstream's absolute numbers: upstream measured {'; '.join(launches)} with "
        f"vllm-ascend {tag} and the dataset's own prompts; this run sends random prompts of the same lengths to "
        "this deployment (its own hardware, model and release)."
    )
    shared = sorted({int(m[1]) for entry in entries if (m := _SHARED_PREFIX.search(entry.dataset)) and int(m[1])})
    if shared:
        percent = " / ".join(f"{share}%" for share in shared)
        said += (
            f" The dataset's prompts share a {percent} prefix; random prompts share none, so prefix caching gains "
            "are absent."
        )
    return said


__all__ = ["LAUNCH_PREFIX", "Entry", "LaunchLoad", "LaunchSpec", "MeasuredPoint", "parse_spec", "read_launch_load"]
