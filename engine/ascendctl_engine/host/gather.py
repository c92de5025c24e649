"""Gather `HostFacts` through a `HostProbe`. Each probe is guarded: a crash becomes an entry of
`HostFacts.probe_errors` with its reason, never an exception out of `gather_host_facts`."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import PurePosixPath
from typing import TypeVar

from ascendctl_engine import paths
from ascendctl_engine.host import cann as cann_files
from ascendctl_engine.host.facts import (
    CONTAINER_MARKERS,
    KUBERNETES_VAR,
    CannInfo,
    CannLayout,
    CpuInfo,
    CudaGpu,
    CudaInfo,
    DeviceNodes,
    DriverInfo,
    HostFacts,
    NpuSmiInfo,
    PortStatus,
    PythonEnv,
)
from ascendctl_engine.host.npu_smi import (
    dcmi_error_code,
    family_from_name,
    parse_npu_smi_board,
    parse_npu_smi_info,
    soc_version_from_board,
    soc_version_from_name,
)
from ascendctl_engine.host.probe import HostProbe, LocalHostProbe
from ascendctl_engine.host.pyenv import EnginePython, choose_engine_python, probe_python_env
from ascendctl_engine.records import record
from ascendctl_engine.versions import cann_release_key
from ascendctl_engine.vocab import Backend
from ascendctl_engine.vocab import HardwareFamily as Family

T = TypeVar("T")

NPU_SMI_TIMEOUT = 20.0
NVIDIA_SMI_TIMEOUT = 10.0

# Variables worth reporting (device selection, CANN/HCCL/vLLM tuning, NICs); values of names that look
# like secrets are redacted.
_ENV_PREFIXES = (
    "ASCEND_",
    "HCCL_",
    "ATB_",
    "LCCL_",
    "PYTORCH_NPU_",
    "VLLM_",
    "GLOO_SOCKET_IFNAME",
    "TP_SOCKET_IFNAME",
    "RAY_EXPERIMENTAL_NOSET_ASCEND_RT_VISIBLE_DEVICES",
    "CUDA_VISIBLE_DEVICES",
    "TORCH_DEVICE_BACKEND_AUTOLOAD",
    "SOC_VERSION",
    "LD_LIBRARY_PATH",
    "TASK_QUEUE_ENABLE",
    "OMP_NUM_THREADS",
    "DYNAMIC_EPLB",
    "EXPERT_MAP_RECORD",
    KUBERNETES_VAR,  # set in every Kubernetes container (`HostFacts.container`)
)
_SECRET_RE = re.compile(r"KEY|TOKEN|SECRET|PASSW|CREDENTIAL", re.IGNORECASE)
REDACTED = "<redacted>"


@record
class PortRequest:
    host: str
    port: int
    purpose: str


def relevant_env(environ: Mapping[str, str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for name, value in environ.items():
        if name.startswith(_ENV_PREFIXES):
            out[name] = REDACTED if _SECRET_RE.search(name) else value
    return out


class _Guard:
    """Runs probes, turning any exception into a recorded failure."""

    def __init__(self) -> None:
        self.errors: dict[str, str] = {}

    def __call__(self, name: str, fn: Callable[[], T], default: T) -> T:
        try:
            return fn()
        except Exception as exc:  # a probe must never crash the command
            self.errors[name] = f"{type(exc).__name__}: {exc}"
            return default


def gather_host_facts(
    probe: HostProbe,
    *,
    engine_python: EnginePython | None = None,
    ports: Sequence[PortRequest] = (),
    root: str = "/",
    files: Sequence[str] = (),
) -> HostFacts:
    """Probe everything: NPUs, device nodes, driver, CANN, engine packages, CUDA, CPU, NICs, ports, and whether
    the host paths in `files` exist."""
    guard = _Guard()
    environ: Mapping[str, str] = guard("env", lambda: dict(probe.env()), {})
    arch = guard("arch", probe.machine, "")

    npu_smi_path = guard("npu-smi", lambda: probe.which("npu-smi"), None)
    npu: NpuSmiInfo | None = None
    if npu_smi_path:
        npu = guard("npu-smi", lambda: _probe_npu_smi(probe, npu_smi_path, guard), None)

    family: Family | None = None
    soc: str | None = None
    if npu and npu.devices:
        family = next((f for f in (family_from_name(d.name, npu.layout) for d in npu.devices) if f), None)
        soc = soc_version_from_name(npu.devices[0].name, family)
        if soc is None and npu_smi_path:
            soc = guard("npu-smi-board", lambda: _probe_board(probe, npu_smi_path, npu), None)

    nodes = guard("device-nodes", lambda: _probe_device_nodes(probe), DeviceNodes())
    driver = guard("driver", lambda: _probe_driver(probe, npu), DriverInfo())
    cann = guard("cann", lambda: detect_cann(probe, environ, arch), CannInfo())
    python: PythonEnv | None = None
    if engine_python is not None:
        python = guard(
            "engine-python",
            lambda: probe_python_env(probe, engine_python),
            PythonEnv(engine_python.path, engine_python.chosen_by, error="probe crashed"),
        )
    cuda = guard("nvidia-smi", lambda: _probe_cuda(probe), CudaInfo())
    cpu = guard("cpu", lambda: _probe_cpu(probe, arch), CpuInfo(arch=arch or None))
    nics = guard("nics", lambda: _probe_nics(probe), None)
    port_status = tuple(_probe_port(probe, req) for req in ports)
    backend: Backend = "cpu"
    if (npu and npu.devices) or nodes.davinci or driver.installed:
        backend = "npu"
    elif cuda.gpus:
        backend = "cuda"
    # /etc/hccn.conf (the NPU NICs' addresses) is looked at on every NPU host: multi-node rules read it, and tell a
    # container that lacks the host's file by the runtimes' marker files.
    extra = (cann_files.HCCN_CONF, *CONTAINER_MARKERS) if backend == "npu" else ()
    wanted = [*files, *(path for path in extra if path not in files)]
    file_status = _probe_files(probe, wanted)
    return HostFacts(
        backend=backend,
        family=family,
        soc_version=soc,
        npu_smi_found=bool(npu_smi_path),
        npu=npu,
        device_nodes=nodes,
        driver=driver,
        cann=cann,
        python=python,
        cuda=cuda,
        cpu=cpu,
        env=relevant_env(environ),
        nics=nics,
        ports=port_status,
        probe_errors=dict(guard.errors),
        files=file_status,
        root=root,
    )


# ---- NPUs --------------------------------------------------------------------------------------------


def _probe_npu_smi(probe: HostProbe, path: str, guard: _Guard) -> NpuSmiInfo | None:
    argv = [path, "info"]
    result = probe.run(argv, timeout=NPU_SMI_TIMEOUT)
    if not result.ok:
        reason = result.reason(["npu-smi", "info"])
        output = f"{result.stdout}\n{result.stderr}".splitlines()
        dcmi = next((ln.strip() for ln in output if dcmi_error_code(ln) is not None), None)
        if dcmi and dcmi not in reason:  # the DCMI line names the cause (`... ret is -8020`), keep it
            reason += f" ({dcmi[:200]})"
        guard.errors["npu-smi"] = reason
        return None
    info = parse_npu_smi_info(result.stdout)
    if not info.recognized:
        first = next((ln.strip() for ln in result.stdout.splitlines() if ln.strip()), "")
        guard.errors["npu-smi"] = f"`npu-smi info` printed no device table (first line: {first[:120]!r})"
    return info


def _probe_board(probe: HostProbe, path: str, npu: NpuSmiInfo) -> str | None:
    """SOC_VERSION from `npu-smi info -t board -i N` (then `-c C`), as vllm-ascend's setup.py does."""
    first = npu.devices[0]
    for extra in ([], ["-c", str(first.chip)]):
        result = probe.run([path, "info", "-t", "board", "-i", str(first.npu), *extra], timeout=NPU_SMI_TIMEOUT)
        if result.ok:
            soc = soc_version_from_board(parse_npu_smi_board(result.stdout))
            if soc:
                return soc
    return None


