"""Cross-field rules that need no matrix: each rule, its key path and where the error points."""

from __future__ import annotations

import pytest

from ascendctl.core.errors import DocumentError, Issue
from ascendctl.core.findings import RULES
from ascendctl.core.yamlio import load_yaml_text
from ascendctl.schema.loader import validate_profile_document
from ascendctl.schema.profile import Profile
from ascendctl.schema.profile_rules import profile_findings

HEAD = "apiVersion: ascendctl/v1\nkind: Profile\nmetadata:\n  name: rules\nmodel:\n  source: org/model\n"
NPU_A2_8 = "target:\n  backend: npu\n  hardware: a2\n  devices_per_node: 8\n"


def position(text: str, needle: str) -> tuple[int, int]:
    """Line and column (1-based) just after `needle`: where its value starts."""
    index = text.index(needle) + len(needle)
    before = text[:index]
    return before.count("\n") + 1, index - (before.rfind("\n") + 1) + 1


def problems(body: str) -> tuple[str, list[Issue]]:
    text = HEAD + body
    with pytest.raises(DocumentError) as exc:
        validate_profile_document(load_yaml_text(text, "r.yaml"))
    return text, exc.value.issues


def one(body: str) -> tuple[str, Issue]:
    text, issues = problems(body)
    assert len(issues) == 1, [i.render() for i in issues]
    return text, issues[0]


def valid(body: str) -> Profile:
    return validate_profile_document(load_yaml_text(HEAD + body, "r.yaml"))


# --- target ----------------------------------------------------------------------------------------


def test_npu_needs_hardware_family() -> None:
    text, issue = one("target:\n  backend: npu\n")
    assert issue.path == "target.hardware"
    assert "a2, a3, 300i-duo or 950" in issue.message
    # not written: points at the `target` mapping (its first key)
    assert (issue.line, issue.column) == position(text, "target:\n  ")


@pytest.mark.parametrize("backend", ["cpu", "cuda"])
def test_hardware_only_for_npu(backend: str) -> None:
    text, issue = one(f"target:\n  backend: {backend}\n  hardware: a3\n")
    assert issue.path == "target.hardware"
    assert backend in issue.message
    assert (issue.line, issue.column) == position(text, "hardware: ")


def test_visible_devices_count_must_match() -> None:
    text, issue = one("target:\n  backend: cpu\n  devices_per_node: 2\n  visible_devices: [0, 1, 2]\n")
    assert issue.path == "target.visible_devices"
    assert issue.message == "lists 3 devices but devices_per_node is 2"
    assert (issue.line, issue.column) == position(text, "visible_devices: ")


def test_visible_devices_unique() -> None:
    text, issue = one("target:\n  backend: cpu\n  devices_per_node: 2\n  visible_devices: [3, 3]\n")
    assert issue.message == "a device id is listed twice"
    assert (issue.line, issue.column) == position(text, "visible_devices: ")


# --- parallel layout ---------------------------------------------------------------------------------


def test_ranks_must_fit_devices_times_nodes() -> None:
    text, issue = one(NPU_A2_8 + "engine:\n  parallel:\n    tensor: 8\n    data: 2\n")
    assert issue.path == "engine.parallel"
    assert "= 16 ranks" in issue.message and "8 devices × 1 nodes = 8" in issue.message
    assert (issue.line, issue.column) == position(text, "parallel:\n    ")


def test_ranks_fit_over_two_nodes() -> None:
    body = NPU_A2_8 + "  nodes: 2\nengine:\n  parallel:\n    tensor: 8\n    data: 2\n"
    assert valid(body).engine.parallel.data == 2


def test_data_per_node_divides_data() -> None:
    body = NPU_A2_8 + "  nodes: 2\nengine:\n  parallel:\n    tensor: 2\n    data: 4\n    data_per_node: 3\n"
    text, issue = one(body)
    assert issue.path == "engine.parallel.data_per_node"
    assert issue.message == "3 does not divide data = 4"
    assert (issue.line, issue.column) == position(text, "data_per_node: ")


