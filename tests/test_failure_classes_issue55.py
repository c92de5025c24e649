"""Failure classes caught at the layer that can see them (issue 55, item 2); the log side is tests/test_diagnoses.py.

- weights that leave no room for the KV cache: `plan.memory.kv-cache-room` (the fit's KV budget holds no block),
  and `plan.model.max-model-len-unset` no longer tells such a plan to shorten its context;
- a long default context: `plan.model.max-model-len-unset` judges one request by the fit's concurrency (a hybrid
  model's request takes fewer pages than its tokens) and reads the context model.hf_overrides give;
- the Mooncake transfer engine missing from the engine environment: `host.engine.mooncake`;
- (/etc/hccn.conf not mounted into a container: tests/test_check_failure_modes.py, the renderers' mounts:
  tests/test_disaggregation.py and the golden files.)

Models are the reduced config.json fixtures (ascendctl/facts/data/model_configs/) written into temporary directories.
"""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from ascendctl.check import CheckContext, host_findings
from ascendctl.check.matrix_view import row_for_version
from ascendctl.core.findings import Finding, Outcome
from ascendctl.facts.matrix import load_matrix
from ascendctl.facts.model_inspect import parse_model_config, with_context_overrides
from ascendctl.facts.published_shapes import model_shapes
from ascendctl.plan.plan_rules import PlanFacts, max_model_len_unset
from ascendctl.plan.planner import plan_profile, require_startable
from ascendctl.schema.loader import load_profile
from ascendctl_engine.host import HostFacts, LocalHostProbe, gather_host_facts
from ascendctl_engine.host.facts import PythonEnv
from ascendctl_engine.host.pyenv import EnginePython, probe_python_env
from tests.model_dirs import model_dir

ROOT = Path(__file__).resolve().parents[1]
GLM_PD = ROOT / "profiles" / "glm-5-2-pd-a3.yaml"  # disaggregation.connector: mooncake


def profile_path(tmp_path: Path, model: dict[str, Any], **body: Any) -> Path:
    doc = {
        "apiVersion": "ascendctl/v1",
        "kind": "Profile",
        "metadata": {"name": "t"},
        "target": {"backend": "npu", "hardware": body.pop("hardware", "a2"), "devices_per_node": 8},
        "release": body.pop("release", "v0.23.0"),
        "model": model,
        **body,
    }
    path = tmp_path / "profile.yaml"
    path.write_text(json.dumps(doc))  # JSON is YAML
    return path


def findings(tmp_path: Path, model: dict[str, Any], **body: Any) -> dict[str, Finding]:
    return {f.id: f for f in plan_profile(load_profile(profile_path(tmp_path, model, **body))).deployment.findings}


# ---- weights that leave no room for the KV cache ------------------------------------------------------------------


def test_weights_that_fill_the_share_are_said_by_the_plan(tmp_path: Path) -> None:
    # Qwen3-32B in bfloat16 on one 64 GB A2 device: ~61 GiB of weights, more than 0.9 of the device
    weights = model_dir(tmp_path, "qwen3-32b")
    model = {"source": str(weights), "max_model_len": 8192}
    engine = {"parallel": {"tensor": 1}}
    rule = findings(tmp_path, model, engine=engine)["plan.memory.kv-cache-room"]
    assert rule.status == "warn" and rule.clause is None, rule
    assert "less than one block" in rule.message and "No available memory for the cache blocks" in rule.message
    assert "whatever model.max_model_len is" in rule.message
    assert rule.fix and "--set engine.parallel.tensor=" in rule.fix and "max_model_len" not in rule.fix
    assert "kv_cache_utils.py:1009-1017" in rule.source
    # a warning, not a refusal: it is the fit's estimate, and upstream runs launches on hardware where the estimate
    # leaves no room (the launch corpus holds them); `ascendctl fit` exits 1 on it
    plan = plan_profile(load_profile(profile_path(tmp_path, model, engine=engine)))
    require_startable(plan)
    assert plan.fit is not None and plan.fit.verdict == "does-not-fit"
    spread = findings(tmp_path, model, engine={"parallel": {"tensor": 4}})["plan.memory.kv-cache-room"]
    assert spread.status == "pass" and "GiB per device for the KV cache" in spread.message


def test_no_room_is_not_blamed_on_the_context(tmp_path: Path) -> None:
    # max_model_len unset as well: shortening the context would not help, so only the room rule refuses
    weights = model_dir(tmp_path, "qwen3-32b")
    found = findings(tmp_path, {"source": str(weights)}, engine={"parallel": {"tensor": 1}})
    assert found["plan.memory.kv-cache-room"].status == "warn"
    unset = found["plan.model.max-model-len-unset"]
    assert unset.status == "skip" and "plan.memory.kv-cache-room" in unset.message


