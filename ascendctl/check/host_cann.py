"""CANN rules: installed, sourced, NNAL/ATB, version vs the release row, graph capture vs HDK/CANN.

Facts (vllm-project/vllm-ascend): main:docs/source/installation.md (set_env.sh, NNAL, the kernels/ops package per
SoC) and main:collect_env.py (ascend_toolkit_install.info); main:docs/source/faqs.md #6 (`Failed to infer device
type` / `libatb.so` / `libhccl.so` when the env is not sourced; issues #130, #152, #262, #540); faqs.md #17 and
release notes v0.21.0rc1 (graph capture stream exhaustion with HDK < 25.5.1 / CANN < 8.5.0) and issues #5468,
#12998 (driver too old for CANN); main:docs/source/community/versioning_policy.md (CANN per release); the
matrix's `cann_driver_minimums` (Huawei's CANN release notes) and the hardware table's `cann_kernels` /
`cann_ops` / `opp_kernel_dir`.
"""

from __future__ import annotations

from ascendctl.check.context import CheckContext
from ascendctl.check.host_npu import needs_device, not_npu
from ascendctl.core.findings import Outcome, passed, problem, rule, skipped
from ascendctl.facts.matrix.schema import CannDriverMinimum, Hardware, in_range
from ascendctl_engine.host.cann import (
    NNAL_ATB_SET_ENV,
    OPP_KERNEL_SUBDIR,
    TOOLKIT_SET_ENV,
    atb_env_sourced,
    cann_env_sourced,
)
from ascendctl_engine.platform_needs import (
    CAPTURE_MIN_CANN,
    CAPTURE_MIN_HDK,
    STREAM_HUNGRY_MODES,
    capture_stream_shortfall,
)
from ascendctl_engine.versions import cann_below, cann_matches, cann_release_key


def _want_cann(ctx: CheckContext) -> str:
    if ctx.release is not None and ctx.release.cann:
        return f"CANN {ctx.release.cann} (the version release {ctx.release.version} is tested with)"
    return "the CANN version of your vllm-ascend release (`ascendctl matrix releases`)"


def set_env_script(ctx: CheckContext) -> str:
    return ctx.facts.cann.set_env or TOOLKIT_SET_ENV


@rule("host.cann.installed", "error", "CANN toolkit installed", clause="engine-start")
def cann_installed(ctx: CheckContext) -> Outcome:
    if (skip := not_npu(ctx)) is not None:
        return skip
    cann = ctx.facts.cann
    if cann.version is None:
        return problem(
            "no CANN toolkit found (looked at $ASCEND_HOME_PATH, /usr/local/Ascend/ascend-toolkit/latest, "
            "/usr/local/Ascend/cann and cann-<version>)",
            f"install {_want_cann(ctx)}: the toolkit, the kernels package for your SoC and NNAL "
            "(or use the vllm-ascend container image, which has them)",
        )
    others = [v for v in cann.installed_versions if v != cann.version]
    also = f"; also installed: {', '.join(others)}" if others else ""
    return passed(f"CANN {cann.version} at {cann.path} ({cann.layout} layout, from {cann.source}){also}")


@rule("host.cann.sourced", "error", "CANN environment sourced", clause="engine-start")
def cann_sourced(ctx: CheckContext) -> Outcome:
    if (skip := not_npu(ctx)) is not None:
        return skip
    if ctx.facts.cann.version is None and not ctx.facts.cann.set_env:
        return skipped("CANN not installed")
    sourced, home = cann_env_sourced(ctx.env)
    script = set_env_script(ctx)
    if not sourced:
        seen = f"{'ASCEND_HOME_PATH/ASCEND_TOOLKIT_HOME=' + home if home else 'ASCEND_HOME_PATH is unset'}"
        return problem(
            f"the CANN environment is not sourced ({seen}; no CANN directory on LD_LIBRARY_PATH): "
            "`import torch_npu` fails with `libhccl.so: cannot open shared object file` and vLLM with "
            "`Failed to infer device type`",
            f"source {script}",
        )
    return passed(f"sourced (home {home})")