def test_data_per_node_ranks_fit_one_node() -> None:
    body = NPU_A2_8 + "  nodes: 2\nengine:\n  parallel:\n    tensor: 4\n    data: 4\n    data_per_node: 4\n"
    text, issue = one(body)
    assert issue.path == "engine.parallel.data_per_node"
    assert "the 8 devices of a node" in issue.message
    assert (issue.line, issue.column) == position(text, "data_per_node: ")


def test_data_split_evenly_over_nodes() -> None:
    body = NPU_A2_8 + "  nodes: 2\nengine:\n  parallel:\n    data: 3\n"
    text, issue = one(body)
    assert issue.path == "engine.parallel.data"
    assert issue.message == "data = 3 cannot be split evenly over 2 nodes"
    assert (issue.line, issue.column) == position(text, "data: ")


# --- EPLB ------------------------------------------------------------------------------------------


def test_eplb_needs_expert_parallel() -> None:
    body = NPU_A2_8 + "engine:\n  eplb:\n    mode: dynamic\n"
    text, issue = one(body)
    assert issue.path == "engine.eplb.mode"
    assert "engine.parallel.expert: true" in issue.message
    assert (issue.line, issue.column) == position(text, "mode: ")
    assert valid(body + "  parallel:\n    expert: true\n").engine.eplb.mode == "dynamic"


def test_static_eplb_needs_expert_map() -> None:
    body = NPU_A2_8 + "engine:\n  parallel:\n    expert: true\n  eplb:\n    mode: static\n"
    text, issue = one(body)
    assert issue.path == "engine.eplb.expert_map_path"
    # not written: points at the eplb mapping
    assert (issue.line, issue.column) == position(text, "eplb:\n    ")
    assert valid(body + "    expert_map_path: /maps/e.json\n").engine.eplb.expert_map_path == "/maps/e.json"


@pytest.mark.parametrize(
    "setting",
    [
        "redundant_experts: 16",
        "expert_map_path: /m.json",
        "record_path: /r.json",
        "heat_collection_interval: 100",
        "algorithm_interval: 100",
        "policy_type: 0",
    ],
)
def test_eplb_settings_with_mode_off(setting: str) -> None:
    body = NPU_A2_8 + f"engine:\n  eplb:\n    {setting}\n"
    text, issue = one(body)
    assert issue.path == "engine.eplb.mode"
    assert setting.split(":")[0] in issue.message
    assert "mode is `off`" in issue.message
    assert (issue.line, issue.column) == position(text, "eplb:\n    ")


# --- network and server ------------------------------------------------------------------------------


def test_node_addresses_match_node_count() -> None:
    body = NPU_A2_8 + "  nodes: 2\nnetwork:\n  nodes:\n    - address: 10.0.0.1\n"
    text, issue = one(body)
    assert issue.path == "network.nodes"
    assert issue.message == "lists 1 node addresses but target.nodes is 2"
    assert (issue.line, issue.column) == position(text, "nodes:\n    ")


def test_api_port_differs_from_dp_rpc_port_on_multi_node() -> None:
    body = NPU_A2_8 + "  nodes: 2\nnetwork:\n  dp_rpc_port: 9000\nserver:\n  port: 9000\n"
    text, issue = one(body)
    assert issue.path == "server.port"
    assert (issue.line, issue.column) == position(text, "  port: ")
    # one node: no data-parallel RPC between hosts, no clash
    assert valid(body.replace("  nodes: 2\n", "")).server.port == 9000


@pytest.mark.parametrize(("key", "value"), [("port", 0), ("port", 65536), ("port", -1)])
def test_server_port_in_range(key: str, value: int) -> None:
    text, issue = one(f"target:\n  backend: cpu\nserver:\n  {key}: {value}\n")
    assert issue.path == f"server.{key}"
    assert (issue.line, issue.column) == position(text, f"{key}: ")


