"""Unit tests of scripts/extract_launches.py's pure functions: small synthetic inputs, no mirror, no network."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("extract_launches", REPO / "scripts" / "extract_launches.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("extract_launches", module)
    spec.loader.exec_module(module)
    return module


E = _load()


class NoCheck:
    """A parser check that accepts everything (the snapshot is tested elsewhere)."""

    note = "test"

    def errors(self, argv: Any) -> list[str]:
        return []


class RejectToken:
    """A parser check that rejects one token, as the real snapshot does for `--quantization ascend` in one item."""

    note = "test"

    def __init__(self, token: str) -> None:
        self.token = token

    def errors(self, argv: Any) -> list[str]:
        return [f"vllm serve has no option {self.token}"] if self.token in argv else []


def tree(files: dict[str, str], tag: str = "v9.9.9") -> Any:
    return E.Tree(tag, frozenset(files), dict(files))


# ------------------------------------------------------------------------------------------------ small pieces
def test_yaml_lines_and_merges() -> None:
    data = E.load_yaml("a: &x\n  k: 1\nb:\n  <<: *x\n  j: 2\nc:\n  - name: one\n  - name: two\n")
    assert data["b"] == {"k": 1, "j": 2}
    assert [E.line_of(item) for item in data["c"]] == [7, 8]


def test_yaml_alias_out_of_scope_is_a_reason() -> None:
    text = "test_cases:\n  - name: a\n    x: &cmd [1]\n  - name: b\n    y: *cmd\n  - name: c\n    z: *other\n"
    with pytest.raises(E.LoadError, match="undefined alias 'other'"):
        E.load_yaml(text)


def test_input_len_from_dataset_name() -> None:
    assert E.input_len("vllm-ascend/GSM8K-in3500-bs400") == 3500
    assert E.input_len("vllm-ascend/GSM8K_prefix90_in131072_bs1000_kimi") == 131072
    assert E.input_len("vllm-ascend/aime2025") is None
    assert E.input_len(None) is None


def test_runner_family_and_npus() -> None:
    assert E.runner_family("linux-aarch64-a2b3-4") == "a2b3"
    assert E.runner_family("linux-aarch64-nightly-a3-16") == "a3"
    assert E.runner_family("linux-aarch64-a3-16-cn12-001") == "a3-560t"
    assert E.runner_family("linux-aarch64-310p-4") == "310p"
    assert E.runner_family("linux-amd64-cpu-8-hk", "a2") == "a2b3"
    assert E.runner_family("linux-aarch64-a3-0", "a3") == "a3"
    assert E.runner_npus("linux-aarch64-a2b3-4") == 4
    assert E.runner_npus("linux-aarch64-nightly-a3-16") == 16
    assert E.runner_npus("linux-aarch64-a3-16-cn12-001") == 16


def test_render_matrix_expressions() -> None:
    row = {"test_config": {"os": "linux-aarch64-a3-4", "model_list": ["A", "B"]}, "runner": "a2-1"}
    assert E.render("${{ matrix.test_config.os }}", row) == "linux-aarch64-a3-4"
    assert E.render("${{ toJson(matrix.test_config.model_list) }}", row) == ["A", "B"]
    assert E.render("${{ matrix.test_config.config_base_path || '' }}", row) is None
    assert E.render("linux-aarch64-${{ matrix.runner }}", row) == "linux-aarch64-a2-1"


def test_cron_schedule() -> None:
    assert E.cron_schedule({"schedule": [{"cron": "0 2 * * 0"}]}, "x.yaml") == "weekly"
    assert E.cron_schedule({"schedule": [{"cron": "0 16 * * *"}]}, "x.yaml") == "nightly"
    assert E.cron_schedule({"workflow_dispatch": None}, ".github/workflows/schedule_nightly_test_a3.yaml") == "nightly"
    assert E.cron_schedule({"pull_request": None}, ".github/workflows/accuracy_test.yaml") == "pr"


def test_expand_vars_keeps_unknown_names() -> None:
    assert E.expand_vars("--port $SERVER_PORT --x ${OTHER} $NOPE", {"SERVER_PORT": "8000", "OTHER": "1"}) == (
        "--port 8000 --x 1 $NOPE"
    )


def test_content_id_is_stable_and_order_free() -> None:
    assert E.content_id({"a": 1, "b": [1, 2]}) == E.content_id({"b": [1, 2], "a": 1})
    assert len(E.content_id({"a": 1})) == 16


def test_argv_npus() -> None:
    assert (
        E.argv_npus(
            [
                "vllm",
                "serve",
                "m",
                "--tensor-parallel-size",
                "8",
                "--data-parallel-size",
                "2",
                "--data-parallel-size-local",
                "1",
            ]
        )
        == 8
    )
    assert E.argv_npus(["vllm", "serve", "m", "-tp", "4", "--data-parallel-size", "4"]) == 16
    assert (
        E.argv_npus(
            [
                "vllm",
                "serve",
                "m",
                "--tensor-parallel-size",
                "1",
                "--data-parallel-size",
                "32",
                "--data-parallel-rank",
                "3",
            ]
        )
        == 1
    )


def test_missing_reason_names_invisible_character() -> None:
    reason = E.missing_reason("X.yaml\u200e", "base/X.yaml\u200e")
    assert "U+200E" in reason and "does not exist" in reason


# ----------------------------------------------------------------------------------------------- single node
SINGLE = """\
_envs: &envs
  SERVER_PORT: "DEFAULT_PORT"
  HCCL_BUFFSIZE: "512"
