"""The curated profiles for today's models (profiles/*.yaml): each cites its tutorial, is reproduced by a golden
`Tutorial` (tests/planner/planner_tutorials.py) without escape hatches for what typed fields say, and passes
`ascendctl check PROFILE` on the fixture host of its hardware family (tests/fixtures/hosts/) with no failure the
profile itself causes. Their golden renders are tests/test_render.py's."""

from __future__ import annotations

import json
import re
import socket
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from ascendctl.cli import app
from ascendctl.plan.planner import plan_profile
from ascendctl.schema.loader import load_profile

REPO = Path(__file__).resolve().parents[1]
PROFILES = REPO / "profiles"
sys.path.insert(0, str(Path(__file__).resolve().parent / "planner"))
from planner_tutorials import TUTORIALS  # noqa: E402 (the helper module lives next to the planner tests)

runner = CliRunner()

# profile → (fixture host of its family, whose installed release it pins; check results allowed to fail with why)
CURATED: dict[str, tuple[str, dict[str, str]]] = {
    "deepseek-v3-2-w8a8-mtp-a3": ("a3-16chips", {}),
    "glm-5-w4a8-mtp-a3": ("a3-16chips", {}),
    # The matrix's feature table marks W4A8 on multimodal models unsupported, yet
    # v0.23.0:docs/source/tutorials/models/Kimi-K2.5.md:163 serves this W4A8 checkpoint: the profile says
    # `allow: [plan.matrix.combination.quant-w4a8-dynamic-and-mm]`, so `check` shows that one constraint as a
    # warning (asserted below), not a failure.
    "kimi-k2-5-w4a8-eagle3-a3": ("a3-16chips", {}),
    "qwen3-next-80b-a3b-a3": ("a3-16chips", {}),
    "minimax-m2-7-w8a8-tools-a3": ("a3-16chips", {}),
    "qwen3-vl-30b-a3b-a3": ("a3-16chips", {}),
    "qwen3-8b-lora-a2": ("a2-910b3x8", {}),
}
# The example without a tutorial (no vllm-ascend tutorial serves LoRA).
NO_TUTORIAL = {"qwen3-8b-lora-a2"}
# What each profile leaves to an escape hatch, because no typed field says it yet.
ESCAPES: dict[str, dict[str, set[str]]] = {
    "kimi-k2-5-w4a8-eagle3-a3": {"extra_args": {"--mm-encoder-tp-mode"}},
    "minimax-m2-7-w8a8-tools-a3": {"additional_config": {"weight_nz_mode"}},
}
SOURCE = re.compile(r"v\d+\.\d+\.\d+(rc\d+)?:docs/source/tutorials/[\w./-]+\.md:\d+")


def _tutorial_for(name: str) -> Any:
    found = [t for t in TUTORIALS if t.profile == PROFILES / f"{name}.yaml"]
    assert len(found) == 1, f"{name}: expected one Tutorial(...) golden entry, found {len(found)}"
    return found[0]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.parametrize("name", sorted(CURATED))
def test_the_profile_exists_and_plans_for_its_release(name: str) -> None:
    profile = load_profile(PROFILES / f"{name}.yaml")
    plan = plan_profile(profile)
    assert plan.commands and plan.commands[0].argv[:2] == ("vllm", "serve")
    host, _ = CURATED[name]
    assert profile.target.hardware == host.split("-")[0]


@pytest.mark.parametrize("name", sorted(set(CURATED) - NO_TUTORIAL))
def test_the_header_cites_the_tutorial_the_golden_entry_reproduces(name: str) -> None:
    tutorial = _tutorial_for(name)
    cited = SOURCE.match(tutorial.source)
    assert cited, f"{tutorial.source!r} is not TAG:path:LINE"
    header = "".join(line for line in (PROFILES / f"{name}.yaml").read_text().splitlines() if line.startswith("#"))
    assert cited.group(0) in header.replace("# ", ""), f"{name}: the header comment does not cite {cited.group(0)}"
    tag = cited.group(0).split(":")[0]
    assert load_profile(PROFILES / f"{name}.yaml").release == tag, "the profile pins the tutorial's release"


