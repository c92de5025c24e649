"""Before any engine starts: every engine setting of the grid loaded into the profile (like `--set`) and planned,
so a value the profile or the plan refuses is exit 2 naming the `KEY=V`, not a failed trial an hour in.

Each value is first tried alone (the error then names that one value), then each combination of engine settings
(values that are fine alone may still clash: the error names the combination).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from ascendctl.core.errors import AscendctlError, UserInputError
from ascendctl.plan.types import Plan
from ascendctl.run.tune.grid import Assignment, Axis, EngineGroup, items, label
from ascendctl.schema.loader import load_profile
from ascendctl.schema.profile import Profile

PlanFn = Callable[[Profile], Plan]  # plans a valid profile; raises `UserInputError` when it cannot start


class GridValueRefused(UserInputError):
    """A grid value (or combination) the profile's schema, rules or plan refuses: one line naming it, then the
    refusal's own lines."""

    def __init__(self, what: str, cause: AscendctlError) -> None:
        super().__init__(f"--grid {what} is refused: {cause}")
        self.what = what
        self.cause = cause

    def lines(self) -> list[str]:
        return [f"--grid {self.what} is refused:", *(f"  {line}" for line in self.cause.lines())]


def _planned(profile_path: Path, overrides: Sequence[str], what: str, plan: PlanFn) -> Plan:
    try:
        return plan(load_profile(profile_path, overrides))
    except UserInputError as exc:
        raise GridValueRefused(what, exc) from None


def plan_grid(
    profile_path: Path, base_overrides: Sequence[str], axes: Sequence[Axis], groups: Sequence[EngineGroup], plan: PlanFn
) -> dict[Assignment, Plan]:
    """The plan of every engine setting in `groups` (keyed by its assignment), or exit 2 on the first refusal."""
    base = list(base_overrides)
    engine_axes = [a for a in axes if a.engine]
    for axis in engine_axes if len(engine_axes) > 1 else ():  # one engine key: its combinations are its values
        for value in axis.values:
            _planned(profile_path, [*base, f"{axis.key}={value}"], f"{axis.key}={value}", plan)
    return {g.engine: _planned(profile_path, [*base, *items(g.engine)], label(g.engine), plan) for g in groups}


__all__ = ["GridValueRefused", "PlanFn", "plan_grid"]
