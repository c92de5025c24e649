"""Typed host facts: what the probes saw on one machine. Plain frozen dataclasses, no I/O.

`HostFacts.to_dict()` is the `host` object of `ascendctl check --json`; its minimal shape is a contract
(pinned by tests, read back by `ascendctl matrix --here --facts FILE`): keys may be added, never removed.
`HostFacts.from_dict()` reads that object back (lenient: unknown keys are ignored, missing ones default).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import field, replace
from typing import Any, Literal, get_args

from ascendctl_engine.jsonio import JsonReadError, bounded_int
from ascendctl_engine.records import record
from ascendctl_engine.spec import REDACTED, is_secret_name
from ascendctl_engine.vocab import Backend
from ascendctl_engine.vocab import HardwareFamily as Family

FAMILIES: tuple[Family, ...] = get_args(Family)
CannLayout = Literal["toolkit", "cann9", "env"]


@record
class NpuDevice:
    """One NPU chip as `npu-smi info` lists it (two rows per chip in the table)."""

    id: int  # device id: A3 `Phy-ID`, 310P `Device`, else the NPU id (what /dev/davinciN numbers)
    npu: int  # NPU (card) id, first column of the first row
    chip: int  # chip id within the card (A3 and 300I Duo cards hold two chips)
    name: str  # npu-smi Name column, e.g. 910B3, Ascend910, 310P3
    health: str  # OK, Warning, Alarm, Critical, ... (a pasted `0K` is read as OK)
    bus_id: str | None = None
    hbm_used_mb: int | None = None
    hbm_total_mb: int | None = None  # 310P has no HBM column: its device memory is reported here
    memory_used_mb: int | None = None
    memory_total_mb: int | None = None
    temp_c: int | None = None
    aicore_pct: int | None = None

    @property
    def healthy(self) -> bool:
        return self.health.upper() == "OK"

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "npu": self.npu,
            "chip": self.chip,
            "name": self.name,
            "health": self.health,
            "bus_id": self.bus_id,
            "hbm_total_mb": self.hbm_total_mb,
            "hbm_used_mb": self.hbm_used_mb,
            "memory_total_mb": self.memory_total_mb,
            "memory_used_mb": self.memory_used_mb,
            "temp_c": self.temp_c,
            "aicore_pct": self.aicore_pct,
        }


def parse_device_mask(mask: str) -> list[int] | None:
    """`ASCEND_RT_VISIBLE_DEVICES` as ids: `0,1,2,3` → [0, 1, 2, 3]; None when it is not a comma-separated list."""
    parts = [p.strip() for p in mask.split(",")]
    if not parts or any(not (p.isdecimal() and p.isascii()) for p in parts):
        return None
    return [int(p) for p in parts]


def devices_in_use(devices: Sequence[NpuDevice], wanted: Sequence[int], mask: str | None) -> list[NpuDevice]:
    """The devices a deployment uses: its logical ids `wanted` (visible_devices, else the first devices_per_node)
    through the ASCEND_RT_VISIBLE_DEVICES mask when one is set."""
    ids = parse_device_mask(mask or "")
    physical = {ids[i] for i in wanted if i < len(ids)} if ids else set(wanted)
    return [d for i, d in enumerate(devices) if i in physical]


@record
class NpuProcess:
    """A row of the process table that may follow the device table."""

    npu: int
    chip: int
    pid: int
    name: str
    memory_mb: int | None

    def to_dict(self) -> dict[str, Any]:
        return {"npu": self.npu, "chip": self.chip, "pid": self.pid, "name": self.name, "memory_mb": self.memory_mb}


@record
class NpuSmiInfo:
    """Parsed `npu-smi info`."""

    recognized: bool  # a title or header row was found (False: the text is not an npu-smi table)
    driver_version: str | None = None  # from the title row `npu-smi X  Version: X`
    layout: str | None = None  # "a2" (Chip), "a3" (Chip Phy-ID), "310p" (Chip Device)
    width: int | None = None  # characters per table row: 98, 106, 116 (None when collapsed)
    devices: tuple[NpuDevice, ...] = ()
    processes: tuple[NpuProcess, ...] = ()


@record
class DeviceNodes:
    """Ascend device files under /dev."""

    davinci: tuple[int, ...] = ()
    davinci_manager: bool = False
    devmm_svm: bool = False
    hisi_hdc: bool = False

    @property
    def missing_control_nodes(self) -> list[str]:
        names = {"davinci_manager": self.davinci_manager, "devmm_svm": self.devmm_svm, "hisi_hdc": self.hisi_hdc}
        return [f"/dev/{n}" for n, present in names.items() if not present]

    @property
    def any(self) -> bool:
        return bool(self.davinci) or self.davinci_manager or self.devmm_svm or self.hisi_hdc

    def to_dict(self) -> dict[str, Any]:
        return {
            "davinci": list(self.davinci),
            "davinci_manager": self.davinci_manager,
            "devmm_svm": self.devmm_svm,
            "hisi_hdc": self.hisi_hdc,
        }


@record
class DriverInfo:
    installed: bool = False  # /usr/local/Ascend/driver exists
    version: str | None = None
    source: str | None = None  # the file or command the version came from

    def to_dict(self) -> dict[str, Any]:
        return {"installed": self.installed, "version": self.version, "source": self.source}


@record
class CannInfo:
    """The CANN toolkit this host would use, and whether its environment is sourced."""

    version: str | None = None
    path: str | None = None  # install directory the version belongs to
    layout: CannLayout | None = None
    source: str | None = None  # file the version came from
    set_env: str | None = None  # the script to `source`
    installed_versions: tuple[str, ...] = ()  # every version found on disk
    home_env: str | None = None  # ASCEND_HOME_PATH or ASCEND_TOOLKIT_HOME as set
    sourced: bool = False  # home env set and LD_LIBRARY_PATH has CANN libraries
    nnal_installed: bool = False  # /usr/local/Ascend/nnal/atb/set_env.sh exists
    atb_sourced: bool = False  # libatb.so reachable (ATB_HOME_PATH or nnal/atb on LD_LIBRARY_PATH)
    atb_set_env: str | None = None
    # SoC directories under `<path>/opp/built-in/op_impl/ai_core/tbe/kernel/` that hold built-in op kernels (the
    # kernels/ops package writes them; a lone `ops_oam` does not count); None when not looked at (no CANN found).
    kernel_socs: tuple[str, ...] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "version": self.version,
            "path": self.path,
            "layout": self.layout,
            "source": self.source,
            "set_env": self.set_env,
            "installed_versions": list(self.installed_versions),
            "home_env": self.home_env,
            "sourced": self.sourced,
            "nnal_installed": self.nnal_installed,
            "atb_sourced": self.atb_sourced,
            "atb_set_env": self.atb_set_env,
            "kernel_socs": list(self.kernel_socs) if self.kernel_socs is not None else None,
        }


@record
class PythonEnv:
    """The engine environment's interpreter and the versions of the engine packages installed in it."""

    interpreter: str
    chosen_by: str  # "flag", "env", "engine-venv" or "current"
    version: str | None = None
    packages: Mapping[str, str] = field(default_factory=dict)  # installed only; names as probed
    vllm_ascend_device_type: str | None = None  # from vllm_ascend/_build_info.py, never by importing it
    error: str | None = None  # why the interpreter could not be probed
    # of `pyenv.ENGINE_MODULES`, those the interpreter finds (`find_spec`: nothing imported); None: not looked up
    modules: tuple[str, ...] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "interpreter": self.interpreter,
            "chosen_by": self.chosen_by,
            "version": self.version,
            "vllm_ascend_device_type": self.vllm_ascend_device_type,
            "modules": list(self.modules) if self.modules is not None else None,
            "error": self.error,
        }


