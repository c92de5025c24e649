"""Whether a deployment's engines read `/etc/hccn.conf` (the NPU NICs' addresses): the one answer the planner
(the renderers mount the file) and `check`'s `host.net.hccn-conf` rule share.

A module of its own, importing no profile model at run time, so that `check` on a host without a profile does not
load the profile schema.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ascendctl_engine.pd import SIZED

if TYPE_CHECKING:
    from ascendctl.schema.profile import Profile

HCCN_CONF_SOURCES = (
    'main:docs/source/installation.md "Verify Multi-Node Communication"; '
    "v0.25.1rc1:docs/source/tutorials/features/pd_disaggregation_mooncake_multi_node.md "
    '("Check NPU HCCN Configuration … If using Docker, mount it into the container")'
)


def hccn_conf_reason(profile: Profile) -> str | None:
    """Why this deployment's engines read `/etc/hccn.conf` (the NPU NICs' addresses), or None: HCCL across nodes,
    and Mooncake's transport between prefill and decode instances. The one answer `check` (rule
    `host.net.hccn-conf`) and the renderers (which mount it) share."""
    if profile.target.backend != "npu":
        return None
    if profile.target.nodes > 1:
        return f"HCCL connects {profile.target.nodes} nodes"
    spec = profile.disaggregation
    if spec is not None and spec.connector in SIZED:
        return "Mooncake moves KV between instances over the NPU NICs"
    return None
