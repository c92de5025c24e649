"""Host probing: typed facts about one machine (NPUs, driver, CANN, engine packages, CUDA, CPU, ports).

Public API:
- `probe_host(root=..., engine_python=..., backend=..., release=..., ports=...) -> HostFacts` — this machine
  (or a captured tree) with the real probe, engine environment included;
- `gather_host_facts(probe, ports=..., root=...) -> HostFacts` — every probe guarded, through any probe;
- `HostProbe` (the one I/O interface), `LocalHostProbe(root, environ)` (real), `FakeHostProbe` (tests);
- `choose_engine_python(...)` / `EnginePython` — which interpreter holds the engine packages;
- pure parsers: `parse_npu_smi_info`, `parse_npu_smi_board`, `family_from_name`, CANN/driver file parsers
  in `ascendctl_engine.host.cann`;
- `HostFacts.to_dict()` / `HostFacts.from_dict()` — the JSON `host` object (a contract).
"""

from __future__ import annotations

from ascendctl_engine.host.facts import (
    FAMILIES,
    CannInfo,
    CpuInfo,
    CudaGpu,
    CudaInfo,
    DeviceNodes,
    DriverInfo,
    HostFacts,
    NpuDevice,
    NpuProcess,
    NpuSmiInfo,
    PortStatus,
    PythonEnv,
)
from ascendctl_engine.host.fake import FakeHostProbe
from ascendctl_engine.host.gather import PortRequest, gather_host_facts, probe_host, relevant_env
from ascendctl_engine.host.npu_smi import (
    family_from_name,
    family_from_soc_version,
    parse_npu_smi_board,
    parse_npu_smi_info,
    soc_version_from_board,
)
from ascendctl_engine.host.probe import CommandResult, HostProbe, LocalHostProbe
from ascendctl_engine.host.pyenv import (
    ENGINE_PACKAGES,
    ENGINE_PYTHON_VAR,
    EnginePython,
    choose_engine_python,
    family_from_build_tag,
    probe_python_env,
)
from ascendctl_engine.vocab import HardwareFamily as Family

__all__ = [
    "ENGINE_PACKAGES",
    "ENGINE_PYTHON_VAR",
    "FAMILIES",
    "CannInfo",
    "CommandResult",
    "CpuInfo",
    "CudaGpu",
    "CudaInfo",
    "DeviceNodes",
    "DriverInfo",
    "EnginePython",
    "FakeHostProbe",
    "Family",
    "HostFacts",
    "HostProbe",
    "LocalHostProbe",
    "NpuDevice",
    "NpuProcess",
    "NpuSmiInfo",
    "PortRequest",
    "PortStatus",
    "PythonEnv",
    "choose_engine_python",
    "family_from_build_tag",
    "family_from_name",
    "family_from_soc_version",
    "gather_host_facts",
    "parse_npu_smi_board",
    "parse_npu_smi_info",
    "probe_host",
    "probe_python_env",
    "relevant_env",
    "soc_version_from_board",
]
