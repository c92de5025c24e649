"""Pure parsers for `npu-smi` output (fed captured text; no subprocess here).

Layouts handled (reproduced from real outputs quoted in vllm-project/vllm-ascend issues #3403, #4621, #750 (A2,
98 columns), #2035, #5588 (A3, 98 columns), #16983, #12980 (A3, 116 columns, driver 26.0.x), Syllo/nvtop#421
(Atlas 300I Duo / 310P3, 106 columns)):

- a title row `| npu-smi <drv>   Version: <drv> |` (the driver version);
- two header rows; the second names the chip columns: `Chip` (A2, one chip per NPU), `Chip  Phy-ID` (A3,
  two chips per card, chip 1 shows Power `-`), `Chip    Device` (310P, no HBM column: Memory-Usage is the
  device memory);
- two rows per chip: `NPU Name | Health | Power Temp Hugepages(a / b)` then
  `Chip [Phy-ID|Device] | Bus-Id | AICore Memory(a / b) [HBM(a / b)]`;
- an optional process table (`| NPU  Chip | Process id | Process name | Process memory(MB) |`, or
  `No running processes found in NPU N`).

The parser works on `|`-separated cells and whitespace tokens, not on column offsets, so pastes whose
whitespace was collapsed (issue #1141; it also showed `0K` for `OK`) still parse. Older `910B` 32 GB cards
(HBM `/ 32768`, #3010) and names such as `910B4-1` (#3657) or `910B2C` need nothing special.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from ascendctl_engine.host.facts import NpuDevice, NpuProcess, NpuSmiInfo
from ascendctl_engine.records import record
from ascendctl_engine.vocab import SOC_VERSION_CONTAINS, SOC_VERSIONS
from ascendctl_engine.vocab import HardwareFamily as Family

_TITLE_RE = re.compile(r"npu-smi\s+(?P<drv>[0-9][\w.\-]*)(?:\s+Version:\s*(?P<ver>[0-9][\w.\-]*))?", re.IGNORECASE)
_BUS_RE = re.compile(r"^[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-9A-Fa-f]$")
_PAIR_RE = re.compile(r"(\d+)\s*/\s*(\d+)")
_INT_RE = re.compile(r"^\d+$")


def _cells(line: str) -> list[str]:
    body = line.strip()
    if body.startswith("|"):
        body = body[1:]
    if body.endswith("|"):
        body = body[:-1]
    return [c.strip() for c in body.split("|")]


def _int_or_none(token: str | None) -> int | None:
    if token is None:
        return None
    token = token.strip()
    if _INT_RE.match(token):
        return int(token)
    try:
        return int(float(token))
    except ValueError:
        return None


def normalize_health(text: str) -> str:
    """`OK` (also a pasted `0K`), else the state as npu-smi printed it (Warning, Alarm, Critical, ...)."""
    value = text.strip()
    if value.upper() in ("OK", "0K"):
        return "OK"
    return value or "UNKNOWN"


class _Pending:
    """The first row of a chip, waiting for its second row."""

    def __init__(self, npu: int, name: str, health: str, temp: int | None) -> None:
        self.npu = npu
        self.name = name
        self.health = health
        self.temp = temp


@dataclass
class _TableState:
    """What `parse_npu_smi_info` has read so far."""

    driver: str | None = None
    layout: str | None = None
    width: int | None = None
    recognized: bool = False
    in_processes: bool = False
    pending: _Pending | None = None
    devices: list[NpuDevice] = field(default_factory=list)
    processes: list[NpuProcess] = field(default_factory=list)


def parse_npu_smi_info(text: str) -> NpuSmiInfo:
    """Parse `npu-smi info`. Never raises on odd input: unknown lines are skipped."""
    state = _TableState()
    for raw in text.splitlines():
        line = raw.rstrip()
        stripped = line.strip()
        if not stripped.startswith("|"):
            continue
        cells = _cells(stripped)
        if not _header_row(state, stripped, cells):
            _body_row(state, cells)

    if state.layout is None and state.devices:
        state.layout = _infer_layout(state.devices)
    return NpuSmiInfo(
        recognized=state.recognized or bool(state.devices),
        driver_version=state.driver,
        layout=state.layout,
        width=state.width,
        devices=tuple(state.devices),
        processes=tuple(state.processes),
    )


def _header_row(state: _TableState, stripped: str, cells: list[str]) -> bool:
    """Read a title, header or process-table marker row into `state`; False when `cells` is no such row."""
    joined = " ".join(cells)
    first = cells[0] if cells else ""
    title = _TITLE_RE.search(joined)
    if title and first.lower().startswith("npu-smi"):
        _title_row(state, title, stripped)
        return True
    if first.startswith("NPU") and "Name" in first:
        state.recognized, state.in_processes = True, False
        return True
    if first.startswith("Chip") and len(cells) > 1 and "Bus" in cells[1]:
        state.layout = _chip_header_layout(first.split())
        state.recognized = True
        return True
    if "Process id" in joined or "Process name" in joined:
        state.recognized, state.in_processes = True, True
        return True
    if "No running processes found" in joined:
        state.in_processes = True
        return True
    return False


def _title_row(state: _TableState, title: re.Match[str], stripped: str) -> None:
    """Record the driver version and table width of the `| npu-smi <drv>   Version: <drv> |` row."""
    state.driver = title.group("ver") or title.group("drv")
    state.recognized = True
    state.width = len(stripped) if "  " in stripped else None


def _chip_header_layout(words: list[str]) -> str:
    """The table layout that the words of the second header row's `Chip` cell name."""
    return "a3" if "Phy-ID" in words else ("310p" if "Device" in words else "a2")


