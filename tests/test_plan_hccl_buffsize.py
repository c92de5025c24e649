"""`plan.moe.hccl-buffsize`: HCCL_BUFFSIZE against the MoE dispatch (MC2) of the planned batch, one estimate with
the memory fit (`ascendctl.plan.fit.budget.mc2_buffer_mb`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ascendctl.core.findings import Finding
from ascendctl.plan.planner import plan_profile
from ascendctl.schema.loader import load_profile

REPO = Path(__file__).resolve().parents[1]
KIMI = REPO / "profiles" / "kimi-k2-5-w4a8-eagle3-a3.yaml"
TUTORIALS = sorted((REPO / "tests" / "fixtures" / "profiles").glob("tut-*.yaml"))
CURATED = sorted((REPO / "profiles").glob("*.yaml"))


def finding(path: Path, *overrides: str) -> Finding:
    plan = plan_profile(load_profile(path, overrides))
    return next(f for f in plan.deployment.findings if f.id == "plan.moe.hccl-buffsize")


def test_a_buffer_below_the_dispatch_need_warns_with_the_number() -> None:
    # Kimi-K2.5 DP4 × TP4 + EP, 64 sequences × (1 + 3 EAGLE tokens) → 512-token graphs → 128 tokens per rank
    low = finding(KIMI, "engine.memory.hccl_buffer_mb=200")
    assert low.status == "warn"
    assert "HCCL_BUFFSIZE 200 MB is below the ~712 MB" in low.message and "128 tokens per rank" in low.message
    assert low.fix and "engine.memory.hccl_buffer_mb: 712" in low.fix
    assert finding(KIMI).status == "pass"  # the tutorial's own 800 MB holds it
    # fewer sequences shrink the need below the default buffer
    assert finding(KIMI, "engine.memory.hccl_buffer_mb=200", "engine.scheduler.max_num_seqs=16").status == "pass"
    # runtime.env still wins over the field (it wins over everything the plan sets)
    assert finding(KIMI, 'runtime.env.HCCL_BUFFSIZE="200"').status == "warn"
    assert finding(KIMI, "engine.memory.hccl_buffer_mb=200", 'runtime.env.HCCL_BUFFSIZE="800"').status == "pass"


@pytest.mark.parametrize("path", TUTORIALS + CURATED, ids=lambda p: p.name)
def test_published_configurations_do_not_warn(path: Path) -> None:
    """Every tutorial reproduction and curated profile runs as published: the rule must not flag them."""
    assert finding(path).status in ("pass", "skip")


def test_no_expert_parallelism_no_rule() -> None:
    result = finding(KIMI, "engine.parallel.expert=false", "engine.memory.hccl_buffer_mb=1")
    assert result.status == "skip"
