"""NPU hardware rules: driver, npu-smi, devices, device nodes, SoC family, health, masks, HBM.

Facts (vllm-project/vllm-ascend): main:docs/source/faqs.md #1 and the README "Prerequisites" (supported
products), main:vllm_ascend/device/hardware.py and setup.py get_chip_type (SoC names; an unknown SoC fails with
`Undefined soc_version` / `Cannot support runtime soc_version`; SOC_VERSION for a build: faqs.md #21), the
tutorials' "64GB × 8" / "64GB × 16" hardware lines and issues #3403, #1141 (HBM per device),
main:docs/source/installation.md (device nodes, driver files), `NPUPlatform.device_control_env_var` in
main:vllm_ascend/platform.py (`ASCEND_RT_VISIBLE_DEVICES`); npu-smi's DCMI return codes
(`engine/ascendctl_engine/host/npu_smi.py::DCMI_CAUSES`).
"""

from __future__ import annotations

import shlex

from ascendctl.check.context import CheckContext
from ascendctl.core.findings import Outcome, passed, problem, rule, skipped, undecided
from ascendctl.plan.fit.report import summary_line
from ascendctl_engine.host.facts import NpuDevice, devices_in_use
from ascendctl_engine.host.facts import parse_device_mask as parse_mask
from ascendctl_engine.host.npu_smi import DCMI_CAUSES, dcmi_error_code

DRIVER_FIX = (
    "install the Ascend HDK (driver + firmware) that the CANN release notes name for your CANN version, "
    "then reboot; in a container mount /usr/local/Ascend/driver and /usr/local/bin/npu-smi"
)
SUPPORTED_HARDWARE = (
    "Atlas A2 (910B1/910B2/910B2C/910B3/910B4/910B4-1), Atlas A3 (Ascend910, two chips per card), "
    "Atlas 300I Duo (310P3, experimental) and Atlas 950"
)


def not_npu(ctx: CheckContext) -> Outcome | None:
    if ctx.target != "npu":
        return skipped(f"target backend is {ctx.target}, not npu")
    return None


def needs_device(ctx: CheckContext, what: str) -> Outcome | None:
    """A rule that judges this host's NPUs: skipped, with the reason, where the host has none (never passed from the
    hardware table's data); `what` names what it would judge."""
    if (skip := not_npu(ctx)) is not None:
        return skip
    if ctx.facts.devices:
        return None
    seen = "npu-smi is not on PATH" if ctx.facts.npu is None else "npu-smi lists no NPU"
    return skipped(
        f"this host has no Ascend NPU ({seen}) to {what}; `ascendctl plan PROFILE` and `fit` judge the profile "
        "without a host"
    )


def visible_count(ctx: CheckContext) -> int:
    """Devices the engine can see: the mask's length when a valid mask is set, else all listed."""
    count = len(ctx.facts.devices)
    mask = ctx.env.get("ASCEND_RT_VISIBLE_DEVICES")
    ids = parse_mask(mask) if mask else None
    if ids is not None and all(i < count for i in ids):
        return len(ids)
    return count


def used_devices(ctx: CheckContext) -> list[NpuDevice]:
    """The devices a deployment would use (`devices_in_use`); every device without a profile."""
    if ctx.profile is None:
        return list(ctx.facts.devices)
    wanted = ctx.profile.target.visible_devices or list(range(ctx.profile.target.devices_per_node))
    return devices_in_use(ctx.facts.devices, wanted, ctx.env.get("ASCEND_RT_VISIBLE_DEVICES"))


@rule("host.npu.driver", "error", "Ascend NPU driver installed", clause="engine-start")
def npu_driver(ctx: CheckContext) -> Outcome:
    if (skip := not_npu(ctx)) is not None:
        return skip
    drv = ctx.facts.driver
    if drv.installed or ctx.facts.npu_smi_found:
        version = f"driver {drv.version} (from {drv.source})" if drv.version else "driver version not found"
        return passed(version)
    return problem(
        "no NPU driver: /usr/local/Ascend/driver is missing and npu-smi is not on PATH",
        DRIVER_FIX,
    )


