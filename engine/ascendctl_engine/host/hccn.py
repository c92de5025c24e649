"""The NPU network fabric of one host, read with `hccn_tool` through the `HostProbe` (so tests fake it).

What is read is the manual checklist of vllm-ascend's installation guide, "Verify Multi-Node Communication"
(v0.25.1rc1:docs/source/installation.md:528-578), per device N: `hccn_tool -i N -link -g` (UP), `-net_health -g`
(Success), `-netdetect -g`, `-gateway -g`, `-ip -g`; the TLS switch `-tls -g` (the PD guide:
v0.25.1rc1:docs/source/tutorials/features/pd_disaggregation_mooncake_multi_node.md:117-118, "consistent across all
nodes"); and the cross-node `hccn_tool -i N -ping -g address PEER` (installation.md:578), from every local device
to every peer device address, as the PD guide's loop runs it once per peer NPU address (`for i in {0..7}; do
hccn_tool -i $i -ping -g address x.x.x.x; done`, pd_disaggregation_mooncake_multi_node.md:108-111), bounded
(`ping_plan`). `/etc/hccn.conf` (`address_N=`, `netmask_N=` lines) is what the devices were configured with. On A3
the PD guide adds the virtual NPU address `hccn_tool -i N -vnic -g` and the superpod ping `hccn_tool -i N -hccs_ping
-g address VNIC`, from every local device to the peers' virtual addresses (pd_disaggregation_mooncake_multi_node.md:
50-51,61-64), and its "Get superpodid and SDID" step (:54-57), `npu-smi info -t spod-info -i NPU -c CHIP` for each
chip `npu-smi info` lists (its `Super Pod ID`, `Server Index` and `SDID` lines, as in the example output of
https://github.com/hicann/shmem/blob/7eebef5be99348cd9ed2c303e2ae5dd47409f4c8/examples/rma_d2h_demo/README_en.md).

The parsers are pure functions of the text `hccn_tool` prints (`key: value` lines, matched without regard to case or
spacing); a value that cannot be read stays None and the reason is kept. They were written against representative
outputs (tests/fixtures/hccn/), not captured on an Ascend host: hardware is not available here.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Mapping, Sequence
from dataclasses import field
from typing import Literal

from ascendctl_engine.host.probe import HostProbe
from ascendctl_engine.records import record

HCCN_TOOL_PATH = "/usr/local/Ascend/driver/tools/hccn_tool"  # where the driver installs it (mounted in containers)
HCCN_TIMEOUT = 15.0
PING_TIMEOUT = 30.0
# Each ping is one `hccn_tool` run of a few seconds (3 packets): a 2-node A2 full mesh is 64, a 2-node A3 one 256 per
# kind. Past this many per kind the plan keeps the pairs nearest the same-index pair (see `ping_plan`).
MAX_PINGS_PER_KIND = 128
_IP = r"(\d{1,3}(?:\.\d{1,3}){3})"
_LINK = re.compile(r"link\s*status\s*:\s*(\w+)", re.IGNORECASE)
_HEALTH = re.compile(r"net\s*health\s*status\s*:\s*(\w[\w ]*)", re.IGNORECASE)
_NETDETECT = re.compile(r"netdetect\s*address\s*:\s*" + _IP, re.IGNORECASE)
_GATEWAY = re.compile(r"default\s*gateway\s*:\s*" + _IP, re.IGNORECASE)
_IPADDR = re.compile(r"ipaddr\s*:\s*" + _IP, re.IGNORECASE)
_NETMASK = re.compile(r"netmask\s*:\s*" + _IP, re.IGNORECASE)
_TLS = re.compile(r"tls\s*switch\s*\[\s*(\d+)\s*\]", re.IGNORECASE)
_PING = re.compile(r"(\d+)\s+packets?\s+transmitted,\s*(\d+)\s+received", re.IGNORECASE)
_ANY_IP = re.compile(_IP)
_SPOD = {
    "super_pod_id": re.compile(r"super\s*pod\s*id\s*:\s*(\d+)", re.IGNORECASE),
    "server_index": re.compile(r"server\s*index\s*:\s*(\d+)", re.IGNORECASE),
    "sdid": re.compile(r"\bsdid\s*:\s*(\d+)", re.IGNORECASE),
}
NPU_SMI_TIMEOUT = 20.0
_CONF = re.compile(r"^\s*(address|netmask|netdetect|gateway)_(\d+)\s*=\s*(\S+)\s*$")


def _first(pattern: re.Pattern[str], text: str) -> str | None:
    found = pattern.search(text)
    return found.group(1).strip() if found else None


def parse_link(text: str) -> str | None:
    """`link status: UP` → "UP"."""
    value = _first(_LINK, text)
    return value.upper() if value else None


def parse_net_health(text: str) -> str | None:
    """`net health status: Success` → "Success"."""
    return _first(_HEALTH, text)


def parse_netdetect(text: str) -> str | None:
    """`netdetect address: 10.0.0.254` → the address the device probes its network with."""
    return _first(_NETDETECT, text)


def parse_gateway(text: str) -> str | None:
    """`default gateway:10.0.0.254, Iface:eth0` → "10.0.0.254"."""
    return _first(_GATEWAY, text)


def parse_ip(text: str) -> tuple[str | None, str | None]:
    """`ipaddr:10.0.0.11` / `netmask:255.255.255.0` → (address, netmask)."""
    return _first(_IPADDR, text), _first(_NETMASK, text)


def parse_tls(text: str) -> str | None:
    """`... tls switch[0](0:disable, 1:enable) ...` → "0"."""
    return _first(_TLS, text)


def parse_vnic(text: str) -> str | None:
    """The virtual NPU address `-vnic -g` prints (the first IPv4 address of its output)."""
    return _first(_ANY_IP, text)


def parse_ping(text: str) -> tuple[int, int] | None:
    """`3 packets transmitted, 3 received, 0.00% packet loss` → (3, 3)."""
    found = _PING.search(text)
    return (int(found.group(1)), int(found.group(2))) if found else None


def parse_spod_info(text: str) -> dict[str, str | None]:
    """`npu-smi info -t spod-info -i N -c C`: its `Super Pod ID`, `Server Index` and `SDID` (None: not printed)."""
    return {key: _first(pattern, text) for key, pattern in _SPOD.items()}


def parse_hccn_conf(text: str) -> dict[int, dict[str, str]]:
    """`/etc/hccn.conf` → device → {address, netmask, netdetect, gateway} as written there."""
    out: dict[int, dict[str, str]] = {}
    for line in text.splitlines():
        found = _CONF.match(line)
        if found:
            out.setdefault(int(found.group(2)), {})[found.group(1)] = found.group(3)
    return out


def same_subnet(address: str, netmask: str | None, other: str) -> bool | None:
    """Whether `other` is on `address`'s subnet (None when the netmask or an address cannot be read)."""
    if netmask is None:
        return None
    try:
        network = ipaddress.ip_network(f"{address}/{netmask}", strict=False)
        return ipaddress.ip_address(other) in network
    except ValueError:
        return None


