"""What `check PROFILE --fabric` asked for and what the `host.fabric.*` rules read, as plain records.

The gathering (the peers' files, this node's NPU NICs, the port plan's share of this node) is
`ascendctl.check.fabric`, which the profile path of `check` imports; the rules import only these records, so a
check without a profile loads no planning code.
"""

from __future__ import annotations

from pathlib import Path

from ascendctl_engine.host.facts import PortStatus
from ascendctl_engine.host.hccn import FabricFacts
from ascendctl_engine.records import record


@record
class FabricRequest:
    """What the CLI asked for: which profile node this host is, and the peers' facts files."""

    node: int = 0
    peer_facts: tuple[Path, ...] = ()


@record
class PeerDevice:
    device: int
    ip: str | None
    tls: str | None
    vnic: str | None = None  # A3: its virtual NPU address (the superpod ping's target)


@record
class PeerFacts:
    """One other node's `check --fabric --json` `fabric` section, as far as the rules use it."""

    source: str  # the file it was read from
    node: int | None
    devices: tuple[PeerDevice, ...]
    interface: str | None
    interface_present: bool | None
    spod: tuple[tuple[str | None, str | None], ...] = ()  # A3: each chip's (Super Pod ID, SDID)


@record
class FabricView:
    """The input of the `host.fabric.*` rules."""

    node: int
    devices: tuple[int, ...]  # the device indices checked: 0 … target.devices_per_node - 1
    facts: FabricFacts
    peers: tuple[PeerFacts, ...] = ()
    hccn_conf: dict[int, dict[str, str]] | None = None  # None: /etc/hccn.conf missing (host.net.hccn-conf says so)
    interface: str | None = None  # the NIC the plan names for this node
    interface_present: bool | None = None  # None: this host's NICs could not be listed
    ports: tuple[PortStatus, ...] = ()
    a3: bool = False  # A3 nodes: the virtual NPU addresses and the superpod (HCCS) ping are checked too

    def to_dict(self) -> dict[str, object]:
        """The `fabric` section of `check --fabric --json` (what `--peer-facts` reads on the other nodes)."""
        return {
            "node": self.node,
            **self.facts.to_dict(),
            "interface": self.interface,
            "interface_present": self.interface_present,
            "ports": [p.to_dict() for p in self.ports],
            "peers": [p.source for p in self.peers],
        }
