"""`host.lock`: `check PROFILE --lock LOCK` — what drifted since `ascendctl lock` recorded this profile on this host.

The comparison itself is pure (`ascendctl.plan.lock.drifts`); reading the engine environment now is the run
layer's (`ascendctl/run/lock.py`), which hands the result to the check as `ctx.lock`. Without `--lock` the rule
skips. One finding per drifted field, `host.lock.<field>` (e.g. `host.lock.engine-packages-numpy`).
"""

from __future__ import annotations

from ascendctl.check.context import CheckContext
from ascendctl.core.findings import Each, Outcome, kebab, passed, problem, rule, skipped


@rule(
    "host.lock",
    "error",
    "The host still matches the lock of its profile",
    source="ascendctl/run/lock.py (the lock `ascendctl lock` wrote)",
    allowable=False,  # a lock is the record of what ran: accept a change by re-locking, not by `allow`
    clause="placement",
)
def lock(ctx: CheckContext) -> Outcome | list[Each]:
    if ctx.lock is None:
        return skipped("give --lock LOCK to compare with what `ascendctl lock` recorded")
    if not ctx.lock.drifts:
        return passed(f"nothing drifted since {ctx.lock.path}")
    fix = f"restore what {ctx.lock.path} recorded, or re-lock: ascendctl lock PROFILE -o {ctx.lock.path}"
    return [Each(kebab(d.what), problem(f"drift: {d.line()}", fix)) for d in ctx.lock.drifts]