@record
class DeviceFabric:
    """What `hccn_tool` says about one device's NIC (None: not read; `errors` says why, per query)."""

    device: int
    link: str | None = None
    net_health: str | None = None
    netdetect: str | None = None
    gateway: str | None = None
    ip: str | None = None
    netmask: str | None = None
    tls: str | None = None
    vnic: str | None = None  # A3: the virtual NPU address (not read elsewhere)
    errors: Mapping[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, object]:
        return {
            "device": self.device,
            "link": self.link,
            "net_health": self.net_health,
            "netdetect": self.netdetect,
            "gateway": self.gateway,
            "ip": self.ip,
            "netmask": self.netmask,
            "tls": self.tls,
            "vnic": self.vnic,
            "errors": dict(self.errors),
        }


@record
class SpodInfo:
    """A3: one chip's superpod identity (`npu-smi info -t spod-info -i npu -c chip`); `error` when not read."""

    npu: int
    chip: int
    super_pod_id: str | None = None
    server_index: str | None = None  # the server's id in the superpod: the same on every NPU of one node
    sdid: str | None = None  # the chip's id in the superpod (HCCL's superDeviceId): unique there
    error: str | None = None

    def to_dict(self) -> dict[str, object]:
        return {
            "npu": self.npu,
            "chip": self.chip,
            "super_pod_id": self.super_pod_id,
            "server_index": self.server_index,
            "sdid": self.sdid,
            "error": self.error,
        }


