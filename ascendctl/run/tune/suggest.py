"""`ascendctl tune PROFILE --suggest`: grids worth trying for the profile's backend and release.

Nothing here knows a version: every candidate value is planned with the profile (like `--set KEY=V`, pure planning,
no host) and kept only when the plan accepts it and resolves the typed setting to that value. So a graph mode shows
up only where the release's graph era plans it (the CPU engine captures no graphs: its era plans every capturing
mode as the engine default), capture sizes only where a capturing mode is planned, and an `engine.ascend` switch only
where the release reads it (asked from the switch's era: `ascend_switches.spelling_for`) and turning it on plans.
A grid with fewer than two accepted values is not a search and is left out.

Only what applies to the model is offered: a switch that only MoE or MLA layers read (`Switch.models`) is left out
for a dense model. Where upstream's closest verified launch of the model (`Upstream`: `ascendctl.init.recipe`) sets
a grid's key, its value is tried first and the grid says so.
"""

from __future__ import annotations

import typing
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ascendctl.core.errors import UserInputError
from ascendctl.plan.types import EngineSettings, Plan
from ascendctl.schema.profile import Profile
from ascendctl_engine.adapters.ascend_switches import SWITCHES, spelling_for
from ascendctl_engine.records import record
from ascendctl_engine.vocab import GraphMode

# What an engine setting is probed with: the dotted path, and a function of the current resolved value giving the
# candidates (around the current value: half, same, double — or common starting points when the engine decides).
_AROUND = (0.5, 1.0, 2.0)
_CAPTURING = ("eager", "default", "auto")  # resolved graph modes that capture nothing the profile sizes
_META_MODES = ("auto", "engine-default")  # modes that name no graph mode of their own


@record
class SuggestedGrid:
    key: str
    values: tuple[str, ...]
    why: str

    @property
    def text(self) -> str:
        return f"{self.key}={','.join(self.values)}"

    def to_json(self) -> dict[str, Any]:
        return {"key": self.key, "values": list(self.values), "grid": self.text, "why": self.why, "restart": True}


Probe = Callable[[Sequence[str]], Plan | None]  # plans the profile with `--set` items; None when refused


@record
class Upstream:
    """What upstream's closest verified launch of the model sets, by dotted profile path, and where it is."""

    source: str  # tag:path:line
    values: Mapping[str, Any]

    def first(self, key: str, values: Sequence[str]) -> list[str]:
        """`values` with the launch's value for `key` first (added when it is not among them)."""
        if key not in self.values:
            return list(values)
        theirs = _text(self.values[key])
        return [theirs, *(v for v in values if v != theirs)]

    def why(self, key: str) -> str:
        if key not in self.values:
            return ""
        return f"; upstream's verified launch uses {_text(self.values[key])} ({self.source})"


NO_UPSTREAM = Upstream("", {})


