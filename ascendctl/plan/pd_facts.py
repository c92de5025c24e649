"""What the `plan.pd.*` rules see of a prefill/decode deployment as a whole (`ascendctl.plan.pd_rules`); every
instance's `PlanFacts` carries the same `PdFacts`."""

from __future__ import annotations

from collections.abc import Mapping

from ascendctl.schema.instances import Placement
from ascendctl.schema.profile import Profile
from ascendctl_engine.records import record


@record
class PdFacts:
    """The whole layout: each instance's placement and the profile it is planned from, the router's port."""

    connector: str
    placements: tuple[Placement, ...]
    profiles: Mapping[str, Profile]  # instance name → its profile
    router_port: int
    devices_per_node: int
    hybrid: bool  # the model mixes attention with linear-attention / SSM layers
    router_metrics_port: int | None = None  # where the release's router serves metrics; None: it serves none
    router_metrics_asked: int | None = None  # `disaggregation.router.metrics_port` as the profile sets it
    # how the release's router treats API keys where it checks none from clients (its `pd-router` era's `auth`);
    # None: the plan runs no router, or one that checks them
    router_auth: str | None = None