PingKind = Literal["ping", "hccs_ping"]


@record
class Ping:
    """`hccn_tool -i device -ping|-hccs_ping -g address address`: replies out of packets sent (None when it did not
    run or printed no count)."""

    device: int  # the local device that pinged
    address: str
    peer: str  # where the address comes from (a peer facts file)
    sent: int | None
    received: int | None
    error: str | None = None
    kind: PingKind = "ping"
    peer_device: int | None = None  # the peer's device the address belongs to

    @property
    def ok(self) -> bool:
        return self.error is None and bool(self.received)

    def to_dict(self) -> dict[str, object]:
        return {
            "device": self.device,
            "address": self.address,
            "peer": self.peer,
            "sent": self.sent,
            "received": self.received,
            "error": self.error,
            "ok": self.ok,
            "kind": self.kind,
            "peer_device": self.peer_device,
        }


@record
class PeerTarget:
    """A peer node's device NIC, pinged from every local device (within `MAX_PINGS_PER_KIND`)."""

    peer: str
    device: int  # the peer's device index
    address: str
    kind: PingKind = "ping"


@record
class FabricFacts:
    """This host's fabric: where `hccn_tool` is (None: not found), each device, the pings to the peers."""

    tool: str | None
    devices: tuple[DeviceFabric, ...] = ()
    pings: tuple[Ping, ...] = ()
    ping_pairs: Mapping[str, int] = field(default_factory=dict)  # per kind: every (local, peer device) pair
    spod: tuple[SpodInfo, ...] = ()  # A3 only: each chip's superpod identity

    def to_dict(self) -> dict[str, object]:
        return {
            "tool": self.tool,
            "devices": [d.to_dict() for d in self.devices],
            "pings": [p.to_dict() for p in self.pings],
            "ping_pairs": dict(self.ping_pairs),
            "spod": [s.to_dict() for s in self.spod],
        }


_QUERIES: tuple[tuple[str, str], ...] = (
    ("link", "-link"),
    ("net_health", "-net_health"),
    ("netdetect", "-netdetect"),
    ("gateway", "-gateway"),
    ("ip", "-ip"),
    ("tls", "-tls"),
)


_PARSERS = {
    "link": parse_link,
    "net_health": parse_net_health,
    "netdetect": parse_netdetect,
    "gateway": parse_gateway,
    "tls": parse_tls,
    "vnic": parse_vnic,
}


def _device(probe: HostProbe, tool: str, device: int, a3: bool) -> DeviceFabric:
    values: dict[str, str | None] = {}
    errors: dict[str, str] = {}
    for key, flag in (*_QUERIES, ("vnic", "-vnic")) if a3 else _QUERIES:
        argv = [tool, "-i", str(device), flag, "-g"]
        result = probe.run(argv, timeout=HCCN_TIMEOUT)
        if not result.ok:
            errors[key] = result.reason(argv)
            continue
        text = result.stdout
        if key == "ip":
            values["ip"], values["netmask"] = parse_ip(text)
        else:
            values[key] = _PARSERS[key](text)
        if values.get(key) is None:
            errors[key] = f"`{' '.join(argv)}` printed nothing readable: {text.strip()[:120]!r}"
    return DeviceFabric(device, errors=errors, **values)


