"""CANN rules: installed, sourced, NNAL/ATB, version vs the release row, graph capture vs HDK/CANN.

Facts: ../shared/reference/vllm-ascend.md §10.1 (files, set_env.sh, NNAL), §11 #1 (`Failed to infer device
type` / `libatb.so` / `libhccl.so` when the env is not sourced, FAQ #6), §11 #10 and #30 (graph capture
stream exhaustion with HDK < 25.5.1 / CANN < 8.5.0; driver too old for CANN), §1.1 (CANN per release).
"""

from __future__ import annotations

from ascendctl.checks.context import CheckContext
from ascendctl.checks.rules_npu import not_npu
from ascendctl.rules import Outcome, passed, problem, rule, skipped
from ascendctl_engine.adapters.graph import (
    CAPTURE_MIN_CANN,
    CAPTURE_MIN_HDK,
    STREAM_HUNGRY_MODES,
    capture_stream_shortfall,
)
from ascendctl_engine.host.cann import (
    NNAL_ATB_SET_ENV,
    TOOLKIT_SET_ENV,
    atb_env_sourced,
    cann_env_sourced,
)
from ascendctl_engine.versions import cann_below, cann_matches, cann_release_key


def _want_cann(ctx: CheckContext) -> str:
    if ctx.release is not None and ctx.release.cann:
        return f"CANN {ctx.release.cann} (the version release {ctx.release.version} is tested with)"
    return "the CANN version of your vllm-ascend release (`ascendctl matrix releases`)"


def set_env_script(ctx: CheckContext) -> str:
    return ctx.facts.cann.set_env or TOOLKIT_SET_ENV


@rule("host.cann.installed", "error", "CANN toolkit installed")
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


@rule("host.cann.sourced", "error", "CANN environment sourced")
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


@rule("host.cann.atb", "error", "NNAL / ATB (libatb.so) installed and sourced")
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


@rule("host.cann.release", "error", "CANN version matches the release row")
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


@rule("host.npu.release-hardware", "error", "The release supports this hardware family")
def npu_release_hardware(ctx: CheckContext) -> Outcome:
    if (skip := not_npu(ctx)) is not None:
        return skip
    row = ctx.release
    hw = ctx.hardware
    if row is None or row.backend != "npu" or hw is None:
        return skipped("no release row or hardware family to compare")
    from ascendctl.models.matrix import in_range

    if not in_range(hw.releases, row.version):
        return problem(
            f"release {row.version} does not support {hw.name} (supported by {hw.releases})",
            f"pick a release that supports {hw.id} (`ascendctl matrix releases --hardware {hw.id}`)",
        )
    image = row.images.get(hw.id)
    return passed(f"{row.version} supports {hw.name}" + (f" (image {image})" if image else ""))


@rule("host.npu.graph-min-cann", "error", "CANN new enough for graph mode on this family")
def npu_graph_min_cann(ctx: CheckContext) -> Outcome:
    if (skip := not_npu(ctx)) is not None:
        return skip
    if ctx.plan is not None:
        return skipped("the plan applies this limit (plan.supported)")
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
