"""Per-node settings (`network.nodes[i]`: device_utilization, env, extra_args) and role-aware arguments: what an
API-server option is comes from the parser snapshot's option groups, and headless nodes never get one."""

from __future__ import annotations

import pytest

from ascendctl.core.errors import DocumentError, Issue
from ascendctl.core.yamlio import load_yaml_text
from ascendctl.plan.planner import UnsupportedPlan, plan_profile, require_startable
from ascendctl.schema.loader import validate_profile_document
from ascendctl_engine.adapters.parser_snapshot import is_api_server_flag, snapshot_for

# Two A2 nodes, DP2 (one per node) × TP8: node 1 is headless.
BASE = """apiVersion: ascendctl/v1
kind: Profile
metadata:
  name: per-node
model:
  source: org/model
target:
  backend: npu
  hardware: a2
  devices_per_node: 8
  nodes: 2
release: v0.23.0
engine:
  parallel:
    tensor: 8
    data: 2
  memory:
    device_utilization: 0.9
{engine}network:
  interface: eth0
  nodes:
    - address: 192.0.2.10
{node0}    - address: 192.0.2.11
{node1}server:
  host: 0.0.0.0
"""


def text(engine: str = "", node0: str = "", node1: str = "") -> str:
    return BASE.format(engine=engine, node0=node0, node1=node1)


def load(body: str):  # type: ignore[no-untyped-def]
    return validate_profile_document(load_yaml_text(body, "p.yaml"))


def issues(body: str) -> list[Issue]:
    with pytest.raises(DocumentError) as exc:
        load(body)
    return exc.value.issues


def position(body: str, needle: str) -> tuple[int, int]:
    index = body.index(needle) + len(needle)
    before = body[:index]
    return before.count("\n") + 1, index - (before.rfind("\n") + 1) + 1


def flags(argv: tuple[str, ...]) -> list[str]:
    return [t for t in argv if t.startswith("--")]


# ------------------------------------------------------------------------------- the snapshot decides


@pytest.mark.parametrize("vllm", ["0.9.1", "0.13.0", "0.23.0"])
def test_api_server_flags_come_from_the_snapshot_groups(vllm: str) -> None:
    snap = snapshot_for(vllm)
    for flag in ("--host", "--port", "--api-key", "--api-server-count", "--tool-call-parser", "--chat-template"):
        assert snap.is_api_server_flag(flag), (vllm, flag)
        assert is_api_server_flag(vllm, flag)
    # engine options, and the serve options a headless node takes itself
    for flag in ("--tensor-parallel-size", "--gpu-memory-utilization", "--served-model-name", "--headless"):
        assert not snap.is_api_server_flag(flag), (vllm, flag)
    assert not snap.is_api_server_flag("--data-parallel-start-rank")
    assert not snap.is_api_server_flag("--no-such-flag")


def test_every_frontend_option_but_the_headless_ones_is_an_api_server_option() -> None:
    snap = snapshot_for("0.23.0")
    frontend = {o.flag for o in snap.options if o.group == "frontend"}
    assert {f for f in frontend if not snap.is_api_server_flag(f)} == {"--headless"}


# ------------------------------------------------------------------------------- per-node overrides


def test_node_device_utilization_wins_on_that_node_with_provenance() -> None:
    plan = plan_profile(load(text(node1="      device_utilization: 0.85\n")))
    head, worker = plan.commands
    assert head.argv[head.argv.index("--gpu-memory-utilization") + 1] == "0.9"
    assert worker.argv[worker.argv.index("--gpu-memory-utilization") + 1] == "0.85"
    assert worker.argv.count("--gpu-memory-utilization") == 1
    assert plan.provenance["--gpu-memory-utilization@node1"] == "user: network.nodes[1].device_utilization"


