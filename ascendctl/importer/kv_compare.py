"""A prefill/decode node's `--kv-transfer-config`, compared by what it means rather than by its text.

The roles, the connector and both groups' sizes must agree: they decide whether the two groups can talk at all
(the Mooncake connectors assert the sizes, v0.25.1rc1:vllm_ascend/distributed/kv_transfer/kv_p2p/mooncake_connector.py
:2010-2029). The KV port and the engine id are the plan's to derive per instance (`ascendctl.schema.instances`:
`kv_port + 100 × i`, ids 0..N-1): a script's own choice there is `derived`, not a difference, as long as the
scripts' choices are consistent among themselves (`script_consistency`). vLLM reads `kv_port` as an int and
`engine_id` as a string (vllm/config/kv_transfer.py, KVTransferConfig), so `"30000"` is 30000.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ascendctl.importer.compare import Difference, Verdict
from ascendctl.importer.deployment import connector_name
from ascendctl_engine.sections.disaggregation import DERIVED_EXTRA_KEYS

FLAG = "--kv-transfer-config"
EXTRA = "kv_connector_extra_config"
CONNECTOR = "kv_connector"
MODULE = "kv_connector_module_path"
_DERIVED = {
    "kv_port": "the plan's KV port for this instance (disaggregation.kv_port + 100 × its number: one range per host)",
    "engine_id": "the plan numbers the instances 0..N-1 (prefill first): ids differ, as the connectors require",
}


def kv_differences(
    planned: Mapping[str, Any] | None, script: Mapping[str, Any] | None, registered: Mapping[str, str]
) -> list[Difference]:
    """Key by key (`--kv-transfer-config.kv_role`, ...): what the two objects do not agree on, and why.
    `registered`: `module.Class` → the name the release registers it under (`deployment.connector_name`)."""
    mine, theirs = dict(planned or {}), dict(script or {})
    out: list[Difference] = []
    if mine.get(CONNECTOR) is not None and connector_name(theirs, registered) == mine[CONNECTOR]:
        out += _same_class(mine, theirs)
        for key in (CONNECTOR, MODULE):
            mine.pop(key, None)
            theirs.pop(key, None)
    for key in sorted(set(mine) | set(theirs)):
        a, b = mine.get(key), theirs.get(key)
        name = f"{FLAG}.{key}"
        if key == EXTRA and isinstance(a, dict) and isinstance(b, dict):
            out += _extra(name, a, b)
        elif _same(a, b):
            continue
        elif key in _DERIVED and key in mine and key in theirs:
            out.append(Difference("flag", name, "derived", a, b, _DERIVED[key]))
        else:
            out.append(_plain(name, a, b, key in mine, key in theirs))
    return out


def _same_class(planned: Mapping[str, Any], script: Mapping[str, Any]) -> list[Difference]:
    """The script loads the plan's connector by its class and module: the same class, no difference."""
    if script.get(CONNECTOR) == planned.get(CONNECTOR) and script.get(MODULE) == planned.get(MODULE):
        return []
    why = f"the class {script.get(MODULE)}.{script.get(CONNECTOR)}, registered as {planned[CONNECTOR]}"
    return [Difference("flag", f"{FLAG}.{CONNECTOR}", "respelled", planned[CONNECTOR], script.get(CONNECTOR), why)]


def _extra(name: str, planned: Mapping[str, Any], script: Mapping[str, Any]) -> list[Difference]:
    out: list[Difference] = []
    for key in sorted(set(planned) | set(script)):
        a, b = planned.get(key), script.get(key)
        if key in DERIVED_EXTRA_KEYS and isinstance(a, dict) and isinstance(b, dict):
            a, b = _sizes(a), _sizes(b)
        if not _same(a, b):
            out.append(_plain(f"{name}.{key}", a, b, key in planned, key in script))
    return out


def _plain(name: str, planned: Any, script: Any, in_plan: bool, in_script: bool) -> Difference:
    verdict: Verdict = "added" if not in_script else ("missing" if not in_plan else "differs")
    why = "derived from disaggregation" if in_plan else ""
    return Difference("flag", name, verdict, planned, script, why)


def _sizes(group: Mapping[str, Any]) -> dict[str, Any]:
    """`{"dp_size": "2"}` as the connector reads it (an int); `pp_size` 1 is its default."""
    out = {k: _int(v) for k, v in group.items()}
    if out.get("pp_size") == 1:
        out.pop("pp_size")
    return out


def _int(value: Any) -> Any:
    if isinstance(value, str) and value.strip().isdigit():
        return int(value)
    return value


def _same(a: Any, b: Any) -> bool:
    return a == b or (a is not None and b is not None and str(_int(a)) == str(_int(b)))


def script_consistency(kvs: Sequence[tuple[str, int | None, Mapping[str, Any]]]) -> list[str]:
    """What the scripts themselves contradict: (host, devices, kv config) per instance head. Two instances on one
    host whose KV port ranges overlap, or two instances with one engine id, cannot run as written."""
    problems: list[str] = []
    seen: dict[str, list[tuple[int, int]]] = {}
    ids: dict[str, int] = {}
    for n, (host, devices, kv) in enumerate(kvs):
        port = _int(kv.get("kv_port"))
        if isinstance(port, int):
            span = (port, port + (devices or 1))
            for low, high in seen.get(host, []):
                if span[0] < high and low < span[1]:
                    problems.append(f"the scripts' KV ports {low} and {port} overlap on {host}")
            seen.setdefault(host, []).append(span)
        engine = kv.get("engine_id")
        if engine is not None and str(engine) in ids and ids[str(engine)] != n:
            problems.append(f"two instances of the scripts share engine_id {engine!r}")
        elif engine is not None:
            ids[str(engine)] = n
    return problems


__all__ = ["FLAG", "kv_differences", "script_consistency"]