def _text(value: Any) -> str:
    """A value as `--set`/`--grid` write it (`true`, `[1,2,4]`, `0.9`)."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(map(str, value)) + "]"
    return str(value)


def _settings(plan: Plan) -> EngineSettings:
    return plan.instances[0].settings


def _whole(values: Sequence[float]) -> list[str]:
    return list(dict.fromkeys(str(int(v)) for v in values if v >= 1))


def _batch_values(current: Any, defaults: Sequence[int]) -> list[str]:
    if isinstance(current, int) and current > 0:
        return _whole([current * f for f in _AROUND])
    return [str(v) for v in defaults]


def _same(resolved: Any, asked: str) -> bool:
    """Whether the plan resolved the setting to the value asked for (`3` and `3.0` are the same GiB)."""
    if isinstance(resolved, (int, float)) and not isinstance(resolved, bool):
        try:
            return float(asked) == float(resolved)
        except ValueError:
            return False
    return str(resolved).lower() == asked.lower()


def _kept(probe: Probe, key: str, values: Sequence[str], attr: str | None) -> tuple[str, ...]:
    """The values whose plan is accepted (and resolves `attr`, a typed setting, to the value asked for)."""
    kept: list[str] = []
    for value in values:
        plan = probe([f"{key}={value}"])
        if plan is None:
            continue
        if attr is not None and not _same(getattr(_settings(plan), attr).value, value):
            continue
        kept.append(value)
    return tuple(kept)


def _grid(probe: Probe, up: Upstream, key: str, values: Sequence[str], attr: str | None, why: str) -> SuggestedGrid:
    """A grid over `values` (upstream's value first) kept to what plans."""
    return SuggestedGrid(key, _kept(probe, key, up.first(key, values), attr), why + up.why(key))


def _limits(plan: Plan, probe: Probe, up: Upstream) -> list[SuggestedGrid]:
    s = _settings(plan)
    seqs = _batch_values(s.max_num_seqs.value, (64, 128, 256))
    tokens = _batch_values(s.max_num_batched_tokens.value, (2048, 4096, 8192))
    out = [
        _grid(
            probe,
            up,
            "engine.scheduler.max_num_seqs",
            seqs,
            "max_num_seqs",
            "requests batched together: more raises throughput until the KV cache or the step time limits it",
        ),
        _grid(
            probe,
            up,
            "engine.scheduler.max_num_batched_tokens",
            tokens,
            "max_num_batched_tokens",
            "tokens per scheduler step (chunked prefill): larger favours throughput and TTFT, smaller TPOT",
        ),
    ]
    if plan.deployment.backend == "cpu":
        gib = s.cpu_kv_cache_gib.value if isinstance(s.cpu_kv_cache_gib.value, (int, float)) else 4
        values = _whole([gib * f for f in _AROUND])
        out.append(
            SuggestedGrid(
                "engine.memory.cpu_kv_cache_gib",
                _kept(probe, "engine.memory.cpu_kv_cache_gib", values, "cpu_kv_cache_gib"),
                "the CPU engine's KV cache: room for more sequences in flight, at the cost of host memory",
            )
        )
    else:
        out.append(
            _grid(
                probe,
                up,
                "engine.memory.device_utilization",
                ["0.85", "0.9", "0.95"],
                "device_utilization",
                "the device memory share vLLM takes (the rest of it is the KV cache): higher, more sequences fit",
            )
        )
    return out


def _graphs(probe: Probe, up: Upstream) -> list[SuggestedGrid]:
    modes = [m for m in typing.get_args(GraphMode) if m not in _META_MODES]
    mode = _grid(probe, up, "engine.graph.mode", modes, "graph_mode", "graph capture: lower TPOT once captured, "
                 "slower start")  # fmt: skip
    out = [mode]
    capturing = [m for m in mode.values if m not in _CAPTURING]
    if capturing:
        key = "engine.graph.capture_sizes"
        sizes = up.first(key, ["[1,2,4,8,16,32]", "[1,2,4,8,16,32,64,128]"])
        planned = [v for v in sizes if probe([f"engine.graph.mode={capturing[0]}", f"{key}={v}"])]
        out.append(
            SuggestedGrid(
                key,
                tuple(planned),
                f"batch sizes captured as graphs (with a capturing mode such as {capturing[0]}): cover the "
                "batch sizes the load reaches" + up.why(key),
            )
        )
    return out


def _switches(plan: Plan, probe: Probe, up: Upstream) -> list[SuggestedGrid]:
    release = plan.deployment.release
    if plan.deployment.backend != "npu" or release.vllm_ascend is None:
        return []
    out: list[SuggestedGrid] = []
    for sw in SWITCHES:
        if sw.off_model(plan.deployment.model.arch) is not None:
            continue  # read by other models' layers only
        spelling, shown = spelling_for(sw, release.vllm_ascend)
        if spelling.status != "read" or probe([f"{sw.path}=true"]) is None:
            continue
        values = up.first(sw.path, ["false", "true"])
        out.append(
            SuggestedGrid(sw.path, tuple(values), f"{sw.title}: `{shown}` in {release.version}" + up.why(sw.path))
        )
    return out


def suggest_grids(plan: Plan, probe: Probe, upstream: Upstream = NO_UPSTREAM) -> list[SuggestedGrid]:
    """Grids for the planned profile; `probe` plans it with extra `--set` items (None when refused); `upstream`:
    what the closest verified launch sets, tried first."""
    grids = [*_limits(plan, probe, upstream), *_graphs(probe, upstream), *_switches(plan, probe, upstream)]
    return [g for g in grids if len(g.values) >= 2]


def prober(load: Callable[[Sequence[str]], Profile], plan: Callable[[Profile], Plan]) -> Probe:
    """A `Probe` from a profile loader (with `--set` items) and a planner that raises when it cannot start."""

    def probe(items: Sequence[str]) -> Plan | None:
        try:
            planned = plan(load(items))
        except UserInputError:
            return None
        if planned.fit is not None and planned.fit.verdict == "does-not-fit":
            return None
        return planned

    return probe


__all__ = ["NO_UPSTREAM", "SuggestedGrid", "Upstream", "prober", "suggest_grids"]
