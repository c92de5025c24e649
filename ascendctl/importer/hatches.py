"""What counts as an escape hatch in an imported profile, and what is pass-through environment.

An **escape hatch** is a setting written as the script wrote it where ascendctl could have given it a meaning:
- an option in `engine.extra_args` (a flag with its values; a role's `engine` block counts the same),
- a key of `engine.additional_config`, or of `disaggregation.connector_extra_config`,
- a variable in `runtime.env` or a node's `env` that a typed field says (`ascendctl_engine.typed_fields`) or that
  vLLM or vllm-ascend reads (`VLLM_*`, which covers `VLLM_ASCEND_*`).

Every other variable — CANN's, HCCL's, ACL's, the OS's (`LD_PRELOAD`, `ASCEND_A3_ENABLE`, `HCCL_OP_EXPANSION_MODE`
where the plan does not set it) — is **pass-through**: ascendctl gives it no meaning and passes it on unchanged.
It is kept in `runtime.env` (or the node's `env`), listed apart in the profile's header and in `import --json`, and
not counted as an escape hatch. Pure: the profile document in, the two lists out.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from ascendctl_engine.argv_items import parse_args
from ascendctl_engine.records import record
from ascendctl_engine.typed_fields import owner

# The variable namespace vLLM and its platform plugins read (vllm/envs.py, vllm_ascend/envs.py).
ENGINE_ENV_PREFIX = "VLLM_"


@record
class HatchCount:
    hatches: tuple[str, ...]  # "engine.extra_args: --seed 1024", "runtime.env.VLLM_RPC_TIMEOUT", ...
    pass_through: tuple[str, ...]  # variable names


def is_engine_variable(name: str) -> bool:
    """A variable ascendctl can give a meaning to: a typed field says it, or vLLM / vllm-ascend reads it."""
    return name.startswith(ENGINE_ENV_PREFIX) or owner("env", name) is not None


def count(document: Mapping[str, Any]) -> HatchCount:
    """The escape hatches and pass-through variables of a profile document (see the module docstring)."""
    hatches: dict[str, None] = {}
    passing: dict[str, None] = {}
    for where, engine in _engines(document):
        for item in _options(engine.get("extra_args") or []):
            hatches.setdefault(f"{where}.extra_args: {item}", None)
        for key in engine.get("additional_config") or {}:
            hatches.setdefault(f"{where}.additional_config.{key}", None)
    spec = document.get("disaggregation") or {}
    for key in spec.get("connector_extra_config") or {}:
        hatches.setdefault(f"disaggregation.connector_extra_config.{key}", None)
    for name in _variables(document):
        if is_engine_variable(name):
            hatches.setdefault(f"env {name}", None)
        else:
            passing.setdefault(name, None)
    return HatchCount(tuple(hatches), tuple(passing))


def _engines(document: Mapping[str, Any]) -> Iterator[tuple[str, Mapping[str, Any]]]:
    yield "engine", document.get("engine") or {}
    spec = document.get("disaggregation") or {}
    for role in ("prefill", "decode"):
        engine = (spec.get(role) or {}).get("engine")
        if engine:
            yield f"disaggregation.{role}.engine", engine
    for i, node in enumerate((document.get("network") or {}).get("nodes") or []):
        if node.get("extra_args"):
            yield f"network.nodes[{i}]", {"extra_args": node["extra_args"]}


def _options(argv: list[str]) -> Iterator[str]:
    try:
        items = parse_args([str(a) for a in argv])
    except ValueError:
        yield " ".join(str(a) for a in argv)
        return
    for item in items:
        yield " ".join(item.tokens)


def _variables(document: Mapping[str, Any]) -> Iterator[str]:
    yield from (document.get("runtime") or {}).get("env") or {}
    for node in (document.get("network") or {}).get("nodes") or []:
        yield from node.get("env") or {}


__all__ = ["ENGINE_ENV_PREFIX", "HatchCount", "count", "is_engine_variable"]
