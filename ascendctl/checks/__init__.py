"""Host checks: the `host.*` rules over (host facts, support matrix, optional profile and its plan).

Importing this package registers every host rule in the one registry (`ascendctl.rules.RULES`); `run_check`
(in `service`) probes the host, plans the profile against the facts and applies the host and plan rules;
`host_findings(ctx)` applies the host rules to a context built by hand (tests).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ascendctl.checks import rules_ascend, rules_cann, rules_engine, rules_host, rules_npu, rules_secrets
from ascendctl.checks.context import CheckContext
from ascendctl.checks.report import CheckReport
from ascendctl.rules import Finding, Rule, evaluate

_RULE_MODULES = (rules_npu, rules_cann, rules_engine, rules_host, rules_secrets, rules_ascend)


def host_findings(ctx: CheckContext, rules: Mapping[str, Rule[Any]] | None = None) -> list[Finding]:
    return evaluate("host", ctx, rules)


__all__ = ["CheckContext", "CheckReport", "host_findings"]
