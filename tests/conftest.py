"""Shared fixtures. Each helper appends its own fixtures at the end; keep one block per concern."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fixture_hosts import HOST_ENV_PREFIXES, HOSTS_DIR, write_stubs

from tests.state_records import reap_started


@pytest.fixture(autouse=True)
def _reap_started_processes() -> Iterator[None]:
    """The stand-in processes a test started (`tests.state_records.STARTED`) end with it, by pid."""
    yield
    reap_started()


@pytest.fixture(autouse=True)
def isolated_state(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own ascendctl home and XDG directories: nothing reads or writes the real ones."""
    root = tmp_path_factory.mktemp("state")
    for var, sub in (
        ("ASCENDCTL_HOME", "ascendctl-home"),
        ("XDG_DATA_HOME", "xdg-data"),
        ("XDG_STATE_HOME", "xdg-state"),
        ("XDG_CONFIG_HOME", "xdg-config"),
        ("XDG_CACHE_HOME", "xdg-cache"),
        # the model inspector reads the Hugging Face / ModelScope caches: tests never see the machine's own
        ("HF_HOME", "hf-home"),
        ("HF_HUB_CACHE", "hf-hub"),
        ("MODELSCOPE_CACHE", "modelscope"),
    ):
        (root / sub).mkdir()
        monkeypatch.setenv(var, str(root / sub))
    monkeypatch.delenv("ASCENDCTL_DEBUG", raising=False)
    return root


@pytest.fixture
def valid_profile_text() -> str:
    """A small valid CPU profile, for tests that break one thing in it."""
    return (
        "apiVersion: ascendctl/v1\n"
        "kind: Profile\n"
        "metadata:\n"
        "  name: demo\n"
        "model:\n"
        "  source: org/model\n"
        "target:\n"
        "  backend: cpu\n"
    )


# --- serving (launcher/supervisor helper): a fake `vllm` (tests/fixtures/fake_vllm.py), a fake engine
# environment that `find_engine` accepts, and free loopback ports.
FAKE_VLLM_SCRIPT = Path(__file__).resolve().parent / "fixtures" / "fake_vllm.py"


def make_fake_vllm(directory: Path) -> Path:
    """An executable called `vllm` that runs the fake engine with this interpreter."""
    import sys

    directory.mkdir(parents=True, exist_ok=True)
    exe = directory / "vllm"
    exe.write_text(
        f"#!{sys.executable}\nimport runpy, sys\nsys.argv[0] = 'vllm'\n"
        f"runpy.run_path({str(FAKE_VLLM_SCRIPT)!r}, run_name='__main__')\n"
    )
    exe.chmod(0o755)
    return exe


def pick_free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def fake_vllm(tmp_path: Path) -> Path:
    return make_fake_vllm(tmp_path / "engine-bin")


@pytest.fixture
def free_port() -> int:
    return pick_free_port()


@pytest.fixture
def fake_cpu_engine_env(isolated_state: Path) -> Path:
    """The CPU engine environment `latest-stable` resolves to, made of the fake `vllm` (under ASCENDCTL_HOME)."""
    import json
    import os
    import sys

    from ascendctl.run.engine_envs import engine_spec_for
    from ascendctl_engine import paths

    spec = engine_spec_for("cpu", "latest-stable")
    root = paths.engines_dir() / spec.name
    make_fake_vllm(root / "bin")
    os.symlink(sys.executable, root / "bin" / "python")
    manifest = {"backend": "cpu", "release": spec.release, "resolved": {"vllm": "0.0.0+fake"}}
    (root / "manifest.json").write_text(json.dumps(manifest))
    return root


# --- host checks (issue 4): fixture hosts under tests/fixtures/hosts/<name>/ (tests/fixture_hosts.py)


class FixtureHost:
    """A captured host: `root` for --root, `engine_python` (a stub printing the captured package report),
    `environ` (the host's environment with PATH holding a stub `npu-smi` when one was captured). `root` may name
    a modified copy of the tree (a variant made in tmp_path)."""

    def __init__(self, name: str, workdir: Path, root: Path | None = None) -> None:
        import json

        self.name = name
        self.root = root if root is not None else HOSTS_DIR / name
        captured = self.root / "_captured"
        bin_dir = workdir / f"{name}-bin"
        self.engine_python = write_stubs(captured, bin_dir)
        self.captured_env: dict[str, str] = json.loads((captured / "env.json").read_text())
        self.environ = {**self.captured_env, "PATH": f"{bin_dir}:/usr/bin:/bin"}

    def cli_env(self) -> dict[str, str | None]:
        """For CliRunner.invoke(env=...): the captured variables set, the test machine's Ascend ones removed."""
        import os

        cleared: dict[str, str | None] = {k: None for k in os.environ if k.startswith(HOST_ENV_PREFIXES)}
        cleared.pop("ASCENDCTL_HOME", None)
        return {**cleared, **self.environ}