def test_the_cpu_kv_cache_is_sized_explicitly(tmp_path: Path) -> None:
    weights = model_dir(tmp_path, "qwen3-0.6b")
    found = findings(
        tmp_path,
        {"source": str(weights), "max_model_len": 2048},
        release="0.32.0",
        engine={"memory": {"cpu_kv_cache_gib": 1}},
        target={"backend": "cpu"},
    )
    assert found["plan.memory.kv-cache-room"].status == "skip"


# ---- a long default context the KV cache cannot hold ------------------------------------------------------------


def test_a_huge_default_context_is_an_error_and_a_long_one_a_warning(tmp_path: Path) -> None:
    huge = model_dir(tmp_path, "qwen3-8b", max_position_embeddings=4_000_000)
    rule = findings(tmp_path, {"source": str(huge)})["plan.model.max-model-len-unset"]
    assert rule.status == "fail" and rule.severity == "error" and rule.clause == "placement", rule
    assert "4,000,000 tokens" in rule.message and rule.fix and "tokens fit" in rule.fix
    (tmp_path / "usual").mkdir()
    usual = model_dir(tmp_path / "usual", "qwen3-8b")  # 40,960: long, but one request fits
    assert findings(tmp_path, {"source": str(usual)})["plan.model.max-model-len-unset"].status == "warn"


def test_one_request_is_judged_by_the_fits_concurrency_not_its_tokens(tmp_path: Path) -> None:
    # the engine's check counts the blocks one request of max_model_len takes (vLLM v0.32.0
    # vllm/v1/core/kv_cache_utils.py:1019-1040): a hybrid model's request takes fewer pages than its tokens, so the
    # printed token count may fall short of the context while several requests fit
    weights = model_dir(tmp_path, "qwen3-next")  # 262,144 tokens of default context
    profile = load_profile(profile_path(tmp_path, {"source": str(weights)}, hardware="a3"))
    plan = plan_profile(profile)
    assert plan.fit is not None and plan.fit.max_model_len == 262144
    config = parse_model_config(json.loads((weights / "config.json").read_text()), str(weights / "config.json"))

    def judged(kv_tokens: int, concurrency: float) -> Outcome:
        fit = replace(plan.fit, kv_tokens=kv_tokens, max_concurrency=concurrency)
        facts = PlanFacts(profile, "full-decode-only", "moe", config, True, shapes=model_shapes("x", config, False))
        return max_model_len_unset(replace(facts, fit=fit))

    held = judged(200_000, 3.4)  # fewer tokens than the context, three requests' pages
    assert held.kind == "problem" and held.severity == "warn", held
    refused = judged(200_000, 0.8)
    assert (
        refused.kind == "problem" and refused.severity is None and "at most 200,000 tokens fit" in (refused.fix or "")
    )
    assert judged(0, 0.0).kind == "skip"  # no room at all: plan.memory.kv-cache-room


def test_the_context_hf_overrides_give_is_the_one_judged(tmp_path: Path) -> None:
    # Qwen3-8B with YaRN × 4 in model.hf_overrides: the engine derives 131,072 tokens, not config.json's 40,960
    weights = model_dir(tmp_path, "qwen3-8b")
    yarn = {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}
    model = {"source": str(weights), "hf_overrides": {"rope_scaling": yarn}}
    plan = plan_profile(load_profile(profile_path(tmp_path, model)))
    rule = next(f for f in plan.deployment.findings if f.id == "plan.model.max-model-len-unset")
    assert "131072 tokens" in rule.message and "with model.hf_overrides" in rule.message, rule
    assert plan.fit is not None and plan.fit.max_model_len == 131072  # the fit sizes the same context
    assert "config.json's context with model.hf_overrides" in plan.fit.inputs["model.max_model_len"]


def test_context_overrides_apply_like_config_update() -> None:
    base = parse_model_config({"max_position_embeddings": 40960}, "config.json")
    assert with_context_overrides(base, None) is base and with_context_overrides(base, {"other": 1}) is base
    assert with_context_overrides(base, {"max_position_embeddings": 8192}).derived_max_model_len == 8192
    yarn = {"rope_parameters": {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}}
    assert with_context_overrides(base, yarn).derived_max_model_len == 131072
    scaled = parse_model_config({"max_position_embeddings": 8192, "rope_scaling": {"type": "linear", "factor": 2}})
    assert with_context_overrides(scaled, {"rope_scaling": None}).derived_max_model_len == 8192  # removed
    assert with_context_overrides(scaled, {"rope_scaling": {"factor": -1}}) is scaled  # unreadable: unchanged


