"""npu-smi parsers: every layout quoted in vllm-ascend issues (A2 98, A3 98/116, 310P3 106 columns), fed captures."""

from __future__ import annotations

from pathlib import Path

import pytest

from ascendctl_engine.host.npu_smi import (
    family_from_name,
    family_from_soc_version,
    normalize_health,
    parse_npu_smi_board,
    parse_npu_smi_info,
    soc_version_from_board,
    soc_version_from_name,
)

HOSTS = Path(__file__).resolve().parents[1] / "fixtures" / "hosts"


def captured(host: str, name: str = "npu-smi-info.txt") -> str:
    return (HOSTS / host / "_captured" / name).read_text()


# A3, 98 columns (driver 24.x-25.x): two chips per card, chip 1 shows Power "-".
A3_98 = """\
+------------------------------------------------------------------------------------------------+
| npu-smi 25.5.0                   Version: 25.5.0                                               |
+---------------------------+---------------+----------------------------------------------------+
| NPU   Name                | Health        | Power(W)    Temp(C)           Hugepages-Usage(page)|
| Chip  Phy-ID              | Bus-Id        | AICore(%)   Memory-Usage(MB)  HBM-Usage(MB)        |
+===========================+===============+====================================================+
| 0     Ascend910           | OK            | 170.0       35                0    / 0             |
| 0     0                   | 0000:9D:00.0  | 0           0    / 0          3300 / 65536         |
+------------------------------------------------------------------------------------------------+
| 0     Ascend910           | OK            | -           35                0    / 0             |
| 1     1                   | 0000:9F:00.0  | 0           0    / 0          3301 / 65536         |
+===========================+===============+====================================================+
| 1     Ascend910           | Alarm         | 170.0       36                0    / 0             |
| 0     2                   | 0000:99:00.0  | 12          0    / 0          27547/ 65536         |
+------------------------------------------------------------------------------------------------+
| 1     Ascend910           | OK            | -           35                0    / 0             |
| 1     3                   | 0000:9B:00.0  | 0           0    / 0          3303 / 65536         |
+===========================+===============+====================================================+
"""

# Older Atlas 800 (model 3000) 910B with 32 GB and a non-zero Memory-Usage column; a 910B2C next to it.
A2_32GB = """\
+------------------------------------------------------------------------------------------------+
| npu-smi 23.0.3                   Version: 23.0.3                                               |
+---------------------------+---------------+----------------------------------------------------+
| NPU   Name                | Health        | Power(W)    Temp(C)           Hugepages-Usage(page)|
| Chip                      | Bus-Id        | AICore(%)   Memory-Usage(MB)  HBM-Usage(MB)        |
+===========================+===============+====================================================+
| 0     910B                | OK            | 68.1        41                0    / 0             |
| 0                         | 0000:C1:00.0  | 0           1325 / 15039      1    / 32768         |
+===========================+===============+====================================================+
| 1     910B2C              | Critical      | 70.3        42                0    / 0             |
| 0                         | 0000:C2:00.0  | 0           0    / 0          3401 / 65536         |
+===========================+===============+====================================================+
"""


def test_a2_98_columns_with_process_table() -> None:
    info = parse_npu_smi_info(captured("a2-910b3x8"))
    assert info.recognized
    assert info.driver_version == "25.5.0"
    assert info.layout == "a2"
    assert info.width == 98
    assert [d.id for d in info.devices] == list(range(8))
    assert {d.name for d in info.devices} == {"910B3"}
    assert all(d.chip == 0 and d.hbm_total_mb == 65536 for d in info.devices)
    assert info.devices[0].hbm_used_mb == 3400
    assert info.devices[0].bus_id == "0000:C1:00.0"
    assert info.devices[7].hbm_used_mb == 59402
    assert info.devices[7].aicore_pct == 37
    assert info.devices[0].temp_c == 38
    assert [(p.npu, p.chip, p.pid, p.name, p.memory_mb) for p in info.processes] == [(7, 0, 2345678, "python3", 56000)]


def test_a3_98_columns_two_chips_per_card_and_abutting_slash() -> None:
    info = parse_npu_smi_info(A3_98)
    assert info.layout == "a3"
    assert info.driver_version == "25.5.0"
    assert [(d.id, d.npu, d.chip) for d in info.devices] == [(0, 0, 0), (1, 0, 1), (2, 1, 0), (3, 1, 1)]
    assert info.devices[2].health == "Alarm"
    assert not info.devices[2].healthy
    # A five-digit used value abuts the slash (`27547/ 65536`).
    assert (info.devices[2].hbm_used_mb, info.devices[2].hbm_total_mb) == (27547, 65536)
    assert info.devices[2].aicore_pct == 12