_DAVINCI_RE = re.compile(r"^davinci(\d+)$")


def _probe_device_nodes(probe: HostProbe) -> DeviceNodes:
    names = probe.list_dir("/dev") or []
    davinci = sorted(int(m.group(1)) for m in (_DAVINCI_RE.match(n) for n in names) if m)
    return DeviceNodes(
        davinci=tuple(davinci),
        davinci_manager="davinci_manager" in names,
        devmm_svm="devmm_svm" in names,
        hisi_hdc="hisi_hdc" in names,
    )


def _probe_driver(probe: HostProbe, npu: NpuSmiInfo | None) -> DriverInfo:
    installed = probe.exists(cann_files.DRIVER_DIR)
    text = probe.read_text(cann_files.DRIVER_VERSION_INFO)
    version = cann_files.parse_version_info(text) if text else None
    if version:
        return DriverInfo(installed=True, version=version, source=cann_files.DRIVER_VERSION_INFO)
    if npu and npu.driver_version:
        return DriverInfo(installed=True, version=npu.driver_version, source="npu-smi info")
    return DriverInfo(installed=installed)


# ---- CANN --------------------------------------------------------------------------------------------


def _read_cann_dir(probe: HostProbe, path: str, arch: str) -> tuple[str | None, str | None]:
    """(version, source file) of one CANN install directory."""
    arch_dirs = [f"{arch}-linux"] if arch else []
    arch_dirs += [n for n in probe.list_dir(path) or [] if n.endswith("-linux") and n not in arch_dirs]
    for sub in arch_dirs:
        info_path = f"{path}/{sub}/ascend_toolkit_install.info"
        text = probe.read_text(info_path)
        if text:
            version = cann_files.parse_toolkit_install_info(text).get("version")
            if version:
                return version, info_path
    cfg_path = f"{path}/version.cfg"
    text = probe.read_text(cfg_path)
    if text:
        version = cann_files.version_from_version_cfg(cann_files.parse_version_cfg(text))
        if version:
            return version, cfg_path
    for pkg in ("", "toolkit/", "runtime/", "compiler/"):
        info_path = f"{path}/{pkg}version.info"
        text = probe.read_text(info_path)
        version = cann_files.parse_version_info(text) if text else None
        if version:
            return version, info_path
    name = PurePosixPath(path).name
    by_name = cann_files.cann_version_from_dirname(name)
    if by_name and probe.exists(path):
        return by_name, path
    return None, None


