"""Which upstream launches `ascendctl init` starts from, best first.

A launch upstream's CI runs on hardware (`ascendctl.facts.launches`) is ranked against what the operator asks, by
these keys in order:

1. the model: the same checkpoint name (quantization suffixes aside, `published_shapes.normalise`) over the same
   support-matrix family with a total size within ±25 % (read from the names: `32B`, `235B-A22B`);
   a launch of neither is no candidate;
2. the same quantization (`checkpoint_names.quantization_from_name`, `none` for float weights);
3. the same hardware family;
4. the same devices per node and nodes;
5. the same release, else the nearest (`launches._distance`).

Launches of the same model, quantization, hardware and layout at the chosen release are **variants** (a throughput
and a low-latency one, a long-context one), named by upstream's test case. Pure: the index in, candidates out.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from ascendctl.facts.checkpoint_names import quantization_from_name
from ascendctl.facts.launches import Launch, tag_distance
from ascendctl.facts.published_shapes import normalise
from ascendctl_engine.records import record

SIZE_TOLERANCE = 0.25  # "the same size": total parameters within ±25 %
_SIZE = re.compile(r"(?<![A-Za-z0-9.])(\d+(?:\.\d+)?)[Bb](?![A-Za-z0-9])")


@record
class Ask:
    """What the operator asks `init` for."""

    model: str
    family: str | None  # the support matrix's family of the model's name
    hardware: str
    devices: int  # per node
    nodes: int
    tag: str  # the release

    @property
    def quant(self) -> str:
        return quantization_from_name(self.model) or "none"


@record
class Candidate:
    launch: Launch
    key: tuple[float, ...]  # higher is better
    why: str  # how it matches, for the profile's header

    @property
    def variant(self) -> str:
        return self.launch.case


def size_of(name: str) -> float | None:
    """Total parameters in billions as a checkpoint's name says them (`Qwen3-235B-A22B` → 235), None when it does
    not say."""
    found = _SIZE.search(name.rsplit("/", 1)[-1])
    return float(found.group(1)) if found else None


def _model_match(ask: Ask, launch: Launch) -> tuple[int, str] | None:
    if normalise(launch.model) == normalise(ask.model):
        return 2, "the same model"
    if ask.family is None or launch.family != ask.family:
        return None
    mine, theirs = size_of(ask.model), size_of(launch.model)
    if mine is None or theirs is None or abs(theirs - mine) > SIZE_TOLERANCE * mine:
        return None
    return 1, f"the same family ({ask.family}) and size ({theirs:g}B for {mine:g}B)"


def rank(ask: Ask, launches: Iterable[Launch]) -> list[Candidate]:
    """Every launch that is a candidate, best first (see the module docstring)."""
    out: list[Candidate] = []
    for launch in launches:
        model = _model_match(ask, launch)
        if model is None or (launch.kind == "accuracy" and launch.npus == 0):
            continue
        level, said = model
        same = [
            (launch.quant == ask.quant, "the same quantization", f"{launch.quant} weights, not {ask.quant}"),
            (launch.hardware == ask.hardware, "the same hardware", f"on {launch.hardware}, not {ask.hardware}"),
            ((launch.npus, launch.nodes) == (ask.devices, ask.nodes), "the same devices", "other devices"),
        ]
        key = (level, *(float(s) for s, _, _ in same), -abs(tag_distance(launch.tag, ask.tag)))
        why = f"{said}, {', '.join(yes if s else no for s, yes, no in same)}; {launch.mark(ask.tag)}"
        out.append(Candidate(launch, key, why))
    return sorted(out, key=lambda c: (c.key, c.launch.kind != "accuracy"), reverse=True)


def variants(candidates: Sequence[Candidate]) -> list[Candidate]:
    """The best candidate's variants: the launches ranked alike (model, quantization, hardware, layout, release)."""
    if not candidates:
        return []
    best = candidates[0].key
    seen: set[str] = set()
    out = []
    for c in candidates:
        if c.key == best and c.variant not in seen:
            seen.add(c.variant)
            out.append(c)
    return out


__all__ = ["Ask", "Candidate", "rank", "size_of", "variants"]