@rule("host.cann.atb", "error", "NNAL / ATB (libatb.so) installed and sourced", clause="engine-start")
def cann_atb(ctx: CheckContext) -> Outcome:
    if (skip := not_npu(ctx)) is not None:
        return skip
    if ctx.facts.cann.version is None:
        return skipped("CANN not installed")
    if not ctx.facts.cann.nnal_installed:
        return problem(
            f"NNAL is not installed ({NNAL_ATB_SET_ENV} missing): `import torch_npu` / vllm-ascend fail with "
            "`libatb.so: cannot open shared object file`",
            f"install the Ascend-cann-nnal package matching your CANN version, then `source {NNAL_ATB_SET_ENV}`",
        )
    if not atb_env_sourced(ctx.env):
        return problem(
            "NNAL/ATB is installed but not sourced (no ATB_HOME_PATH, no nnal/atb on LD_LIBRARY_PATH): "
            "expect `libatb.so: cannot open shared object file`",
            f"source {NNAL_ATB_SET_ENV}",
        )
    return passed("NNAL/ATB installed and sourced")


@rule("host.cann.release", "error", "CANN version matches the release row", clause="known-failure")
def cann_release(ctx: CheckContext) -> Outcome:
    if (skip := not_npu(ctx)) is not None:
        return skip
    have = ctx.facts.cann.version
    row = ctx.release
    if have is None:
        return skipped("CANN not installed")
    if row is None or row.backend != "npu" or not row.cann:
        return skipped("no vllm-ascend release row selected" if row is None else "the row names no CANN")
    accepted = [row.cann] + ([row.cann_alt] if row.cann_alt else [])
    if cann_matches(accepted, have):
        return passed(f"CANN {have} is what {row.version} is tested with")
    want = row.cann
    msg = f"CANN {have} is installed but release {row.version} is tested with CANN {' / '.join(accepted)}"
    fix = (
        f"install CANN {want} (toolkit + kernels + NNAL) and source its set_env.sh, or pick the release row "
        f"for CANN {have} (`ascendctl matrix releases`)"
    )
    if cann_release_key(have)[:2] == cann_release_key(want)[:2]:
        return problem(msg + " (same major.minor)", fix, severity="warn")
    return problem(msg, fix)


@rule("host.cann.graph-capture", "warn", "HDK / CANN new enough to capture the graph mode")
def cann_graph_capture(ctx: CheckContext) -> Outcome:
    if (skip := not_npu(ctx)) is not None:
        return skip
    mode = ctx.graph_mode
    if mode not in STREAM_HUNGRY_MODES:
        return skipped(f"graph mode {mode} captures few graphs")
    old = capture_stream_shortfall(mode, ctx.facts.driver.version, ctx.facts.cann.version)
    if old:
        return problem(
            f"graph mode {mode} with {', '.join(old)}: capture can fail with `AclmdlRICaptureBegin … error code "
            "is 207008` / `Stream resources are insufficient`",
            f"upgrade the HDK to ≥ {CAPTURE_MIN_HDK} and CANN to ≥ {CAPTURE_MIN_CANN}, or use engine.graph.mode: "
            "full-decode-only (fewer captured graphs), or fewer engine.graph.capture_sizes",
        )
    return passed(f"graph mode {mode}: HDK {ctx.facts.driver.version or '?'}, CANN {ctx.facts.cann.version or '?'}")


@rule("host.npu.release-hardware", "error", "The release supports this hardware family", clause="placement")
def npu_release_hardware(ctx: CheckContext) -> Outcome:
    if (skip := needs_device(ctx, "check the release against")) is not None:
        return skip  # the profile's family against the release is the plan's (plan.matrix.hardware)
    row = ctx.release
    hw = ctx.hardware
    if row is None or row.backend != "npu" or hw is None:
        return skipped("no release row or hardware family to compare")
    if not in_range(hw.releases, row.version):
        return problem(
            f"release {row.version} does not support {hw.name} (supported by {hw.releases})",
            f"pick a release that supports {hw.id} (`ascendctl matrix releases --hardware {hw.id}`)",
        )
    image = row.images.get(hw.id)
    return passed(f"{row.version} supports {hw.name}" + (f" (image {image})" if image else ""))


@rule("host.npu.graph-min-cann", "error", "CANN new enough for graph mode on this family", clause="known-failure")
def npu_graph_min_cann(ctx: CheckContext) -> Outcome:
    if (skip := not_npu(ctx)) is not None:
        return skip
    if ctx.plan is not None:
        return skipped("the plan applies this limit (plan.matrix.*)")
    hw, cann = ctx.hardware, ctx.facts.cann.version
    need = hw.limits.graph_min_cann if hw is not None else None
    if hw is None or need is None or ctx.graph_mode == "eager":
        return skipped("no graph minimum for this family, or eager")
    if cann_below(cann, need):
        return problem(
            f"graph mode on {hw.name} needs CANN >= {need}, this host has {cann}",
            f"upgrade CANN to {need} or set engine.graph.mode: eager",
        )
    return passed(f"CANN {cann or '?'} for graph mode on {hw.name}")