@pytest.mark.parametrize("name", sorted(CURATED))
def test_escape_hatches_hold_only_what_no_typed_field_says(name: str) -> None:
    profile = load_profile(PROFILES / f"{name}.yaml")
    allowed = ESCAPES.get(name, {})
    assert set(profile.runtime.env) <= allowed.get("env", set())
    assert set(profile.engine.additional_config) <= allowed.get("additional_config", set())
    flags = {a for a in profile.engine.extra_args if a.startswith("--")}
    assert flags <= allowed.get("extra_args", set())
    assert not any(k.startswith("VLLM_ASCEND_") for k in profile.runtime.env), "a switch belongs in engine.ascend"


def test_the_lora_example_serves_its_adapters_without_a_tutorial() -> None:
    name = "qwen3-8b-lora-a2"
    assert not [t for t in TUTORIALS if t.profile == PROFILES / f"{name}.yaml"]
    assert "EXAMPLE" in (PROFILES / f"{name}.yaml").read_text().splitlines()[0]
    argv = plan_profile(load_profile(PROFILES / f"{name}.yaml")).commands[0].argv
    assert "--enable-lora" in argv
    modules = argv[argv.index("--lora-modules") + 1 : argv.index("--lora-modules") + 3]
    assert modules == ("sql-lora=/models/lora/qwen3-8b-sql", "chat-lora=/models/lora/qwen3-8b-chat")


@pytest.mark.parametrize("name", sorted(CURATED))
def test_check_on_the_fixture_host_of_its_family(fixture_host, name: str) -> None:  # type: ignore[no-untyped-def]
    host_name, allowed_fails = CURATED[name]
    host = fixture_host(host_name)
    argv = ["check", "--json", str(PROFILES / f"{name}.yaml"), "--set", f"server.port={_free_port()}",
            "--root", str(host.root), "--engine-python", str(host.engine_python)]  # fmt: skip
    result = runner.invoke(app, argv, env=host.cli_env())
    report = json.loads(result.stdout)
    failed = {r["id"]: r["message"] for r in report["results"] if r["status"] == "fail"}
    assert set(failed) == set(allowed_fails), failed
    assert result.exit_code == (1 if failed else 0)
    # the host runs the release the profile pins: no installed-version mismatch
    statuses = {r["id"]: r["status"] for r in report["results"]}
    assert statuses.get("host.engine.release") != "fail"
    assert not any(i.startswith("plan.") for i in failed), failed


def test_a_table_claim_a_launch_contradicts_warns_naming_both_sources() -> None:
    # main's feature matrix says W4A8 does not work for multimodal models; upstream's CI launches Kimi-K2.5/K2.6 W4A8
    # on A3: the curated profile plans without `allow`, with a warning naming the launch and the table
    from ascendctl.plan.planner import plan_profile
    from ascendctl.schema.loader import load_profile

    profile = load_profile(REPO / "profiles" / "kimi-k2-5-w4a8-eagle3-a3.yaml")
    assert profile.allow == []
    plan = plan_profile(profile)
    [w4a8] = [f for f in plan.deployment.findings if f.id == "plan.matrix.combination.quant-w4a8-dynamic-and-mm"]
    assert (w4a8.status, w4a8.clause) == ("warn", None) and not plan.blocking and plan.allowed == ()
    assert "contradicted by a launch upstream runs: verified at v0.23.0: tests/e2e/" in w4a8.message
    assert "feature_matrix.md" in w4a8.message
    # the `allow:` it once needed is now stale, and the plan says so
    stale = plan_profile(profile, allow=["plan.matrix.combination.quant-w4a8-dynamic-and-mm"])
    assert any("plan.matrix.combination.quant-w4a8-dynamic-and-mm is no longer needed" in w for w in stale.warnings)


def test_a_curated_profile_whose_release_rejects_an_argument_exits_2_whatever_it_allows() -> None:
    # kimi's `--speculative-config` / EAGLE-3 and W4A8 flags at a release whose parser lacks one of them: the
    # profile's own allow, an extra --allow of the rule and the deprecated blanket accept none of it
    from ascendctl.plan.planner import plan_profile
    from ascendctl.schema.loader import load_profile

    profile = load_profile(REPO / "profiles" / "kimi-k2-5-w4a8-eagle3-a3.yaml", ["allow_unsupported=true"])
    plan = plan_profile(profile, release="v0.9.1", allow=["plan.rejected", "plan.rejected.parser"])
    rejected = [f for f in plan.blocking if f.id.startswith("plan.rejected.")]
    assert rejected and all(f.status == "fail" for f in rejected), [f.id for f in plan.blocking]
