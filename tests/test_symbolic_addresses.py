"""Node addresses stay symbolic in the plan and are resolved by the consumer: the launcher with the profile's
node list, the Kubernetes renderer with the leader's and the pod's address; without an address, the plan
writes `<nodeN-address>` and every consumer that would use it literally refuses."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

import ascendctl.run.serve as serving
from ascendctl.cli import app
from ascendctl.core.errors import UserInputError
from ascendctl.outputs.render import RenderOptions, render
from ascendctl.plan.planner import plan_profile
from ascendctl.schema.loader import load_profile
from ascendctl_engine.spec import NodeAddress

REPO = Path(__file__).resolve().parents[1]
DEEPSEEK = REPO / "profiles" / "deepseek-r1-w8a8-2node-a2.yaml"
runner = CliRunner()


def without_addresses(tmp_path: Path) -> Path:
    data = yaml.safe_load(DEEPSEEK.read_text())
    data["network"].pop("nodes")
    path = tmp_path / "no-addresses.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def test_plan_json_shows_the_profiles_addresses_resolved() -> None:
    data = json.loads(runner.invoke(app, ["plan", str(DEEPSEEK), "--json"]).stdout)
    head = load_profile(DEEPSEEK).network.nodes[0].address
    worker = data["nodes"][1]["argv"]
    assert worker[worker.index("--data-parallel-address") + 1] == head


def test_an_unknown_address_is_a_placeholder_and_a_warning(tmp_path: Path) -> None:
    result = runner.invoke(app, ["plan", str(without_addresses(tmp_path)), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    worker = data["nodes"][1]["argv"]
    assert worker[worker.index("--data-parallel-address") + 1] == NodeAddress(0).placeholder == "<node0-address>"
    assert any("network.nodes[0].address is not set" in w for w in data["warnings"])


def test_kubernetes_fills_in_what_the_plan_does_not_know(tmp_path: Path) -> None:
    profile = load_profile(without_addresses(tmp_path), ["server.host=0.0.0.0"])
    [k8s] = render(plan_profile(profile), "k8s", RenderOptions())
    documents = [d for d in yaml.safe_load_all(k8s.content) if d]
    assert "<node0-address>" not in json.dumps(documents)  # (the plan's warning stays in the header comment)
    lws = documents[0]
    leader = lws["spec"]["leaderWorkerTemplate"]["leaderTemplate"]["spec"]["containers"][0]
    args = leader["args"]
    assert args[args.index("--data-parallel-address") + 1] == "$(POD_IP)"
    worker = lws["spec"]["leaderWorkerTemplate"]["workerTemplate"]["spec"]["containers"][0]
    assert "${LWS_LEADER_ADDRESS}" in worker["command"][2].replace("$$", "$")


@pytest.mark.parametrize("target", ["script", "docker", "compose", "systemd"])
def test_targets_that_write_addresses_literally_refuse_placeholders(tmp_path: Path, target: str) -> None:
    result = runner.invoke(app, ["render", str(without_addresses(tmp_path)), "--target", target])
    assert result.exit_code == 2 and "network.nodes[0].address" in result.output


def test_serve_refuses_a_node_whose_peer_address_is_unknown(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(serving, "engine_env_for", lambda profile, path: None)
    monkeypatch.setattr(serving, "plan_here", lambda profile, allow: plan_profile(profile, allow=allow))
    path = without_addresses(tmp_path)
    with pytest.raises(UserInputError, match=r"node 1 needs the addresses it connects to: set network\.nodes\[0\]"):
        serving.load_serving(path, [], 1)
    # with the addresses in the profile the same node resolves
    target = serving.load_serving(DEEPSEEK, [], 1)
    assert target.command.symbols is not None and target.command.symbols.unresolved == ()
