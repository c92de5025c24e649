"""`ascendctl import` reads the deployment a set of scripts forms, in any order: prefill/decode sets (their
`--kv-transfer-config` roles) into `disaggregation`, external data-parallel ranks (one process per rank) into the
group they form, a Ray head and its workers into one instance over their hosts.

The prefill/decode sets are upstream's own CI launches (`ascendctl/facts/data/launches/launches.json`, each node's
argv and environment as the runner sets them); nothing runs on an NPU here: the profile is planned and compared
with the scripts, option by option.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from ascendctl.cli import app
from ascendctl.facts.launches import read_data
from ascendctl.importer.deployment import recognize
from ascendctl.importer.kv_compare import kv_differences, script_consistency
from ascendctl.importer.run import ImportResult, import_scripts, report_lines
from ascendctl.importer.script import LaunchScript, parse_launch_script
from ascendctl_engine.adapters.kv_transfer import unread_extra_keys
from ascendctl_engine.json_args import read_json

runner = CliRunner()
QWEN_PD = "tests/e2e/nightly/multi_node/internal_dp/config/Qwen3-235B-disagg-pd.yaml"
MINIMAX_PD = "tests/e2e/nightly/multi_node/external_dp/config/Minimax_m2.7_in128k_1k_prefix90_tpot50.yaml"
DSV32_PD = "tests/e2e/nightly/multi_node/internal_dp/config/DeepSeek-V3_2-W8A8-EP.yaml"
MINIMAX_2D = "tests/e2e/weekly/multi_node/external_dp/config/MiniMax-PD-in32k-bs4-1.yaml"


def launch_scripts(tag: str, file: str) -> tuple[list[LaunchScript], str]:
    """Each node of upstream's launch as the script its runner runs: the config's env, the runner's addresses."""
    data = read_data()
    launch = next(item for item in data["launches"] if item["tag"] == tag and item["file"] == file)
    nodes = data["contents"][launch["content"]]["nodes"]
    scripts = [
        LaunchScript(
            path=f"node{i}.sh",
            env={**node["env"], **node.get("injected_env", {})},
            argv=tuple(node["argv"][2:]),  # after `vllm serve`
            unresolved=(),
            line=1,
        )
        for i, node in enumerate(nodes)
    ]
    return scripts, launch["hardware"]


def imported(tag: str, file: str, *, reverse: bool = False) -> ImportResult:
    scripts, hardware = launch_scripts(tag, file)
    if reverse:
        scripts.reverse()
    return import_scripts(scripts, release=tag, hardware=hardware, read_config=lambda _s: None)


def counted(result: ImportResult) -> list[str]:
    return [d.line() for n in result.nodes for d in n.differences if d.counts]


def kv_of(result: ImportResult, instance: str) -> dict[str, Any]:
    argv = list(result.plan.instance(instance).commands[0].argv)
    value = read_json(argv[argv.index("--kv-transfer-config") + 1])
    assert isinstance(value, dict)
    return value


# --- prefill/decode sets ---------------------------------------------------------------------------------


@pytest.mark.parametrize("tag", ["v0.23.0", "v0.25.1rc1"])
def test_a_prefill_decode_set_imports_as_disaggregation_with_each_roles_layout(tag: str) -> None:
    # node 0 kv_producer DP2 x TP8, node 1 kv_consumer DP4 x TP4 with FULL_DECODE_ONLY, kv ports 30000/30100
    result = imported(tag, QWEN_PD)
    spec = result.document["disaggregation"]
    assert spec["connector"] == "mooncake" and spec["kv_port"] == 30000
    assert spec["prefill"]["engine"]["parallel"] == {"data": 2, "data_per_node": 2, "tensor": 8}
    assert spec["decode"]["engine"]["parallel"] == {"data": 4, "data_per_node": 4, "tensor": 4}
    assert spec["decode"]["engine"]["graph"] == {"mode": "full-decode-only"}
    assert spec["prefill"]["port"] == spec["decode"]["port"] == 8080  # each on its own host
    assert "--kv-transfer-config" not in str(result.document)  # the section says it, per instance
    assert [i.name for i in result.plan.instances] == ["prefill-0", "decode-0"]
    assert not result.blocking, result.blocking
    producer, consumer = kv_of(result, "prefill-0"), kv_of(result, "decode-0")
    assert (producer["kv_role"], consumer["kv_role"]) == ("kv_producer", "kv_consumer")
    sizes = {"prefill": {"dp_size": 2, "tp_size": 8}, "decode": {"dp_size": 4, "tp_size": 4}}
    assert producer["kv_connector_extra_config"] == consumer["kv_connector_extra_config"] == sizes
    assert result.reproduced, counted(result)
    assert any("default router" in n or "no script starts a router" in n for n in result.draft.notes)