def npu_smi_failure(err: str) -> Outcome:
    """npu-smi failed: the cause and fix its DCMI return code stands for, else a generic fix quoting the code."""
    code = dcmi_error_code(err)
    cause = DCMI_CAUSES.get(code) if code is not None else None
    if cause is not None:
        return problem(f"npu-smi failed with DCMI {code} ({cause.name}: {cause.cause}): {err}", cause.fix)
    if code is not None:
        return problem(
            f"npu-smi failed with DCMI return code {code}: {err}",
            f"look up DCMI return code {code} in Huawei's DCMI reference (return codes), check the device is not "
            "held by another container and that the user may use the NPU (root or the HwHiAiUser group); "
            "reinstall the driver if `npu-smi info` still fails",
        )
    return problem(f"npu-smi failed: {err}", "run `npu-smi info` by hand; reinstall the driver if it fails")


@rule(
    "host.npu.smi",
    "warn",
    "npu-smi available",
    source="DCMI return codes: hiascend DCMI API reference (return codes); vllm-ascend#2698, #632",
)
def npu_smi(ctx: CheckContext) -> Outcome:
    if (skip := not_npu(ctx)) is not None:
        return skip
    if not ctx.facts.npu_smi_found:
        if not ctx.facts.driver.installed:
            return skipped("no driver, so no npu-smi")
        return problem(
            "npu-smi is not on PATH: devices, HBM and the SoC cannot be read",
            "add /usr/local/bin to PATH (npu-smi ships with the driver); in a container mount /usr/local/bin/npu-smi",
        )
    err = ctx.facts.probe_errors.get("npu-smi")
    if err:
        return npu_smi_failure(err)
    return passed(f"npu-smi info parsed ({ctx.facts.npu.layout if ctx.facts.npu else '?'} layout)")


@rule("host.npu.devices", "error", "NPUs listed by npu-smi", clause="placement")
def npu_devices(ctx: CheckContext) -> Outcome:
    if (skip := not_npu(ctx)) is not None:
        return skip
    if ctx.facts.npu is None:
        return skipped("npu-smi output not available")
    devices = ctx.facts.devices
    if not devices:
        return problem(
            "npu-smi lists no NPU",
            "check `npu-smi info`; in a container pass the devices (--device /dev/davinciN plus "
            "/dev/davinci_manager, /dev/devmm_svm, /dev/hisi_hdc)",
        )
    names = sorted({d.name for d in devices})
    hbm = sorted({d.hbm_total_mb for d in devices if d.hbm_total_mb})
    hbm_text = f", {'/'.join(str(h) for h in hbm)} MB each" if hbm else ""
    return passed(f"{len(devices)} × {'/'.join(names)}{hbm_text}")


@rule("host.npu.device-nodes", "error", "Device nodes /dev/davinci*", clause="placement")
def npu_device_nodes(ctx: CheckContext) -> Outcome:
    if (skip := not_npu(ctx)) is not None:
        return skip
    nodes = ctx.facts.device_nodes
    if not ctx.facts.driver.installed and not nodes.any:
        return skipped("no driver installed")
    missing = nodes.missing_control_nodes
    want = sorted({d.id for d in ctx.facts.devices})
    absent = [i for i in want if i not in nodes.davinci]
    if not nodes.davinci:
        missing = ["/dev/davinci*", *missing]
    missing += [f"/dev/davinci{i}" for i in absent]
    if missing:
        flags = " ".join(f"--device {m}" for m in missing if "*" not in m)
        return problem(
            f"missing device nodes: {', '.join(missing)}",
            "load the driver (reboot after installing it); in a container add "
            + (flags or "--device /dev/davinci0 … --device /dev/davinci_manager --device /dev/devmm_svm")
            + " (plus /dev/hisi_hdc)",
        )
    return passed(f"/dev/davinci{{{','.join(str(i) for i in nodes.davinci)}}} and control nodes present")


@rule("host.npu.soc", "error", "Supported Ascend SoC", clause="engine-start")
def npu_soc(ctx: CheckContext) -> Outcome:
    if (skip := not_npu(ctx)) is not None:
        return skip
    devices = ctx.facts.devices
    if not devices:
        return skipped("no NPU listed")
    if ctx.facts.family is None:
        names = ", ".join(sorted({d.name for d in devices}))
        return problem(
            f"unknown or unsupported chip {names}: vllm-ascend fails with `Undefined soc_version` / "
            "`Cannot support runtime soc_version`",
            f"vllm-ascend runs on {SUPPORTED_HARDWARE}; Ascend 910 (910A/910ProB) and 310B are not supported "
            "(FAQ #1). To build for a known SoC anyway, set SOC_VERSION (e.g. ascend910b1)",
        )
    soc = f", SOC_VERSION {ctx.facts.soc_version}" if ctx.facts.soc_version else ""
    return passed(f"family {ctx.facts.family} ({devices[0].name}{soc})")


