"""The tune grid: `--grid KEY=V1,V2 …` parsed, combined (the cartesian product), and ordered so that restarts are
fewest.

A KEY is either a benchmark setting (`BENCH_KEYS`: it changes the load sent, not the engine, so it needs no
restart) or a profile dotted path (an engine setting, applied like `--set KEY=V`: each distinct combination of
engine settings costs exactly one engine start). Values are split on the commas outside brackets, so a list
value stays one value: `--grid 'engine.graph.capture_sizes=[1,2,4],[1,2,4,8]'`.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace

from ascendctl.core.errors import UserInputError
from ascendctl.plan.workload import MAX_CONCURRENCY, WorkloadPoint
from ascendctl_engine.records import record

MAX_VALUES = 32  # values of one KEY
MAX_COMBINATIONS = 256  # trials of one tune (each is at least one benchmark run)


def _concurrency(text: str) -> int | None:
    if not text.isdecimal() or not 1 <= int(text) <= MAX_CONCURRENCY:
        raise ValueError(f"a whole number of requests in flight, 1 to {MAX_CONCURRENCY:,}")
    return int(text)


def _request_rate(text: str) -> float | None:
    if text.lower() in ("inf", "none"):
        return None  # as fast as the concurrency allows (the workload's default)
    try:
        rate = float(text)
    except ValueError:
        rate = math.nan
    if not (0 < rate <= 1e6):
        raise ValueError("requests per second, above 0 (or `inf`: as fast as the concurrency allows)")
    return rate


# The benchmark's own settings a grid may vary: name → (parser of one value, what the value means). Each
# replaces that field of every workload point (see `apply_bench`).
BENCH_KEYS: dict[str, Callable[[str], int | float | None]] = {
    "concurrency": _concurrency,
    "request_rate": _request_rate,
}


@record
class Axis:
    """One `--grid KEY=V1,V2`: the key and its values as typed."""

    key: str
    values: tuple[str, ...]

    @property
    def engine(self) -> bool:
        return self.key not in BENCH_KEYS


Assignment = tuple[tuple[str, str], ...]  # ((KEY, value as typed), …) in the grid's key order


def items(assignment: Assignment) -> list[str]:
    """`KEY=V` per setting, as `--set` takes them."""
    return [f"{k}={v}" for k, v in assignment]


def label(assignment: Assignment) -> str:
    return " ".join(items(assignment)) or "(as the profile says)"


@record
class TrialSpec:
    """One combination, in the order it runs: its engine settings (one engine start per distinct set) and its
    benchmark settings (run within that start)."""

    index: int  # 1-based, in run order
    engine: Assignment
    bench: Assignment
    restart: bool  # the first trial of its engine settings: the engine is (re)started for it

    @property
    def settings(self) -> Assignment:
        return self.engine + self.bench

    @property
    def label(self) -> str:
        return label(self.settings)


@record
class EngineGroup:
    """The trials that share one engine start."""

    engine: Assignment
    trials: tuple[TrialSpec, ...]


def split_values(text: str) -> list[str]:
    """`a,b,[1,2],{x: 1, y: 2}` → four values: commas inside brackets or braces belong to the value."""
    values: list[str] = []
    depth, start = 0, 0
    for i, ch in enumerate(text):
        if ch in "[{":
            depth += 1
        elif ch in "]}":
            depth = max(0, depth - 1)
        elif ch == "," and depth == 0:
            values.append(text[start:i].strip())
            start = i + 1
    values.append(text[start:].strip())
    return values


def parse_axis(text: str) -> Axis:
    key, sep, raw = text.partition("=")
    key = key.strip()
    if not sep or not key or not raw.strip():
        raise UserInputError(f"--grid {text}: expected KEY=V1,V2 (e.g. engine.scheduler.max_num_seqs=16,32)")
    if "." not in key and key not in BENCH_KEYS:
        raise UserInputError(
            f"--grid {text}: {key!r} is neither a benchmark setting ({', '.join(BENCH_KEYS)}) nor a profile "
            "dotted path (e.g. engine.scheduler.max_num_seqs)"
        )
    values = split_values(raw)
    if any(not v for v in values):
        raise UserInputError(f"--grid {text}: an empty value (two commas in a row, or one at an end)")
    seen = [v for i, v in enumerate(values) if v in values[:i]]
    if seen:
        raise UserInputError(f"--grid {text}: {seen[0]} is given twice")
    if len(values) > MAX_VALUES:
        raise UserInputError(f"--grid {text}: {len(values)} values; at most {MAX_VALUES} per key")
    parser = BENCH_KEYS.get(key)
    for value in values if parser is not None else ():
        try:
            parser(value)  # type: ignore[misc]  # mypy loses the narrowing inside the generator
        except ValueError as exc:
            raise UserInputError(f"--grid {key}={value}: {key} takes {exc}") from None
    return Axis(key, tuple(values))


def parse_grid(texts: Sequence[str]) -> tuple[Axis, ...]:
    """Every `--grid`, checked: known kind of key, no key twice, a bounded number of combinations."""
    if not texts:
        raise UserInputError("tune needs at least one --grid KEY=V1,V2 (or --suggest to see grids worth trying)")
    axes = tuple(parse_axis(t) for t in texts)
    keys = [a.key for a in axes]
    twice = [k for i, k in enumerate(keys) if k in keys[:i]]
    if twice:
        raise UserInputError(f"--grid {twice[0]}: the key is given twice; list every value in one --grid")
    total = math.prod(len(a.values) for a in axes)
    if total > MAX_COMBINATIONS:
        raise UserInputError(
            f"--grid: {total:,} combinations; at most {MAX_COMBINATIONS} per tune (fewer values, or several tunes)"
        )
    return axes


def _product(axes: Iterable[Axis]) -> list[Assignment]:
    chosen = list(axes)
    keys = [a.key for a in chosen]
    return [tuple(zip(keys, values, strict=True)) for values in itertools.product(*(a.values for a in chosen))]


def ordered(axes: Sequence[Axis]) -> tuple[EngineGroup, ...]:
    """Every combination once, grouped by engine settings: all benchmark settings of one engine setting run
    within its one start, so a tune starts the engine once per distinct engine setting, the fewest possible."""
    engine_sets = _product(a for a in axes if a.engine)
    bench_sets = _product(a for a in axes if not a.engine)
    groups: list[EngineGroup] = []
    index = 0
    for engine in engine_sets:
        trials: list[TrialSpec] = []
        for position, bench in enumerate(bench_sets):
            index += 1
            trials.append(TrialSpec(index, engine, bench, restart=position == 0))
        groups.append(EngineGroup(engine, tuple(trials)))
    return tuple(groups)


def apply_bench(point: WorkloadPoint, bench: Assignment) -> WorkloadPoint:
    """The workload point with the trial's benchmark settings. A point keeps its bounded request count, raised to
    one request per slot when the concurrency grows past it (every slot is used at least once)."""
    for key, text in bench:
        value = BENCH_KEYS[key](text)
        if key == "concurrency" and isinstance(value, int):
            point = replace(point, concurrency=value, requests=max(point.requests, value))
        elif key == "request_rate":
            point = replace(point, request_rate=value)
    return point


__all__ = [
    "BENCH_KEYS",
    "Assignment",
    "Axis",
    "EngineGroup",
    "TrialSpec",
    "apply_bench",
    "items",
    "label",
    "ordered",
    "parse_axis",
    "parse_grid",
    "split_values",
]
