"""Topic `kv-transfer`: an instance of a prefill/decode deployment gets its `--kv-transfer-config` and the
environment its connector reads.

- On Ascend the connector names come from the tag's own registrations (the key table's `kv_connectors`, read
  from `KVConnectorFactory.register_connector(...)` calls by scripts/extract_ascend_keys.py): a family the tag
  does not register is refused with the tags that do. Where the tag registers them only on import of
  `vllm_ascend.distributed` (`registered_by: import`, before v0.11.0rc1's `ascend_kv_connector` entry point),
  `kv_connector_module_path` names the module, as those releases' tutorials do.
- Mooncake connectors (`MooncakeConnectorV1`, layerwise, hybrid) assert `kv_connector_extra_config.prefill` and
  `.decode` each hold `tp_size` and `dp_size`, and decode `pp_size == 1`
  (v0.25.1rc1:vllm_ascend/distributed/kv_transfer/kv_p2p/mooncake_connector.py:2010-2029; the same reads since
  v0.10.1rc1:vllm_ascend/distributed/mooncake_connector.py:710): the sizes are the groups' own layouts.
- LLMDataDist (`LLMDataDistCMgrConnector`, v0.9.1rc2 … v0.11.0) takes the buffer device and parallel size in the
  JSON and reads a rank table (`DISAGGREGATED_PREFILL_RANK_TABLE_PATH`) and an RPC port base per instance
  (`VLLM_ASCEND_LLMDD_RPC_PORT`, `VLLM_LLMDD_RPC_PORT` before v0.10.1rc1; each binds the base + its ranks,
  v0.11.0:vllm_ascend/distributed/llmdatadist_c_mgr_connector.py:190,366).
- Off Ascend: vLLM's own shared-directory connector, `SharedStorageConnector` up to 0.12 and `ExampleConnector`
  from 0.13.0 (vllm/distributed/kv_transfer/kv_connector/factory.py: 0.12.0:147, 0.13.0:147), with
  `shared_storage_path` (0.32.0:vllm/distributed/kv_transfer/kv_connector/v1/example_connector.py:105).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import Any

from ascendctl_engine.adapters.ascend_keys import tag_span, tags_registering
from ascendctl_engine.adapters.builder import CommandBuilder
from ascendctl_engine.adapters.eras import Apply, era, era_for_release, nothing_to_plan
from ascendctl_engine.adapters.intent import EngineIntent
from ascendctl_engine.pd import ASCEND_CONNECTOR_NAMES, SIZED, KvTransfer

FLAG = "--kv-transfer-config"
ROLE_VALUES = {"prefill": "kv_producer", "decode": "kv_consumer"}

LLMDD_RANK_TABLE = "DISAGGREGATED_PREFILL_RANK_TABLE_PATH"
LLMDD_RPC_PORT_NAMES = ("VLLM_ASCEND_LLMDD_RPC_PORT", "VLLM_LLMDD_RPC_PORT")  # the newer spelling first


def _sizes(kv: KvTransfer) -> dict[str, dict[str, int]]:
    def group(dp: int, tp: int, pp: int) -> dict[str, int]:
        out = {"dp_size": dp, "tp_size": tp}
        if pp != 1:
            out["pp_size"] = pp
        return out

    return {
        "prefill": group(kv.prefill.dp, kv.prefill.tp, kv.prefill.pp),
        "decode": group(kv.decode.dp, kv.decode.tp, kv.decode.pp),
    }


def _ascend(intent: EngineIntent, b: CommandBuilder) -> None:
    kv = intent.kv_transfer
    if kv is None:
        return
    table = b.accepted.keys
    if kv.connector == "shared-storage" or table is None:
        b.fail(
            f"disaggregation.connector {kv.connector}: vLLM's shared-directory connector is not an Ascend connector; "
            f"use one of {', '.join(ASCEND_CONNECTOR_NAMES)}",
            fatal=True,
        )
        return
    name = ASCEND_CONNECTOR_NAMES[kv.connector]
    info = table.kv_connectors.get(name)
    if info is None:
        tags = tags_registering(name)
        where = f"registered by {tag_span(tags)}" if tags else "no vllm-ascend release registers it"
        b.fail(
            f"disaggregation.connector {kv.connector}: vllm-ascend {table.tag} registers no {name} "
            f"({table.source} kv_connectors; {where})",
            fatal=True,
        )
        return
    why = f"{kv.why}: {kv.role} instance, connector {name} ({info.source})"
    config: dict[str, Any] = {"kv_connector": name, "kv_role": ROLE_VALUES[kv.role], "kv_port": kv.kv_port}
    config["engine_id"] = kv.engine_id
    if kv.connector == "llmdatadist":
        config.update(kv_buffer_device="npu", kv_parallel_size=1)
        _llmdd_env(intent, kv, b)
    if table.kv_registered_by == "import":
        config["kv_connector_module_path"] = info.module
        b.decide(
            "kv-transfer.module-path", f"{table.tag} registers connectors only on import ({table.kv_registered_source})"
        )
    if kv.connector in SIZED or kv.extra_config:
        sizes = _sizes(kv) if kv.connector in SIZED else {}
        config["kv_connector_extra_config"] = {**kv.extra_config, **sizes}
        for key, why in unread_extra_keys(kv.extra_config, intent.backend, intent.vllm, intent.vllm_ascend).items():
            b.warn(f"disaggregation.connector_extra_config.{key}: {why}")
    if kv.connector in SIZED and kv.decode.pp != 1:
        b.fail(
            f"disaggregation.decode: pipeline size {kv.decode.pp}; {name} asserts decode pp_size == 1 "
            "(v0.25.1rc1:vllm_ascend/distributed/kv_transfer/kv_p2p/mooncake_connector.py:2029)",
            fatal=True,
        )
    b.json_arg(FLAG, config, why=why)


def _llmdd_env(intent: EngineIntent, kv: KvTransfer, b: CommandBuilder) -> None:
    table = b.accepted.keys
    assert table is not None
    if kv.rank_table is None:
        b.fail(
            f"disaggregation.rank_table: LLMDataDistCMgrConnector reads its rank table from {LLMDD_RANK_TABLE} "
            f"({table.source}); generate it with the release's examples/disaggregated_prefill_v1/gen_ranktable.sh "
            "(v0.11.0) and set disaggregation.rank_table",
            clause="known-failure",
            fatal=True,
        )
    else:
        b.env_default(LLMDD_RANK_TABLE, kv.rank_table, why="user: disaggregation.rank_table")
    port_name = next((n for n in LLMDD_RPC_PORT_NAMES if table.env(n) is not None), None)
    if port_name is not None and kv.rpc_port is not None:
        b.env_default(port_name, str(kv.rpc_port), why=f"{kv.why}: this instance's RPC ports (distinct per instance)")


def _shared_storage(connector: str, source: str) -> Apply:
    def apply(intent: EngineIntent, b: CommandBuilder) -> None:
        kv = intent.kv_transfer
        if kv is None:
            return
        if kv.connector != "shared-storage":
            b.fail(
                f"disaggregation.connector {kv.connector} is an Ascend connector; on {intent.backend} vLLM "
                "transfers KV through `shared-storage`",
                fatal=True,
            )
            return
        config = {
            "kv_connector": connector,
            "kv_role": ROLE_VALUES[kv.role],
            "engine_id": kv.engine_id,
            "kv_connector_extra_config": {**kv.extra_config, "shared_storage_path": kv.shared_storage_path},
        }
        b.json_arg(FLAG, config, why=f"{kv.why}: {kv.role} instance, connector {connector} ({source})")

    return apply


era(
    "kv-transfer", "ascend-registered", axis="vllm_ascend", backends={"npu"},
    summary=f"`{FLAG}` with the connector name the tag registers (module path where it registers on import), "
    "engine id, KV port and the groups' sizes; LLMDataDist's rank table and RPC port",
    source="each tag's vllm_ascend/distributed/**/__init__.py register_connector calls (the key tables' "
    "kv_connectors)",
)(_ascend)  # fmt: skip
# vLLM's own shared-directory connector, by the name each vLLM registers it under.
_SHARED: tuple[tuple[str, str, str, str], ...] = (
    ("shared-storage", "<0.13.0", "SharedStorageConnector",
     "vLLM 0.12.0:vllm/distributed/kv_transfer/kv_connector/factory.py:147"),
    ("example-connector", ">=0.13.0", "ExampleConnector",
     "vLLM 0.13.0:vllm/distributed/kv_transfer/kv_connector/factory.py:147 (the shared-storage connector renamed)"),
)  # fmt: skip
for _name, _spec, _connector, _source in _SHARED:
    era(
        "kv-transfer", _name, axis="vllm", spec=_spec, backends={"cpu", "cuda"},
        summary=f"`{FLAG}` with {_connector}", source=_source,
    )(_shared_storage(_connector, _source))  # fmt: skip


# ------------------------------------------------------------------------------------------- kv-extra-keys
# `kv-extra-keys` (data): the `kv_connector_extra_config` keys besides the groups' sizes that a release's Mooncake
# P2P connector reads (trait `reads`: key → source). `use_ascend_direct` was read by v0.10.2rc1 … v0.11.0 only
# (v0.10.2rc1:vllm_ascend/distributed/mooncake_connector.py:786; gone from v0.12.0rc1's connector, which the CI
# configs of later tags still pass); the plan warns for a key its release does not read, and `import` leaves it out.
_EXTRA_KEYS: tuple[tuple[str, str, Mapping[str, str], str], ...] = (
    ("sizes-only", "<0.10.2rc1", {}, "v0.10.1rc1:vllm_ascend/distributed/mooncake_connector.py (no other key)"),
    ("use-ascend-direct", ">=0.10.2rc1,<0.12.0rc1",
     {"use_ascend_direct": "v0.10.2rc1:vllm_ascend/distributed/mooncake_connector.py:786 … v0.11.0"},
     "v0.10.2rc1:vllm_ascend/distributed/mooncake_connector.py:786"),
    ("sizes-again", ">=0.12.0rc1", {}, "v0.12.0rc1 … v0.25.1rc1:vllm_ascend/distributed/ (no `use_ascend_direct`)"),
)  # fmt: skip
for _name, _spec, _reads, _source in _EXTRA_KEYS:
    era(
        "kv-extra-keys", _name, axis="vllm_ascend", spec=_spec, backends={"npu"},
        summary="kv_connector_extra_config keys read besides the sizes: " + (", ".join(_reads) or "none"),
        source=_source, traits={"reads": MappingProxyType(dict(_reads))},
    )(nothing_to_plan)  # fmt: skip


# `mooncake-install` (data): how the release's image installs the Mooncake transfer engine its Mooncake connectors
# import (trait `install`): built from source with cmake before v0.23.0rc1 (v0.18.0:Dockerfile:34-45), which leaves
# a `mooncake` module without a distribution's metadata; the `mooncake-transfer-engine-npu` wheel from v0.23.0rc1
# (v0.23.0rc1:Dockerfile; v0.23.0:Dockerfile:25,31). `check PROFILE` names it in its fix.
for _name, _spec, _source in (
    ("source", "<0.23.0rc1", "v0.18.0:Dockerfile:34-45"),
    ("wheel", ">=0.23.0rc1", "v0.23.0:Dockerfile:25,31"),
):
    era(
        "mooncake-install", _name, axis="vllm_ascend", spec=_spec, backends={"npu"},
        summary=f"the image installs Mooncake from {'its wheel' if _name == 'wheel' else 'source'}", source=_source,
        traits={"install": _name},
    )(nothing_to_plan)  # fmt: skip


def unread_extra_keys(keys: Iterable[str], backend: str, vllm: str, vllm_ascend: str | None) -> dict[str, str]:
    """key → why, for each `kv_connector_extra_config` key the release's connector does not read."""
    chosen = era_for_release("kv-extra-keys", backend, vllm, vllm_ascend)
    if chosen is None:
        return {}
    reads = chosen.traits["reads"]
    return {
        key: f"vllm-ascend {vllm_ascend} reads no `{key}` in kv_connector_extra_config ({chosen.source})"
        for key in keys
        if key not in reads
    }


