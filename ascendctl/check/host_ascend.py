"""Host rules for the host-specific settings of `engine.ascend`: the jemalloc library the plan preloads.

The rule reads only the probed facts (`HostFacts.files`: the paths the profile names, looked at under the probe
root by `check`); facts without the path (a `--facts` file from another run) leave it undecided.
Facts: the tutorials' `export LD_PRELOAD=/usr/lib/aarch64-linux-gnu/libjemalloc.so.2:$LD_PRELOAD` (e.g.
v0.25.1rc1:docs/source/tutorials/models/Qwen3-235B-A22B.md:765); ld.so skips a preload it cannot open with
"cannot be preloaded ... ignored" and starts anyway, so a missing library costs speed, not the start.
"""

from __future__ import annotations

from ascendctl.check.context import CheckContext
from ascendctl.check.host_npu import not_npu
from ascendctl.core.findings import Outcome, passed, problem, rule, skipped, undecided


@rule("host.ascend.jemalloc", "warn", "The jemalloc library engine.ascend.jemalloc preloads exists")
def jemalloc_present(ctx: CheckContext) -> Outcome:
    if ctx.profile is None:
        return skipped("no profile")
    path = ctx.profile.engine.ascend.jemalloc
    if path is None:
        return skipped("engine.ascend.jemalloc unset")
    if (skip := not_npu(ctx)) is not None:
        return skip
    where = f" under {ctx.facts.root}" if ctx.facts.root not in ("", "/") else ""
    present = ctx.facts.files.get(path)
    if present is None:
        return undecided(f"the host facts do not say whether {path} exists (run `ascendctl check PROFILE` on the host)")
    if not present:
        return problem(
            f"{path} (engine.ascend.jemalloc) does not exist{where}: the loader skips the preload with "
            "`cannot be preloaded ... ignored` and the engine runs with the default allocator",
            "install jemalloc (e.g. `apt install libjemalloc2` or `yum install jemalloc`) or point "
            "engine.ascend.jemalloc at the library's path on this host (`ldconfig -p | grep jemalloc`)",
        )
    return passed(f"{path} exists{where}")
