"""`ascendctl tune --suggest`: grids for the profile's backend and release, every value planned (pure planning, no
hardware): the CPU demo gets no graph grids and the CPU KV space; an NPU curated profile gets graph modes, capture
sizes, device utilization and exactly the `engine.ascend` switches its release reads (asked from the switch eras)."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest

from ascendctl.plan.planner import plan_profile, require_startable
from ascendctl.plan.types import Plan
from ascendctl.run.tune.grid import parse_grid
from ascendctl.run.tune.suggest import SuggestedGrid, prober, suggest_grids
from ascendctl.schema.loader import load_profile
from ascendctl.schema.profile import Profile
from ascendctl_engine.adapters.ascend_switches import SWITCHES, spelling_for

REPO = Path(__file__).resolve().parents[1]
CPU_DEMO = REPO / "profiles" / "cpu-demo.yaml"
NPU = REPO / "profiles" / "qwen3-32b-w8a8-a2.yaml"


def _plan(profile: Profile) -> Plan:
    plan = plan_profile(profile)
    require_startable(plan)
    return plan


@functools.cache  # the tests share the planned suggestions (each is some 40 plans)
def suggested(path: Path, overrides: tuple[str, ...] = ()) -> tuple[Plan, dict[str, SuggestedGrid]]:
    plan = _plan(load_profile(path, overrides))
    probe = prober(lambda items: load_profile(path, [*overrides, *items]), _plan)
    return plan, {g.key: g for g in suggest_grids(plan, probe)}


def test_cpu_demo_gets_batch_limits_and_kv_space_and_no_graphs() -> None:
    _, grids = suggested(CPU_DEMO)
    assert grids["engine.scheduler.max_num_seqs"].values == ("16", "32", "64")  # around the profile's 32
    assert "engine.memory.cpu_kv_cache_gib" in grids
    assert "engine.memory.device_utilization" not in grids
    assert not any(k.startswith(("engine.graph.", "engine.ascend.")) for k in grids)


@pytest.mark.parametrize("release", ["v0.13.0", "v0.23.0"])
def test_npu_profile_gets_graphs_and_the_switches_its_release_reads(release: str) -> None:
    plan, grids = suggested(NPU, (f"release={release}",))
    assert plan.deployment.release.version == release
    assert {"engine.graph.mode", "engine.graph.capture_sizes", "engine.memory.device_utilization"} <= set(grids)
    assert "eager" in grids["engine.graph.mode"].values and "full-decode-only" in grids["engine.graph.mode"].values
    switches = {k for k in grids if k.startswith("engine.ascend.")}
    read = {sw.path for sw in SWITCHES if spelling_for(sw, release)[0].status == "read"}
    assert switches and switches <= read
    not_read = {sw.path for sw in SWITCHES} - read
    assert not_read and not (switches & not_read)


def test_switches_differ_between_releases() -> None:
    old = {k for k in suggested(NPU, ("release=v0.13.0",))[1] if k.startswith("engine.ascend.")}
    new = {k for k in suggested(NPU, ("release=v0.23.0",))[1] if k.startswith("engine.ascend.")}
    assert "engine.ascend.fuse_muls_add" in new - old  # first read after v0.13.0


def test_every_suggested_grid_is_a_valid_grid_of_planned_values() -> None:
    for path in (CPU_DEMO, NPU):
        _, grids = suggested(path)
        axes = parse_grid([g.text for g in grids.values()][:2])
        assert all(a.engine for a in axes)
        checked = [g for g in grids.values() if not g.key.startswith("engine.ascend.")][:5]
        for grid in checked:
            assert len(grid.values) >= 2
            for value in grid.values:
                _plan(load_profile(path, [f"{grid.key}={value}"]))  # raises if the plan refuses it