# --------------------------------------------------------------------------------------------------- pd-router
# `pd-router` (data): the router a release offers in front of its prefill and decode instances. Trait `program`:
# the argv head, `style` how instances are passed (`proxy`: vllm-ascend's example proxy, `--prefiller-hosts H…
# --prefiller-ports P… --decoder-hosts H… --decoder-ports P…`, the script in the release image under
# /vllm-workspace/vllm-ascend, which every Dockerfile copies the repository to; `vllm-router`: the vllm-project
# router's `--vllm-pd-disaggregation --prefill URL … --decode URL …`), `layerwise` the proxy for the layerwise
# connector (it asks decode first), `health` the path readiness is polled on, `install` the requirement the engine
# environment installs for it (none: the proxy comes with the release image). Before v0.10.1rc1 no release ships a
# proxy: the plan names none.
# The protocol both routers speak is the kv_transfer_params handshake every connector planned here uses (prefill
# asked with `max_tokens: 1` and `kv_transfer_params.do_remote_decode: true`; decode sent the `kv_transfer_params`
# prefill answered): vllm-ascend's proxy, v0.25.1rc1:examples/disaggregated_prefill_v1/
# load_balance_proxy_server_example.py:820-829,954-956; vllm-router 0.1.17 in its default `--kv-connector nixl`
# mode (measured against a recording prefill/decode pair: tests/test_pd_router_protocol.py). Its `mooncake` mode
# is vLLM's own Mooncake connector's bootstrap query, not vllm-ascend's: not used.
PROXY_HEALTH = "/healthcheck"  # v0.10.1rc1..v0.25.1rc1: both proxies' `@app.get("/healthcheck")`
# Trait `auth`: how the router treats API keys, where it checks none from its clients (every router planned here):
# with `server.api_key` set, its port would serve whoever reaches it while the instances demand the key
# (`plan.pd.api-key`). vllm-ascend's proxies send `Authorization: Bearer $OPENAI_API_KEY` to the instances and
# read no client header (v0.10.1rc1:…/load_balance_proxy_server_example.py:369,399 … v0.25.1rc1: below; the
# layerwise proxy alike); vllm-router 0.1.17 in PD mode lets a request without a key through and sends the
# instances an empty bearer token, with or without its own `--api-key` (measured against recording instances).
ROUTER_AUTH_SOURCE = (
    "v0.25.1rc1:examples/disaggregated_prefill_v1/load_balance_proxy_server_example.py:629,813 (OPENAI_API_KEY); "
    "vllm-router 0.1.17, measured (tests/e2e/test_pd_router_protocol.py)"
)
PROXY_AUTH = (
    "vllm-ascend's example proxy checks no API key from clients and authenticates to the instances with its own "
    "$OPENAI_API_KEY, which the plan does not set"
)
VLLM_ROUTER_AUTH = (
    "vllm-router 0.1.17 checks no API key from clients and sends the instances an empty bearer token, even with its "
    "--api-key"
)
PROXY_DIR = "/vllm-workspace/vllm-ascend/examples/disaggregated_prefill_v1"
_ROUTERS: tuple[tuple[str, str, tuple[str, ...], str | None, str], ...] = (
    ("no-proxy", "<0.10.1rc1", (), None, "v0.9.1:examples (no disaggregated_prefill_v1 proxy)"),
    (
        "example-proxy", ">=0.10.1rc1,<0.11.0rc1",
        ("python3", f"{PROXY_DIR}/load_balance_proxy_server_example.py"), None,
        "v0.10.1rc1:examples/disaggregated_prefill_v1/load_balance_proxy_server_example.py; Dockerfile (COPY . "
        "/vllm-workspace/vllm-ascend/)",
    ),
    (
        "example-proxy+layerwise", ">=0.11.0rc1",
        ("python3", f"{PROXY_DIR}/load_balance_proxy_server_example.py"),
        f"{PROXY_DIR}/load_balance_proxy_layerwise_server_example.py",
        "v0.25.1rc1:examples/disaggregated_prefill_v1/load_balance_proxy_server_example.py:672-677 (--host, --port, "
        "--prefiller-hosts/-ports, --decoder-hosts/-ports); v0.11.0:…/load_balance_proxy_layerwise_server_example.py; "
        "v0.25.1rc1:Dockerfile.a3:65 (COPY . /vllm-workspace/vllm-ascend/)",
    ),
)  # fmt: skip
for _name, _spec, _program, _layerwise, _source in _ROUTERS:
    era(
        "pd-router", _name, axis="vllm_ascend", spec=_spec, backends={"npu"},
        summary=f"router: {' '.join(_program)}" if _program else "no router in the release",
        source=_source,
        traits={"style": "proxy" if _program else None, "program": _program, "layerwise": _layerwise,
                "health": PROXY_HEALTH, "install": (), "auth": PROXY_AUTH if _program else None},
    )(nothing_to_plan)  # fmt: skip
