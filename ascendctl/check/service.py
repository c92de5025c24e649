"""`check` end to end: load the profile, then check the host against it (`host_check.check_host`), the profile
planned against the probed facts by the planner (its failing findings are reported, the profile's `allow`
applied).

Without a profile the CLI calls `host_check.check_host` itself, and no profile loader or planner is loaded.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from ascendctl.check.fabric import gather_view
from ascendctl.check.fabric_view import FabricRequest, FabricView
from ascendctl.check.host_check import check_host, root_dir
from ascendctl.check.report import CheckReport
from ascendctl.core.errors import UserInputError
from ascendctl.core.findings import RULES, Finding
from ascendctl.init.recipe import recipe_advice, with_advice
from ascendctl.plan.planner import plan_profile
from ascendctl.schema.loader import load_profile

if TYPE_CHECKING:
    from ascendctl.facts.matrix.schema import SupportMatrix
    from ascendctl.plan.lock import LockComparison
    from ascendctl.plan.types import Plan
    from ascendctl.schema.profile import Profile
    from ascendctl_engine.host.facts import HostFacts
    from ascendctl_engine.host.probe import HostProbe


def run_check(
    profile_path: Path | None = None,
    overrides: Sequence[str] = (),
    *,
    root: str = "/",
    engine_python: str | None = None,
    environ: Mapping[str, str] | None = None,
    probe: HostProbe | None = None,
    matrix: SupportMatrix | None = None,
    fabric: FabricRequest | None = None,
    lock: LockComparison | None = None,
) -> CheckReport:
    """Check this host (and the profile, when given; with `fabric`, the multi-node fabric too; with `lock`,
    what drifted since the lock). Raises only for
    invalid input (profile, flags)."""
    if overrides and profile_path is None:
        raise UserInputError("--set needs a PROFILE to override")
    root_dir(root)
    profile = load_profile(profile_path, overrides) if profile_path is not None else None
    return check_host(
        profile,
        plan_step=partial(_plan, profile) if profile is not None else None,
        profile_path=profile_path,
        overrides=overrides,
        root=root,
        engine_python=engine_python,
        environ=environ,
        probe=probe,
        matrix=matrix,
        fabric_step=partial(_fabric, profile, fabric) if profile is not None and fabric is not None else None,
        lock=lock,
    )


def _fabric(
    profile: Profile, request: FabricRequest, probe: HostProbe, plan: Plan | None, facts: HostFacts
) -> FabricView | None:
    """`check --fabric`: this node's fabric for a multi-node profile (None for a profile on one node)."""
    if profile.target.nodes <= 1:
        return None
    return gather_view(probe, profile, plan, request, facts.nics, facts.npu)


def _plan(profile: Profile, facts: HostFacts, matrix: SupportMatrix) -> tuple[Plan | None, Finding | None]:
    """The profile planned against these host facts (broken constraints allowed: they become findings), or
    why it could not be planned (an unknown release pin is already `host.matrix.release`'s failure)."""
    try:
        plan = plan_profile(profile, matrix=matrix, host=facts)
    except UserInputError as exc:
        rule = RULES["plan.plannable"]
        return None, Finding(
            rule.id, "error", "fail", rule.title, f"the profile cannot be planned: {exc}",
            "fix the profile (see `ascendctl plan PROFILE`)", rule.source,
        )  # fmt: skip
    return with_advice(plan, recipe_advice(profile, plan)), None