@pytest.mark.parametrize("key", ["dp_rpc_port", "ray_port"])
def test_network_ports_in_range(key: str) -> None:
    text, issue = one(f"target:\n  backend: cpu\nnetwork:\n  {key}: 70000\n")
    assert issue.path == f"network.{key}"
    assert "65535" in issue.message
    assert (issue.line, issue.column) == position(text, f"{key}: ")


# --- the API key source rule --------------------------------------------------------------------------


@pytest.mark.parametrize("source", ["env: OPENAI_API_KEY", "file: /run/secrets/api-key"])
def test_api_key_from_one_source(source: str) -> None:
    key = valid(f"target:\n  backend: cpu\nserver:\n  api_key:\n    {source}\n").server.api_key
    assert key is not None
    assert (key.env or key.file) == source.split(": ")[1]


@pytest.mark.parametrize(
    "api_key",
    ["\n    env: K\n    file: /k", " {}"],
    ids=["both", "neither"],
)
def test_api_key_needs_exactly_one_source(api_key: str) -> None:
    text, issue = one(f"target:\n  backend: cpu\nserver:\n  api_key:{api_key}\n")
    assert issue.path == "server.api_key"
    assert "exactly one of `env` or `file`" in issue.message
    assert (issue.line, issue.column) == position(text, "api_key:" + ("\n    " if "\n" in api_key else " "))


def test_api_key_is_never_inline() -> None:
    text, issue = one("target:\n  backend: cpu\nserver:\n  api_key: sk-secret\n")
    assert issue.path == "server.api_key"
    assert (issue.line, issue.column) == position(text, "api_key: ")


# --- all problems at once, pure -------------------------------------------------------------------------


def test_cross_field_problems_reports_every_rule_in_order() -> None:
    profile = Profile.model_validate(
        {
            "apiVersion": "ascendctl/v1",
            "kind": "Profile",
            "metadata": {"name": "x"},
            "model": {"source": "m"},
            "target": {"backend": "npu", "devices_per_node": 2},
            "engine": {"parallel": {"tensor": 4}, "eplb": {"mode": "dynamic"}},
        }
    )
    failed = [f for f in profile_findings(profile) if f.status == "fail"]
    assert [f.at for f in failed] == [("target", "hardware"), ("engine", "parallel"), ("engine", "eplb", "mode")]
    assert [f.id for f in failed] == [
        "profile.target.hardware-needed",
        "profile.parallel.capacity",
        "profile.eplb.needs-expert-parallel",
    ]


def test_shipped_layouts_pass_rules() -> None:
    # DP4 × TP4 over two 8-device nodes, 2 DP ranks per node: the DeepSeek-R1 two-node layout
    body = (
        NPU_A2_8
        + "  nodes: 2\nengine:\n  parallel:\n    tensor: 4\n    data: 4\n    data_per_node: 2\n    expert: true\n"
        + "network:\n  nodes:\n    - address: 10.0.0.1\n    - address: 10.0.0.2\n"
    )
    assert [f.id for f in profile_findings(valid(body)) if f.status != "pass" and f.status != "skip"] == []


def test_profile_rules_need_no_matrix_and_point_at_a_key() -> None:
    # every profile rule reports a key path: the loader turns it into file:line
    profile_rules = [r for r in RULES.values() if r.scope == "profile"]
    assert len(profile_rules) >= 12
    # errors stop loading; the one warn-level rule (migration help) is printed by `validate` and `plan`
    assert [r.id for r in profile_rules if r.severity != "error"] == ["profile.migration.typed-field"]


@pytest.mark.parametrize(
    ("args", "field"), [("'--port', '9'", "server.port"), ("'--host=0.0.0.0', '--seed', '9'", "server.host")]
)
def test_listen_flags_in_extra_args_point_at_server(args: str, field: str) -> None:
    body = f"target:\n  backend: cpu\nengine:\n  extra_args: [{args}]\n"
    text, issue = one(body)
    assert issue.path == "engine.extra_args" and f"set {field} instead" in issue.message
    assert (issue.line, issue.column) == position(text, "extra_args: ")
