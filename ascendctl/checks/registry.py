"""The rule registry: each rule is a pure function of a `CheckContext` with an id, a severity and a title.

A rule returns an `Outcome`: `passed(message)`, `skipped(why)` or `problem(message, fix)`. A problem of an
`error` rule is a `fail`, of a `warn` rule a `warn`; a rule may report a problem at a lower severity than
its own (e.g. "engine not installed" is an error for a profile but only a warning for a bare host check).
A rule that raises becomes a `fail` with the reason: checking never crashes the command.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from ascendctl.checks.context import CheckContext

Severity = Literal["error", "warn", "info"]
Status = Literal["pass", "warn", "fail", "skip"]
_RANK: dict[Severity, int] = {"info": 0, "warn": 1, "error": 2}


@dataclass(frozen=True)
class Outcome:
    status: Literal["pass", "problem", "skip"]
    message: str
    fix: str | None = None
    severity: Severity | None = None  # a problem's severity when lower than the rule's


def passed(message: str) -> Outcome:
    return Outcome("pass", message)


def skipped(message: str) -> Outcome:
    return Outcome("skip", message)


def problem(message: str, fix: str, *, severity: Severity | None = None) -> Outcome:
    return Outcome("problem", message, fix, severity)


@dataclass(frozen=True)
class CheckResult:
    """One line of the report (the JSON `results[]` item: id, severity, status, message, fix, title)."""

    id: str
    severity: Severity
    status: Status
    message: str
    fix: str | None
    title: str

    def to_dict(self) -> dict[str, object]:
        return {
            "id": self.id,
            "severity": self.severity,
            "status": self.status,
            "title": self.title,
            "message": self.message,
            "fix": self.fix,
        }


RuleFn = Callable[["CheckContext"], Outcome]


@dataclass(frozen=True)
class Rule:
    id: str
    severity: Severity
    title: str
    fn: RuleFn

    def evaluate(self, ctx: CheckContext) -> CheckResult:
        try:
            out = self.fn(ctx)
        except Exception as exc:  # a rule bug must not crash `check`
            return CheckResult(
                self.id,
                "error",
                "fail",
                f"the check itself failed: {type(exc).__name__}: {exc}",
                "this is a bug in ascendctl; rerun with --debug and report it",
                self.title,
            )
        if out.status == "pass":
            return CheckResult(self.id, self.severity, "pass", out.message, None, self.title)
        if out.status == "skip":
            return CheckResult(self.id, self.severity, "skip", out.message, None, self.title)
        severity = self.severity
        if out.severity is not None and _RANK[out.severity] < _RANK[severity]:
            severity = out.severity
        status: Status = "fail" if severity == "error" else ("warn" if severity == "warn" else "pass")
        return CheckResult(self.id, severity, status, out.message, out.fix, self.title)


RULES: dict[str, Rule] = {}


def rule(rule_id: str, severity: Severity, title: str) -> Callable[[RuleFn], RuleFn]:
    """Register a rule function under `rule_id` (unique)."""

    def register(fn: RuleFn) -> RuleFn:
        if rule_id in RULES:
            raise ValueError(f"duplicate check rule id {rule_id!r}")
        RULES[rule_id] = Rule(rule_id, severity, title, fn)
        return fn

    return register


def run_rules(ctx: CheckContext, rules: dict[str, Rule] | None = None) -> list[CheckResult]:
    return [r.evaluate(ctx) for r in (RULES if rules is None else rules).values()]
