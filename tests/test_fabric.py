"""`check PROFILE --fabric`: the `host.fabric.*` rules over `hccn_tool` outputs served by the fake host probe.

No Ascend host is available: the hccn_tool texts are the representative fixtures of tests/fixtures/hccn/ (healthy,
link down, wrong IP, unreachable peer, TLS mismatch), answered by `FakeHostProbe` at the hardware edge; everything
above it (parsers, gathering, peers' facts, rules, the check report and CLI) runs for real.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from ascendctl.check.fabric import port_share
from ascendctl.check.fabric_view import FabricRequest
from ascendctl.check.service import run_check
from ascendctl.cli import app
from ascendctl.core.errors import UserInputError
from ascendctl.core.findings import Finding, rules_of
from ascendctl.plan.planner import plan_profile
from ascendctl.schema.instances import place
from ascendctl.schema.loader import load_profile
from ascendctl_engine.host.cann import HCCN_CONF
from ascendctl_engine.host.fake import FakeHostProbe
from ascendctl_engine.host.hccn import (
    MAX_PINGS_PER_KIND,
    PeerTarget,
    parse_hccn_conf,
    parse_ip,
    parse_link,
    parse_ping,
    parse_spod_info,
    parse_tls,
    ping_plan,
)
from ascendctl_engine.host.probe import CommandResult

REPO = Path(__file__).resolve().parent.parent
HCCN = Path(__file__).parent / "fixtures" / "hccn"
PROFILE = REPO / "profiles" / "deepseek-r1-w8a8-2node-a2.yaml"
TOOL = "/usr/local/Ascend/driver/tools/hccn_tool"
FLAGS = {"link": "-link", "net_health": "-net_health", "netdetect": "-netdetect", "gateway": "-gateway", "ip": "-ip",
         "tls": "-tls"}  # fmt: skip


def scenario(name: str) -> tuple[FakeHostProbe, list[Path]]:
    """A fake 8-NPU node answering hccn_tool from healthy.yaml, with the scenario's overrides, and its peer file."""
    healthy: dict[str, Any] = yaml.safe_load((HCCN / "healthy.yaml").read_text(encoding="utf-8"))
    extra: dict[str, Any] = (
        yaml.safe_load((HCCN / f"{name}.yaml").read_text(encoding="utf-8")) if name != "healthy" else {}
    )
    overrides: dict[str, str] = extra.get("overrides", {})
    answers: dict[tuple[str, ...], CommandResult] = {}
    for dev in range(8):
        for key, flag in FLAGS.items():
            args = f"-i {dev} {flag} -g"
            answers[("hccn_tool", *args.split())] = CommandResult(
                0, overrides.get(args, healthy["queries"][key]).replace("{dev}", str(dev))
            )
        for peer_dev in range(8):  # every local device pings every peer device (peer-node1.json: 10.20.0.2N)
            address = f"10.20.0.2{peer_dev}"
            text = extra.get("unreachable", {}).get(address, healthy["queries"]["ping"])
            answers[("hccn_tool", "-i", str(dev), "-ping", "-g", "address", address)] = CommandResult(
                0, text.replace("{dev}", str(dev)).replace("{address}", address)
            )
    probe = FakeHostProbe(
        files={HCCN_CONF: healthy["hccn_conf"], "/sys/class/net/eth0/type": "1"},
        programs={"hccn_tool": TOOL},
        commands=answers,  # type: ignore[arg-type]
    )
    return probe, [HCCN / extra.get("peer", "peer-node1.json")]


def fabric_check(name: str, peers: Sequence[Path] | None = None) -> dict[str, Finding]:
    probe, default_peers = scenario(name)
    report = run_check(PROFILE, probe=probe, fabric=FabricRequest(0, tuple(default_peers if peers is None else peers)))
    return {f.id: f for f in report.results if f.id.startswith("host.fabric.")}


def failing(found: dict[str, Finding]) -> set[str]:
    return {i for i, f in found.items() if f.status == "fail"}


def test_healthy_node_passes_every_fabric_rule() -> None:
    found = fabric_check("healthy")
    assert set(found) == {r for r in rules_of("host") if r.startswith("host.fabric.")}
    assert {i: f.status for i, f in found.items() if f.status != "pass"} == {
        "host.fabric.vnic": "skip",  # A3 only
        "host.fabric.hccs-ping": "skip",
        "host.fabric.superpod": "skip",
    }
    assert "8 peer devices answered every local device" in found["host.fabric.ping"].message
    assert "bounded" not in found["host.fabric.ping"].message  # 8 × 8 pairs: the whole mesh
    assert "TLS switch 0 on this node and its peers" in found["host.fabric.tls"].message