def kernels_package(hw: Hardware, cann: str) -> str | None:
    """The family's kernels/ops package for this CANN: `cann_ops` from CANN 8.5 on (Huawei renamed kernels to
    ops), `cann_kernels` before; either when only one is recorded."""
    if cann_below(cann, "8.5.0"):
        return hw.cann_kernels or hw.cann_ops
    return hw.cann_ops or hw.cann_kernels


@rule(
    "host.cann.kernels",
    "error",
    "CANN kernels/ops package installed for this SoC",
    source="matrix hardware cann_kernels/cann_ops/opp_kernel_dir; main:docs/source/installation.md",
    clause="engine-start",
)
def cann_kernels(ctx: CheckContext) -> Outcome:
    if (skip := not_npu(ctx)) is not None:
        return skip
    cann = ctx.facts.cann
    if cann.version is None or cann.path is None:
        return skipped("CANN not installed")
    hw = next((h for h in ctx.matrix.hardware if h.id == ctx.facts.family), None) if ctx.matrix else None
    if hw is None or hw.opp_kernel_dir is None:
        return skipped("no kernel directory recorded for this host's family (or family unknown)")
    if cann.kernel_socs is None:
        return skipped("the op kernel directory was not looked at")
    where = f"{cann.path.rstrip('/')}/{OPP_KERNEL_SUBDIR}/{hw.opp_kernel_dir}"
    if hw.opp_kernel_dir in cann.kernel_socs:
        return passed(f"op kernels for {hw.opp_kernel_dir} under {where}")
    package = kernels_package(hw, cann.version)
    named = f"{package} {cann.version}" if package else f"the CANN {cann.version} kernels/ops package for {hw.name}"
    have = f" (kernels present only for {', '.join(cann.kernel_socs)})" if cann.kernel_socs else ""
    return problem(
        f"CANN {cann.version} is installed but has no op kernels for {hw.name}: {where} is missing or holds no "
        f"kernels{have}; every compute op fails (`AclOpKernelInit failed`, `EH9999 ... init runtime platform info "
        "failed`)",
        f"install {named} (`./{package or '<kernels-package>'}_{cann.version}_linux-$(uname -i).run --install` "
        f"after `source {set_env_script(ctx)}`), or use the vllm-ascend image for {hw.id}, which has it",
    )


def driver_minimum(rows: list[CannDriverMinimum], cann: str) -> CannDriverMinimum | None:
    """The row of this CANN's major.minor line (`8.5.0`, `8.5.2` → the `8.5` row), if recorded."""
    return next((r for r in rows if cann_release_key(r.cann)[:2] == cann_release_key(cann)[:2]), None)


@rule(
    "host.npu.driver-cann",
    "error",
    "Driver (HDK) new enough for the installed CANN",
    source="matrix cann_driver_minimums (Huawei CANN release notes: CANN ↔ Ascend HDK compatibility)",
    clause="known-failure",
)
def npu_driver_cann(ctx: CheckContext) -> Outcome:
    if (skip := not_npu(ctx)) is not None:
        return skip
    cann, driver = ctx.facts.cann.version, ctx.facts.driver.version
    if cann is None or driver is None:
        return skipped("CANN or driver version not known")
    rows = ctx.matrix.cann_driver_minimums if ctx.matrix is not None else []
    row = driver_minimum(rows, cann)
    if row is None:
        lines = ", ".join(r.cann for r in rows) or "none"
        return skipped(f"no recorded HDK minimum for CANN {cann} (recorded lines: {lines})")
    if cann_below(driver, row.driver):
        return problem(
            f"driver (HDK) {driver} is older than CANN {cann} supports (HDK >= {row.driver}, per {row.source}): "
            "expect device init or op failures",
            f"upgrade the Ascend HDK (driver + firmware) to {row.driver} or newer and reboot, or install a CANN "
            f"release whose notes list HDK {driver}",
        )
    return passed(f"driver {driver} >= {row.driver}, the oldest HDK CANN {row.cann}.x runs on")
