"""Pure parsers for CANN and driver version files, and the pure parts of CANN detection.

Files (as vllm-ascend's code and its users' reports show them):
- `<toolkit>/latest/<arch>-linux/ascend_toolkit_install.info`: `key=value` lines (`version=8.3.RC2`,
  `innerversion=…`, `arch=…`, `path=…`); what vllm-ascend's `collect_env.py get_cann_info` reads
  (issues #4621, #9305).
- CANN ≥ 9 installs under `/usr/local/Ascend/cann-<ver>` with `/usr/local/Ascend/cann/set_env.sh`
  (vllm-ascend `tests/e2e/nightly/multi_node/scripts/run.sh`; issue #10525: collect_env found no version
  there, so the directory name and `version.cfg` are read too).
- `version.cfg`: `<component>_running_version=[<inner>:<CANN version>]` lines (sglang PR #11052).
- per-package and driver `version.info`: a `Version=<x>` line (`csrc/cmake/scripts/check_version_compatible.py`;
  `/usr/local/Ascend/driver/version.info`, third-party scripts).
- `set_env.sh` exports `ASCEND_HOME_PATH` / `ASCEND_TOOLKIT_HOME` and puts the libraries on
  `LD_LIBRARY_PATH`; NNAL's `nnal/atb/set_env.sh` provides `libatb.so` (FAQ #6).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

ASCEND_ROOT = "/usr/local/Ascend"
TOOLKIT_DIR = f"{ASCEND_ROOT}/ascend-toolkit"
TOOLKIT_LATEST = f"{TOOLKIT_DIR}/latest"
TOOLKIT_SET_ENV = f"{TOOLKIT_DIR}/set_env.sh"
CANN9_LINK = f"{ASCEND_ROOT}/cann"
CANN9_SET_ENV = f"{CANN9_LINK}/set_env.sh"
NNAL_ATB_SET_ENV = f"{ASCEND_ROOT}/nnal/atb/set_env.sh"
DRIVER_DIR = f"{ASCEND_ROOT}/driver"
DRIVER_VERSION_INFO = f"{DRIVER_DIR}/version.info"
HOME_VARS = ("ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME")
# Built-in op kernels, one directory per SoC (`ascend910b`, `ascend910_93`, `ascend310p`), written by the
# kernels/ops package (`Ascend-cann-kernels-910b`, from CANN 8.5 `Ascend-cann-910b-ops`; 8.5+ nests them in
# `ops_legacy/`, `ops_math/`, `ops_nn/`, `ops_transformer/`). A toolkit alone leaves at most `ops_oam` there
# (public CANN images without the op library; every compute op then fails with `AclOpKernelInit failed`).
OPP_KERNEL_SUBDIR = "opp/built-in/op_impl/ai_core/tbe/kernel"
HCCN_CONF = "/etc/hccn.conf"  # written by `hccn_tool -i N -ip -s ...` (NPU NIC addresses; multi-node HCCL)
_TOOLKIT_ONLY_KERNEL_ENTRIES = frozenset({"ops_oam"})

_CANN_DIR_RE = re.compile(r"^cann-(?P<ver>\d[\w.\-]*)$")
_VERSION_CFG_RE = re.compile(r"^\s*(?P<component>[\w]+)_running_version\s*=\s*\[(?P<body>[^\]]*)\]")


def parse_key_values(text: str) -> dict[str, str]:
    """`key=value` lines (install.info, version.info); the first occurrence of a key wins."""
    out: dict[str, str] = {}
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        key, sep, value = line.partition("=")
        key = key.strip()
        if sep and key and key not in out:
            out[key] = value.strip().strip('"').strip("'")
    return out


def parse_toolkit_install_info(text: str) -> dict[str, str]:
    """`ascend_toolkit_install.info` → its fields (`version`, `innerversion`, `arch`, `path`, ...)."""
    return parse_key_values(text)


def parse_version_info(text: str) -> str | None:
    """A package or driver `version.info` → the value of its `Version=` line (case-insensitive key)."""
    for key, value in parse_key_values(text).items():
        if key.lower() == "version" and value:
            return value
    return None


def parse_version_cfg(text: str) -> dict[str, str]:
    """`version.cfg` → {component: CANN version}, e.g. {"runtime": "8.0.RC2"} from
    `runtime_running_version=[7.3.0.1.231:8.0.RC2]`. Entries without a `:` keep the whole value."""
    out: dict[str, str] = {}
    for raw in text.splitlines():
        m = _VERSION_CFG_RE.match(raw)
        if not m:
            continue
        body = m.group("body").split(",")[0].strip()
        if not body:
            continue
        version = body.split(":", 1)[1].strip() if ":" in body else body
        if version:
            out.setdefault(m.group("component"), version)
    return out


def version_from_version_cfg(fields: Mapping[str, str]) -> str | None:
    for component in ("toolkit", "runtime", "compiler", "opp", "hccl"):
        if fields.get(component):
            return fields[component]
    return next(iter(fields.values()), None)


def cann_version_from_dirname(name: str) -> str | None:
    """`cann-9.0.0` → `9.0.0` (CANN ≥ 9 layout; daily builds look like `cann-2026.08.03`)."""
    m = _CANN_DIR_RE.match(name.strip())
    return m.group("ver") if m else None


def split_path_list(value: str | None) -> list[str]:
    return [p for p in (value or "").split(":") if p]


def cann_env_sourced(env: Mapping[str, str]) -> tuple[bool, str | None]:
    """(sourced, home): the toolkit's set_env.sh was sourced — a home variable is set and
    LD_LIBRARY_PATH holds a directory under that home (or another CANN library directory)."""
    home = next((env[v].strip() for v in HOME_VARS if env.get(v, "").strip()), None)
    if home is None:
        return False, None
    home_norm = home.rstrip("/")
    for entry in split_path_list(env.get("LD_LIBRARY_PATH")):
        e = entry.rstrip("/")
        if e.startswith(home_norm) or "/ascend-toolkit/" in e + "/" or "/Ascend/cann" in e:
            return True, home
    return False, home


def atb_env_sourced(env: Mapping[str, str]) -> bool:
    """NNAL/ATB's set_env.sh was sourced: `ATB_HOME_PATH` set or an `nnal/atb` dir on LD_LIBRARY_PATH."""
    if env.get("ATB_HOME_PATH", "").strip():
        return True
    return any("nnal/atb" in entry for entry in split_path_list(env.get("LD_LIBRARY_PATH")))


def kernel_socs_from_listing(entries: Mapping[str, list[str] | None]) -> tuple[str, ...]:
    """{SoC dir: its entries} under the opp kernel directory → the SoC dirs that hold op kernels (anything but
    the toolkit's own `ops_oam`), sorted."""
    return tuple(sorted(soc for soc, names in entries.items() if names and set(names) - _TOOLKIT_ONLY_KERNEL_ENTRIES))