def test_link_down() -> None:
    found = fabric_check("link-down")
    assert {"host.fabric.link", "host.fabric.health"} <= failing(found)
    assert "dev 3: DOWN" in found["host.fabric.link"].message
    assert found["host.fabric.link"].fix and "-link -g" in found["host.fabric.link"].fix
    assert "v0.25.1rc1:docs/source/installation.md:530" in found["host.fabric.link"].source
    assert "dev 3: Init" in found["host.fabric.health"].message


def test_wrong_ip() -> None:
    found = fabric_check("wrong-ip")
    assert "host.fabric.ip" in failing(found)
    assert found["host.fabric.link"].status == found["host.fabric.ping"].status == "pass"
    message = found["host.fabric.ip"].message
    assert "dev 5 and dev 4 share 10.20.0.14" in message
    assert f"dev 5: 10.20.0.14, but {HCCN_CONF} says 10.20.0.15" in message
    assert "-ip -s address" in (found["host.fabric.ip"].fix or "")


def test_unreachable_peer() -> None:
    found = fabric_check("unreachable-peer")
    assert "host.fabric.ping" in failing(found)
    message = found["host.fabric.ping"].message
    assert "no reply (8 of 64 pings)" in message  # every local device tried the dead peer NIC
    assert all(f"dev {d} → 10.20.0.22 (" in message for d in range(8))
    assert "peer-node1.json dev 2): 0/3 replies" in message and "10.20.0.21" not in message


def test_tls_mismatch() -> None:
    found = fabric_check("tls-mismatch")
    assert "host.fabric.tls" in failing(found)
    message = found["host.fabric.tls"].message
    assert "switch 0: this node dev 0" in message and "switch 1:" in message and "peer-node1-tls-on.json" in message
    assert "pd_disaggregation_mooncake_multi_node.md:115-118" in found["host.fabric.tls"].source


def test_without_peer_facts_the_cross_node_rules_decide_nothing() -> None:
    found = fabric_check("healthy", peers=[])
    assert found["host.fabric.ping"].status == "skip" and "--peer-facts" in found["host.fabric.ping"].message
    assert found["host.fabric.tls"].status == "pass" and "give --peer-facts" in found["host.fabric.tls"].message


def test_no_hccn_tool_is_one_failure_and_the_rest_undecided() -> None:
    found = {f.id: f for f in run_check(PROFILE, probe=FakeHostProbe(), fabric=FabricRequest()).results}
    assert found["host.fabric.tool"].status == "fail" and "hccn_tool" in found["host.fabric.tool"].message
    assert found["host.fabric.link"].status == "skip"


def test_port_share_of_each_node() -> None:
    profile = load_profile(PROFILE)
    head = {(r.port, r.purpose) for r in port_share(profile, None, 0)}
    assert (13389, "data-parallel RPC") in head
    assert not port_share(profile, None, 1)  # node 1 runs headless data-parallel ranks: no API, no RPC listener


def test_port_share_of_a_prefill_decode_profile() -> None:
    profile = load_profile(REPO / "profiles" / "glm-5-2-pd-a3.yaml")
    placements = {p.name: p for p in place(profile)}
    for node in range(profile.target.nodes):
        share = port_share(profile, None, node)
        assert any(r.purpose == "the router" for r in share) == (node == 0)
        for p in placements.values():
            kv = sorted(r.port for r in share if r.purpose == f"{p.name} KV")
            # Mooncake binds kv_port … kv_port + devices on every host of the instance (the range plan.pd.ports checks)
            assert kv == (list(range(p.kv_port, p.kv_port + p.devices + 1)) if node in p.hosts else [])


def test_port_share_of_a_cpu_prefill_decode_plan_has_the_router_metrics() -> None:
    # vllm-router serves metrics on the router's node: with the plan at hand, the bind test covers that port too
    path = REPO / "tests" / "fixtures" / "profiles" / "cpu-pd-shared-storage.yaml"
    profile = load_profile(path, ["disaggregation.router.metrics_port=29123"])
    plan = plan_profile(profile, data_root=Path("/var/lib/ascendctl"))
    assert (29123, "the router's metrics") in {(r.port, r.purpose) for r in port_share(profile, plan, 0)}
    assert not any(r.purpose == "the router's metrics" for r in port_share(profile, None, 0))