def _set_env_for(probe: HostProbe, path: str) -> str | None:
    pure = PurePosixPath(path)
    for candidate in (pure.parent / "set_env.sh", pure / "set_env.sh", pure.parent.parent / "set_env.sh"):
        if probe.exists(str(candidate)):
            return str(candidate)
    return None


def _cann9_dirs(probe: HostProbe) -> list[str]:
    """The `cann-<ver>` entries of the Ascend root, newest release first."""
    ascend_entries = probe.list_dir(cann_files.ASCEND_ROOT) or []
    return sorted(
        (n for n in ascend_entries if cann_files.cann_version_from_dirname(n)),
        key=lambda n: cann_release_key(cann_files.cann_version_from_dirname(n) or ""),
        reverse=True,
    )


def _cann_candidates(home: str | None, cann9_dirs: list[str]) -> list[tuple[str, CannLayout]]:
    """The CANN directories to try, in order, each with the layout it is assumed to have."""
    candidates: list[tuple[str, CannLayout]] = []
    if home:
        candidates.append((home.rstrip("/") or "/", "env"))
    candidates.append((cann_files.TOOLKIT_LATEST, "toolkit"))
    candidates.append((cann_files.CANN9_LINK, "cann9"))
    candidates += [(f"{cann_files.ASCEND_ROOT}/{n}", "cann9") for n in cann9_dirs]
    return candidates


def _env_layout(path: str) -> CannLayout:
    """The layout of the sourced CANN directory, judged by its path."""
    return "cann9" if "/Ascend/cann" in path else ("toolkit" if "ascend-toolkit" in path else "env")


def _scan_cann_dirs(
    probe: HostProbe, candidates: list[tuple[str, CannLayout]], arch: str
) -> tuple[list[str], tuple[str, str, CannLayout, str] | None]:
    """The versions found in `candidates` (each once, in order) and the first one found as
    (version, path, layout, source), or None."""
    installed: list[str] = []
    chosen: tuple[str, str, CannLayout, str] | None = None  # version, path, layout, source
    for path, layout in candidates:
        version, source = _read_cann_dir(probe, path, arch)
        if version is None or source is None:
            continue
        if version not in installed:
            installed.append(version)
        if chosen is None:
            if layout == "env":
                layout = _env_layout(path)
            chosen = (version, path, layout, source)
    return installed, chosen