def test_node_env_is_set_after_runtime_env_with_provenance() -> None:
    body = text(node1="      env:\n        HCCL_BUFFSIZE: '512'\n        EXTRA_ONE: x\n")
    body = body.replace("server:\n", "runtime:\n  env:\n    HCCL_BUFFSIZE: '1024'\nserver:\n", 1)
    plan = plan_profile(load(body))
    head, worker = plan.commands
    assert head.env["HCCL_BUFFSIZE"] == "1024" and "EXTRA_ONE" not in head.env
    assert worker.env["HCCL_BUFFSIZE"] == "512" and worker.env["EXTRA_ONE"] == "x"
    assert plan.serving.env_sources[1]["EXTRA_ONE"] == "user: network.nodes[1].env.EXTRA_ONE"
    why = plan.serving.env_sources[1]["HCCL_BUFFSIZE"]
    assert why.startswith("user: network.nodes[1].env.HCCL_BUFFSIZE (replaces '1024': user: runtime.env")


def test_node_extra_args_follow_the_profile_wide_ones() -> None:
    body = text(engine="  extra_args: [--max-num-seqs, '8']\n", node1="      extra_args: [--max-num-seqs, '4']\n")
    plan = plan_profile(load(body))
    head, worker = plan.commands
    assert head.argv[-2:] == ("--max-num-seqs", "8")
    assert worker.argv[-4:] == ("--max-num-seqs", "8", "--max-num-seqs", "4")  # vLLM takes the last: the node's
    assert plan.provenance["extra:--max-num-seqs@node1"] == "user: network.nodes[1].extra_args"


def test_node_extra_args_are_checked_against_the_parser_snapshot() -> None:
    with pytest.raises(UnsupportedPlan) as exc:
        require_startable(plan_profile(load(text(node1="      extra_args: [--no-such-flag]\n"))))
    assert any(p.startswith("network.nodes[1].extra_args: ") and "--no-such-flag" in p for p in exc.value.problems)


# ------------------------------------------------------------------------------- role-aware arguments


def test_headless_nodes_never_get_api_server_options() -> None:
    body = text(engine="  extra_args: [--api-server-count, '2', --max-log-len, '10']\n")
    plan = plan_profile(load(body))
    head, worker = plan.commands
    assert "--headless" in worker.argv
    assert {"--api-server-count", "--max-log-len", "--host", "--port"} <= set(flags(head.argv))
    snap = snapshot_for(plan.deployment.release.vllm)
    assert [f for f in flags(worker.argv) if snap.is_api_server_flag(f)] == []
    assert "head only" in plan.provenance["extra:--api-server-count"]


def test_typed_api_server_count_goes_to_the_head_only() -> None:
    plan = plan_profile(load(text().replace("  host: 0.0.0.0\n", "  host: 0.0.0.0\n  api_server_count: 2\n")))
    head, worker = plan.commands
    assert head.argv[head.argv.index("--api-server-count") + 1] == "2"
    assert "--api-server-count" not in worker.argv
    assert plan.provenance["--api-server-count"].startswith("user: server.api_server_count")


def test_typed_serving_options_are_api_server_options() -> None:
    body = text().replace("network:\n", "serving:\n  tool_call_parser: hermes\n  auto_tool_choice: true\nnetwork:\n")
    head, worker = plan_profile(load(body)).commands
    assert {"--tool-call-parser", "--enable-auto-tool-choice"} <= set(head.argv)
    assert not {"--tool-call-parser", "--enable-auto-tool-choice"} & set(worker.argv)


def test_an_api_server_option_in_a_headless_node_override_warns_and_is_dropped() -> None:
    # the node serves no API: the option would do nothing there, so it is never given to it and the plan warns
    plan = plan_profile(load(text(node1="      extra_args: [--api-server-count, '2']\n")))
    require_startable(plan)
    (warned,) = [f for f in plan.deployment.findings if f.id == "plan.refused.node-args"]
    assert warned.status == "warn" and warned.id == "plan.refused.node-args"
    assert "`--api-server-count` is an API-server option" in warned.message and "node 1 is headless" in warned.message
    assert "--api-server-count" not in plan.commands[1].argv


def test_an_api_server_option_in_the_head_override_is_fine() -> None:
    head, worker = plan_profile(load(text(node0="      extra_args: [--api-server-count, '2']\n"))).commands
    assert head.argv[-2:] == ("--api-server-count", "2")
    assert "--api-server-count" not in worker.argv