def test_a_busy_planned_port_fails() -> None:
    probe, peers = scenario("healthy")
    probe.busy_ports = {13389}
    report = run_check(PROFILE, probe=probe, fabric=FabricRequest(0, tuple(peers)))
    [ports] = [f for f in report.results if f.id == "host.fabric.ports"]
    assert ports.status == "fail" and "13389 (data-parallel RPC) in use" in ports.message


def test_fabric_json_section_is_what_a_peer_reads(tmp_path: Path) -> None:
    probe, _ = scenario("healthy")
    report = run_check(PROFILE, probe=probe, fabric=FabricRequest(0, ()))
    data = report.to_dict()
    fabric: dict[str, Any] = data["fabric"]  # type: ignore[assignment]
    assert set(fabric) == {
        "node", "tool", "devices", "pings", "ping_pairs", "spod", "interface", "interface_present", "ports", "peers"
    }  # fmt: skip
    assert [d["ip"] for d in fabric["devices"]] == [f"10.20.0.1{i}" for i in range(8)]
    peer_file = tmp_path / "node0.json"
    peer_file.write_text(json.dumps(data))
    assert run_check(PROFILE, probe=scenario("healthy")[0], fabric=FabricRequest(0, (peer_file,))).fabric


def test_bad_peer_facts_and_node_are_input_errors(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"schema": 2}')
    with pytest.raises(UserInputError, match=r"no `fabric\.devices`"):
        run_check(PROFILE, probe=FakeHostProbe(), fabric=FabricRequest(0, (bad,)))
    with pytest.raises(UserInputError, match="--node 5"):
        run_check(PROFILE, probe=FakeHostProbe(), fabric=FabricRequest(5, ()))
    twice = tmp_path / "twice.json"  # which address would the probe ping? neither: refused
    twice.write_text('{"schema": 1, "fabric": {"devices": [{"device": 0, "ip": "10.0.0.2", "ip": "10.0.0.3"}]}}')
    with pytest.raises(UserInputError, match='names the key "ip" twice'):
        run_check(PROFILE, probe=FakeHostProbe(), fabric=FabricRequest(0, (twice,)))


@pytest.mark.parametrize(
    ("device", "problem"),
    [
        ({"device": 0, "ip": "1.2.3.4\u0000"}, "`ip`"),  # reached subprocess: ValueError, exit 3
        ({"device": 0, "ip": "-h"}, "`ip`"),  # an option of hccn_tool
        ({"device": 0, "ip": "$(id) ;x\nnewline"}, "`ip`"),
        ({"device": 0, "ip": "10.0.0.2\u202e"}, "`ip`"),
        ({"device": 0, "ip": "10.0.0.2", "tls": "\u001b[31mRED\u001b[0m"}, "`tls`"),  # raw escape to the terminal
        ({"device": 0, "ip": "10.0.0.2", "vnic": "x" * 3_000_000}, "`vnic`"),
        ({"device": -5, "ip": "10.0.0.2"}, "device number"),
        ({"device": 10**18, "ip": "10.0.0.2"}, "device number"),
    ],
)
def test_peer_facts_hold_only_what_check_writes(tmp_path: Path, device: dict[str, Any], problem: str) -> None:
    peer = tmp_path / "peer.json"
    peer.write_text(json.dumps({"fabric": {"node": 1, "devices": [device]}}))
    with pytest.raises(UserInputError) as caught:
        run_check(PROFILE, probe=FakeHostProbe(), fabric=FabricRequest(0, (peer,)))
    message = str(caught.value)
    assert message.startswith(f"--peer-facts {peer}: ") and problem in message
    assert "\n" not in message and "\x1b" not in message and len(message) < 300


def test_single_node_profile_says_the_fabric_does_not_apply() -> None:
    result = CliRunner().invoke(app, ["check", str(REPO / "profiles" / "cpu-demo.yaml"), "--fabric"])
    assert "the fabric checks apply to multi-node profiles" in result.stdout
    assert CliRunner().invoke(app, ["check", "--fabric"]).exit_code == 2