_cmd: &cmd
  - "--tensor-parallel-size"
  - "4"
  - "--port"
  - "$SERVER_PORT"
test_cases:
  - name: "case-a"
    model: "org/model"
    envs:
      <<: *envs
    server_cmd: *cmd
    server_cmd_extra: ["--quantization", "ascend"]
    benchmarks:
      acc:
        case_type: accuracy
        dataset_path: vllm-ascend/gsm8k
        baseline: 95
        threshold: 3
      perf:
        case_type: performance
        dataset_path: vllm-ascend/GSM8K-in3500-bs400
        num_prompts: 8
        max_out_len: 1500
        batch_size: 2
        request_rate: 0
  - name: "case-b"
    model: "org/model"
    envs: {}
    server_cmd: ["--quantization ascend"]
"""


def test_single_node_launches_and_rejections() -> None:
    files = {"cfg/A.yaml": SINGLE}
    result = E.TagResult("v9.9.9")
    listing = E.Listing(
        "single", "A.yaml", "linux-aarch64-nightly-a3-16", "a3", "nightly", "v9.9.9:list:3", "l", base="cfg"
    )
    E.read_single_node(result, tree(files), listing, RejectToken("--quantization ascend"), E.SingleNodeRules())
    (launch,) = result.launches.values()
    assert launch["line"] == 10 and launch["case"] == "case-a" and launch["npus_per_node"] == 16
    content = result.contents[launch["content"]]
    node = content["nodes"][0]
    assert node["argv"] == [
        "vllm",
        "serve",
        "org/model",
        "--tensor-parallel-size",
        "4",
        "--port",
        "8000",
        "--quantization",
        "ascend",
    ]
    assert node["env"]["SERVER_PORT"] == "8000" and node["injected_env"] == {"VLLM_WORKER_MULTIPROC_METHOD": "spawn"}
    assert content["open_ports"] == ["SERVER_PORT"]
    assert content["benchmarks"]["performance"][0]["input_len"] == 3500
    assert content["benchmarks"]["accuracy"][0]["baseline"] == 95
    assert result.not_loadable == [
        {
            "file": "cfg/A.yaml",
            "case": "case-b",
            "reason": "node 0: vLLM's parser rejects the argv: vllm serve has no option --quantization ascend",
        }
    ]


def test_single_node_loader_rules() -> None:
    rules = E.SingleNodeRules()
    with pytest.raises(E.LoadError, match="test_cases field is required"):
        E.single_node_cases("x: 1\n", rules)
    with pytest.raises(E.LoadError, match="Missing required config fields"):
        E.single_node_cases("test_cases:\n  - name: a\n    model: m\n", rules)
    epd = "test_cases:\n  - name: a\n    model: m\n    envs: {}\n    service_mode: epd\n    epd_server_cmds: []\n"
    with pytest.raises(E.LoadError, match="epd_proxy_args"):
        E.single_node_cases(epd, rules)


def test_single_node_non_string_env_cannot_start() -> None:
    case = {"name": "a", "model": "m", "envs": {"OMP_PROC_BIND": False}, "server_cmd": []}
    with pytest.raises(E.LoadError, match="not strings"):
        E.single_node_content(case, E.SingleNodeRules())


def test_listed_file_missing_is_not_loadable() -> None:
    result = E.TagResult("v9.9.9")
    listing = E.Listing("single", "B.yaml\u200e", "linux-aarch64-a3-16", "a3", "weekly", "w", "l", base="cfg")
    E.read_single_node(result, tree({"cfg/B.yaml": SINGLE}), listing, NoCheck(), E.SingleNodeRules())
    assert not result.launches and "U+200E" in result.not_loadable[0]["reason"]


# ------------------------------------------------------------------------------------------------ multi-node
MULTI = """\
test_name: "pd-test"
model: "org/big"
num_nodes: 2
npu_per_node: 16
env_common:
  SERVER_PORT: 8080
  OMP_PROC_BIND: false
