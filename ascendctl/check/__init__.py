"""Host checks: the `host.*` rules over (host facts, support matrix, optional profile and its plan).

Importing this package registers every host rule in the one registry (`ascendctl.core.findings.RULES`); `run_check`
(in `service`) loads the profile, probes the host, plans the profile against the facts and applies the host and
plan rules (`host_check.check_host` does the host part, and all of a check without a profile);
`host_findings(ctx)` applies the host rules to a context built by hand (tests). The rule modules are
`host_*` (one per area: npu, cann, engine environment, system, secrets, ascend env, the multi-node fabric,
the lock).

May import: `ascendctl.plan`, `ascendctl.facts`, `ascendctl.schema`, `ascendctl.core` and `ascendctl_engine`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ascendctl.check import (
    host_ascend,
    host_cann,
    host_engine,
    host_fabric,
    host_lock,
    host_npu,
    host_secrets,
    host_system,
)
from ascendctl.check.context import CheckContext
from ascendctl.check.report import CheckReport
from ascendctl.core.findings import Finding, Rule, evaluate

_RULE_MODULES = (host_npu, host_cann, host_engine, host_system, host_secrets, host_ascend, host_fabric, host_lock)


def host_findings(ctx: CheckContext, rules: Mapping[str, Rule[Any]] | None = None) -> list[Finding]:
    return evaluate("host", ctx, rules)


__all__ = ["CheckContext", "CheckReport", "host_findings"]