@rule("host.npu.health", "warn", "NPU health")
def npu_health(ctx: CheckContext) -> Outcome:
    if (skip := not_npu(ctx)) is not None:
        return skip
    devices = ctx.facts.devices
    if not devices:
        return skipped("no NPU listed")
    bad = [d for d in devices if not d.healthy]
    if bad:
        listed = ", ".join(f"device {d.id} (NPU {d.npu} chip {d.chip}): {d.health}" for d in bad)
        return problem(
            f"not healthy: {listed}",
            "inspect with `npu-smi info -t health -i <NPU>`; keep those devices out of "
            "ASCEND_RT_VISIBLE_DEVICES / target.visible_devices until fixed",
        )
    return passed(f"all {len(devices)} devices OK")


@rule("host.npu.hardware-match", "error", "Profile hardware family matches the host", clause="placement")
def npu_hardware_match(ctx: CheckContext) -> Outcome:
    if (skip := not_npu(ctx)) is not None:
        return skip
    if ctx.profile is None or ctx.profile.target.hardware is None:
        return skipped("no profile hardware to compare")
    want = ctx.profile.target.hardware
    have = ctx.facts.family
    if have is None:
        return skipped("host family unknown")
    if want != have:
        return problem(
            f"the profile targets {want} but this host is {have}",
            f"set `target.hardware: {have}` (and re-check parallel sizes and quantization), or run it on a {want} host",
        )
    return passed(f"{have} on both")


@rule("host.npu.device-count", "error", "Enough NPUs for the profile", clause="placement")
def npu_device_count(ctx: CheckContext) -> Outcome:
    if (skip := not_npu(ctx)) is not None:
        return skip
    if ctx.profile is None:
        return skipped("no profile")
    if ctx.facts.npu is None:
        return skipped("device list not available")
    need = ctx.profile.target.devices_per_node
    have = visible_count(ctx)
    if have < need:
        return problem(
            f"the profile uses {need} devices per node but {have} are visible here",
            f"lower target.devices_per_node to {have} (with matching engine.parallel sizes) or use a bigger host",
        )
    return passed(f"{need} needed, {have} visible")


def _mask_problem(mask: str | None, ids: list[int] | None, count: int, known: bool) -> str | None:
    """What is wrong with a set ASCEND_RT_VISIBLE_DEVICES: not a list, a repeat, or ids beyond the devices."""
    if mask is None:
        return None
    if ids is None:
        return f"ASCEND_RT_VISIBLE_DEVICES={mask!r} is not a comma-separated list of device ids"
    if len(set(ids)) != len(ids):
        return f"ASCEND_RT_VISIBLE_DEVICES={mask} repeats a device"
    if known and any(i >= count for i in ids):
        return f"ASCEND_RT_VISIBLE_DEVICES={mask} names devices beyond the {count} present (0-{count - 1})"
    return None


def _wanted_problem(wanted: list[int], usable: int) -> str | None:
    """target.visible_devices that name devices beyond the `usable` ones."""
    over = [i for i in wanted if i >= usable]
    if over:
        return f"target.visible_devices {over} exceed the {usable} devices visible here"
    return None


def _mask_valid(mask: str | None, wanted: list[int], known: bool, count: int) -> Outcome:
    """The pass message once the mask and target.visible_devices are valid."""
    if mask is None and not wanted:
        return passed("no mask set: all devices visible")
    shown = [f"ASCEND_RT_VISIBLE_DEVICES={mask}"] if mask is not None else []
    shown += [f"target.visible_devices={wanted}"] if wanted else []
    if not known:
        return passed(f"{' and '.join(shown)} well-formed (no device list to compare with)")
    return passed(f"{' and '.join(shown)} valid for {count} devices")