disaggregated_prefill:
  enabled: true
  prefiller_host_index: [0]
  decoder_host_index: [1]
deployment:
  - envs: {}
    server_cmd: >
      vllm serve org/big --port $SERVER_PORT --tensor-parallel-size 8
      --data-parallel-size 1 --data-parallel-address $LOCAL_IP
  - envs:
      HCCL_BUFFSIZE: 1024
    server_cmd: >
      vllm serve org/big --port $SERVER_PORT --tensor-parallel-size 8
      --data-parallel-address ${MASTER_IP}
benchmarks: {}
"""


def _rules(**kw: Any) -> Any:
    base = {
        "base": "mn/",
        "common_envs": True,
        "node_envs": True,
        "node_envs_required": False,
        "required": ("model", "deployment", "num_nodes", "npu_per_node", "env_common", "benchmarks"),
        "ld_library_path": False,
        "strict_disagg": True,
    }
    return E.MultiNodeRules(**{**base, **kw})


def test_internal_dp_nodes_roles_and_injected_env() -> None:
    content = E.internal_dp_content(E.load_yaml(MULTI), _rules())
    prefill, decode = content["nodes"]
    assert (prefill["role"], decode["role"]) == ("prefill", "decode")
    assert prefill["argv"][:6] == ["vllm", "serve", "org/big", "--port", "8080", "--tensor-parallel-size"]
    assert prefill["argv"][-1] == "192.0.2.10" and decode["argv"][-1] == "192.0.2.11"  # MASTER_IP: first decode
    assert decode["env"] == {"SERVER_PORT": "8080", "OMP_PROC_BIND": "False", "HCCL_BUFFSIZE": "1024"}
    assert decode["injected_env"]["HCCL_IF_IP"] == "192.0.2.11" and decode["injected_env"]["NIC_NAME"] == "eth0"
    assert decode["injected_env"]["VLLM_WORKER_MULTIPROC_METHOD"] == "spawn"


def test_internal_dp_loader_refusals() -> None:
    with pytest.raises(E.LoadError, match="Missing required config fields"):
        E.internal_dp_content(E.load_yaml("model: m\n"), _rules())
    bad = MULTI.replace("decoder_host_index: [1]", "decoder_host_index: [2]")
    with pytest.raises(E.LoadError, match="out of range"):
        E.internal_dp_content(E.load_yaml(bad), _rules())


def test_multi_node_npus_said_and_layout() -> None:
    files = {"tests/e2e/nightly/multi_node/internal_dp/scripts/multi_node_config.py": "", "mn/P.yaml": MULTI}
    result = E.TagResult("v9.9.9")
    listing = E.Listing(
        "multi",
        "P.yaml",
        "linux-amd64-cpu-8-hk",
        "a2b3",
        "nightly",
        "v:l:1",
        "l",
        base="mn",
        soc="a2",
        size=2,
        job_npus=8,
    )
    E.read_multi_node(result, tree(files), listing, NoCheck())
    (launch,) = result.launches.values()
    assert launch["hardware"] == "a2" and launch["nodes"] == 2 and launch["line"] == 1
    assert launch["npus_said"] == {"job": 8, "config": 16} and launch["npus_per_node"] == 8  # TP8 × DP1
    assert launch["case"] == "pd-test"


EXTERNAL = """\
test_name: "ext"
model: "org/big"
num_nodes: 2
npu_per_node: 16
routing:
  type: "disaggregated_prefill"
  groups: {prefiller: [0], decoder: [1]}
