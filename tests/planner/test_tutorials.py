"""Golden tests: each vllm-ascend tutorial command (docs/source/tutorials/) planned from a profile for the release
the tutorial targets equals the documented argv and env — flags compared as a set with values, JSON option
values parsed — except the differences each `Tutorial` lists with its reason."""

from __future__ import annotations

import pytest
from planner_tutorials import (
    ALWAYS_PLANNED_FLAGS,
    ASCEND_DEFAULT_ENV,
    TUTORIALS,
    Tutorial,
    differences,
    flag_map,
    parse_shell,
)

from ascendctl.plan.planner import plan_profile
from ascendctl.schema.loader import load_profile


def _planned(t: Tutorial):  # type: ignore[no-untyped-def]
    plan = plan_profile(load_profile(t.profile))
    return plan, plan.instance(t.instance).commands[t.node]


@pytest.mark.parametrize("tutorial", TUTORIALS, ids=[t.id for t in TUTORIALS])
def test_planned_flags_equal_the_tutorial(tutorial: Tutorial) -> None:
    _plan, command = _planned(tutorial)
    _env, documented = parse_shell(tutorial.text)
    diff = differences(flag_map(command.argv), flag_map(documented))
    unexplained = {
        k: v for k, v in diff.items() if k not in tutorial.expected and not (k in ALWAYS_PLANNED_FLAGS and v[1] is None)
    }
    assert unexplained == {}, f"{tutorial.source}: (planned, documented) differ without a listed reason"
    stale = [k for k in tutorial.expected if k not in diff]
    assert stale == [], f"listed differences that are no longer differences: {stale}"


@pytest.mark.parametrize("tutorial", TUTORIALS, ids=[t.id for t in TUTORIALS])
def test_planned_env_equals_the_tutorial(tutorial: Tutorial) -> None:
    _plan, command = _planned(tutorial)
    documented, _argv = parse_shell(tutorial.text)
    diff = differences(dict(command.env), documented)
    unexplained = {
        k: v
        for k, v in diff.items()
        if k not in tutorial.expected_env and not (k in ASCEND_DEFAULT_ENV and v[1] is None)
    }
    assert unexplained == {}, f"{tutorial.source}: env (planned, documented) differ without a listed reason"
    stale = [k for k in tutorial.expected_env if k not in diff]
    assert stale == [], f"listed env differences that are no longer differences: {stale}"


@pytest.mark.parametrize("tutorial", [t for t in TUTORIALS if t.warnings], ids=lambda t: t.id)
def test_expected_warnings(tutorial: Tutorial) -> None:
    plan, _command = _planned(tutorial)
    # what the plan warns of: its warnings and its warning findings (matrix caveats, accepted failures)
    said = [*plan.warnings, *(f.message for f in plan.deployment.findings if f.status == "warn")]
    for needle in tutorial.warnings:
        assert any(needle in w for w in said), (needle, said)


@pytest.mark.parametrize("tutorial", [t for t in TUTORIALS if t.spelled], ids=lambda t: t.id)
def test_a_switch_spelled_otherwise_by_the_tutorial_is_explained_in_why_not_warned(tutorial: Tutorial) -> None:
    plan, _command = _planned(tutorial)
    said = [*plan.warnings, *(f.message for f in plan.deployment.findings if f.status == "warn")]
    for switch in tutorial.spelled:
        assert not any(w.startswith(f"{switch}: planned as") for w in said), switch
        assert any(switch in why and "planned as" in why for why in plan.provenance.values()), switch


def test_the_documented_model_is_what_vllm_loads() -> None:
    for t in TUTORIALS:
        _plan, command = _planned(t)
        _env, documented = parse_shell(t.text)
        assert command.argv[:3] == ("vllm", "serve", documented[2]), t.id


def test_ray_two_node_commands_follow_ray_md() -> None:
    """ray.md: env set on every node before `ray start`; `ray start --head` on the head,
    `ray start --address HEAD:6379 --node-ip-address LOCAL` on workers; `vllm serve` on the head only.
    Differences: the worker's `ray start` gets `--block` (it is the supervised process of that node), the
    head names its port and address explicitly."""
    from planner_tutorials import FIXTURES

    plan = plan_profile(load_profile(FIXTURES / "qwen3-235b-a22b-ray-2node-a2.yaml"))
    head, worker = plan.commands
    assert head.pre_commands == (("ray", "start", "--head", "--port", "6379", "--node-ip-address", "192.0.2.30"),)
    assert head.argv[:2] == ("vllm", "serve") and head.health_url == "http://127.0.0.1:8000/health"
    assert worker.argv == (
        "ray",
        "start",
        "--block",
        "--address",
        "192.0.2.30:6379",
        "--node-ip-address",
        "192.0.2.31",
    )
    assert worker.health_url is None and worker.role == "worker"
    for command, ip in ((head, "192.0.2.30"), (worker, "192.0.2.31")):
        assert command.env["RAY_EXPERIMENTAL_NOSET_ASCEND_RT_VISIBLE_DEVICES"] == "1"
        assert command.env["HCCL_IF_IP"] == ip
        assert command.env["GLOO_SOCKET_IFNAME"] == command.env["TP_SOCKET_IFNAME"] == "eth0"
        assert command.env["ASCEND_RT_VISIBLE_DEVICES"] == "0,1,2,3,4,5,6,7"


def test_flag_map_normalises_spellings() -> None:
    argv = ["vllm", "serve", "m", "--max_model_len", "5", "--x=1", "--hf_overrides", '{"a": [1, 2]}', "--b"]
    assert flag_map(argv) == {
        "<model>": "m",
        "--max-model-len": "5",
        "--x": "1",
        "--hf-overrides": {"a": [1, 2]},
        "--b": True,
    }
