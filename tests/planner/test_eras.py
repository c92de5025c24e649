"""One profile, planned for v0.11.0, v0.13.0, v0.18.0 and v0.23.0: the same intent spelled per era.

Graph: TorchAir `--additional-config` (v0.11, DeepSeek-class) → `--compilation-config` FULL_DECODE_ONLY with
`cudagraph_capture_sizes` (v0.12+). EPLB: top-level keys (v0.11) → `eplb_config` (v0.13.0rc2+). Chunked
prefill: inside `ascend_scheduler_config` (TorchAir) → `--no-enable-chunked-prefill`. Drain: no
`--shutdown-timeout` before vLLM 0.18. A variable the release does not read (v0.11.0) is reported.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from planner_tutorials import flag_map

from ascendctl.plan.planner import plan_profile
from ascendctl.schema.loader import load_profile

PROFILE = Path(__file__).resolve().parents[1] / "fixtures" / "profiles" / "era-demo-deepseek-a3.yaml"
RELEASES = ("v0.11.0", "v0.13.0", "v0.18.0", "v0.23.0")


# v0.11.0 does not read the profile's `VLLM_ASCEND_BALANCE_SCHEDULING` (its key table has no such variable): that
# plan warns `plan.unread.env` (the engine starts without it); the other eras read it.
@pytest.fixture(scope="module")
def plans() -> dict[str, object]:
    profile = load_profile(PROFILE)
    planned = {r: plan_profile(profile, release=r) for r in RELEASES}
    assert all(not planned[r].blocking for r in RELEASES)
    return planned


def flags(plans: dict[str, object], release: str) -> dict[str, object]:
    return flag_map(plans[release].commands[0].argv)  # type: ignore[attr-defined]


def test_graph_mode_per_era(plans: dict[str, object]) -> None:
    v11 = flags(plans, "v0.11.0")
    assert "--compilation-config" not in v11
    assert v11["--additional-config"]["torchair_graph_config"] == {
        "enabled": True,
        "graph_batch_sizes": [1, 2, 4, 8, 16],
    }
    assert v11["--additional-config"]["ascend_scheduler_config"]["enabled"] is True
    for release in ("v0.13.0", "v0.18.0", "v0.23.0"):
        f = flags(plans, release)
        assert f["--compilation-config"] == {
            "cudagraph_mode": "FULL_DECODE_ONLY",
            "cudagraph_capture_sizes": [1, 2, 4, 8, 16],
        }
        assert "torchair_graph_config" not in f["--additional-config"]
        assert "ascend_scheduler_config" not in f["--additional-config"]


def test_eplb_schema_per_era(plans: dict[str, object]) -> None:
    v11 = flags(plans, "v0.11.0")["--additional-config"]
    assert v11["dynamic_eplb"] is True
    assert v11["num_iterations_eplb_update"] == 400
    assert v11["num_wait_worker_iterations"] == 30
    assert v11["init_redundancy_expert"] == 16
    assert "eplb_config" not in v11
    for release in ("v0.13.0", "v0.18.0", "v0.23.0"):
        add = flags(plans, release)["--additional-config"]
        assert add["eplb_config"] == {
            "dynamic_eplb": True,
            "expert_heat_collection_interval": 400,
            "algorithm_execution_interval": 30,
            "num_redundant_experts": 16,
        }
        assert not {"dynamic_eplb", "init_redundancy_expert"} & set(add)
    for release in RELEASES:
        assert plans[release].commands[0].env["DYNAMIC_EPLB"] == "true"  # type: ignore[attr-defined]


def test_scheduler_switches_per_era(plans: dict[str, object]) -> None:
    v11 = flags(plans, "v0.11.0")
    assert v11["--no-enable-prefix-caching"] is True
    assert "--no-enable-chunked-prefill" not in v11
    assert v11["--additional-config"]["ascend_scheduler_config"]["enable_chunked_prefill"] is False
    for release in ("v0.13.0", "v0.18.0", "v0.23.0"):
        f = flags(plans, release)
        assert f["--no-enable-prefix-caching"] is True and f["--no-enable-chunked-prefill"] is True


def test_drain_flag_only_from_vllm_0_18(plans: dict[str, object]) -> None:
    for release in ("v0.11.0", "v0.13.0"):
        assert "--shutdown-timeout" not in flags(plans, release)
        assert any("shutdown_timeout not applied" in w for w in plans[release].warnings)  # type: ignore[attr-defined]
    for release in ("v0.18.0", "v0.23.0"):
        assert flags(plans, release)["--shutdown-timeout"] == "30"


def test_a_variable_the_release_does_not_read_is_reported(plans: dict[str, object]) -> None:
    needle = "does not read `VLLM_ASCEND_BALANCE_SCHEDULING`"

    def unread(release: str) -> list[object]:
        findings = plans[release].deployment.findings  # type: ignore[attr-defined]
        return [f for f in findings if f.id == "plan.unread.env" and needle in f.message]

    [warned] = unread("v0.11.0")
    assert warned.status == "warn" and warned.message.startswith("runtime.env: ")  # type: ignore[attr-defined]
    for release in ("v0.13.0", "v0.18.0", "v0.23.0"):
        assert not unread(release)


def test_release_pins_follow_the_matrix(plans: dict[str, object]) -> None:
    pins = {r: plans[r].deployment.release for r in RELEASES}  # type: ignore[attr-defined]
    assert (pins["v0.11.0"].vllm, pins["v0.11.0"].cann, pins["v0.11.0"].torch_npu) == (
        "0.11.0",
        "8.3.RC2",
        "2.7.1.post1",
    )
    assert (pins["v0.23.0"].vllm, pins["v0.23.0"].cann, pins["v0.23.0"].torch_npu) == (
        "0.23.0",
        "9.1.0",
        "2.10.0.post4",
    )
    assert all(p.image and p.image.endswith(f"{r}-a3") for r, p in pins.items())


def test_eras_are_reported(plans: dict[str, object]) -> None:
    assert plans["v0.11.0"].eras["graph"].startswith("aclgraph+torchair+full-decode")  # type: ignore[attr-defined]
    assert plans["v0.13.0"].eras["graph"].startswith("aclgraph ")  # type: ignore[attr-defined]
    assert plans["v0.11.0"].eras["eplb"].startswith("top-level+guards")  # type: ignore[attr-defined]
    assert plans["v0.23.0"].eras["eplb"].startswith("eplb_config ")  # type: ignore[attr-defined]