@rule("host.npu.visible-devices", "error", "Device mask (ASCEND_RT_VISIBLE_DEVICES) is valid", clause="placement")
def npu_visible_devices(ctx: CheckContext) -> Outcome:
    if (skip := needs_device(ctx, "check the device mask against")) is not None:
        return skip
    count = len(ctx.facts.devices)
    known = ctx.facts.npu is not None
    mask = ctx.env.get("ASCEND_RT_VISIBLE_DEVICES")
    ids = parse_mask(mask) if mask is not None else None
    mask_problem = _mask_problem(mask, ids, count, known)
    problems = [mask_problem] if mask_problem else []
    wanted = list(ctx.profile.target.visible_devices or []) if ctx.profile is not None else []
    if wanted and known:
        usable = len(ids) if ids is not None and not problems else count
        if over := _wanted_problem(wanted, usable):
            problems.append(over)
    if problems:
        example = ",".join(str(i) for i in range(max(min(count, 4), 1)))
        return problem(
            "; ".join(problems),
            f"use ids 0-{max(count - 1, 0)} (logical ids among the devices this host or container sees), "
            f"e.g. ASCEND_RT_VISIBLE_DEVICES={example}",
        )
    return _mask_valid(mask, wanted, known, count)


@rule("host.npu.busy", "warn", "NPUs free of other processes")
def npu_busy(ctx: CheckContext) -> Outcome:
    if (skip := not_npu(ctx)) is not None:
        return skip
    if ctx.facts.npu is None or not ctx.facts.devices:
        return skipped("device list not available")
    devices = used_devices(ctx)
    used_ids = {(d.npu, d.chip) for d in devices}
    procs = [p for p in ctx.facts.npu.processes if (p.npu, p.chip) in used_ids]
    heavy = [
        d for d in devices if d.hbm_total_mb and d.hbm_used_mb is not None and d.hbm_used_mb > 0.25 * d.hbm_total_mb
    ]
    if procs or heavy:
        parts = [f"pid {p.pid} ({p.name}) holds {p.memory_mb} MB on NPU {p.npu} chip {p.chip}" for p in procs]
        parts += [f"device {d.id} has {d.hbm_used_mb}/{d.hbm_total_mb} MB in use" for d in heavy]
        return problem(
            "; ".join(parts),
            "stop those processes (see `npu-smi info`), or pick free devices with target.visible_devices / "
            "ASCEND_RT_VISIBLE_DEVICES",
        )
    return passed("no other process on the devices")


# ---- memory fit -------------------------------------------------------------------------------------------


@rule(
    "host.npu.hbm", "error", "The model, its activations and two max_model_len sequences fit device memory",
    source="ascendctl.plan.fit (the plan's memory fit against this host's HBM; docs/memory-fit.md)", clause="placement"
)  # fmt: skip
def npu_hbm(ctx: CheckContext) -> Outcome:
    if (skip := needs_device(ctx, "check the memory fit against")) is not None:
        return skip
    if ctx.profile is None:
        return skipped("no profile")
    if ctx.plan is None:
        return skipped("the profile could not be planned against this host (see plan.plannable)")
    fit = ctx.plan.fit
    if fit is None:
        return undecided(f"skipped: {ctx.plan.fit_error}")
    d = fit.per_device[0]
    detail = (
        f"{summary_line(fit)}; per device {d.weights_gib:.1f} GiB weights, {d.kv_cache_gib:.1f} GiB KV cache "
        f"of {d.hbm_gib or 0:.1f} GiB"
    )
    fixes = "; ".join(
        " ".join(f"--set {shlex.quote(one)}" for one in s.sets) + f" ({s.verdict}, {s.kv_tokens:,} tokens)"
        for s in fit.suggestions[:3]
    )
    if fit.verdict == "does-not-fit":
        fix = fixes or "raise engine.parallel.tensor, use a quantized checkpoint, or lower model.max_model_len"
        return problem(detail, f"{fix} (`ascendctl fit PROFILE` shows the table)")
    if fit.verdict == "tight":  # it starts; fewer than two full-length sequences fit at once
        # a deployment that starts is never told to shorten what the operator asked for
        fix = fixes or "raise engine.parallel.tensor or use a quantized checkpoint"
        return problem(detail, f"{fix} (`ascendctl fit PROFILE` shows the table)", severity="warn")
    return passed(detail)