def _add_listed_versions(probe: HostProbe, installed: list[str], cann9_dirs: list[str]) -> None:
    """Add the versions that the toolkit and `cann-<ver>` directory names show to `installed`, then sort it."""
    toolkit_versions = [
        n for n in probe.list_dir(cann_files.TOOLKIT_DIR) or [] if n not in ("latest", "set_env.sh") and n[:1].isdigit()
    ]
    for name in toolkit_versions + [cann_files.cann_version_from_dirname(n) or "" for n in cann9_dirs]:
        if name and name not in installed:
            installed.append(name)
    installed.sort(key=cann_release_key)


def detect_cann(probe: HostProbe, environ: Mapping[str, str], arch: str) -> CannInfo:
    """Find the CANN toolkit: the sourced one (`ASCEND_HOME_PATH`/`ASCEND_TOOLKIT_HOME`) first, then
    `ascend-toolkit/latest`, then the CANN ≥ 9 layout (`/usr/local/Ascend/cann`, `cann-<ver>`)."""
    sourced, home = cann_files.cann_env_sourced(environ)
    cann9_dirs = _cann9_dirs(probe)
    installed, chosen = _scan_cann_dirs(probe, _cann_candidates(home, cann9_dirs), arch)
    _add_listed_versions(probe, installed, cann9_dirs)

    nnal = probe.exists(cann_files.NNAL_ATB_SET_ENV)
    base = CannInfo(
        installed_versions=tuple(installed),
        home_env=home,
        sourced=sourced,
        nnal_installed=nnal,
        atb_sourced=cann_files.atb_env_sourced(environ),
        atb_set_env=cann_files.NNAL_ATB_SET_ENV if nnal else None,
    )
    if chosen is None:
        set_env = next(
            (s for s in (cann_files.TOOLKIT_SET_ENV, cann_files.CANN9_SET_ENV) if probe.exists(s)),
            None,
        )
        return replace(base, set_env=set_env)
    version, path, layout, source = chosen
    return replace(
        base,
        version=version,
        path=path,
        layout=layout,
        source=source,
        set_env=_set_env_for(probe, path),
        kernel_socs=_kernel_socs(probe, path, environ.get("ASCEND_OPP_PATH")),
    )


def _kernel_socs(probe: HostProbe, cann_path: str, opp_env: str | None) -> tuple[str, ...]:
    """SoC dirs holding op kernels under `<cann_path>/opp` and, when set_env.sh exported another one,
    `$ASCEND_OPP_PATH`."""
    opps = [f"{cann_path.rstrip('/')}/opp"]
    if opp_env and opp_env.strip().rstrip("/") not in opps:
        opps.append(opp_env.strip().rstrip("/"))
    listing: dict[str, list[str]] = {}
    for opp in opps:
        kernel_dir = f"{opp}/{cann_files.OPP_KERNEL_SUBDIR.removeprefix('opp/')}"
        for soc in probe.list_dir(kernel_dir) or []:
            listing.setdefault(soc, []).extend(probe.list_dir(f"{kernel_dir}/{soc}") or [])
    return cann_files.kernel_socs_from_listing(listing)


# ---- CUDA, CPU, NICs, ports ---------------------------------------------------------------------------


def parse_nvidia_smi_csv(text: str) -> tuple[str | None, tuple[CudaGpu, ...]]:
    """`nvidia-smi --query-gpu=index,name,memory.total,memory.used,driver_version --format=csv,noheader,nounits`."""
    gpus: list[CudaGpu] = []
    driver: str | None = None
    for line in text.splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) < 4 or not parts[0].isdigit():
            continue
        gpus.append(
            CudaGpu(
                index=int(parts[0]),
                name=parts[1],
                memory_total_mb=int(parts[2]) if parts[2].isdigit() else None,
                memory_used_mb=int(parts[3]) if parts[3].isdigit() else None,
            )
        )
        if len(parts) >= 5 and parts[4] and driver is None:
            driver = parts[4]
    return driver, tuple(gpus)


def _probe_cuda(probe: HostProbe) -> CudaInfo:
    path = probe.which("nvidia-smi")
    if not path:
        return CudaInfo()
    argv = [
        path,
        "--query-gpu=index,name,memory.total,memory.used,driver_version",
        "--format=csv,noheader,nounits",
    ]
    result = probe.run(argv, timeout=NVIDIA_SMI_TIMEOUT)
    if not result.ok:
        raise RuntimeError(result.reason(["nvidia-smi", *argv[1:]]))
    driver, gpus = parse_nvidia_smi_csv(result.stdout)
    return CudaInfo(nvidia_smi=True, driver_version=driver, gpus=gpus)


