"""`ascendctl plan PROFILE --against-release TAG`: a curated profile across the era boundaries the era registry
encodes names the moved keys (paired by the profile field that asked for them), a release that refuses a switch
shows the finding appearing, and the JSON shape is pinned."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from ascendctl.cli import app
from ascendctl.plan.release_diff import RELEASE_DIFF_SCHEMA, ReleaseDiff, against_release
from ascendctl.schema.loader import load_profile

REPO = Path(__file__).resolve().parents[1]
DEEPSEEK = REPO / "profiles" / "deepseek-r1-w8a8-2node-a2.yaml"  # release v0.13.0, balance_scheduling: true
runner = CliRunner()


def diff(tag: str, *overrides: str) -> ReleaseDiff:
    return against_release(load_profile(DEEPSEEK, list(overrides)), tag)


def renames(d: ReleaseDiff, node: int = 0) -> dict[str, tuple[str, str, str, str]]:
    """origin → (kind, name) before and after, for one node."""
    command = next(c for c in d.commands if c.node == node)
    return {r.origin: (r.before.kind, r.before.name, r.after.kind, r.after.name) for r in command.renamed}


def test_balance_scheduling_moves_twice() -> None:
    to_key = renames(diff("v0.20.2rc1"))
    assert to_key["engine.ascend.balance_scheduling"] == (
        "env",
        "VLLM_ASCEND_BALANCE_SCHEDULING",
        "additional-config",
        "enable_balance_scheduling",
    )
    nested = diff("v0.25.1rc1")
    assert renames(nested, 1)["engine.ascend.balance_scheduling"][2:] == (
        "additional-config",
        "scheduler_config.enable_balance_scheduling",
    )
    command = nested.commands[0]
    assert not any(i.name == "VLLM_ASCEND_BALANCE_SCHEDULING" for i in (*command.added, *command.removed))


def test_flashcomm1_env_becomes_a_key_at_v0_20_2rc1() -> None:
    d = diff("v0.20.2rc1", "release=v0.19.1rc1", "engine.ascend.flashcomm1=true")
    assert renames(d)["engine.ascend.flashcomm1"] == (
        "env",
        "VLLM_ASCEND_ENABLE_FLASHCOMM1",
        "additional-config",
        "enable_flashcomm1",
    )
    assert ("vllm", "0.19.1", "0.20.2") in d.pins


def test_eplb_top_level_keys_nest_under_eplb_config() -> None:
    d = diff(
        "v0.13.0",
        "release=v0.11.0",
        "engine.ascend.balance_scheduling=null",
        "engine.eplb.mode=dynamic",
        "engine.eplb.heat_collection_interval=400",
    )
    moved = renames(d)
    assert moved["engine.eplb.mode"] == (
        "additional-config",
        "dynamic_eplb",
        "additional-config",
        "eplb_config.dynamic_eplb",
    )
    assert moved["engine.eplb.heat_collection_interval"][1::2] == (
        "num_iterations_eplb_update",
        "eplb_config.expert_heat_collection_interval",
    )
    assert str({t: (a, b) for t, a, b in d.eras}["eplb"][1]).startswith("eplb_config ")


def test_a_release_that_refuses_the_switch_shows_the_finding_appearing() -> None:
    d = diff("v0.11.0")
    appeared = {f.id: f for f in d.appeared}
    refused = appeared["plan.refused.ascend-balance-scheduling"]
    # v0.11.0 reads no such switch: its engine would ignore it, so the finding warns (the refusal policy)
    assert refused.status == "warn" and "v0.13.0rc1" in refused.message
    removed = [(i.kind, i.name, i.origin) for i in d.commands[0].removed]
    assert removed == [("env", "VLLM_ASCEND_BALANCE_SCHEDULING", "engine.ascend.balance_scheduling")]
    assert not d.commands[0].renamed


def test_the_same_release_differs_in_nothing() -> None:
    d = diff("v0.13.0")
    assert (d.pins, d.eras, d.commands, d.appeared, d.disappeared) == ((), (), (), (), ())


def test_a_changed_value_is_not_a_rename() -> None:
    d = diff("v0.25.1rc1", "engine.scheduler.max_num_seqs=16")
    base = diff("v0.25.1rc1")
    assert [r.origin for r in d.commands[0].renamed] == [r.origin for r in base.commands[0].renamed]
    same = diff("v0.13.0", "engine.scheduler.max_num_seqs=16")
    assert not same.commands  # the same overrides on both sides: nothing differs


def invoke_json(*args: str) -> dict[str, Any]:
    result = runner.invoke(app, ["plan", str(DEEPSEEK), *args, "--json"])
    assert result.exit_code == 0, result.output
    data: dict[str, Any] = json.loads(result.stdout)
    return data


def test_json_shape_is_pinned() -> None:
    data = invoke_json("--against-release", "v0.25.1rc1")
    assert data["schema"] == RELEASE_DIFF_SCHEMA == 1
    assert list(data) == ["schema", "profile", "from", "to", "pins", "eras", "commands", "findings", "reads"]
    assert data["from"]["release"] == "v0.13.0" and data["to"]["release"] == "v0.25.1rc1"
    assert {"name": "cann", "from": "8.5.0", "to": "9.0.1"} in data["pins"]
    assert set(data["findings"]) == {"appeared", "disappeared", "changed"}
    command = data["commands"][0]
    assert list(command) == ["instance", "node", "added", "removed", "changed", "renamed"]
    renamed = command["renamed"][0]
    assert renamed == {
        "origin": "engine.ascend.balance_scheduling",
        "from": {
            "kind": "env",
            "name": "VLLM_ASCEND_BALANCE_SCHEDULING",
            "value": "1",
            "origin": "engine.ascend.balance_scheduling",
        },
        "to": {
            "kind": "additional-config",
            "name": "scheduler_config.enable_balance_scheduling",
            "value": True,
            "origin": "engine.ascend.balance_scheduling",
        },
    }


def test_text_names_the_moved_key_and_an_unknown_tag_is_an_input_error() -> None:
    result = runner.invoke(app, ["plan", str(DEEPSEEK), "--against-release", "v0.11.0"])
    assert result.exit_code == 0, result.output
    assert "removed  env VLLM_ASCEND_BALANCE_SCHEDULING=1  [engine.ascend.balance_scheduling]" in result.stdout
    assert "+ WARN plan.refused.ascend-balance-scheduling" in result.stdout
    assert "refuses this profile as it is" not in result.stdout  # v0.11.0 starts it, without the switch
    eras = {t: (a, b) for t, a, b in diff("v0.11.0").eras}
    before, after = eras["ascend.balance_scheduling"]
    assert before is not None and after is not None and before != after
    assert f"  ascend.balance_scheduling: {before} → {after}" in result.stdout
    assert f"eras ({len(eras)} topics change between the two releases):" in result.stdout
    bad = runner.invoke(app, ["plan", str(DEEPSEEK), "--against-release", "v9.9.9"])
    assert bad.exit_code == 2


@pytest.mark.parametrize("tag", ["v0.20.2rc1"])
def test_release_option_moves_the_starting_side(tag: str) -> None:
    data = invoke_json("--release", "v0.19.1rc1", "--against-release", tag)
    assert data["from"]["release"] == "v0.19.1rc1" and data["to"]["release"] == tag


def test_pairing_rules_on_items() -> None:
    from ascendctl.plan.release_diff import Item, diff_command

    def items(*given: Item) -> dict[tuple[str, str], Item]:
        return {(i.kind, i.name): i for i in given}

    before = items(
        Item("flag", "--max-num-seqs", "8", "engine.scheduler.max_num_seqs"),
        Item("env", "A_OLD", "1", "engine.ascend.x"),
        Item("env", "B_OLD", "1", "engine.ascend.y"),
        Item("env", "B_OLD2", "1", "engine.ascend.y"),
        Item("env", "DEFAULT", "1", None),
    )
    after = items(
        Item("flag", "--max-num-seqs", "16", "engine.scheduler.max_num_seqs"),
        Item("additional-config", "a_new", True, "engine.ascend.x"),
        Item("additional-config", "b_new", True, "engine.ascend.y"),
        Item("env", "OTHER_DEFAULT", "1", None),
    )
    d = diff_command("serve", 0, before, after)
    assert [(c.before.value, c.after.value) for c in d.changed] == [("8", "16")]
    assert [(r.before.name, r.after.name) for r in d.renamed] == [("A_OLD", "a_new")]
    # two items of one field on one side: no one-to-one pairing, so no rename is claimed; no field: never renamed
    assert [i.name for i in d.removed] == ["B_OLD", "B_OLD2", "DEFAULT"]
    assert [i.name for i in d.added] == ["b_new", "OTHER_DEFAULT"]


def test_the_plan_records_which_field_asked_for_each_item() -> None:
    from ascendctl.plan.planner import plan_profile

    origins = plan_profile(load_profile(DEEPSEEK, [])).instances[0].origins
    assert origins["--max-num-seqs"] == "engine.scheduler.max_num_seqs"  # why passed unchanged: looked up exactly
    assert origins["env:VLLM_ASCEND_BALANCE_SCHEDULING"] == "engine.ascend.balance_scheduling"  # passed explicitly
    assert "env:HCCL_OP_EXPANSION_MODE" not in origins  # an Ascend default no profile field asked for