@record
class CudaGpu:
    index: int
    name: str
    memory_total_mb: int | None
    memory_used_mb: int | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "name": self.name,
            "memory_total_mb": self.memory_total_mb,
            "memory_used_mb": self.memory_used_mb,
        }


@record
class CudaInfo:
    nvidia_smi: bool = False
    driver_version: str | None = None
    gpus: tuple[CudaGpu, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "nvidia_smi": self.nvidia_smi,
            "driver_version": self.driver_version,
            "gpus": [g.to_dict() for g in self.gpus],
        }


@record
class CpuInfo:
    arch: str | None = None
    cores: int | None = None
    memory_total_mb: int | None = None
    memory_available_mb: int | None = None
    numa_nodes: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "arch": self.arch,
            "cores": self.cores,
            "memory_total_mb": self.memory_total_mb,
            "memory_available_mb": self.memory_available_mb,
            "numa_nodes": self.numa_nodes,
        }


@record
class PortStatus:
    host: str
    port: int
    purpose: str  # "server", "dp-rpc", "ray", ...
    in_use: bool | None  # None: could not tell (see error)
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "host": self.host,
            "port": self.port,
            "purpose": self.purpose,
            "in_use": self.in_use,
            "error": self.error,
        }


# Files only a container runtime writes, looked at on NPU hosts (`HostFacts.files`): Docker's init layer creates
# /.dockerenv (moby/moby daemon/initlayer/setup_unix.go), Podman /run/.containerenv (podman-run(1): "a container
# environment file is created in each container to indicate to programs they are running in a container").
# Kubernetes (containerd, CRI-O) writes neither, but the kubelet gives every container the `kubernetes` service's
# variables, KUBERNETES_SERVICE_HOST among them (https://kubernetes.io/docs/concepts/containers/container-environment/
# "Cluster information").
CONTAINER_MARKERS = ("/.dockerenv", "/run/.containerenv")
KUBERNETES_VAR = "KUBERNETES_SERVICE_HOST"


