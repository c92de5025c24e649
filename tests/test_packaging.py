"""Packaging: two distributions — `ascendctl-engine` (the project folder engine/, import package
engine/ascendctl_engine/, never a bare `engine`) and `ascendctl` (the CLI, which depends on it) — editable and wheel.

The wheel test builds both from a copy of the source tree (no build/ or egg-info in the checkout), offline
(`--no-isolation`: the venv's own setuptools), and installs it with `--no-deps --no-index` into a fresh
venv that has no pip and no access to the checkout. The CLI's dependencies are made visible through a
plain path entry to this venv's site-packages: a path entry does not run that directory's `.pth`
files, so the editable-install hook that maps the checkout stays out and only the wheel's copy of
ascendctl can be imported.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import textwrap
import venv
import zipfile
from pathlib import Path

import pytest

import ascendctl

REPO = Path(__file__).resolve().parent.parent
PACKAGE_DIRS = {"ascendctl": REPO / "ascendctl", "ascendctl_engine": REPO / "engine" / "ascendctl_engine"}

PROBE = textwrap.dedent(
    """
    import importlib.util, json, sys
    import ascendctl, ascendctl_engine
    print(json.dumps({
        "ascendctl": ascendctl.__file__,
        "ascendctl_engine": ascendctl_engine.__file__,
        "engine": importlib.util.find_spec("engine") is not None,
        "version": ascendctl.__version__,
    }))
    """
)


def clean_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP")}
    env["PYTHONNOUSERSITE"] = "1"
    env["PIP_NO_INDEX"] = "1"  # never reach a package index from a test
    return env


def probe(python: Path | str, cwd: Path) -> dict[str, object]:
    proc = subprocess.run(
        [str(python), "-c", PROBE], cwd=cwd, env=clean_env(), capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert isinstance(result, dict)
    return result


def shipped_files(name: str) -> set[str]:
    """Every file of one package folder, as its path inside a wheel."""
    out: set[str] = set()
    for folder in (PACKAGE_DIRS[name],):
        for path in folder.rglob("*"):
            if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
                out.add(f"{name}/{path.relative_to(folder).as_posix()}")
    return out


def test_editable_install_maps_engine_folder(tmp_path: Path) -> None:
    if not Path(ascendctl.__file__).resolve().is_relative_to(REPO):
        pytest.skip("ascendctl is not installed in editable mode from this checkout")
    found = probe(sys.executable, tmp_path)  # a cwd outside the checkout: nothing comes from ./
    assert Path(str(found["ascendctl_engine"])).resolve() == REPO / "engine" / "ascendctl_engine" / "__init__.py"
    assert Path(str(found["ascendctl"])).resolve() == REPO / "ascendctl" / "__init__.py"
    assert found["engine"] is False, "the install must not provide a top-level `engine` module"


def _build_wheel(src: Path, out: Path, dist: str) -> Path:
    proc = subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(out), str(src)],
        cwd=src,
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    wheels = list(out.glob(f"{dist}-*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


@pytest.fixture(scope="module")
def wheels(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Both wheels, each built from a copy of its own project folder only."""
    src = tmp_path_factory.mktemp("src")
    for name in ("pyproject.toml", "README.md", "LICENSE", "CHANGELOG.md"):
        if (REPO / name).exists():
            shutil.copy2(REPO / name, src / name)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info")
    shutil.copytree(REPO / "ascendctl", src / "ascendctl", ignore=ignore)
    engine_src = tmp_path_factory.mktemp("engine-src")
    shutil.copytree(REPO / "engine", engine_src, ignore=ignore, dirs_exist_ok=True)
    out = tmp_path_factory.mktemp("wheelhouse")
    return {
        "ascendctl_engine": _build_wheel(engine_src, out, "ascendctl_engine"),
        "ascendctl": _build_wheel(src, out, "ascendctl"),
    }


def test_wheel_contents(wheels: dict[str, Path]) -> None:
    for package, wheel in wheels.items():
        with zipfile.ZipFile(wheel) as zf:
            names = set(zf.namelist())
        assert f"{package}/__init__.py" in names and f"{package}/py.typed" in names
        tops = {n.split("/")[0] for n in names}
        assert tops == {package, wheel.name.split("-py")[0] + ".dist-info"}, tops
        # every module and data file of the source folder is in its wheel: a data file missing from
        # `package-data` fails here
        missing = sorted(shipped_files(package) - names)
        assert missing == [], f"add these to the package-data of {package}'s pyproject.toml"
    with zipfile.ZipFile(wheels["ascendctl_engine"]) as zf:
        assert "ascendctl_engine/data/diagnoses.yaml" in zf.namelist()  # the diagnosis catalog (`ascendctl diagnose`)
    with zipfile.ZipFile(wheels["ascendctl"]) as zf:
        names = set(zf.namelist())
        entry_points = zf.read(next(n for n in names if n.endswith("entry_points.txt"))).decode()
        metadata = zf.read(next(n for n in names if n.endswith("METADATA"))).decode()
    assert "ascendctl = ascendctl.cli:main" in entry_points
    assert "Requires-Dist: ascendctl-engine==" in metadata  # the CLI depends on the engine distribution


def test_wheel_installs_and_runs_in_fresh_venv(wheels: dict[str, Path], tmp_path: Path) -> None:
    env_dir = tmp_path / "fresh"
    venv.EnvBuilder(with_pip=False, system_site_packages=False).create(env_dir)
    python = env_dir / "bin" / "python"
    install = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(python),
            "install",
            "--no-deps",
            "--no-index",
            *map(str, wheels.values()),
        ],
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert install.returncode == 0, install.stderr[-3000:]
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout.strip()

    # with nothing else on the path, the wheel's packages import from the fresh venv
    found = probe(python, tmp_path)
    assert Path(str(found["ascendctl_engine"])).resolve().is_relative_to(env_dir.resolve())
    assert Path(str(found["ascendctl"])).resolve().is_relative_to(env_dir.resolve())
    assert found["engine"] is False
    assert found["version"] == ascendctl.__version__

    # the dependencies (typer, pydantic, ...) from this venv, as a plain path entry after the wheel's own
    (Path(purelib) / "zz_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    found = probe(python, tmp_path)
    assert Path(str(found["ascendctl"])).resolve().is_relative_to(env_dir.resolve())
    assert found["engine"] is False
    profile = tmp_path / "p.yaml"
    shutil.copy2(sorted((REPO / "profiles").glob("*.yaml"))[0], profile)
    for argv, code in (
        (["-m", "ascendctl", "--version"], 0),
        (["-m", "ascendctl", "validate", "p.yaml"], 0),
        (["-m", "ascendctl", "validate", "p.yaml", "--set", "server.port=0"], 2),
    ):
        proc = subprocess.run(
            [str(python), *argv], cwd=tmp_path, env=clean_env(), capture_output=True, text=True, timeout=60
        )
        assert proc.returncode == code, (argv, proc.stdout, proc.stderr)
    script = env_dir / "bin" / "ascendctl"
    assert script.exists()
    proc = subprocess.run(
        [str(script), "--version"], cwd=tmp_path, env=clean_env(), capture_output=True, text=True, timeout=60
    )
    assert proc.stdout == f"ascendctl {ascendctl.__version__}\n"