# A Linux CPU list (`cpulist_parse`): comma-separated CPU numbers and ascending `LO-HI` ranges, ASCII digits.
_CPU_LIST_PART = re.compile(r"([0-9]{1,7})(?:-([0-9]{1,7}))?")


def parse_cpu_list(text: str) -> int | None:
    """`/sys/devices/system/cpu/online` (`0-3,8-11`) → number of distinct CPUs; None (unknown) for anything that
    is not a CPU list: a descending range (`5-2`), an empty part, a non-ASCII digit, a number of 8 digits or more."""
    ranges: list[tuple[int, int]] = []
    for part in text.strip().split(","):
        match = _CPU_LIST_PART.fullmatch(part.strip())
        if match is None:
            return None
        lo = int(match[1])
        hi = int(match[2]) if match[2] is not None else lo
        if hi < lo:
            return None
        ranges.append((lo, hi))
    total, covered = 0, -1  # CPUs counted, the highest one counted so far (overlaps count once)
    for lo, hi in sorted(ranges):
        if hi > covered:
            total += hi - max(lo, covered + 1) + 1
            covered = hi
    return total or None


def parse_meminfo(text: str) -> dict[str, int]:
    """`/proc/meminfo` → {field: MB} for kB-valued fields."""
    out: dict[str, int] = {}
    for line in text.splitlines():
        key, sep, rest = line.partition(":")
        fields = rest.split()
        if sep and len(fields) > 1 and fields[0].isdigit() and fields[1].lower() == "kb":
            out[key.strip()] = int(fields[0]) // 1024
    return out


def _probe_cpu(probe: HostProbe, arch: str) -> CpuInfo:
    cores: int | None = None
    online = probe.read_text("/sys/devices/system/cpu/online")
    if online:
        cores = parse_cpu_list(online)
    if cores is None:
        cpuinfo = probe.read_text("/proc/cpuinfo")
        if cpuinfo:
            cores = sum(1 for ln in cpuinfo.splitlines() if ln.split(":")[0].strip() == "processor") or None
    mem = parse_meminfo(probe.read_text("/proc/meminfo") or "")
    node_names = probe.list_dir("/sys/devices/system/node")
    numa = sum(1 for n in node_names if re.fullmatch(r"node\d+", n)) if node_names is not None else None
    return CpuInfo(
        arch=arch or None,
        cores=cores,
        memory_total_mb=mem.get("MemTotal"),
        memory_available_mb=mem.get("MemAvailable"),
        numa_nodes=numa or None,
    )


def _probe_nics(probe: HostProbe) -> tuple[str, ...] | None:
    names = probe.list_dir("/sys/class/net")
    return tuple(names) if names is not None else None


def _probe_files(probe: HostProbe, paths: Sequence[str]) -> dict[str, bool]:
    out: dict[str, bool] = {}
    for path in paths:
        try:
            out[path] = probe.exists(path)
        except Exception:  # noqa: S112 - a path that cannot be looked at stays unknown (the rule is undecided)
            continue
    return out


def _probe_port(probe: HostProbe, req: PortRequest) -> PortStatus:
    try:
        in_use = probe.port_in_use(req.host, req.port)
    except Exception as exc:
        return PortStatus(req.host, req.port, req.purpose, None, f"{type(exc).__name__}: {exc}")
    return PortStatus(req.host, req.port, req.purpose, in_use)


def probe_host(
    *,
    root: str = "/",
    engine_python: str | None = None,
    environ: Mapping[str, str] | None = None,
    backend: str | None = None,
    release: str | None = None,
    ports: Sequence[PortRequest] = (),
) -> HostFacts:
    """Everything about this machine (or the captured tree under `root`) in one call: `gather_host_facts`
    with the real probe, plus the engine environment (`--engine-python`, `$ASCENDCTL_ENGINE_PYTHON`, the
    engine venv of `backend`/`release`, else this interpreter). What `check` and `matrix --here` use."""
    env = dict(os.environ if environ is None else environ)
    probe = LocalHostProbe(root, env)
    facts = gather_host_facts(probe, ports=ports, root=root)
    choice = choose_engine_python(
        engine_python,
        env,
        engines_dir=paths.engines_dir(paths.data_dir(env)),
        backend=backend or facts.backend,
        release=release,
    )
    return replace(facts, python=probe_python_env(probe, choice))