@pytest.mark.parametrize(
    ("text", "value"),
    [("link status: UP\n", "UP"), ("Link Status : down", "DOWN"), ("no such device", None)],
)
def test_parse_link(text: str, value: str | None) -> None:
    assert parse_link(text) == value


def test_parsers_of_ip_tls_ping_and_hccn_conf() -> None:
    assert parse_ip("ipaddr:10.0.0.1\nnetmask:255.255.0.0\n") == ("10.0.0.1", "255.255.0.0")
    assert parse_tls("dev_id:0, tls switch[1](0:disable, 1:enable)") == "1"
    assert parse_ping("3 packets transmitted, 2 received, 33.33% packet loss") == (3, 2)
    assert parse_ping("ping failed") is None
    assert parse_hccn_conf("address_1=10.0.0.2\nnetmask_1=255.0.0.0\n# x\n") == {
        1: {"address": "10.0.0.2", "netmask": "255.0.0.0"}
    }


A3_PROFILE = REPO / "profiles" / "glm-5-2-pd-a3.yaml"


A3_NPU_SMI = REPO / "tests" / "fixtures" / "hosts" / "a3-16chips" / "_captured" / "npu-smi-info.txt"


def a3_node(
    tmp_path: Path,
    silent_vnic: str | None = None,
    *,
    peer_pod: str = "0",
    odd_server: str | None = None,
    peer_sdid_base: int = 16842752,
) -> tuple[FakeHostProbe, Path]:
    """An A3 node (16 devices, 8 NPUs of 2 chips) answering healthy.yaml and a3-superpod.yaml, and its peer's facts
    file (node 1). Superpod identity: super pod 0, server index 4 (`odd_server` on NPU 7 chip 1), SDIDs 16777216 +
    Phy-ID here and `peer_sdid_base` + device on the peer, which is in super pod `peer_pod`."""
    healthy: dict[str, Any] = yaml.safe_load((HCCN / "healthy.yaml").read_text(encoding="utf-8"))
    a3: dict[str, Any] = yaml.safe_load((HCCN / "a3-superpod.yaml").read_text(encoding="utf-8"))
    queries = {**healthy["queries"], **a3["queries"]}
    answers: dict[tuple[str, ...], CommandResult] = {}
    for dev in range(16):
        for key, flag in {**FLAGS, "vnic": "-vnic"}.items():
            answers[("hccn_tool", "-i", str(dev), flag, "-g")] = CommandResult(
                0, queries[key].replace("{dev}", str(dev))
            )
        for peer_dev in range(16):
            address = f"10.30.1.{peer_dev}"
            ping = a3["queries"]["unanswered" if address == silent_vnic else "hccs_ping"]
            answers[("hccn_tool", "-i", str(dev), "-hccs_ping", "-g", "address", address)] = CommandResult(
                0, ping.replace("{dev}", str(dev)).replace("{address}", address)
            )
    answers[("npu-smi", "info")] = CommandResult(0, A3_NPU_SMI.read_text(encoding="utf-8"))
    for npu in range(8):
        for chip in (0, 1):
            server = odd_server if odd_server is not None and (npu, chip) == (7, 1) else "4"
            text = a3["spod_info"].format(sdid=16777216 + 2 * npu + chip, pod="0", server=server)
            answers[("npu-smi", "info", "-t", "spod-info", "-i", str(npu), "-c", str(chip))] = CommandResult(0, text)
    probe = FakeHostProbe(
        files={"/sys/class/net/eth0/type": "1"},
        programs={"hccn_tool": TOOL, "npu-smi": "/usr/local/bin/npu-smi"},
        commands=answers,  # type: ignore[arg-type]
    )
    devices = [{"device": d, "ip": None, "tls": "0", "vnic": f"10.30.1.{d}"} for d in range(16)]
    spod = [{"super_pod_id": peer_pod, "sdid": str(peer_sdid_base + d)} for d in range(16)]
    peer = {"fabric": {"node": 1, "devices": devices, "interface": "eth0", "interface_present": True, "spod": spod}}
    peer_file = tmp_path / "a3-node1.json"
    peer_file.write_text(json.dumps(peer))
    return probe, peer_file