def test_the_scripts_may_come_in_any_order() -> None:
    forward, backward = imported("v0.25.1rc1", QWEN_PD), imported("v0.25.1rc1", QWEN_PD, reverse=True)
    assert backward.document == forward.document
    assert [(n.instance, n.script) for n in backward.nodes] == [("prefill-0", "node0.sh"), ("decode-0", "node1.sh")]


def test_kv_ports_and_engine_ids_are_compared_for_consistency_not_their_values() -> None:
    # v0.23.0's DeepSeek-V3.2 set: decode's kv_port 30200 where the plan derives 30100; instances over two hosts
    result = imported("v0.23.0", DSV32_PD)
    spec = result.document["disaggregation"]
    assert spec["prefill"]["nodes"] == spec["decode"]["nodes"] == 2
    assert result.document["target"]["nodes"] == 4
    lines = "\n".join(report_lines(result))
    assert "flag --kv-transfer-config.kv_port: derived: script '30200', plan 30100" in lines
    assert result.reproduced, counted(result)


def test_a_kv_role_or_size_that_disagrees_counts() -> None:
    planned = {"kv_connector": "MooncakeConnectorV1", "kv_role": "kv_producer", "kv_port": 30000, "engine_id": "0",
               "kv_connector_extra_config": {"prefill": {"dp_size": 2, "tp_size": 8},
                                             "decode": {"dp_size": 4, "tp_size": 4}}}  # fmt: skip
    extra = {"prefill": {"dp_size": "2", "tp_size": "8"}, "decode": {"dp_size": 4, "tp_size": 2},
             "use_ascend_direct": True}  # fmt: skip
    script = {**planned, "kv_port": "30500", "engine_id": "7", "kv_role": "kv_consumer",
              "kv_connector_extra_config": extra}  # fmt: skip
    verdicts = {d.name.split(".", 1)[1]: d.verdict for d in kv_differences(planned, script, {})}
    assert verdicts == {
        "kv_port": "derived",
        "engine_id": "derived",
        "kv_role": "differs",
        "kv_connector_extra_config.decode": "differs",  # "2" is read as 2: prefill agrees
        "kv_connector_extra_config.use_ascend_direct": "missing",
    }


def test_the_scripts_own_contradictions_are_named() -> None:
    one = {"kv_port": "30000", "engine_id": "0"}
    assert script_consistency([("10.0.0.1", 16, one), ("10.0.0.2", 16, {**one, "engine_id": "1"})]) == []
    clash = script_consistency([("10.0.0.1", 8, one), ("10.0.0.1", 8, {"kv_port": 30004, "engine_id": "0"})])
    assert clash == [
        "the scripts' KV ports 30000 and 30004 overlap on 10.0.0.1",
        "two instances of the scripts share engine_id '0'",
    ]