def _body_row(state: _TableState, cells: list[str]) -> None:
    """Read a process row, or either row of a chip, into `state`; other rows are skipped."""
    if state.in_processes:
        proc = _process_row(cells)
        if proc is not None:
            state.processes.append(proc)
        return
    if len(cells) < 3:
        return
    first = cells[0] if cells else ""
    tokens = first.split()
    if not tokens or not _INT_RE.match(tokens[0]):
        return
    if _BUS_RE.match(cells[1].split()[0] if cells[1].split() else "") and state.pending is not None:
        state.devices.append(_second_row(state.pending, tokens, cells, state.layout))
        state.pending = None
    elif len(tokens) >= 2 and not _INT_RE.match(tokens[1]):
        state.pending = _Pending(
            npu=int(tokens[0]),
            name=" ".join(tokens[1:]),
            health=normalize_health(cells[1]),
            temp=_temp(cells[2]),
        )


def _temp(cell: str) -> int | None:
    # `Power(W) Temp(C) Hugepages a / b`: power may be a float, `-` (A3 chip 1) or `NA` (310P).
    before_pair = _PAIR_RE.split(cell, maxsplit=1)[0].split()
    return _int_or_none(before_pair[1]) if len(before_pair) >= 2 else None


def _second_row(pending: _Pending, tokens: list[str], cells: list[str], layout: str | None) -> NpuDevice:
    chip = int(tokens[0])
    second = _int_or_none(tokens[1]) if len(tokens) >= 2 else None
    usage = cells[2]
    pairs = [(int(a), int(b)) for a, b in _PAIR_RE.findall(usage)]
    head = _PAIR_RE.split(usage, maxsplit=1)[0].split()
    aicore = _int_or_none(head[0]) if head else None
    memory = pairs[0] if pairs else None
    hbm = pairs[1] if len(pairs) >= 2 else None
    no_hbm_column = layout == "310p" or (hbm is None and memory is not None)
    if no_hbm_column:
        hbm = memory  # 310P: the device memory is what a model is loaded into
    device_id = second if second is not None else pending.npu
    return NpuDevice(
        id=device_id,
        npu=pending.npu,
        chip=chip,
        name=pending.name,
        health=pending.health,
        bus_id=cells[1].split()[0],
        hbm_used_mb=hbm[0] if hbm else None,
        hbm_total_mb=hbm[1] if hbm else None,
        memory_used_mb=memory[0] if memory else None,
        memory_total_mb=memory[1] if memory else None,
        temp_c=pending.temp,
        aicore_pct=aicore,
    )


def _infer_layout(devices: list[NpuDevice]) -> str:
    if any(d.name.upper().startswith("310P") for d in devices):
        return "310p"
    if any(d.chip > 0 for d in devices):
        return "a3"
    return "a2"