@record
class HostFacts:
    """Everything `check`, `matrix --here` and the planner need to know about one host."""

    backend: Backend  # what this host has: npu (Ascend driver/devices seen), cuda (nvidia-smi GPUs), cpu
    family: Family | None = None
    soc_version: str | None = None  # SOC_VERSION spelling, e.g. ascend910b3, ascend910_9391
    npu_smi_found: bool = False
    npu: NpuSmiInfo | None = None
    device_nodes: DeviceNodes = field(default_factory=DeviceNodes)
    driver: DriverInfo = field(default_factory=DriverInfo)
    cann: CannInfo = field(default_factory=CannInfo)
    python: PythonEnv | None = None
    cuda: CudaInfo = field(default_factory=CudaInfo)
    cpu: CpuInfo = field(default_factory=CpuInfo)
    env: Mapping[str, str] = field(default_factory=dict)  # relevant variables only, secrets redacted
    nics: tuple[str, ...] | None = None  # /sys/class/net entries; None when unreadable
    ports: tuple[PortStatus, ...] = ()
    probe_errors: Mapping[str, str] = field(default_factory=dict)  # probe name -> why it failed
    # Host paths a profile names (engine.ascend.jemalloc) -> whether they exist under `root`; a path that could not
    # be looked at is left out, so a rule can tell "missing" from "not probed".
    files: Mapping[str, bool] = field(default_factory=dict)
    root: str = "/"

    @property
    def devices(self) -> tuple[NpuDevice, ...]:
        return self.npu.devices if self.npu else ()

    @property
    def packages(self) -> Mapping[str, str]:
        return self.python.packages if self.python else {}

    def devices_in_use(self, wanted: Sequence[int], mask: str | None) -> list[NpuDevice]:
        """This host's devices a deployment uses (`devices_in_use`: its logical ids through the mask)."""
        return devices_in_use(self.devices, wanted, mask)

    @property
    def container(self) -> str | None:
        """What shows that `check` runs inside a container (a runtime's marker file, the Kubernetes variable), or
        None: not seen, or not looked at."""
        marker = next((m for m in CONTAINER_MARKERS if self.files.get(m)), None)
        if marker is not None:
            return marker
        return KUBERNETES_VAR if self.env.get(KUBERNETES_VAR) else None

    def to_dict(self) -> dict[str, Any]:
        """The `host` object of `ascendctl check --json` (contract; add keys, never remove)."""
        npu = self.npu
        return {
            "backend": self.backend,
            "hardware": {
                "family": self.family,
                "soc_version": self.soc_version,
                "device_count": len(self.devices),
                "devices": [d.to_dict() for d in self.devices],
                "processes": [p.to_dict() for p in npu.processes] if npu else [],
                "npu_smi_layout": npu.layout if npu else None,
                "npu_smi": self.npu_smi_found,
                "device_nodes": self.device_nodes.to_dict(),
            },
            "driver": self.driver.to_dict(),
            "cann": self.cann.to_dict(),
            "python": self.python.to_dict() if self.python else {"version": None},
            "packages": dict(sorted(self.packages.items())),
            "cuda": self.cuda.to_dict(),
            "cpu": self.cpu.to_dict(),
            "env": dict(sorted(redact_env(self.env).items())),
            "nics": list(self.nics) if self.nics is not None else None,
            "ports": [p.to_dict() for p in self.ports],
            "probe_errors": dict(sorted(self.probe_errors.items())),
            "files": dict(sorted(self.files.items())),
            "root": self.root,
        }

    def redacted(self, names: Collection[str]) -> HostFacts:
        """These facts with the values of `names` (the variables a profile declares as secrets or their
        sources) and of every secret-looking name redacted: what `check --json` may print."""
        return replace(self, env=redact_env(self.env, names))

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> HostFacts:
        """Read a `host` object back (from `check --json` or a hand-written facts file). Lenient about what is
        missing or unknown; a value of the wrong shape (a list given as a number, a negative or huge count, a
        version string longer than `MAX_VERSION_CHARS`) raises `FactsError` naming its key."""
        return _facts_from_dict(data)