VLLM_ROUTER = "vllm-router"  # PyPI vllm-router (vllm-project/router): --vllm-pd-disaggregation --prefill … --decode …
VLLM_ROUTER_REQUIREMENT = "vllm-router==0.1.17"  # its dependencies (fastapi, uvicorn, aiohttp, orjson) come with vLLM
# vllm-router always serves Prometheus metrics, on 127.0.0.1:29000 unless `--prometheus-port` says otherwise (its
# `--help` reads "If not specified, Prometheus metrics are disabled (default: 29000)", yet 0.1.17 binds 29000), and a
# second router that cannot bind it panics ("failed to install Prometheus metrics exporter") and exits 1: the plan
# always passes the port (`metrics_port`: the default it keeps when the profile names none).
VLLM_ROUTER_METRICS_PORT = 29000
VLLM_ROUTER_SOURCE = (
    "PyPI vllm-router 0.1.17 (`vllm-router --help`: --vllm-pd-disaggregation, --prefill URL, --decode URL, "
    "--prometheus-port (default: 29000); GET /health)"
)
era(
    "pd-router", "vllm-router", axis="vllm", backends={"cpu", "cuda"},
    summary="router: vllm-router --vllm-pd-disaggregation (PyPI vllm-router)",
    source=VLLM_ROUTER_SOURCE,
    traits={"style": "vllm-router", "program": (VLLM_ROUTER,), "layerwise": None, "health": "/health",
            "install": (VLLM_ROUTER_REQUIREMENT,), "metrics_port": VLLM_ROUTER_METRICS_PORT,
            "auth": VLLM_ROUTER_AUTH},
)(nothing_to_plan)  # fmt: skip