def _process_row(cells: list[str]) -> NpuProcess | None:
    if len(cells) < 4:
        return None
    ids = cells[0].split()
    if len(ids) < 2 or not (_INT_RE.match(ids[0]) and _INT_RE.match(ids[1])):
        return None
    pid = _int_or_none(cells[1])
    if pid is None:
        return None
    return NpuProcess(npu=int(ids[0]), chip=int(ids[1]), pid=pid, name=cells[2], memory_mb=_int_or_none(cells[3]))


# ---- chip names → hardware family -------------------------------------------------------------------


def family_from_soc_version(soc: str) -> Family | None:
    """Family of a SOC_VERSION string (`SOC_VERSIONS`, then `SOC_VERSION_CONTAINS`)."""
    value = soc.strip().lower()
    for family, spellings in SOC_VERSIONS.items():
        if value in spellings:
            return family
    return next((f for f, text in SOC_VERSION_CONTAINS.items() if text in value), None)


def family_from_name(name: str, layout: str | None = None) -> Family | None:
    """Family of an npu-smi Name (`910B3`, `910B4-1`, `Ascend910`, `310P3`, `Ascend950DT`, ...).

    `Ascend910` is what A3 chips are called; the old Ascend 910 (910A/910ProB, unsupported per FAQ #1)
    shows other names, so a bare `Ascend910` counts as A3 only with the A3 table layout or unknown layout.
    """
    value = name.strip().lower().replace(" ", "")
    if value.startswith("ascend"):
        value = value[len("ascend") :]
    if value.startswith("910b"):
        return "a2"
    if value in ("910", "910c") or value.startswith("910_93"):
        return "a3" if layout in (None, "a3") else None
    if value.startswith("310p"):
        return "300i-duo"
    if value.startswith("950"):
        return "950"
    return None


def soc_version_from_name(name: str, family: Family | None) -> str | None:
    """The SOC_VERSION spelling derivable from the table alone (A2 and 310P names carry it)."""
    value = name.strip().lower().replace(" ", "")
    if value.startswith("ascend"):
        value = value[len("ascend") :]
    if family == "a2" and value.startswith("910b"):
        soc = "ascend" + value
        return soc if soc in SOC_VERSIONS["a2"] else ("ascend910b1" if value == "910b" else soc)
    if family == "300i-duo" and value.startswith("310p"):
        return "ascend" + value
    return None


def parse_npu_smi_board(text: str) -> dict[str, str]:
    """`npu-smi info -t board -i N [-c C]`: `Key : value` lines (keys as printed, e.g. `Chip Name`)."""
    fields: dict[str, str] = {}
    for raw in text.splitlines():
        key, sep, value = raw.partition(":")
        if not sep:
            continue
        key = key.strip()
        if key and key not in fields:
            fields[key] = value.strip()
    return fields


def soc_version_from_board(fields: dict[str, str]) -> str | None:
    """SOC_VERSION the way vllm-ascend's setup.py (`get_chip_type`, main) derives it from board info."""
    chip_name = fields.get("Chip Name", "").strip()
    chip_type = fields.get("Chip Type", "").strip()
    npu_name = fields.get("NPU Name", "").strip()
    if not chip_name:
        return None
    lowered = chip_name.lower()
    if "a2g3" in lowered:  # "A2 case: CH version of the HDK"
        return "ascend910b1"
    if "310" in lowered or ("910" in lowered and chip_type):
        return (chip_type + chip_name).lower()
    if "910" in lowered and npu_name:
        return f"{chip_name}_{npu_name}".lower()
    if "950" in lowered:
        return f"{chip_name}_{npu_name}".lower() if npu_name else chip_name.lower()
    return None


# ---- DCMI error codes (npu-smi failures) -------------------------------------------------------------
# When npu-smi cannot initialise DCMI it prints one line and exits non-zero, e.g. (quoted from real reports)
#   `dcmi module initialize failed. ret is -8005`                          (vllm-project/vllm-ascend#2698)
#   `dcmi model initialized failed, because the device is used. ret is -8020`  (vllm-ascend#632,
#                                                                           Ascend/cann-container-image#46)
# The codes are DCMI return codes (`DCMI_ERROR_CODE_BASE` -8000 minus n): Huawei's DCMI API reference,
# "返回码" (https://www.hiascend.com/document/detail/zh/Atlas%20200I%20A2/253RC1/re/api/api_177.html).
_DCMI_RET_RE = re.compile(r"\bdcmi\b.*?\bret(?:\s+is|\s*=|\s*:)?\s*(-\d{4})\b", re.IGNORECASE)


