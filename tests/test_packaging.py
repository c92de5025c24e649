"""Packaging: one distribution, `ascendctl`, shipping two import packages — `ascendctl` (the CLI) and
`ascendctl_engine` (the bundled engine, folder engine/ascendctl_engine/, never a bare `engine`) — editable, as a
wheel, and `pip install .` from a checkout.

The wheel and the `pip install .` tests work from a copy of the files git holds (as a fresh clone has them: no
build/ or egg-info of the working tree), offline (`--no-isolation` / `--no-build-isolation`: the venv's own
setuptools), into a fresh venv that has no pip and no access to the checkout (`--no-deps --no-index`). The CLI's
dependencies are made visible through a plain path entry to this venv's site-packages: a path entry does not run
that directory's `.pth` files, so the editable-install hook that maps the checkout stays out and only the installed
copy of ascendctl can be imported. Resolving the dependencies from a package index offline is `make
wheelhouse-check`'s (scripts/wheelhouse.py, part of `make test`).
"""

from __future__ import annotations

import importlib.util
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
from types import ModuleType

import pytest

import ascendctl

REPO = Path(__file__).resolve().parent.parent


def _script(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, REPO / "scripts" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


WHEELHOUSE = _script("wheelhouse")
checkout, misfits = WHEELHOUSE.checkout, WHEELHOUSE.misfits
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


def _build_wheel(src: Path, out: Path) -> Path:
    proc = subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(out), str(src)],
        cwd=src,
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    wheels = list(out.glob("*.whl"))
    assert [w.name.split("-")[0] for w in wheels] == ["ascendctl"], wheels
    return wheels[0]


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The files git holds, as a fresh clone has them."""
    src = tmp_path_factory.mktemp("clone")
    checkout(src)
    assert not (src / "engine" / "pyproject.toml").exists(), "the engine is no distribution of its own"
    return src


@pytest.fixture(scope="module")
def wheel(clone: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _build_wheel(clone, tmp_path_factory.mktemp("wheelhouse"))


def test_wheel_contents(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        entry_points = zf.read(next(n for n in names if n.endswith("entry_points.txt"))).decode()
        metadata = zf.read(next(n for n in names if n.endswith("METADATA"))).decode()
    tops = {n.split("/")[0] for n in names}
    assert tops == {"ascendctl", "ascendctl_engine", wheel.name.split("-py")[0] + ".dist-info"}, tops
    for package in PACKAGE_DIRS:
        assert f"{package}/__init__.py" in names and f"{package}/py.typed" in names
        # every module and data file of the source folder is in the wheel: a data file missing from `package-data`
        # fails here
        missing = sorted(shipped_files(package) - names)
        assert missing == [], f"add these to [tool.setuptools.package-data] {package} in pyproject.toml"
    assert "ascendctl_engine/data/diagnoses.yaml" in names  # the diagnosis catalog (`ascendctl diagnose`)
    assert "ascendctl = ascendctl.cli:main" in entry_points
    requires = [line for line in metadata.splitlines() if line.startswith("Requires-Dist:")]
    assert requires and not any("ascendctl" in line for line in requires)  # no separate engine distribution


def _fresh_venv(env_dir: Path) -> Path:
    venv.EnvBuilder(with_pip=False, system_site_packages=False).create(env_dir)
    return env_dir / "bin" / "python"


def _see_dependencies(python: Path) -> None:
    """This venv's site-packages as a plain path entry after the fresh venv's own (see the module docstring)."""
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout.strip()
    (Path(purelib) / "zz_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")


def _pip_install(python: Path, *args: str) -> None:
    install = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "--no-index", *args],
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert install.returncode == 0, install.stdout[-3000:] + install.stderr[-3000:]


def test_pip_install_dot_from_a_checkout(clone: Path, tmp_path: Path) -> None:
    """`pip install .` in a fresh clone installs both import packages (it failed while the CLI depended on an
    engine distribution no index has)."""
    python = _fresh_venv(tmp_path / "fresh")
    _see_dependencies(python)  # setuptools, to build offline (`--no-build-isolation` builds in the target venv)
    _pip_install(python, "--no-build-isolation", str(clone))
    found = probe(python, tmp_path)
    for package in PACKAGE_DIRS:
        assert Path(str(found[package])).resolve().is_relative_to((tmp_path / "fresh").resolve()), package
    assert found["engine"] is False and found["version"] == ascendctl.__version__


def test_wheel_installs_and_runs_in_fresh_venv(wheel: Path, tmp_path: Path) -> None:
    env_dir = tmp_path / "fresh"
    python = _fresh_venv(env_dir)
    _pip_install(python, str(wheel))

    # with nothing else on the path, the wheel's packages import from the fresh venv
    found = probe(python, tmp_path)
    assert Path(str(found["ascendctl_engine"])).resolve().is_relative_to(env_dir.resolve())
    assert Path(str(found["ascendctl"])).resolve().is_relative_to(env_dir.resolve())
    assert found["engine"] is False
    assert found["version"] == ascendctl.__version__

    # the dependencies (typer, pydantic, ...) from this venv, as a plain path entry after the wheel's own
    _see_dependencies(python)
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


def test_a_wheelhouse_is_checked_by_its_wheel_tags(tmp_path: Path) -> None:
    """`make wheelhouse-check`'s aarch64 check: a wheel built for another machine is named, pure Python passes."""
    for name in (
        "rich-15.0.0-py3-none-any.whl",
        "pyyaml-6.0.4-cp311-cp311-manylinux2014_aarch64.manylinux_2_17_aarch64.whl",
        "markupsafe-3.0.4-cp311-cp311-manylinux2014_x86_64.manylinux_2_17_x86_64.whl",
    ):
        (tmp_path / name).write_bytes(b"")
    assert misfits(tmp_path, "aarch64") == [
        "markupsafe-3.0.4-cp311-cp311-manylinux2014_x86_64.manylinux_2_17_x86_64.whl"
    ]
    assert misfits(tmp_path, "x86_64") == ["pyyaml-6.0.4-cp311-cp311-manylinux2014_aarch64.manylinux_2_17_aarch64.whl"]