config:
  - {node_index: 0, port_start: 7100, dp_rpc_port: 12321, dp_size: 1, dp_size_local: 1, tp_size: 16,
     dp_address: "${NODE_0_IP}"}
  - {node_index: 1, port_start: 7100, dp_rpc_port: 12321, dp_size: 2, dp_size_local: 2, tp_size: 8,
     dp_address: "${NODE_1_IP}"}
templates:
  - envs: {SERVER_PORT: "${PORT}", LD_PRELOAD: "/x.so:$LD_PRELOAD"}
    server_cmd_template: ["--port", "$SERVER_PORT", "--tensor-parallel-size", "${TP_SIZE}"]
  - envs: {SERVER_PORT: "${PORT}", ASCEND_RT_VISIBLE_DEVICES: "${VISIBLE_DEVICES}"}
    server_cmd_template: ["--port", "$SERVER_PORT", "--data-parallel-rank", "${DP_RANK}",
                          "--data-parallel-address", "${DP_ADDRESS}"]
benchmarks: {}
"""


def test_external_dp_one_process_per_rank() -> None:
    content = E.external_dp_content(E.load_yaml(EXTERNAL), frozenset({"disaggregated_prefill"}))
    nodes = content["nodes"]
    assert [(n["node"], n["role"]) for n in nodes] == [(0, "prefill"), (1, "decode"), (1, "decode")]
    assert nodes[0]["argv"] == ["vllm", "serve", "org/big", "--port", "7100", "--tensor-parallel-size", "16"]
    assert nodes[0]["env"]["LD_PRELOAD"] == "/x.so:$LD_PRELOAD"  # the container's own value: kept as written
    assert nodes[2]["argv"][3:] == [
        "--port",
        "7101",
        "--data-parallel-rank",
        "1",
        "--data-parallel-address",
        "192.0.2.11",
    ]
    assert nodes[2]["env"]["ASCEND_RT_VISIBLE_DEVICES"] == "8,9,10,11,12,13,14,15"
    assert nodes[2]["injected_env"]["MASTER_IP"] == "192.0.2.10"
    assert E.layout_npus(nodes) == 16


def test_external_dp_unknown_routing_and_variable() -> None:
    with pytest.raises(E.LoadError, match=r"Unsupported routing\.type"):
        E.external_dp_content(
            E.load_yaml(EXTERNAL.replace("disaggregated_prefill", "generic_dp")), frozenset({"disaggregated_prefill"})
        )
    with pytest.raises(E.LoadError, match="Unknown external DP template variable"):
        E.external_dp_content(
            E.load_yaml(EXTERNAL.replace("${TP_SIZE}", "${NOPE}")), frozenset({"disaggregated_prefill"})
        )


# ------------------------------------------------------------------------------------------- lists and merges
WORKFLOW = """\
name: Nightly-A3
on:
  workflow_dispatch:
jobs:
  setup-vars:
    runs-on: linux-amd64-cpu-8-hk
    steps:
      - id: set-matrix
        env:
          MATRIX_FILE: ${{ inputs.x != '' && './pr/configs/n.yaml' || '.github/workflows/configs/nightly_config.yaml' }}
          MATRIX_OUTPUTS: '{"single_node":"a3.single_node.test_config"}'
        run: python3 resolve.py
  single-node-tests:
    strategy:
      matrix:
        vllm_ascend_branch: ${{ fromJSON(needs.setup-vars.outputs.branches) }}
        test_config: ${{ fromJson(needs.setup-vars.outputs.single_node) }}
    uses: ./.github/workflows/_e2e_nightly_single_node.yaml
    with:
      runner: ${{ matrix.test_config.os }}
      config_file_path: ${{ matrix.test_config.config_file_path }}
      config_base_path: tests/e2e/weekly/single_node/configs/
"""
CONFIG = """\
a3:
  single_node:
    test_config:
      - name: kimi
        os: linux-aarch64-nightly-a3-16
        config_file_path: K.yaml
