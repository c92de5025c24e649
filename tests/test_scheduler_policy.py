"""`engine.scheduler.policy` → vLLM's `--scheduling-policy` (the example of docs/adding-a-field.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ascendctl.core.errors import UserInputError
from ascendctl.plan.planner import plan_profile
from ascendctl.schema.loader import load_profile
from ascendctl_engine.adapters import plan_commands
from ascendctl_engine.adapters.intent import intent_from_sections

REPO = Path(__file__).resolve().parent.parent
CPU_DEMO = REPO / "profiles" / "cpu-demo.yaml"


def argv(policy: str | None, *, backend: str = "npu", vllm: str = "0.13.0", ascend: str = "v0.13.0") -> list[str]:
    scheduler = {"policy": policy} if policy is not None else {}
    target = {"backend": backend, "hardware": "a2"} if backend == "npu" else {"backend": backend}
    intent = intent_from_sections(
        {"model": {"source": "org/model"}, "target": target, "engine": {"scheduler": scheduler}},
        vllm=vllm,
        vllm_ascend=ascend if backend == "npu" else None,
        sources={"engine.scheduler.policy": "user: engine.scheduler.policy"},
    )
    result = plan_commands(intent)
    assert not result.refusals, result.refusals
    return list(result.commands[0].argv)


# one release per graph-mode era of vllm-ascend, and the upstream engines
ERAS = [("npu", "0.9.1", "v0.9.1"), ("npu", "0.13.0", "v0.13.0"), ("npu", "0.25.1", "v0.25.1rc1"),
        ("cpu", "0.32.0", ""), ("cuda", "0.33.0", "")]  # fmt: skip


@pytest.mark.parametrize(("backend", "vllm", "ascend"), ERAS)
def test_the_policy_is_spelled_for_every_era(backend: str, vllm: str, ascend: str) -> None:
    planned = argv("priority", backend=backend, vllm=vllm, ascend=ascend)
    assert planned[planned.index("--scheduling-policy") + 1] == "priority"


def test_unset_leaves_the_engine_default() -> None:
    assert "--scheduling-policy" not in argv(None)


def test_a_profile_plans_it_with_its_provenance() -> None:
    plan = plan_profile(load_profile(CPU_DEMO, ["engine.scheduler.policy=priority"]))
    command = plan.commands[0].argv
    assert command[command.index("--scheduling-policy") + 1] == "priority"
    assert plan.provenance["--scheduling-policy"] == "user: engine.scheduler.policy"
    assert plan.deployment.settings["engine.scheduler.policy"].value == "priority"


def test_an_unknown_policy_is_a_located_profile_error() -> None:
    with pytest.raises(UserInputError, match=r"engine\.scheduler\.policy"):
        load_profile(CPU_DEMO, ["engine.scheduler.policy=lifo"])