def test_a3_reads_virtual_addresses_and_runs_the_superpod_ping(tmp_path: Path) -> None:
    probe, peer = a3_node(tmp_path)
    found = {f.id: f for f in run_check(A3_PROFILE, probe=probe, fabric=FabricRequest(0, (peer,))).results}
    assert (
        found["host.fabric.vnic"].status == "pass" and "16 virtual NPU addresses" in found["host.fabric.vnic"].message
    )
    assert found["host.fabric.hccs-ping"].status == "pass"
    # 16 × 16 pairs, bounded: every local device pings 8 peer devices, every peer device is pinged 8 times
    assert "16 peer devices answered" in found["host.fabric.hccs-ping"].message
    assert f"({MAX_PINGS_PER_KIND} of 256 device pairs: bounded" in found["host.fabric.hccs-ping"].message
    hccs = [c for c in probe.calls if "-hccs_ping" in c]
    assert len(hccs) == MAX_PINGS_PER_KIND and (TOOL, "-i", "7", "-hccs_ping", "-g", "address", "10.30.1.7") in hccs
    assert {c[2] for c in hccs} == {str(d) for d in range(16)} and {c[-1] for c in hccs} == {
        f"10.30.1.{d}" for d in range(16)
    }
    probe, peer = a3_node(tmp_path, silent_vnic="10.30.1.9")
    found = {f.id: f for f in run_check(A3_PROFILE, probe=probe, fabric=FabricRequest(0, (peer,))).results}
    assert found["host.fabric.hccs-ping"].status == "fail"
    assert "dev 9 → 10.30.1.9" in found["host.fabric.hccs-ping"].message


def test_the_ping_plan_is_every_local_device_to_every_peer_device_bounded_per_kind() -> None:
    targets = [PeerTarget(f"node{n}.json", d, f"10.{n}.0.{d}") for n in (1, 2) for d in range(4)]
    targets += [PeerTarget("node1.json", d, f"10.9.0.{d}", "hccs_ping") for d in range(4)]
    full = ping_plan([0, 1, 2, 3], targets)
    assert len(full) == 4 * 8 + 4 * 4
    every = {(d, t.address) for d in range(4) for t in targets[:8]}
    assert {(d, t.address) for d, t in full if t.kind == "ping"} == every
    assert [(d, t.device) for d, t in full[:4]] == [(0, 0), (1, 1), (2, 2), (3, 3)]  # the same-index pairs first
    bounded = ping_plan([0, 1, 2, 3], targets, limit=8)
    pings = [(d, t) for d, t in bounded if t.kind == "ping"]
    assert len(pings) == 8 and len(bounded) == 16  # the bound is per kind
    assert {d for d, _ in pings} == {0, 1, 2, 3} and {t.address for _, t in pings} == {t.address for t in targets[:8]}
    assert ping_plan([], targets) == []


def test_a3_nodes_share_one_superpod_and_each_node_one_server_index(tmp_path: Path) -> None:
    def superpod(**change: Any) -> Finding:
        probe, peer = a3_node(tmp_path, **change)
        report = run_check(A3_PROFILE, probe=probe, fabric=FabricRequest(0, (peer,)))
        [found] = [f for f in report.results if f.id == "host.fabric.superpod"]
        return found

    healthy = superpod()
    assert healthy.status == "pass", healthy.message
    assert healthy.message == "super pod 0 and every peer (16 chips here, server index 4)"
    other_pod = superpod(peer_pod="1")
    assert other_pod.status == "fail" and "a3-node1.json is in super pod 1, this node in 0" in other_pod.message
    split = superpod(odd_server="5")
    assert split.status == "fail" and "this node's chips report server indexes 4, 5" in split.message
    shared = superpod(peer_sdid_base=16777216)  # the peer's chips claim this node's SDIDs
    assert shared.status == "fail" and "SDID 16777216" in shared.message
    assert "spod-info" in (shared.fix or "") and "pd_disaggregation_mooncake_multi_node.md:54-57" in shared.source


def test_parse_spod_info() -> None:
    a3: dict[str, Any] = yaml.safe_load((HCCN / "a3-superpod.yaml").read_text(encoding="utf-8"))
    text = a3["spod_info"].format(sdid=16777216, pod=0, server=4)
    assert parse_spod_info(text) == {"super_pod_id": "0", "server_index": "4", "sdid": "16777216"}
    table = "| Super Pod ID                 : 3          | Pod ID : 1                                    |"
    assert parse_spod_info(table) == {"super_pod_id": "3", "server_index": None, "sdid": None}  # a table row too