# ---- the Mooncake transfer engine ---------------------------------------------------------------------------------


def _mooncake(fixture_host: Any, python: PythonEnv | None) -> Finding:
    host = fixture_host("a3-16chips")
    facts = gather_host_facts(LocalHostProbe(host.root, environ=host.environ), root=str(host.root))
    facts = replace(facts, python=python)
    profile, matrix = load_profile(GLM_PD), load_matrix()
    ctx = CheckContext(facts, matrix, profile, release=row_for_version(matrix, "npu", profile.release))
    return next(f for f in host_findings(ctx) if f.id == "host.engine.mooncake")


def _engine(packages: dict[str, str], modules: tuple[str, ...] | None) -> PythonEnv:
    base = {"vllm": "0.23.0", "vllm-ascend": "0.23.0", "torch": "2.10.0", "torch-npu": "2.10.0.post4"}
    return PythonEnv("/opt/engine/bin/python", "flag", "3.11.10", {**base, **packages}, "A3", modules=modules)


def test_a_mooncake_profile_without_mooncake_fails_check(fixture_host: Any) -> None:
    missing = _mooncake(fixture_host, _engine({}, ()))
    assert missing.status == "fail" and missing.severity == "error" and missing.clause == "known-failure"
    assert "No module named 'mooncake'" in missing.message and "/opt/engine/bin/python" in missing.message
    assert missing.fix and "pip install mooncake-transfer-engine-npu==0.3.11.post1" in missing.fix
    assert "mooncake_connector.py:25" in missing.source
    wheel = _mooncake(fixture_host, _engine({"mooncake-transfer-engine-npu": "0.3.11.post1"}, ()))
    assert wheel.status == "pass" and "mooncake-transfer-engine-npu 0.3.11.post1" in wheel.message
    built = _mooncake(fixture_host, _engine({}, ("mooncake",)))  # a source build: a module, no metadata
    assert built.status == "pass" and "built from source" in built.message
    older = _mooncake(fixture_host, _engine({}, None))  # facts from a probe that did not look modules up
    assert older.status == "skip" and older.undecided
    assert _mooncake(fixture_host, None).status == "skip"  # no engine interpreter


def test_the_fix_follows_how_the_release_image_installs_mooncake(fixture_host: Any) -> None:
    """The era registry's `mooncake-install`, as the profile's plan chose it: a source build before v0.23.0rc1."""
    host = fixture_host("a3-16chips")
    facts = gather_host_facts(LocalHostProbe(host.root, environ=host.environ), root=str(host.root))
    facts, matrix = replace(facts, python=_engine({}, ())), load_matrix()
    fixes = {}
    for release in ("v0.18.0", "v0.25.1rc1"):
        profile = load_profile(GLM_PD, [f"release={release}"])
        row = row_for_version(matrix, "npu", release)
        ctx = CheckContext(facts, matrix, profile, release=row, plan=plan_profile(profile, host=facts))
        fixes[release] = next(f for f in host_findings(ctx) if f.id == "host.engine.mooncake").fix or ""
    assert "from source" in fixes["v0.18.0"] and "pip install" not in fixes["v0.18.0"]
    assert "pip install mooncake-transfer-engine-npu" in fixes["v0.25.1rc1"]


def test_mooncake_is_not_needed_without_a_mooncake_connector(fixture_host: Any) -> None:
    host = fixture_host("a3-16chips")
    facts = gather_host_facts(LocalHostProbe(host.root, environ=host.environ), root=str(host.root))
    ctx = CheckContext(replace(facts, python=_engine({}, ())), load_matrix(), None)
    assert next(f for f in host_findings(ctx) if f.id == "host.engine.mooncake").status == "skip"


def test_the_probe_finds_a_module_without_importing_it(tmp_path: Path) -> None:
    site = tmp_path / "site" / "mooncake"
    site.mkdir(parents=True)
    (site / "__init__.py").write_text("raise SystemExit('imported')\n")  # find_spec must not run it
    env = probe_python_env(
        LocalHostProbe("/", environ={"PYTHONPATH": str(site.parent)}), EnginePython(sys.executable, "flag")
    )
    assert env.error is None and env.modules == ("mooncake",)
    assert HostFacts(backend="npu", python=env).to_dict()["python"]["modules"] == ["mooncake"]
    read_back = HostFacts.from_dict(HostFacts(backend="npu", python=env).to_dict())
    assert read_back.python is not None and read_back.python.modules == ("mooncake",)
    without = probe_python_env(LocalHostProbe("/", environ={}), EnginePython(sys.executable, "flag"))
    assert without.modules == ()