"""


def test_workflow_listing_follows_matrix_outputs() -> None:
    files = {
        ".github/workflows/schedule_nightly_test_a3.yaml": WORKFLOW,
        ".github/workflows/configs/nightly_config.yaml": CONFIG,
    }
    lists: set[str] = set()
    families: dict[str, str] = {}
    (listing,) = E.workflow_listings(tree(files), lists, families)
    assert (listing.kind, listing.config, listing.runner, listing.family, listing.schedule) == (
        "single",
        "K.yaml",
        "linux-aarch64-nightly-a3-16",
        "a3",
        "nightly",
    )
    assert listing.base == "tests/e2e/weekly/single_node/configs/"
    assert listing.where == "v9.9.9:.github/workflows/configs/nightly_config.yaml:4"
    assert lists == {"v9.9.9:.github/workflows/configs/nightly_config.yaml"}
    assert families == {"a3": listing.where}


def test_second_cluster_of_same_family_is_one_launch() -> None:
    result = E.TagResult("v9.9.9")
    content = {
        "model": "m",
        "nodes": [{"node": 0, "role": None, "argv": ["vllm", "serve", "m"], "env": {}, "injected_env": {}}],
        "open_ports": [],
        "benchmarks": {},
    }
    for runner, fam, where in (
        ("linux-aarch64-nightly-a3-16", "a3", "l:1"),
        ("linux-aarch64-a3-16-cn12-001", "a3-560t", "l:2"),
    ):
        listing = E.Listing("single", "K.yaml", runner, fam, "nightly", where, "l")
        E.add_launch(result, E.Launch("f.yaml", 3, "k", "single-node", content), listing)
    (launch,) = result.launches.values()
    assert launch["runners"] == ["linux-aarch64-nightly-a3-16", "linux-aarch64-a3-16-cn12-001"]
    assert launch["listed_at"] == ["l:1", "l:2"] and launch["hardware"] == "a3"


def test_accuracy_config_llm_kwargs_and_baselines() -> None:
    acc = (
        "model_name: Qwen/Q\nhardware: Atlas A2 Series\nserve:\n  tensor_parallel_size: 2\ntasks:\n"
        "- name: gsm8k\n  metrics:\n  - name: exact_match\n    value: 0.8\n"
    )
    files = {"tests/e2e/models/configs/Q.yaml": acc, "tests/e2e/models/configs/U.yaml": acc}
    result = E.TagResult("v9.9.9")
    listing = E.Listing("accuracy", "Q", "linux-aarch64-a2b3-2", "a2b3", "nightly", "l:1", "l")
    E.read_accuracy(result, tree(files), listing)
    (launch,) = result.launches.values()
    content = result.contents[launch["content"]]
    assert content["llm_kwargs"] == {"tensor_parallel_size": 2} and launch["npus_per_node"] == 2
    assert content["benchmarks"]["accuracy"][0] == {
        "name": "gsm8k",
        "dataset": "gsm8k",
        "metric": "exact_match",
        "baseline": 0.8,
        "threshold": None,
    }


def test_literal_pytest_launch() -> None:
    literal = 'RemoteOpenAIServer("org/m", ["--tensor-parallel-size", "2"], env_dict={"A": "1"})\n'
    assert E.literal_launch(literal) == ("org/m", ["--tensor-parallel-size", "2"], {"A": "1"})
    computed = "args = ['--tp', str(tp)]\nRemoteOpenAIServer(model, args)\n"
    assert "built at run time" in E.literal_launch(computed)


def test_build_sorts_and_counts() -> None:
    result = E.TagResult("v9.9.9")
    content = {
        "model": "m",
        "nodes": [{"node": 0, "role": "prefill", "argv": [], "env": {}, "injected_env": {}}],
        "open_ports": [],
        "benchmarks": {},
    }
    for file in ("b.yaml", "a.yaml"):
        E.add_launch(
            result,
            E.Launch(file, 1, "c", "multi-node", content, npus_said={"job": 8, "config": 8}),
            E.Listing("multi", file, "r", "a3", "nightly", "w", "l"),
        )
    data = E.build([result], {"a3": "v9.9.9:x:1"})
    assert [item["file"] for item in data["launches"]] == ["a.yaml", "b.yaml"]
    assert data["tags"]["v9.9.9"]["counts"] == {
        "launches": 2,
        "multi_node": 2,
        "pd": 2,
        "not_loadable": 0,
        "not_read": 0,
    }
    assert data["runner_families"] == {"a3": {"hardware": "a3", "source": "v9.9.9:x:1"}}
    assert E.dump(data).endswith("}\n")