def dcmi_error_code(text: str) -> int | None:
    """The DCMI return code in npu-smi's failure output (`... dcmi ... ret is -8005` → -8005), else None."""
    for line in text.splitlines():
        m = _DCMI_RET_RE.search(line)
        if m:
            return int(m.group(1))
    return None


@record
class DcmiCause:
    """What a DCMI return code means for someone running npu-smi / vLLM, the fix, and where that comes from."""

    name: str  # DCMI_ERR_CODE_* as Huawei's reference spells it
    cause: str
    fix: str
    source: str


_DCMI_DOC = "https://www.hiascend.com/document/detail/zh/Atlas%20200I%20A2/253RC1/re/api/api_177.html"
_HWHIAIUSER_DOC = "https://www.hiascend.com/document/detail/en/canncommercial/800/softwareinst/instg/instg_0004.html"
_CONTAINER_DEVICES = (
    "pass the device nodes (--device /dev/davinciN --device /dev/davinci_manager --device /dev/devmm_svm "
    "--device /dev/hisi_hdc) and mount /usr/local/dcmi, /usr/local/bin/npu-smi and /usr/local/Ascend/driver"
)

DCMI_CAUSES: Mapping[int, DcmiCause] = {
    -8020: DcmiCause(
        "DCMI_ERR_CODE_RESOURCE_OCCUPIED",
        "the device is held by another container or process",
        "stop the other container/process using these NPUs (`npu-smi info` on the host lists them), or give this "
        "container other devices; in a container " + _CONTAINER_DEVICES,
        f"{_DCMI_DOC}; vllm-project/vllm-ascend#632; Ascend/cann-container-image#46",
    ),
    -8005: DcmiCause(
        "DCMI_ERR_CODE_INNER_ERR",
        "DCMI could not initialise: in a container this is usually a device already held by another container, "
        "or a container/user without the rights DCMI needs",
        "free the device from the other container (or use other devices); run as root or as a member of the "
        "driver's run group (HwHiAiUser by default); in a container " + _CONTAINER_DEVICES + " (some setups "
        "need --privileged)",
        f"{_DCMI_DOC}; vllm-project/vllm-ascend#2698 (maintainer: usually occupied by other containers, "
        "hiascend case_9289); hw-native-sys/simpler#2043 (DCMI root-only hosts)",
    ),
    -8002: DcmiCause(
        "DCMI_ERR_CODE_OPER_NOT_PERMITTED",
        "permission denied",
        "run as root, or add the user to the driver's run group (HwHiAiUser by default: "
        "`usermod -aG HwHiAiUser $USER`, then log in again)",
        f"{_DCMI_DOC}; {_HWHIAIUSER_DOC}",
    ),
    -8008: DcmiCause(
        "DCMI_ERR_CODE_DEVICE_NOT_EXIST",
        "no such device: the NPU is absent, not running, or not passed into the container",
        "check the driver is loaded (reboot after installing the HDK) and, in a container, " + _CONTAINER_DEVICES,
        _DCMI_DOC,
    ),
    -8012: DcmiCause(
        "DCMI_ERR_CODE_NOT_REDAY",
        "the device is not ready yet",
        "wait and run `npu-smi info` again (right after boot or a reset the device needs time)",
        _DCMI_DOC,
    ),
    -8006: DcmiCause(
        "DCMI_ERR_CODE_TIME_OUT",
        "the device did not answer in time",
        "run `npu-smi info` again later; if it persists check `npu-smi info -t health -i <NPU>` and the host logs",
        _DCMI_DOC,
    ),
    -8017: DcmiCause(
        "DCMI_ERR_CODE_IS_UPGRADING",
        "a firmware/driver upgrade is in progress",
        "wait for the upgrade to finish (then reboot if it asks), and run `npu-smi info` again",
        _DCMI_DOC,
    ),
}