class FactsError(JsonReadError):
    """A facts object with a value of the wrong shape; `path` is the key (`hardware.devices`), `reason` the whole
    message (it starts with the key)."""

    def __str__(self) -> str:
        return self.reason


# The largest count a facts file may state (a device id, MiB of memory, a core count, a PID): 2^40.
MAX_FACT_INT = 2**40
MAX_VERSION_CHARS = 128  # a version string longer than this is not one (a 5,000-digit "version" is refused)


def _int(value: Any, where: str = "value") -> int | None:
    """A count read back: an int, or a string of ASCII digits (`int()` rejects other Unicode digits), within
    0..MAX_FACT_INT; None when absent or not a number; `FactsError` when out of range."""
    if isinstance(value, str):
        text = value.strip()
        if not (text.isascii() and text.isdecimal() and len(text) <= 15):
            return None
        value = int(text)
    try:
        return bounded_int(value, high=MAX_FACT_INT, where=where, source=where)
    except JsonReadError as exc:
        raise FactsError(where, exc.reason) from None


def _list(value: Any, where: str) -> list[Any]:
    """A list read back: absent (None) is empty; anything but a list raises `FactsError`."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise FactsError(where, f"{where}: expected a list, got {type(value).__name__}")
    return value


def _version(value: Any, where: str) -> str | None:
    text = _str(value)
    if text is not None and len(text) > MAX_VERSION_CHARS:
        raise FactsError(where, f"{where}: a version string of {len(text)} characters (at most {MAX_VERSION_CHARS})")
    return text


def _int_or(value: Any, default: int, where: str = "value") -> int:
    parsed = _int(value, where)
    return default if parsed is None else parsed


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _map(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _device_from_dict(index: int, raw: Any) -> NpuDevice:
    """One `hardware.devices` entry read back; `index` is the default id."""
    d = _map(raw)
    at = f"hardware.devices[{index}]"

    def num(key: str) -> int | None:
        return _int(d.get(key), f"{at}.{key}")

    dev_id = _int_or(d.get("id"), index, f"{at}.id")
    return NpuDevice(
        id=dev_id,
        npu=_int_or(d.get("npu"), dev_id, f"{at}.npu"),
        chip=_int_or(d.get("chip"), 0, f"{at}.chip"),
        name=str(d.get("name") or ""),
        health=str(d.get("health") or "OK"),
        bus_id=_str(d.get("bus_id")),
        hbm_used_mb=num("hbm_used_mb"),
        hbm_total_mb=num("hbm_total_mb"),
        memory_used_mb=num("memory_used_mb"),
        memory_total_mb=num("memory_total_mb"),
        temp_c=num("temp_c"),
        aicore_pct=num("aicore_pct"),
    )


def _processes_from_dict(hw: Mapping[str, Any]) -> tuple[NpuProcess, ...]:
    """The `hardware.processes` entries read back."""
    at = "hardware.processes"
    return tuple(
        NpuProcess(
            npu=_int_or(p.get("npu"), 0, f"{at}[{i}].npu"),
            chip=_int_or(p.get("chip"), 0, f"{at}[{i}].chip"),
            pid=_int_or(p.get("pid"), 0, f"{at}[{i}].pid"),
            name=str(p.get("name") or ""),
            memory_mb=_int(p.get("memory_mb"), f"{at}[{i}].memory_mb"),
        )
        for i, p in enumerate(_map(x) for x in _list(hw.get("processes"), at))
    )


def _npu_from_dict(
    hw: Mapping[str, Any], driver: Mapping[str, Any], devices: list[NpuDevice], processes: tuple[NpuProcess, ...]
) -> NpuSmiInfo | None:
    """The npu-smi table read back, or None when it listed neither devices nor processes."""
    if not (devices or processes):
        return None
    return NpuSmiInfo(
        recognized=bool(devices),
        driver_version=_version(driver.get("version"), "driver.version"),
        layout=_str(hw.get("npu_smi_layout")),
        devices=tuple(devices),
        processes=processes,
    )


def _device_nodes_from_dict(nodes: Mapping[str, Any]) -> DeviceNodes:
    """The `hardware.device_nodes` object read back."""
    return DeviceNodes(
        davinci=tuple(
            x
            for x in (
                _int(v, "hardware.device_nodes.davinci")
                for v in _list(nodes.get("davinci"), "hardware.device_nodes.davinci")
            )
            if x is not None
        ),
        davinci_manager=bool(nodes.get("davinci_manager")),
        devmm_svm=bool(nodes.get("devmm_svm")),
        hisi_hdc=bool(nodes.get("hisi_hdc")),
    )


def _driver_from_dict(driver: Mapping[str, Any]) -> DriverInfo:
    """The `driver` object read back."""
    return DriverInfo(
        installed=bool(driver.get("installed", driver.get("version") is not None)),
        version=_version(driver.get("version"), "driver.version"),
        source=_str(driver.get("source")),
    )


def _cann_from_dict(cann: Mapping[str, Any]) -> CannInfo:
    """The `cann` object read back."""
    kernel_socs = cann.get("kernel_socs")
    installed = _list(cann.get("installed_versions"), "cann.installed_versions")
    return CannInfo(
        version=_version(cann.get("version"), "cann.version"),
        path=_str(cann.get("path")),
        layout=cann.get("layout") if cann.get("layout") in ("toolkit", "cann9", "env") else None,
        source=_str(cann.get("source")),
        set_env=_str(cann.get("set_env")),
        installed_versions=tuple(str(_version(str(v), "cann.installed_versions")) for v in installed),
        home_env=_str(cann.get("home_env")),
        sourced=bool(cann.get("sourced", cann.get("version") is not None)),
        nnal_installed=bool(cann.get("nnal_installed", False)),
        atb_sourced=bool(cann.get("atb_sourced", False)),
        atb_set_env=_str(cann.get("atb_set_env")),
        kernel_socs=tuple(str(k) for k in _list(kernel_socs, "cann.kernel_socs")) if kernel_socs is not None else None,
    )


def _packages_from_dict(packages: Mapping[str, Any]) -> dict[str, str]:
    """The top-level `packages` object read back (non-empty string versions only)."""
    return {str(k): str(_version(v, f"packages.{k}")) for k, v in packages.items() if isinstance(v, str) and v}


def _python_from_dict(py: Mapping[str, Any], packages: dict[str, str]) -> PythonEnv:
    """The `python` object (with the top-level `packages`) read back."""
    modules = py.get("modules")
    return PythonEnv(
        interpreter=str(py.get("interpreter") or ""),
        chosen_by=str(py.get("chosen_by") or "facts-file"),
        version=_version(py.get("version"), "python.version"),
        packages=packages,
        vllm_ascend_device_type=_str(py.get("vllm_ascend_device_type")),
        error=_str(py.get("error")),
        modules=tuple(str(m) for m in modules if isinstance(m, str)) if isinstance(modules, list) else None,
    )


def _cuda_from_dict(cuda: Mapping[str, Any]) -> CudaInfo:
    """The `cuda` object read back."""
    return CudaInfo(
        nvidia_smi=bool(cuda.get("nvidia_smi", False)),
        driver_version=_version(cuda.get("driver_version"), "cuda.driver_version"),
        gpus=tuple(
            CudaGpu(
                index=_int_or(g.get("index"), 0, f"cuda.gpus[{i}].index"),
                name=str(g.get("name") or ""),
                memory_total_mb=_int(g.get("memory_total_mb"), f"cuda.gpus[{i}].memory_total_mb"),
                memory_used_mb=_int(g.get("memory_used_mb"), f"cuda.gpus[{i}].memory_used_mb"),
            )
            for i, g in enumerate(_map(x) for x in _list(cuda.get("gpus"), "cuda.gpus"))
        ),
    )


def _cpu_from_dict(cpu: Mapping[str, Any]) -> CpuInfo:
    """The `cpu` object read back."""
    return CpuInfo(
        arch=_str(cpu.get("arch")),
        cores=_int(cpu.get("cores"), "cpu.cores"),
        memory_total_mb=_int(cpu.get("memory_total_mb"), "cpu.memory_total_mb"),
        memory_available_mb=_int(cpu.get("memory_available_mb"), "cpu.memory_available_mb"),
        numa_nodes=_int(cpu.get("numa_nodes"), "cpu.numa_nodes"),
    )


def _facts_from_dict(data: Mapping[str, Any]) -> HostFacts:
    hw = _map(data.get("hardware"))
    devices = [_device_from_dict(i, raw) for i, raw in enumerate(_list(hw.get("devices"), "hardware.devices"))]
    processes = _processes_from_dict(hw)
    driver = _map(data.get("driver"))
    packages = _packages_from_dict(_map(data.get("packages")))
    family = hw.get("family")
    backend = data.get("backend")
    nics = data.get("nics")
    return HostFacts(
        backend=backend if backend in ("npu", "cuda", "cpu") else "cpu",
        family=family if family in FAMILIES else None,
        soc_version=_str(hw.get("soc_version")),
        npu_smi_found=bool(hw.get("npu_smi", bool(devices))),
        npu=_npu_from_dict(hw, driver, devices, processes),
        device_nodes=_device_nodes_from_dict(_map(hw.get("device_nodes"))),
        driver=_driver_from_dict(driver),
        cann=_cann_from_dict(_map(data.get("cann"))),
        python=_python_from_dict(_map(data.get("python")), packages),
        cuda=_cuda_from_dict(_map(data.get("cuda"))),
        cpu=_cpu_from_dict(_map(data.get("cpu"))),
        env={str(k): str(v) for k, v in _map(data.get("env")).items()},
        nics=tuple(str(n) for n in _list(nics, "nics")) if nics is not None else None,
        probe_errors={str(k): str(v) for k, v in _map(data.get("probe_errors")).items()},
        files={str(k): v for k, v in _map(data.get("files")).items() if isinstance(v, bool)},
        root=str(data.get("root") or "/"),
    )


def redact_env(env: Mapping[str, str], names: Collection[str] = ()) -> dict[str, str]:
    """`env` with the value of every secret-looking name (`spec.is_secret_name`) and of `names` replaced by
    `<redacted>`. Applied again when printing: facts read back from a file may carry values."""
    return {name: REDACTED if name in names or is_secret_name(name) else value for name, value in env.items()}