def _ping(probe: HostProbe, tool: str, local: int, target: PeerTarget) -> Ping:
    argv = [tool, "-i", str(local), f"-{target.kind}", "-g", "address", target.address]
    result = probe.run(argv, timeout=PING_TIMEOUT)
    counts = parse_ping(result.stdout)
    if counts is None:
        reason = result.reason(argv) if not result.ok else f"`{' '.join(argv)}` printed no packet count"
        return Ping(local, target.address, target.peer, None, None, reason, target.kind, target.device)
    return Ping(local, target.address, target.peer, counts[0], counts[1], kind=target.kind, peer_device=target.device)


def ping_plan(
    local: Sequence[int], targets: Sequence[PeerTarget], limit: int = MAX_PINGS_PER_KIND
) -> list[tuple[int, PeerTarget]]:
    """Which local device pings which peer address: every local device to every target, per kind at most `limit`
    pairs. Ordered by the distance from the same-index pair (local i → peer device i first, then i → i+1, …), so a
    bounded plan still has every local device ping and every peer device pinged."""
    if not local:
        return []
    order = {d: n for n, d in enumerate(local)}
    plan: list[tuple[int, PeerTarget]] = []
    for kind in dict.fromkeys(t.kind for t in targets):
        pairs = [(d, t) for t in targets if t.kind == kind for d in local]
        pairs.sort(key=lambda p: ((p[1].device - order[p[0]]) % len(local), p[1].peer, p[1].device))
        plan += pairs[:limit]
    return plan


def _spod(probe: HostProbe, tool: str | None, npu: int, chip: int) -> SpodInfo:
    if tool is None:
        return SpodInfo(npu, chip, error="npu-smi is not on PATH")
    argv = [tool, "info", "-t", "spod-info", "-i", str(npu), "-c", str(chip)]
    result = probe.run(argv, timeout=NPU_SMI_TIMEOUT)
    if not result.ok:
        return SpodInfo(npu, chip, error=result.reason(argv))
    values = parse_spod_info(result.stdout)
    if values["super_pod_id"] is None:
        return SpodInfo(npu, chip, error=f"`{' '.join(argv)}` printed no Super Pod ID: {result.stdout.strip()[:120]!r}")
    return SpodInfo(npu, chip, **values)


def read_spod_info(probe: HostProbe, chips: Sequence[tuple[int, int]]) -> tuple[SpodInfo, ...]:
    """Each (NPU id, chip id) `npu-smi info` listed, as the PD guide's A3 loop reads them."""
    tool = probe.which("npu-smi")
    return tuple(_spod(probe, tool, npu, chip) for npu, chip in chips)


def find_hccn_tool(probe: HostProbe) -> str | None:
    """`hccn_tool` on PATH, else where the driver installs it."""
    return probe.which("hccn_tool") or (HCCN_TOOL_PATH if probe.exists(HCCN_TOOL_PATH) else None)


def gather_fabric(
    probe: HostProbe,
    devices: Sequence[int],
    peers: Sequence[PeerTarget] = (),
    *,
    a3: bool = False,
    chips: Sequence[tuple[int, int]] = (),
) -> FabricFacts:
    """Read every device's NIC (on A3 its virtual address too) and ping the peers' devices from every local device
    (`ping_plan`); on A3 the superpod identity of each of `chips` (NPU id, chip id)."""
    spod = read_spod_info(probe, chips) if a3 else ()
    tool = find_hccn_tool(probe)
    if tool is None:
        return FabricFacts(None, spod=spod)
    read = tuple(_device(probe, tool, d, a3) for d in devices)
    local = [d.device for d in read]
    pings = tuple(_ping(probe, tool, d, t) for d, t in ping_plan(local, peers))
    pairs: dict[str, int] = {}
    for t in peers:
        pairs[t.kind] = pairs.get(t.kind, 0) + len(local)
    return FabricFacts(tool, read, pings, pairs, spod)