_POLICIES = {"round-robin": "round_robin"}


def router_argv(
    traits: Mapping[str, Any],
    connector: str,
    host: str,
    port: int,
    prefill: Sequence[tuple[str, int]],
    decode: Sequence[tuple[str, int]],
    policy: str,
    metrics_port: int | None = None,
) -> tuple[str, ...]:
    """The router's argv from a `pd-router` era's traits and the instances' API addresses; () when the release
    offers no router. `metrics_port`: where a router that serves metrics binds them (`router_metrics_port`)."""
    style, program = traits.get("style"), tuple(traits.get("program") or ())
    if style == "proxy":
        if connector == "mooncake-layerwise" and traits.get("layerwise"):
            program = (program[0], str(traits["layerwise"]))
        return (
            *program, "--host", host, "--port", str(port),
            "--prefiller-hosts", *(h for h, _ in prefill), "--prefiller-ports", *(str(p) for _, p in prefill),
            "--decoder-hosts", *(h for h, _ in decode), "--decoder-ports", *(str(p) for _, p in decode),
        )  # fmt: skip
    if style == "vllm-router":
        return (
            *program, "--vllm-pd-disaggregation", "--host", host, "--port", str(port),
            "--policy", _POLICIES.get(policy, policy),
            *(w for h, p in prefill for w in ("--prefill", f"http://{h}:{p}")),
            *(w for h, p in decode for w in ("--decode", f"http://{h}:{p}")),
            *(("--prometheus-port", str(metrics_port)) if metrics_port is not None else ()),
        )  # fmt: skip
    return ()


def router_metrics_port(traits: Mapping[str, Any], wanted: int | None) -> int | None:
    """The port a `pd-router` era's router binds its metrics to: the profile's `disaggregation.router.metrics_port`,
    else the program's own default; None for a router that serves no metrics (whatever the profile says)."""
    default = traits.get("metrics_port")
    if default is None:
        return None
    return wanted if wanted is not None else int(default)