def test_a3_116_columns_sixteen_chips() -> None:
    info = parse_npu_smi_info(captured("a3-16chips"))
    assert info.layout == "a3"
    assert info.width == 116
    assert info.driver_version == "26.0.rc1"
    assert len(info.devices) == 16
    assert [d.id for d in info.devices] == list(range(16))
    assert [d.npu for d in info.devices] == [n // 2 for n in range(16)]
    assert [d.chip for d in info.devices] == [n % 2 for n in range(16)]
    assert info.devices[15].health == "Warning"
    assert sum(not d.healthy for d in info.devices) == 1
    assert info.processes == ()


def test_310p_106_columns_device_memory_as_hbm() -> None:
    info = parse_npu_smi_info(captured("300i-duo"))
    assert info.layout == "310p"
    assert info.width == 106
    assert info.driver_version == "25.2.0"
    assert [(d.id, d.npu, d.chip) for d in info.devices] == [(0, 0, 0), (1, 0, 1), (2, 1, 0), (3, 1, 1)]
    # No HBM column on 310P: the device memory is what a model is loaded into.
    assert [d.hbm_total_mb for d in info.devices] == [44280, 43693, 44280, 43693]
    assert [d.memory_used_mb for d in info.devices] == [1500, 1400, 1510, 1405]
    assert info.devices[0].hbm_used_mb == info.devices[0].memory_used_mb


def test_old_910b_32gb_and_910b2c_and_critical_health() -> None:
    info = parse_npu_smi_info(A2_32GB)
    assert [d.name for d in info.devices] == ["910B", "910B2C"]
    assert (info.devices[0].hbm_used_mb, info.devices[0].hbm_total_mb) == (1, 32768)
    assert (info.devices[0].memory_used_mb, info.devices[0].memory_total_mb) == (1325, 15039)
    assert info.devices[1].health == "Critical"


def test_910b4_1_names() -> None:
    info = parse_npu_smi_info(captured("cann9-a2"))
    assert {d.name for d in info.devices} == {"910B4-1"}
    assert len(info.devices) == 8
    assert info.processes == ()


def test_collapsed_whitespace_and_zero_k_health() -> None:
    # A paste where runs of spaces were collapsed and `OK` became `0K` (issue #1141).
    text = "\n".join(" ".join(line.split()) for line in captured("a2-910b3x8").splitlines()).replace("| OK", "| 0K")
    info = parse_npu_smi_info(text)
    assert info.width is None
    assert info.driver_version == "25.5.0"
    assert len(info.devices) == 8
    assert all(d.health == "OK" for d in info.devices)
    assert [d.hbm_used_mb for d in info.devices][:2] == [3400, 3401]
    assert len(info.processes) == 1


def test_process_rows_of_several_npus() -> None:
    text = captured("a2-910b3x8").replace(
        "| No running processes found in NPU 0 ",
        "| 0       0                 | 11            | vllm                     | 100                     |\n|",
    )
    info = parse_npu_smi_info(text)
    assert sorted((p.npu, p.pid) for p in info.processes) == [(0, 11), (7, 2345678)]


@pytest.mark.parametrize(
    "text",
    ["", "npu-smi: command not found\n", "Error: dcmi module initialize failed. ret is -8005\n", "| a | b |\n"],
)
def test_unrecognized_text_gives_no_devices(text: str) -> None:
    info = parse_npu_smi_info(text)
    assert not info.recognized
    assert info.devices == ()


def test_truncated_table_keeps_complete_chips_only() -> None:
    lines = captured("a2-910b3x8").splitlines()
    first_device_row = next(i for i, ln in enumerate(lines) if "910B3" in ln)
    info = parse_npu_smi_info("\n".join(lines[: first_device_row + 4]))  # two rows of NPU 0, one of NPU 1
    assert [d.id for d in info.devices] == [0]


@pytest.mark.parametrize(
    ("name", "layout", "family"),
    [
        ("910B3", "a2", "a2"),
        ("910B4-1", "a2", "a2"),
        ("910B2C", "a2", "a2"),
        ("910B", "a2", "a2"),
        ("Ascend910", "a3", "a3"),
        ("Ascend910", None, "a3"),
        ("Ascend910", "a2", None),  # a bare Ascend910 in the A2 layout is not an A3 chip
        ("310P3", "310p", "300i-duo"),
        ("Ascend950DT", None, "950"),
        ("910A", "a2", None),
        ("910ProB", "a2", None),
        ("310B1", None, None),
    ],
)
def test_family_from_name(name: str, layout: str | None, family: str | None) -> None:
    assert family_from_name(name, layout) == family


@pytest.mark.parametrize(
    ("soc", "family"),
    [
        ("ascend910b1", "a2"),
        ("Ascend910B4-1", "a2"),
        ("ascend910_9391", "a3"),
        ("ascend310p3", "300i-duo"),
        ("ascend310p3vir04", "300i-duo"),
        ("ascend950dt_9582", "950"),
        ("ascend910a", None),
    ],
)
def test_family_from_soc_version(soc: str, family: str | None) -> None:
    assert family_from_soc_version(soc) == family


def test_soc_version_from_name() -> None:
    assert soc_version_from_name("910B3", "a2") == "ascend910b3"
    assert soc_version_from_name("910B4-1", "a2") == "ascend910b4-1"
    assert soc_version_from_name("910B", "a2") == "ascend910b1"
    assert soc_version_from_name("310P3", "300i-duo") == "ascend310p3"
    assert soc_version_from_name("Ascend910", "a3") is None  # needs the board's NPU Name


def test_board_info_like_setup_py() -> None:
    board = parse_npu_smi_board(captured("a3-16chips", "npu-smi-info-t-board-i-0.txt"))
    assert board["Chip Count"] == "2"
    assert soc_version_from_board(board) is None  # no Chip Name without `-c`
    chip = parse_npu_smi_board(captured("a3-16chips", "npu-smi-info-t-board-i-0-c-0.txt"))
    assert chip["Chip Name"] == "Ascend910"
    assert soc_version_from_board(chip) == "ascend910_9391"
    assert soc_version_from_board({"Chip Type": "Ascend", "Chip Name": "910B3"}) == "ascend910b3"
    assert soc_version_from_board({"Chip Type": "Ascend", "Chip Name": "310P3"}) == "ascend310p3"
    assert soc_version_from_board({"Chip Name": "910B-A2G3"}) == "ascend910b1"


def test_normalize_health() -> None:
    assert normalize_health(" 0K ") == "OK"
    assert normalize_health("ok") == "OK"
    assert normalize_health("Warning") == "Warning"
    assert normalize_health("") == "UNKNOWN"
