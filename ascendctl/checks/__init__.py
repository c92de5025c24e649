"""Host checks: a registry of pure rules over (host facts, support matrix, optional profile).

Importing this package registers every rule (`RULES`); `run_check` (in `service`) probes the host and runs
them; `run_rules(ctx)` runs them on a context built by hand (tests, the planner).
"""

from __future__ import annotations

from ascendctl.checks import rules_cann, rules_engine, rules_host, rules_npu
from ascendctl.checks.context import CheckContext
from ascendctl.checks.registry import RULES, CheckResult, Rule, run_rules
from ascendctl.checks.report import CheckReport

_RULE_MODULES = (rules_npu, rules_cann, rules_engine, rules_host)

__all__ = ["RULES", "CheckContext", "CheckReport", "CheckResult", "Rule", "run_rules"]