def test_external_dp_ranks_of_a_pd_set_plan_as_one_process_per_host() -> None:
    # v0.23.0's MiniMax set: two ranks per role on one host, each its own `vllm serve --data-parallel-rank k`
    result = imported("v0.23.0", MINIMAX_PD)
    spec = result.document["disaggregation"]
    assert result.document["engine"]["parallel"]["data_per_node"] == 2 and spec["decode"]["port"] == 7100
    assert result.document["target"] == {"backend": "npu", "nodes": 2, "hardware": "a3", "devices_per_node": 16}
    assert len(result.nodes) == 4 and {n.node for n in result.nodes} == {0, 1}
    rank1 = next(n for n in result.nodes if n.script == "node1.sh")
    regrouped = {d.name: d.script for d in rank1.differences if d.verdict == "regrouped"}
    assert regrouped["--data-parallel-rank"] == "1" and regrouped["--port"] == "7101"
    assert regrouped["ASCEND_RT_VISIBLE_DEVICES"] == "8,9,10,11,12,13,14,15"
    assert "ranks 0, 1 each run their own process and API in the scripts" in "\n".join(report_lines(result))
    assert result.reproduced, counted(result)
    # `use_ascend_direct`: v0.23.0's connector does not read it (v0.10.2rc1 … v0.11.0 did): left out, reported
    assert "connector_extra_config" not in spec
    ignored = [d for n in result.nodes for d in n.differences if d.name.endswith("extra_config.use_ascend_direct")]
    assert ignored and all(d.verdict == "ignored" and "reads no `use_ascend_direct`" in d.why for d in ignored)


def test_a_connector_key_the_release_reads_is_passed_through_its_field() -> None:
    assert unread_extra_keys(["use_ascend_direct"], "npu", "0.11.0", "v0.11.0") == {}
    [why] = unread_extra_keys(["use_ascend_direct"], "npu", "0.25.1", "v0.25.1rc1").values()
    assert "v0.12.0rc1" in why


def test_several_instances_of_a_role_count_their_ports_up() -> None:
    # v0.25.1rc1's MiniMax 1P2D: two decode instances, each over its own host, both on port 7100 in the scripts
    result = imported("v0.25.1rc1", MINIMAX_2D)
    assert result.document["disaggregation"]["decode"]["instances"] == 2
    assert [i.name for i in result.plan.instances] == ["prefill-0", "decode-0", "decode-1"]
    second = [d for n in result.nodes if n.instance == "decode-1" for d in n.differences if d.name == "--port"]
    # each rank's own port is the regrouping's; the instance's API port is the plan's to count up
    assert {(d.verdict, d.planned) for d in second if d.verdict != "regrouped"} == {("derived", "7101")}
    hosts = result.document["network"]["nodes"]
    assert [h["env"]["HCCL_IF_IP"] for h in hosts] == [h["address"] for h in hosts]  # each host its own address
    assert result.reproduced, counted(result)


def test_a_connector_named_by_its_class_and_module_is_the_one_the_release_registers() -> None:
    # v0.12.0rc1 writes `"kv_connector": "MooncakeConnector"` with its module path: the class registered as
    # MooncakeConnectorV1
    result = imported("v0.12.0rc1", "tests/e2e/nightly/multi_node/config/models/Qwen3-235B-W8A8.yaml")
    assert result.document["disaggregation"]["connector"] == "mooncake"
    same = [d for n in result.nodes for d in n.differences if d.name == "--kv-transfer-config.kv_connector"]
    assert same and all(d.verdict == "respelled" for d in same)
    assert result.reproduced, counted(result)


# --- external data parallel and Ray, from scripts -------------------------------------------------------------

RANK = """export HCCL_IF_IP=10.0.0.1
export ASCEND_RT_VISIBLE_DEVICES={devices}
vllm serve Qwen/Qwen3-30B-A3B --data-parallel-size 2 --data-parallel-rank {rank} --data-parallel-address 10.0.0.1 \\
  --data-parallel-rpc-port 13389 --tensor-parallel-size 4 --enable-expert-parallel --port {port}
"""


