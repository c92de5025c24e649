"""Prefill/decode disaggregation, planned: placement of the instances, the KV-transfer config each release spells
(connector names from the release's own registrations, sizes derived from the groups), the `plan.pd.*` rules, the
router service, `plan --json`, `fit` per role, renders and refusals."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from ascendctl.cli import app
from ascendctl.core.errors import UserInputError
from ascendctl.outputs.render import RenderOptions, render, render_overrides
from ascendctl.plan.planner import plan_profile
from ascendctl.plan.types import Plan
from ascendctl.schema.hccn_conf import hccn_conf_reason
from ascendctl.schema.instances import place
from ascendctl.schema.loader import DocumentError, load_profile
from ascendctl_engine.adapters.ascend_keys import key_table, tags_registering

ROOT = Path(__file__).resolve().parents[1]
GLM = ROOT / "profiles" / "glm-5-2-pd-a3.yaml"
LLMDD = ROOT / "tests" / "fixtures" / "profiles" / "qwen2.5-vl-7b-pd-llmdatadist-a2-v0110.yaml"
CPU = ROOT / "tests" / "fixtures" / "profiles" / "cpu-pd-shared-storage.yaml"


def planned(path: Path, *overrides: str, release: str | None = None) -> Plan:
    return plan_profile(load_profile(path, list(overrides)), release=release, data_root=Path("/var/lib/ascendctl"))


def kv_config(plan: Plan, instance: str, node: int = 0) -> dict[str, Any]:
    argv = plan.instance(instance).commands[node].argv
    return json.loads(argv[argv.index("--kv-transfer-config") + 1])


def blocking_ids(plan: Plan) -> list[str]:
    return [f.id for f in plan.blocking]


# --- placement ------------------------------------------------------------------------------------------


def test_multi_node_instances_take_whole_nodes_in_role_order() -> None:
    placements = place(load_profile(GLM))
    assert [(p.name, p.hosts, p.first_device, p.devices) for p in placements] == [
        ("prefill-0", (0, 1), 0, 16),
        ("decode-0", (2, 3), 0, 16),
    ]


def test_one_node_instances_share_a_node_on_contiguous_devices() -> None:
    plan = planned(LLMDD)
    assert [(i.name, [n.index for n in i.nodes]) for i in plan.instances] == [("prefill-0", [0]), ("decode-0", [0])]
    devices = [i.commands[0].env["ASCEND_RT_VISIBLE_DEVICES"] for i in plan.instances]
    assert devices == ["0", "1"]
    # two prefill instances of 1 device and one decode of 2 on 4-device nodes: 0,1 | 2-3, then nothing left over
    more = place(load_profile(LLMDD, ["target.devices_per_node=4", "disaggregation.prefill.instances=2",
                                      "disaggregation.decode.devices=2"]))  # fmt: skip
    assert [(p.name, p.hosts, p.first_device) for p in more] == [
        ("prefill-0", (0,), 0),
        ("prefill-1", (0,), 1),
        ("decode-0", (0,), 2),
    ]


def test_a_layout_that_does_not_fill_the_nodes_is_a_located_profile_error(tmp_path: Path) -> None:
    with pytest.raises(DocumentError) as caught:
        load_profile(GLM, ["target.nodes=5"])
    text = str(caught.value)
    assert "disaggregation" in text and "fill 4 node(s)" in text and "target.nodes is 5" in text
    result = CliRunner().invoke(app, ["plan", str(GLM), "--set", "disaggregation.decode.devices=8"])
    assert result.exit_code == 2 and "takes whole nodes" in result.output


@pytest.mark.parametrize(
    ("path", "overrides", "at", "message"),
    [
        (CPU, ["server.port=65535"], "server.port", "prefill-0's API port would be 65536"),
        (CPU, ["network.dp_rpc_port=65535"], "network.dp_rpc_port", "decode-0's data-parallel RPC port would be 65536"),
        (
            CPU,
            ["target.devices_per_node=4", "disaggregation.prefill.instances=2", "disaggregation.prefill.port=65535"],
            "disaggregation.prefill.port",
            "prefill-1's API port would be 65536",
        ),
        (GLM, ["disaggregation.kv_port=65535"], "disaggregation.kv_port", "prefill-0's last KV port would be 65551"),
        (LLMDD, ["disaggregation.rpc_port=65535"], "disaggregation.rpc_port", "last LLMDataDist RPC port would be"),
    ],
    ids=["api", "dp-rpc", "group-port", "kv-range", "llmdd-rpc-range"],
)
def test_a_derived_port_past_the_last_tcp_port_is_the_settings_error(
    path: Path, overrides: list[str], at: str, message: str
) -> None:
    # derived ports (server.port + 1 + i, a group's port + index, kv_port … + devices) were validated nowhere:
    # an instance profile with port 65536 raised pydantic's error from the planner (exit 3)
    with pytest.raises(DocumentError) as caught:
        load_profile(path, overrides)
    [line] = str(caught.value).splitlines()
    assert f"--set {at}: {at}: " in line and message in line and "past the last TCP port (65535)" in line
    result = CliRunner().invoke(app, ["plan", str(path), *(w for o in overrides for w in ("--set", o))])
    assert result.exit_code == 2 and message in result.output


def test_a_placement_error_is_located_once_at_its_setting() -> None:
    result = CliRunner().invoke(app, ["validate", str(CPU), "--set", "disaggregation.prefill.devices=4"])
    assert result.exit_code == 2
    assert result.output.count("disaggregation.prefill.devices:") == 2  # the --set, then the path: as every error
    assert "disaggregation: disaggregation" not in result.output


# --- the KV-transfer config per release -----------------------------------------------------------------


def test_sizes_are_derived_from_the_groups_never_typed_twice() -> None:
    decode = "disaggregation.decode.engine.parallel"
    plan = planned(GLM, f"{decode}.tensor=16", f"{decode}.data=2", f"{decode}.data_per_node=1")
    for name in ("prefill-0", "decode-0"):
        extra = kv_config(plan, name)["kv_connector_extra_config"]
        assert extra == {"prefill": {"dp_size": 4, "tp_size": 8}, "decode": {"dp_size": 2, "tp_size": 16}}
    argv = plan.instance("decode-0").commands[0].argv
    assert argv[argv.index("--tensor-parallel-size") + 1] == "16"


def test_each_instance_has_its_own_engine_id_role_and_kv_port() -> None:
    plan = planned(GLM)
    configs = [kv_config(plan, i.name, node) for i in plan.instances for node in range(len(i.commands))]
    assert [(c["kv_role"], c["engine_id"], c["kv_port"]) for c in configs] == [
        ("kv_producer", "0", 36000),
        ("kv_producer", "0", 36000),  # the instance's second node: the same instance
        ("kv_consumer", "1", 36100),
        ("kv_consumer", "1", 36100),
    ]
    assert {c["kv_connector"] for c in configs} == {"MooncakeConnectorV1"}


def test_the_connector_name_comes_from_the_release_registrations() -> None:
    table = key_table("v0.25.1rc1")
    assert table.kv_connectors["MooncakeConnectorV1"].source.startswith("v0.25.1rc1:vllm_ascend/distributed/")
    hybrid = planned(GLM, "disaggregation.connector=mooncake-hybrid")
    assert kv_config(hybrid, "prefill-0")["kv_connector"] == "MooncakeHybridConnector"
    # a release that does not register it: refused, naming the releases that do
    old = planned(GLM, "disaggregation.connector=mooncake-hybrid", release="v0.13.0")
    [refusal] = [f for f in old.blocking if "MooncakeHybridConnector" in f.message]
    assert "registers no MooncakeHybridConnector" in refusal.message
    assert tags_registering("MooncakeHybridConnector")[0] == "v0.20.2rc1" and "v0.20.2rc1" in refusal.message
    gone = planned(LLMDD, release="v0.13.0")
    assert any("registers no LLMDataDistCMgrConnector" in f.message and "v0.11.0" in f.message for f in gone.blocking)


def test_releases_that_register_on_import_get_the_module_path() -> None:
    # v0.10.1rc1 registers its connectors only when vllm_ascend.distributed is imported (no entry point yet)
    assert key_table("v0.10.1rc1").kv_registered_by == "import"
    assert key_table("v0.11.0").kv_registered_by == "entry-point"
    early = planned(LLMDD, release="v0.10.1rc1")
    assert not early.blocking, [f.message for f in early.blocking]
    config = kv_config(early, "prefill-0")
    assert config["kv_connector_module_path"] == "vllm_ascend.distributed.llmdatadist_c_mgr_connector"
    assert "kv_connector_module_path" not in kv_config(planned(LLMDD), "prefill-0")


def test_llmdatadist_reads_its_rank_table_and_a_distinct_rpc_port_per_instance() -> None:
    plan = planned(LLMDD)
    envs = [i.commands[0].env for i in plan.instances]
    assert {e["DISAGGREGATED_PREFILL_RANK_TABLE_PATH"] for e in envs} == {"/path/to/your/generated/ranktable.json"}
    assert [e["VLLM_ASCEND_LLMDD_RPC_PORT"] for e in envs] == ["5959", "5979"]
    config = kv_config(plan, "decode-0")
    assert (config["kv_buffer_device"], config["kv_parallel_size"]) == ("npu", 1)
    # v0.10.0rc1 spells the port variable without ASCEND_
    assert "VLLM_LLMDD_RPC_PORT" in planned(LLMDD, release="v0.10.0rc1").instances[0].commands[0].env
    missing = planned(LLMDD, "disaggregation.rank_table=null")
    assert any("disaggregation.rank_table" in f.message for f in missing.blocking)


def test_cpu_uses_vllms_shared_storage_connector_and_refuses_an_ascend_one() -> None:
    plan = planned(CPU)
    config = kv_config(plan, "decode-0")
    assert config["kv_connector"] == "ExampleConnector" and config["kv_role"] == "kv_consumer"
    assert config["kv_connector_extra_config"] == {"shared_storage_path": "/var/lib/ascendctl/kv-shared/cpu-pd"}
    ascend = planned(CPU, "disaggregation.connector=mooncake")
    assert any("is an Ascend connector" in f.message for f in ascend.blocking)
    npu = planned(LLMDD, "disaggregation.connector=shared-storage")
    assert any("not an Ascend connector" in f.message for f in npu.blocking)


def test_a_decode_pipeline_is_refused_as_the_connector_asserts() -> None:
    plan = planned(GLM, "disaggregation.decode.engine.parallel.pipeline=2",
                   "disaggregation.decode.engine.parallel.data=2",
                   "disaggregation.decode.engine.parallel.data_per_node=1")  # fmt: skip
    assert any("decode pp_size == 1" in f.message for f in plan.blocking)


# --- plan.pd.* rules --------------------------------------------------------------------------------------


def test_a_kv_port_in_mooncakes_random_range_warns_with_the_fix() -> None:
    # the guide's claim, and upstream's nightly A3 launch runs kv_port 30000: a warning, not a refusal
    plan = planned(GLM, "disaggregation.kv_port=30000")  # the tutorial's own value, on 16-NPU nodes
    assert "plan.pd.kv-port-range" not in blocking_ids(plan)
    [finding] = [f for f in plan.deployment.findings if f.id == "plan.pd.kv-port-range" and f.status == "warn"]
    assert "[20000, 36000)" in finding.message and finding.fix == "set disaggregation.kv_port to 36000 or more"
    assert not [f for f in planned(GLM).deployment.findings if f.id == "plan.pd.kv-port-range" and f.status == "warn"]


def test_a_port_two_instances_share_on_a_host_is_refused() -> None:
    plan = planned(LLMDD, "disaggregation.decode.port=13700")
    [finding] = [f for f in plan.blocking if f.id == "plan.pd.ports"]
    assert "prefill-0 API and decode-0 API both use port 13700" in finding.message
    # on different hosts the same port is fine (the GLM tutorial's instances could share one)
    assert "plan.pd.ports" not in blocking_ids(planned(GLM, "disaggregation.decode.port=9081"))
    # the router is on node 0 too
    router = planned(LLMDD, "disaggregation.router.port=13700")
    assert any("the router and prefill-0 API" in f.message for f in router.blocking if f.id == "plan.pd.ports")


def test_speculative_tokens_must_agree_across_roles() -> None:
    # only the PD guide says so (a document's claim): a warning with its source, never a refusal
    plan = planned(GLM, "disaggregation.prefill.engine.speculative.num_tokens=2")
    [finding] = [f for f in plan.deployment.findings if f.id == "plan.pd.speculative"]
    assert finding.status == "warn" and "prefill 2, decode 3" in finding.message and finding.source
    no_draft_on_prefill = planned(GLM, "disaggregation.prefill.engine.speculative=null")
    assert "plan.pd.speculative" not in blocking_ids(no_draft_on_prefill)
    assert any(f.id == "plan.pd.speculative" and f.status == "warn" for f in no_draft_on_prefill.deployment.findings)


def test_non_contiguous_devices_for_an_instance_are_refused() -> None:
    plan = planned(LLMDD, "target.devices_per_node=4", "target.visible_devices=[0,2,4,6]",
                   "disaggregation.prefill.devices=2", "disaggregation.decode.devices=2")  # fmt: skip
    [finding] = [f for f in plan.blocking if f.id == "plan.pd.devices"]
    assert "prefill-0 on devices [0, 2]" in finding.message


def test_decode_only_settings_pass_on_decode_and_fail_on_prefill() -> None:
    # o_proj fine-grained TP is refused outside a PD decode node (v0.25.1rc1:vllm_ascend/ascend_config.py)
    oproj = "engine.additional_config.finegrained_tp_config.oproj_tensor_parallel_size=2"
    decode = planned(GLM, f"disaggregation.decode.{oproj}")
    assert "plan.ascend.oproj-tp-pd-decode" not in blocking_ids(decode)
    prefill = planned(GLM, f"disaggregation.prefill.{oproj}")
    [finding] = [f for f in prefill.blocking if f.id == "plan.ascend.oproj-tp-pd-decode"]
    assert finding.message.startswith("prefill-0: ") and "a kv_producer node" in finding.message


def test_the_recompute_scheduler_warns_only_off_decode() -> None:
    plan = planned(GLM)  # the tutorial turns it on for both roles
    said = [w for w in plan.warnings if "decode instances of a prefill/decode" in w]
    assert said and all("this is a prefill instance" in w for w in said)


# --- the plan as data -------------------------------------------------------------------------------------


def test_plan_json_lists_instances_nodes_and_the_router() -> None:
    result = CliRunner().invoke(app, ["plan", str(GLM), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert [(i["name"], i["role"], i["nodes"]) for i in data["instances"]] == [
        ("prefill-0", "prefill", [0, 1]),
        ("decode-0", "decode", [2, 3]),
    ]
    assert [(n["instance"], n["host"], n["node"], n["role"]) for n in data["nodes"]] == [
        ("prefill-0", 0, 0, "head"),
        ("prefill-0", 1, 1, "worker"),
        ("decode-0", 2, 0, "head"),
        ("decode-0", 3, 1, "worker"),
    ]
    [router] = data["services"]
    assert router["port"] == 8000 and [r["port"] for r in router["routes"]] == [9081, 9900]
    assert router["command"][-4:] == ["--decoder-hosts", "192.0.2.20", "--decoder-ports", "9900"]
    assert data["settings"]["decode-0:engine.scheduler.max_num_seqs"]["value"] == 32
    assert data["settings"]["prefill-0:engine.scheduler.max_num_seqs"]["value"] == 8


def test_plan_node_option_shows_one_host() -> None:
    result = CliRunner().invoke(app, ["serve", str(GLM), "--dry-run", "--node", "2"])
    assert result.exit_code == 0, result.output
    assert "decode-0 (decode) node 0 (head, host 2" in result.output and "prefill-0 (prefill)" not in result.output
    assert CliRunner().invoke(app, ["serve", str(GLM), "--dry-run", "--node", "4"]).exit_code == 2


def test_the_cpu_router_reaches_the_instances_on_loopback() -> None:
    [router] = planned(CPU).services
    assert router.command == (
        "vllm-router", "--vllm-pd-disaggregation", "--host", "127.0.0.1", "--port", "8100", "--policy", "round_robin",
        "--prefill", "http://127.0.0.1:8101", "--decode", "http://127.0.0.1:8102", "--prometheus-port", "29000",
    )  # fmt: skip
    assert router.metrics_port == 29000 and router.to_json()["metrics_port"] == 29000


def test_the_router_metrics_port_is_planned_and_checked_like_the_other_ports() -> None:
    # vllm-router binds its metrics (29000 by default) and exits when it cannot: two deployments on one host need
    # different ones, so the plan passes the port, and plan.pd.ports sees it on the router's node.
    moved = planned(CPU, "disaggregation.router.metrics_port=29100")
    assert moved.services[0].command[-2:] == ("--prometheus-port", "29100")
    assert "plan.pd.router-metrics" not in blocking_ids(moved)
    clash = planned(CPU, "disaggregation.router.metrics_port=8101")
    [finding] = [f for f in clash.blocking if f.id == "plan.pd.ports"]
    assert "the router's metrics and prefill-0 API both use port 8101" in finding.message


def test_a_metrics_port_for_a_router_without_metrics_is_a_warning() -> None:
    # the Ascend releases' router is vllm-ascend's example proxy: it serves no metrics
    plan = planned(GLM, "disaggregation.router.metrics_port=29100")
    [finding] = [f for f in plan.deployment.findings if f.id == "plan.pd.router-metrics"]
    assert finding.status == "warn" and "serves no metrics" in finding.message
    assert plan.services[0].metrics_port is None and "--prometheus-port" not in plan.services[0].command
    assert "plan.pd.router-metrics" not in blocking_ids(plan)


@pytest.mark.parametrize(
    ("path", "router"),
    [(CPU, "vllm-router 0.1.17 checks no API key"), (GLM, "vllm-ascend's example proxy checks no API key")],
    ids=["vllm-router", "example-proxy"],
)
def test_an_api_key_in_front_of_a_router_that_checks_none_is_refused(path: Path, router: str) -> None:
    # the router is the deployment's endpoint: it would serve anyone, and the instances (which get the key) would
    # refuse what it forwards (tests/e2e/test_pd_router_protocol.py measures vllm-router)
    keyed = planned(path, "server.api_key.env=MY_API_KEY")
    [finding] = [f for f in keyed.blocking if f.id == "plan.pd.api-key"]
    assert finding.message.startswith(f"server.api_key on a prefill/decode deployment: {router}")
    assert "gateway" in (finding.fix or "") and finding.at == ("server", "api_key")
    assert "plan.pd.api-key" not in blocking_ids(planned(path))
    allowed = planned(path, "server.api_key.env=MY_API_KEY", "allow=[plan.pd.api-key]")
    assert "plan.pd.api-key" not in blocking_ids(allowed) and "plan.pd.api-key" in allowed.allowed


def test_fit_reports_per_role(tmp_path: Path) -> None:
    # Qwen3-235B-A22B's shapes are published (ascendctl/facts/data/model_configs): prefill DP2 x TP8, decode DP16 x TP1
    profile = yaml.safe_load(GLM.read_text())
    profile["model"] = {"source": "Qwen/Qwen3-235B-A22B", "max_model_len": 32768}
    profile["engine"].pop("additional_config", None)
    profile["engine"]["ascend"] = {}
    profile.pop("serving")
    for role in ("prefill", "decode"):
        profile["disaggregation"][role]["engine"].pop("speculative")
        profile["disaggregation"][role]["engine"]["ascend"] = {}
    profile["disaggregation"]["decode"]["engine"]["parallel"] = {"tensor": 1, "data": 32, "data_per_node": 16}
    # decode gets half of each device: its KV cache cannot hold one sequence, so its fit has suggestions
    profile["disaggregation"]["decode"]["engine"]["memory"] = {"device_utilization": 0.5}
    path = tmp_path / "qwen3-pd.yaml"
    path.write_text(yaml.safe_dump(profile))
    result = CliRunner().invoke(app, ["fit", str(path), "--json"])
    assert result.exit_code in (0, 1), result.output
    fits = json.loads(result.output)
    assert set(fits) == {"prefill", "decode"}
    assert fits["prefill"]["kv_tokens"] != fits["decode"]["kv_tokens"]  # TP8 and TP1 ranks hold different shares
    text = CliRunner().invoke(app, ["fit", str(path)]).output
    assert "fit: prefill" in text and "fit: decode" in text
    # a suggestion for one role's engine names that role's key
    assert fits["decode"]["verdict"] == "does-not-fit" and fits["prefill"]["verdict"] == "fits"
    assert "--set engine." not in text and "--set disaggregation.decode.engine.memory.device_utilization=" in text
    # something else makes it start, so no suggestion shortens the operator's context
    assert "model.max_model_len=" not in text


# --- renders and refusals -----------------------------------------------------------------------------------


def _rendered(path: Path, target: str) -> dict[str, str]:
    profile = load_profile(path, render_overrides(target, []))
    plan = plan_profile(profile, data_root=Path("/var/lib/ascendctl"))
    return {f.name: f.content for f in render(plan, target, RenderOptions())}


def test_kubernetes_gets_a_set_per_instance_and_a_router_that_finds_them_by_service_name() -> None:
    files = _rendered(GLM, "k8s")
    assert sorted(files) == ["decode-0-k8s.yaml", "prefill-0-k8s.yaml", "router-k8s.yaml"]
    kinds = {name: [d["kind"] for d in yaml.safe_load_all(text) if d] for name, text in files.items()}
    assert kinds["prefill-0-k8s.yaml"] == ["LeaderWorkerSet", "Service"]
    assert kinds["router-k8s.yaml"] == ["Deployment", "Service"]
    services = {
        d["metadata"]["name"]
        for text in files.values()
        for d in yaml.safe_load_all(text)
        if d and d["kind"] == "Service"
    }
    router = next(d for d in yaml.safe_load_all(files["router-k8s.yaml"]) if d and d["kind"] == "Deployment")
    args = router["spec"]["template"]["spec"]["containers"][0]["args"]
    hosts = [args[args.index("--prefiller-hosts") + 1], args[args.index("--decoder-hosts") + 1]]
    assert set(hosts) <= services  # every host the router names is a Service of the rendered set
    assert "/etc/hccn.conf" in files["decode-0-k8s.yaml"]  # Mooncake reads the NPU NICs' addresses


def test_compose_and_scripts_per_instance_node_plus_the_router() -> None:
    compose = _rendered(LLMDD, "compose")
    assert sorted(compose) == ["compose-router.yaml", "decode-0-compose.yaml", "prefill-0-compose.yaml"]
    router = yaml.safe_load(compose["compose-router.yaml"])["services"]["router"]
    assert router["command"][router["command"].index("--prefiller-ports") + 1] == "13700"
    script = _rendered(LLMDD, "script")
    assert "router.sh" in script and "exec python3 " in script["router.sh"]
    assert "ASCEND_RT_VISIBLE_DEVICES=1" in script["qwen25-vl-pd-llmdd-decode-0.sh"]


def test_targets_that_cannot_render_instances_refuse() -> None:
    plan = plan_profile(load_profile(GLM))
    with pytest.raises(UserInputError, match="does not render a prefill/decode deployment"):
        render(plan, "systemd", RenderOptions())


def test_hccn_conf_is_read_across_nodes_and_by_mooncake_alone() -> None:
    assert hccn_conf_reason(load_profile(GLM)) is not None
    one_node = load_profile(LLMDD, ["disaggregation.connector=mooncake", "disaggregation.kv_port=28000"])
    assert hccn_conf_reason(one_node) == "Mooncake moves KV between instances over the NPU NICs"
    assert hccn_conf_reason(load_profile(LLMDD)) is None  # LLMDataDist on one node: its rank table, not HCCN
    assert hccn_conf_reason(load_profile(CPU)) is None