# ------------------------------------------------------------------------------- boundary and rules


@pytest.mark.parametrize("value", ["0", "1.5", ".nan", ".inf", "-0.1"])
def test_node_device_utilization_is_a_finite_fraction(value: str) -> None:
    body = text(node1=f"      device_utilization: {value}\n")
    (issue,) = issues(body)
    assert issue.path == "network.nodes[1].device_utilization"
    assert (issue.line, issue.column) == position(body, "      device_utilization: ")


def test_node_env_and_extra_args_are_single_lines() -> None:
    body = text(node1='      env:\n        A: "x\\ny"\n      extra_args: ["--a\\tb"]\n')
    found = {i.path for i in issues(body)}
    assert found == {"network.nodes[1].env.A", "network.nodes[1].extra_args[0]"}


def test_node_extra_args_start_with_a_flag() -> None:
    (issue,) = issues(text(node1="      extra_args: [value]\n"))
    assert issue.path == "network.nodes[1].extra_args"
    assert "must start with a flag" in issue.message


def test_inline_secret_in_node_env_is_refused_at_its_key() -> None:
    body = text(node1="      env:\n        HF_TOKEN: hf_abc\n")
    (issue,) = issues(body)
    assert issue.path == "network.nodes[1].env.HF_TOKEN"
    assert "network.nodes[1].env" in issue.message and "runtime.secrets" in issue.message
    assert "hf_abc" not in issue.render()
    assert (issue.line, issue.column) == position(body, "HF_TOKEN: ")


@pytest.mark.parametrize(
    ("args", "message"), [("[--port, '9000']", "server.port"), ("[--host=0.0.0.0]", "server.host")]
)
def test_listen_flags_in_node_extra_args_are_refused(args: str, message: str) -> None:
    (issue,) = issues(text(node0=f"      extra_args: {args}\n"))
    assert issue.path == "network.nodes[0].extra_args"
    assert "network.nodes[0].extra_args" in issue.message and message in issue.message


def test_api_key_in_node_extra_args_is_refused_at_its_position() -> None:
    (issue,) = issues(text(node0="      extra_args: [--seed, '1', --api-key, sk-abc]\n"))
    assert issue.path == "network.nodes[0].extra_args[2]"
    assert "sk-abc" not in issue.render()


def test_typed_field_migration_hint_for_node_extra_args() -> None:
    plan = plan_profile(load(text(node0="      extra_args: [--api-server-count, '2']\n")))
    hints = [f for f in plan.deployment.findings if f.id == "profile.migration.typed-field"]
    assert hints and "server.api_server_count" in hints[0].message
    assert "network.nodes[0].extra_args" in hints[0].message


def test_a_wrongly_typed_secret_value_in_node_env_is_not_quoted() -> None:
    body = text(node1="      env:\n        HF_TOKEN: [hf_abc]\n")
    rendered = " ".join(i.render() for i in issues(body))
    assert "hf_abc" not in rendered and "network.nodes[1].env" in rendered


def test_per_node_engine_settings_on_a_ray_worker_are_an_error() -> None:
    body = text(node1="      device_utilization: 0.8\n").replace(
        "    data: 2\n", "    pipeline: 2\n    executor: ray\n"
    )
    plan = plan_profile(load(body))  # the worker runs `ray start`: its settings would do nothing, the plan warns
    require_startable(plan)
    messages = [f.message for f in plan.deployment.findings if f.status == "warn"]
    assert any(m.startswith("network.nodes[1]: node 1 runs `ray`") for m in messages), messages


def test_an_allowed_headless_api_server_override_is_still_not_given_to_the_node() -> None:
    plan = plan_profile(
        load(text(node1="      extra_args: [--api-server-count, '2']\n")), allow=["plan.refused.node-args"]
    )
    assert "--api-server-count" not in plan.commands[1].argv
    [refused] = [f for f in plan.deployment.findings if f.id == "plan.refused.node-args"]
    assert refused.status == "warn" and "node 1 is headless" in refused.message