def test_an_external_dp_launch_imports_as_the_group_it_forms() -> None:
    ranks = [
        parse_launch_script(RANK.format(rank=1, devices="4,5,6,7", port=8001), "rank1.sh"),
        parse_launch_script(RANK.format(rank=0, devices="0,1,2,3", port=8000), "rank0.sh"),
    ]
    result = import_scripts(ranks, release="v0.25.1rc1", hardware="a2", read_config=lambda _s: None)
    assert result.document["engine"]["parallel"] == {"data": 2, "tensor": 4, "expert": True, "data_per_node": 2}
    assert result.document["target"]["devices_per_node"] == 8 and result.document["server"]["port"] == 8000
    assert [n.script for n in result.nodes] == ["rank0.sh", "rank1.sh"]  # rank order, whatever the given order
    assert result.reproduced, counted(result)
    assert not result.blocking


HEAD = """export HCCL_IF_IP=10.0.0.1
export GLOO_SOCKET_IFNAME=eth0
ray start --head --port 6380 --node-ip-address=10.0.0.1
vllm serve Qwen/Qwen3-235B-A22B --tensor-parallel-size 16 --distributed-executor-backend ray --enable-expert-parallel
"""
WORKER = """export HCCL_IF_IP=10.0.0.2
export GLOO_SOCKET_IFNAME=eth0
ray stop --force
ray start --address="{address}" --node-ip-address=10.0.0.2 --block
"""


def test_a_ray_head_and_worker_import_as_one_instance_over_both_hosts() -> None:
    worker = parse_launch_script(WORKER.format(address="10.0.0.1:6380"), "worker.sh")
    assert worker.ray_worker and not worker.argv
    head = parse_launch_script(HEAD, "head.sh")
    result = import_scripts([worker, head], release="v0.25.1rc1", hardware="a2", read_config=lambda _s: None)
    doc = result.document
    assert doc["engine"]["parallel"]["executor"] == "ray" and doc["network"]["ray_port"] == 6380
    assert doc["target"]["nodes"] == 2 and doc["target"]["devices_per_node"] == 8  # TP16 over two 8-NPU hosts
    assert [n["address"] for n in doc["network"]["nodes"]] == ["10.0.0.1", "10.0.0.2"]
    assert [n.script for n in result.nodes] == ["head.sh", "worker.sh"]
    assert result.reproduced, counted(result)
    assert not result.blocking


def test_a_ray_worker_joining_another_head_differs() -> None:
    worker = parse_launch_script(WORKER.format(address="10.0.0.9:6380"), "worker.sh")
    result = import_scripts(
        [parse_launch_script(HEAD, "head.sh"), worker], release="v0.25.1rc1", hardware="a2",
        read_config=lambda _s: None,
    )  # fmt: skip
    assert counted(result) == ["flag ray start --address: differs: plan '10.0.0.1:6380', script '10.0.0.9:6380'"]


def test_a_ray_worker_alone_is_refused_in_words() -> None:
    worker = parse_launch_script(WORKER.format(address="10.0.0.1:6380"), "worker.sh")
    with pytest.raises(ValueError, match=r"a Ray worker .* give the head's script too"):
        recognize([worker])


def test_import_cli_writes_a_pd_profile_that_plans(tmp_path: Path) -> None:
    scripts, _ = launch_scripts("v0.25.1rc1", QWEN_PD)
    paths = []
    for script in reversed(scripts):  # decode first: the flags say each node's role
        path = tmp_path / script.path
        exports = "".join(f"export {k}='{v}'\n" for k, v in script.env.items() if "$" not in v)
        args = " ".join(f"'{a}'" for a in script.argv)
        path.write_text(f"{exports}vllm serve {args}\n")
        paths.append(str(path))
    out = tmp_path / "pd.yaml"
    result = runner.invoke(app, ["import", *paths, "--release", "v0.25.1rc1", "--hardware", "a3", "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "prefill-0 on node 0" in result.output and "decode-0 on node 1" in result.output
    planned = runner.invoke(app, ["plan", str(out), "--json"])
    assert planned.exit_code == 0, planned.output
    assert '"prefill-0"' in planned.output and '"decode-0"' in planned.output
