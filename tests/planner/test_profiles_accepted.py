"""Every curated and fixture profile, planned for every release of its backend: what a successful plan carries
(each argv, the keys inside JSON-valued flags, every `--additional-config` key, every vLLM / vllm-ascend variable)
is accepted by that release's real-parser snapshot and key table — or the plan says, as an accepted warning
finding, exactly what the release would not read. No plan carries a rejected value silently, and no `allow`
lets through what the release's parser rejects or a key that makes it raise: such a plan stays blocked."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ascendctl.facts.matrix import load_matrix, releases
from ascendctl.plan.planner import plan_profile
from ascendctl.schema.loader import load_profile
from ascendctl_engine.adapters import acceptance_for

REPO = Path(__file__).resolve().parents[2]
PROFILES = sorted([*(REPO / "profiles").glob("*.yaml"), *(REPO / "tests" / "fixtures" / "profiles").glob("*.yaml")])


def _additional(argv: tuple[str, ...]) -> dict[str, object]:
    if "--additional-config" not in argv:
        return {}
    value = json.loads(argv[argv.index("--additional-config") + 1])
    assert isinstance(value, dict)
    return value


@pytest.mark.parametrize("path", PROFILES, ids=lambda p: p.stem)
def test_every_release_accepts_what_its_plan_carries(path: Path) -> None:
    profile = load_profile(path)
    planned = 0
    for row in releases(load_matrix(), profile.target.backend):
        plan = plan_profile(profile, release=row.version)
        if plan.blocking:
            continue  # the release cannot do this profile, and says so
        planned += 1
        accepted = acceptance_for(row.backend, row.vllm, row.vllm_ascend)
        allowed = " ".join([*plan.warnings, *(f.message for f in plan.deployment.findings if f.status == "warn")])
        for command in plan.commands:
            if command.argv[:2] == ("vllm", "serve"):
                for problem in accepted.argv_problems(command.argv):
                    assert problem.severity == "warning", (row.version, problem.message)  # never let through
                    assert problem.message in allowed, (row.version, problem.message)
                for key in accepted.judge_keys(_additional(command.argv), "the argv"):
                    assert key.status != "rejected", (row.version, key.reason)
                    assert key.status == "read" or key.reason in allowed, (row.version, key.reason)
            for name in command.env:
                verdict = accepted.judge_env(name, "the env")
                assert verdict is None or verdict.status == "read" or verdict.reason in allowed, (row.version, name)
        assert plan.provenance["decision:flag-check"].startswith(f"vLLM {accepted.parser.built_from} ")
        if accepted.keys is not None:
            assert accepted.keys.source in plan.provenance["decision:config-key-check"]
    assert planned, f"{path.name} plans for no release at all"


def test_a_stand_in_snapshot_is_said_in_the_plan() -> None:
    profile = load_profile(REPO / "profiles" / "qwen3-32b-w8a8-a2.yaml")
    plan = plan_profile(profile, release="v0.11.0rc0", allow_unsupported=True)  # pins vLLM 0.11.0rc3
    assert any("standing in for 0.11.0rc3" in w for w in plan.warnings)
    assert "stands in for 0.11.0rc3" in plan.provenance["decision:flag-check"]
    assert not any("standing in" in w for w in plan_profile(profile, release="v0.11.0").warnings)