@pytest.fixture
def fixture_host(tmp_path: Path):  # type: ignore[no-untyped-def]
    """`fixture_host("a2-910b3x8")` → a `FixtureHost` with its stubs written under tmp_path;
    `fixture_host("a2-910b3x8", root=copy)` → the same host read from a modified copy of its tree."""
    return lambda name, root=None: FixtureHost(name, tmp_path, root)


# --- engine environments and prepared models (issue 6): the REAL CPU engine, for e2e tests ----------------
# Computed at import, before `isolated_state` points ASCENDCTL_HOME at a temporary directory: the engine
# environment (~2.5 GB, minutes to install) lives in the real data dir and is shared by every run.
def _real_data_dir() -> Path:
    from ascendctl_engine.paths import data_dir

    return data_dir()


REAL_DATA_DIR = _real_data_dir()


def _progress(line: str) -> None:
    import sys

    if line.startswith("==>"):  # step headers only: pip's own lines would flood the test log
        print(line, file=sys.__stderr__, flush=True)


@pytest.fixture(scope="session")
def engine_data_dir() -> Path:
    """ascendctl's real data dir ($ASCENDCTL_HOME, else $XDG_DATA_HOME/ascendctl, else ~/.local/share/ascendctl)."""
    return REAL_DATA_DIR


@pytest.fixture(scope="session")
def cpu_engine(engine_data_dir: Path) -> object:
    """The real CPU engine environment (an `ascendctl_engine.envs.EngineEnv`), installed once per run when
    missing (minutes; later runs find it at once). Only e2e tests use it. Set ASCENDCTL_E2E_NO_INSTALL=1 to
    skip instead of installing."""
    import os

    from ascendctl.run.engine_envs import engine_spec_for
    from ascendctl_engine import envs
    from ascendctl_engine.install_plan import plan_install

    spec = engine_spec_for("cpu", "latest-stable")
    found = envs.find_engine(spec.backend, spec.release, root=engine_data_dir)
    if found is not None:
        return found
    if os.environ.get("ASCENDCTL_E2E_NO_INSTALL", "") not in ("", "0"):
        pytest.skip(f"the CPU engine environment {spec.name} is absent: ascendctl engine install --backend cpu")
    try:
        return envs.install_engine(plan_install(spec), root=engine_data_dir, log=_progress).env
    except envs.EngineEnvError as exc:
        pytest.fail(f"installing the CPU engine failed: {exc}\n" + "\n".join(exc.output), pytrace=False)


def _prepared(name: str, engine: object, root: Path) -> Path:
    from ascendctl_engine import prepared_models

    python = engine.python  # type: ignore[attr-defined]
    try:
        return prepared_models.prepare_model(name, python, root=root, log=_progress).path
    except prepared_models.ModelError as exc:
        pytest.fail(f"preparing {name} failed: {exc}\n" + "\n".join(exc.output), pytrace=False)


@pytest.fixture(scope="session")
def tiny_model(cpu_engine: object, engine_data_dir: Path) -> Path:
    """`prepared:tiny-random` in the real data dir (a few seconds the first time)."""
    return _prepared("tiny-random", cpu_engine, engine_data_dir)


@pytest.fixture(scope="session")
def smollm2_model(cpu_engine: object, engine_data_dir: Path) -> Path:
    """`prepared:smollm2-135m-instruct` in the real data dir (download + ~20 s conversion the first time)."""
    return _prepared("smollm2-135m-instruct", cpu_engine, engine_data_dir)


@pytest.fixture
def real_engine_home(engine_data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """For CLI-level e2e tests: point ASCENDCTL_HOME back at the real data dir, where the engine lives."""
    monkeypatch.setenv("ASCENDCTL_HOME", str(engine_data_dir))
    return engine_data_dir
