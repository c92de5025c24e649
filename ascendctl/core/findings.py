"""The one rule registry and the one finding type, for every rule ascendctl applies.

Three scopes share it, told apart by the first part of the rule id:

- `profile.*` — cross-field rules of a profile alone (no matrix, no host); a failing one stops loading with
  the offending key's `file:line` (`ascendctl/schema/profile_rules.py`);
- `plan.*` — rules over the resolved plan and the model's config.json (`ascendctl/plan/plan_rules.py`);
- `host.*` — rules over the probed host facts, the matrix and an optional profile (`ascendctl/check/`).

A rule is a pure function of its scope's input returning one `Outcome`: `passed(message)`,
`skipped(why)` (the rule does not apply), `undecided(why)` (it applies but lacks an input, e.g. a hub
model's config.json) or `problem(message, fix)`. Evaluating it gives a `Finding` (id, severity, status,
message, fix, source), the shape `check --json` and `plan --json` print. A rule that raises becomes a
failing finding that names the bug: applying rules never crashes a command.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, Literal, TypeVar, get_args

from ascendctl.core.yamlio import KeyPath

Scope = Literal["profile", "plan", "host"]
Severity = Literal["error", "warn", "info"]
Status = Literal["pass", "warn", "fail", "skip"]
_RANK: dict[Severity, int] = {"info": 0, "warn": 1, "error": 2}
_ID = re.compile(r"^(?:" + "|".join(get_args(Scope)) + r")(?:\.[a-z0-9]+(?:-[a-z0-9]+)*)+$")

Ctx = TypeVar("Ctx")


@dataclass(frozen=True)
class Outcome:
    """What a rule function returns; the registry turns it into a `Finding`."""

    kind: Literal["pass", "problem", "skip", "undecided"]
    message: str
    fix: str | None = None
    severity: Severity | None = None  # a problem's severity when lower than the rule's
    at: KeyPath | None = None  # the profile key the problem is about (profile rules point at it)


def passed(message: str) -> Outcome:
    return Outcome("pass", message)


def skipped(why: str) -> Outcome:
    """The rule does not apply (a CPU host for an NPU rule, EPLB off for an EPLB rule)."""
    return Outcome("skip", why)


def undecided(why: str) -> Outcome:
    """The rule applies but could not decide (an input it needs is missing): shown, never blocking."""
    return Outcome("undecided", why)


def problem(message: str, fix: str | None = None, *, severity: Severity | None = None, at: KeyPath = ()) -> Outcome:
    return Outcome("problem", message, fix, severity, at or None)


@dataclass(frozen=True)
class Finding:
    """One applied rule: the item of `check --json` `results[]` and `plan --json` `findings[]`."""

    id: str
    severity: Severity
    status: Status
    title: str
    message: str
    fix: str | None = None
    source: str = ""  # where the rule's fact comes from (a reference file, a tag:path:line)
    at: KeyPath | None = None
    undecided: bool = False  # a skip because an input was missing (not because the rule does not apply)

    @property
    def scope(self) -> str:
        return self.id.split(".", 1)[0]

    @property
    def notable(self) -> bool:
        """Worth showing in a plan: a warning, a failure, or a rule that applied but could not decide."""
        return self.status in ("warn", "fail") or self.undecided

    def to_dict(self) -> dict[str, object]:
        return {
            "id": self.id,
            "severity": self.severity,
            "status": self.status,
            "title": self.title,
            "message": self.message,
            "fix": self.fix,
            "source": self.source,
        }


@dataclass(frozen=True)
class Rule(Generic[Ctx]):
    id: str
    severity: Severity
    title: str
    source: str
    fn: Callable[[Ctx], Outcome]

    @property
    def scope(self) -> str:
        return self.id.split(".", 1)[0]

    def evaluate(self, ctx: Ctx) -> Finding:
        try:
            out = self.fn(ctx)
        except Exception as exc:  # a rule bug must not crash the command
            return Finding(
                self.id,
                "error",
                "fail",
                self.title,
                f"the rule itself failed: {type(exc).__name__}: {exc}",
                "this is a bug in ascendctl; rerun with --debug and report it",
                self.source,
            )
        if out.kind in ("pass", "skip", "undecided"):
            status: Status = "pass" if out.kind == "pass" else "skip"
            return Finding(
                self.id, self.severity, status, self.title, out.message, None, self.source,
                undecided=out.kind == "undecided",
            )  # fmt: skip
        severity = self.severity
        if out.severity is not None and _RANK[out.severity] < _RANK[severity]:
            severity = out.severity
        status = "fail" if severity == "error" else ("warn" if severity == "warn" else "pass")
        return Finding(self.id, severity, status, self.title, out.message, out.fix, self.source, out.at)


RULES: dict[str, Rule[Any]] = {}


def rule(
    rule_id: str, severity: Severity, title: str, *, source: str = ""
) -> Callable[[Callable[[Ctx], Outcome]], Callable[[Ctx], Outcome]]:
    """Register a rule function under `rule_id` (`profile.*`, `plan.*` or `host.*`, unique)."""
    if not _ID.match(rule_id):
        raise ValueError(f"rule id {rule_id!r} is not <scope>.<dotted-kebab-name> with scope in {get_args(Scope)}")

    def register(fn: Callable[[Ctx], Outcome]) -> Callable[[Ctx], Outcome]:
        if rule_id in RULES:
            raise ValueError(f"duplicate rule id {rule_id!r}")
        RULES[rule_id] = Rule(rule_id, severity, title, source, fn)
        return fn

    return register


def rules_of(scope: Scope) -> dict[str, Rule[Any]]:
    """The registered rules of one scope, in registration order (import the scope's module first)."""
    return {rid: r for rid, r in RULES.items() if r.scope == scope}


def evaluate(scope: Scope, ctx: object, rules: Mapping[str, Rule[Any]] | None = None) -> list[Finding]:
    """Apply every rule of `scope` (or the given rules) to `ctx`."""
    chosen: Iterable[Rule[Any]] = (rules if rules is not None else rules_of(scope)).values()
    return [r.evaluate(ctx) for r in chosen]


__all__ = [
    "RULES",
    "Finding",
    "Outcome",
    "Rule",
    "Scope",
    "Severity",
    "Status",
    "evaluate",
    "passed",
    "problem",
    "rule",
    "rules_of",
    "skipped",
    "undecided",
]
