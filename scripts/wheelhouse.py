"""An offline install of ascendctl: the project wheel and every runtime dependency for one platform, in one folder.

    python scripts/wheelhouse.py [--platform aarch64|x86_64] [--python 3.11] [--extras hub,plot] [--out DIR]
    python scripts/wheelhouse.py --check DIR [--platform aarch64|x86_64]   # every wheel fits the platform
    python scripts/wheelhouse.py --install-test DIR                        # install it offline and run it

`make wheelhouse [PLATFORM=aarch64|x86_64] [PYTHON=3.11] [EXTRAS=hub]` runs the first form. An Ascend host is
usually aarch64 and often has no network: build the folder on a machine with the package index, copy it over and
run its `install.sh` (`pip install --no-index --find-links DIR ascendctl`). The folder holds ascendctl alone: the
engine environments (vllm, torch, torch-npu on CANN) are not pip-installable offline in a useful way, so an offline
NPU host runs the release's container image (`ascendctl pin PROFILE` names it) and points ascendctl at it.

Downloading uses pip itself (`pip download --only-binary=:all: --platform manylinux2014_<arch> --python-version X`),
so the folder is what pip would install on that platform; `--check` reads each wheel's tags from its file name
(`packaging.utils.parse_wheel_filename`) and refuses one built for another machine.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import venv
from pathlib import Path

from packaging.utils import parse_wheel_filename

REPO = Path(__file__).resolve().parent.parent
ARCHES = ("x86_64", "aarch64")
# The manylinux baseline the dependencies publish wheels for (glibc 2.17: every supported Ascend OS image is newer)
MANYLINUX = "manylinux2014"
INSTALL_SH = """#!/bin/sh
# Install ascendctl{extras} offline from this folder ({arch}, Python {python}); the engine environments (vllm,
# torch, torch-npu) are not here: on an NPU host use the release's container image (`ascendctl pin PROFILE`).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
exec "${{PYTHON:-python3}}" -m pip install --no-index --find-links "$here" "ascendctl{extras}"
"""


def machine_arch() -> str:
    arch = platform.machine().lower()
    return {"amd64": "x86_64", "arm64": "aarch64"}.get(arch, arch)


def build(arch: str, python: str, extras: list[str], out: Path) -> Path:
    """Build the project wheel into `out` and download every runtime dependency for `arch` / `python` beside it."""
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("ascendctl-*.whl"):
        old.unlink()  # a wheel of an earlier version would be installed too
    with tempfile.TemporaryDirectory(prefix="ascendctl-src.") as src:
        checkout(Path(src))  # what a clone holds: no build/ or egg-info of the working tree leaks in
        _run([sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(out), src], "build")
    [wheel] = out.glob("ascendctl-*.whl")
    wanted = f"{wheel}[{','.join(extras)}]" if extras else str(wheel)
    _run(
        [
            sys.executable, "-m", "pip", "download", "--quiet", "--dest", str(out), "--only-binary=:all:",
            "--platform", f"{MANYLINUX}_{arch}", "--python-version", python, "--implementation", "cp", wanted,
        ],
        "download",
    )  # fmt: skip
    said = f"[{','.join(extras)}]" if extras else ""
    script = out / "install.sh"
    script.write_text(INSTALL_SH.format(extras=said, arch=arch, python=python), encoding="utf-8")
    script.chmod(0o755)
    return out


def checkout(dest: Path) -> None:
    """Copy the files git would commit (tracked, and new ones it does not ignore) to `dest`."""
    listed = _run(["git", "-C", str(REPO), "ls-files", "-z", "--cached", "--others", "--exclude-standard"], "git")
    for name in filter(None, listed.split("\0")):
        source = REPO / name
        if source.is_file():  # a file deleted in the working tree is still listed
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dest / name)


def misfits(folder: Path, arch: str) -> list[str]:
    """The wheels in `folder` that do not install on `arch` (each tag of a wheel built for a machine names it)."""
    out = []
    for wheel in sorted(folder.glob("*.whl")):
        _, _, _, tags = parse_wheel_filename(wheel.name)
        if not all(t.platform == "any" or t.platform.endswith(f"_{arch}") for t in tags):
            out.append(wheel.name)
    return out


def install_test(folder: Path) -> None:
    """Install the folder with `--no-index` into a fresh venv and run `ascendctl --version` and `validate`."""
    with tempfile.TemporaryDirectory(prefix="ascendctl-wheelhouse.") as scratch:
        env_dir = Path(scratch) / "venv"
        venv.EnvBuilder(with_pip=False).create(env_dir)
        python = env_dir / "bin" / "python"
        environ = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "PYTHON"))}
        environ["PIP_NO_INDEX"] = "1"  # nothing from an index: everything comes from the folder
        pip = [sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet"]
        _run([*pip, "--no-index", "--find-links", str(folder), "ascendctl"], "install", environ)
        profile = Path(scratch) / "cpu-demo.yaml"
        shutil.copy2(REPO / "profiles" / "cpu-demo.yaml", profile)
        script = env_dir / "bin" / "ascendctl"
        version = _run([str(script), "--version"], "ascendctl --version", environ, cwd=scratch)
        _run([str(script), "validate", str(profile)], "ascendctl validate", environ, cwd=scratch)
        print(f"wheelhouse {folder}: installed offline into a fresh venv, {version.strip()}, validate ok")


def _run(argv: list[str], what: str, env: dict[str, str] | None = None, cwd: str | None = None) -> str:
    proc = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        sys.exit(f"wheelhouse: {what} failed (exit {proc.returncode}):\n{proc.stdout[-2000:]}{proc.stderr[-2000:]}")
    return proc.stdout


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--platform", choices=ARCHES, default=machine_arch())
    parser.add_argument("--python", default=f"{sys.version_info.major}.{sys.version_info.minor}")
    parser.add_argument("--extras", default="", help="comma-separated extras (hub, plot)")
    parser.add_argument("--out", type=Path, help="default: dist/wheelhouse-PLATFORM-pyPYTHON")
    parser.add_argument("--check", type=Path, metavar="DIR", help="check DIR's wheels against --platform")
    parser.add_argument("--install-test", type=Path, metavar="DIR", help="install DIR offline and run ascendctl")
    args = parser.parse_args(argv)
    if args.check is not None:
        bad = misfits(args.check, args.platform)
        wheels = len(list(args.check.glob("*.whl")))
        if bad or not wheels:
            print(f"wheelhouse {args.check}: not for {args.platform}: {', '.join(bad) or 'no wheels'}", file=sys.stderr)
            return 1
        print(f"wheelhouse {args.check}: {wheels} wheels, every one {args.platform} or pure Python")
        return 0
    if args.install_test is not None:
        install_test(args.install_test)
        return 0
    extras = [e for e in args.extras.split(",") if e]
    out = args.out or REPO / "dist" / f"wheelhouse-{args.platform}-py{args.python}"
    build(args.platform, args.python, extras, out)
    wheels = len(list(out.glob("*.whl")))
    print(f"wheelhouse {out}: {wheels} wheels for {args.platform}, Python {args.python}; install: {out}/install.sh")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
