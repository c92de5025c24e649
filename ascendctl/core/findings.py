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

A rule that checks many constraints of one kind (the matrix's feature constraints, the release's refusals per
topic) returns a list of `Each` instead: one finding per broken constraint, with the id `<rule id>.<key>`, so
an operator can accept exactly that one (`allow: [ids]`, `allowed()`); no broken constraint is one passing
finding under the rule's id. A rule registered `allowable=False` guarantees a failed start when it fails (the
release's parser rejects an argument): no `allow` accepts it.

The refusal policy (docs/refusal-policy.md): a finding fails (refuses: exit 2) only with one of three clauses,
which it names — `engine-start` (the release's engine would reject it at start: never allowable), `placement` (it
cannot be laid out on the hardware: devices, nodes, ports, memory) or `known-failure` (upstream evidence, an issue,
a PR or a code path, shows it failing at that tag). A rule declares the clause of its failures (`rule(clause=…)`),
a problem may name its own (`problem(clause=…)`); a failing problem with no clause is a warning: what the engine
ignores, or what only a document claims, warns with its source.

**Advice** (`advise(message, fix)`, status `advice`) is neither a pass nor a problem: what upstream evidence suggests
the profile add (`plan.recipe.*`: what the closest verified launch sets that the profile does not). It is printed
under its own heading, never fails a plan or `check --strict`, and is never applied. A rule registered
`on_demand=True` is applied only where a command asks for it (`findings_of`), never by `evaluate(scope)`: its input
costs more than a plan's (the recipe rule imports an upstream launch, which plans it).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Generic, Literal, TypeVar, get_args

from ascendctl.core.yamlio import KeyPath
from ascendctl_engine.records import record
from ascendctl_engine.vocab import Clause

Scope = Literal["profile", "plan", "host"]
Severity = Literal["error", "warn", "info"]
CLAUSES: tuple[Clause, ...] = get_args(Clause)
Status = Literal["pass", "warn", "fail", "skip", "advice"]
_RANK: dict[Severity, int] = {"info": 0, "warn": 1, "error": 2}
_ID = re.compile(r"^(?:" + "|".join(get_args(Scope)) + r")(?:\.[a-z0-9]+(?:-[a-z0-9]+)*)+$")

Ctx = TypeVar("Ctx")


@record
class Outcome:
    """What a rule function returns; the registry turns it into a `Finding`."""

    kind: Literal["pass", "problem", "skip", "undecided", "advice"]
    message: str
    fix: str | None = None
    severity: Severity | None = None  # a problem's severity when lower than the rule's
    at: KeyPath | None = None  # the profile key the problem is about (profile rules point at it)
    clause: Clause | None = None  # why it may refuse, when not the rule's own clause


def passed(message: str) -> Outcome:
    return Outcome("pass", message)


def skipped(why: str) -> Outcome:
    """The rule does not apply (a CPU host for an NPU rule, EPLB off for an EPLB rule)."""
    return Outcome("skip", why)


def undecided(why: str) -> Outcome:
    """The rule applies but could not decide (an input it needs is missing): shown, never blocking."""
    return Outcome("undecided", why)


def advise(message: str, fix: str, *, at: KeyPath = ()) -> Outcome:
    """What upstream evidence suggests the profile add (`fix`: the profile line that says it); never applied."""
    return Outcome("advice", message, fix, "info", at or None)


def problem(
    message: str,
    fix: str | None = None,
    *,
    severity: Severity | None = None,
    at: KeyPath = (),
    clause: Clause | None = None,
) -> Outcome:
    return Outcome("problem", message, fix, severity, at or None, clause)


@record
class Each:
    """One constraint of a rule that checks many: its finding's id is the rule's id + "." + `key`."""

    key: str  # kebab-case, e.g. a matrix feature combination `quant-w4a8-and-eplb`
    outcome: Outcome
    source: str | None = None  # the constraint's own reference (default: the rule's)


@record
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
    clause: Clause | None = None  # a failure's clause of the refusal policy (None for anything that does not fail)

    @property
    def scope(self) -> str:
        return self.id.split(".", 1)[0]

    @property
    def notable(self) -> bool:
        """Worth showing in a plan: a warning, a failure, or a rule that applied but could not decide."""
        return self.status in ("warn", "fail") or self.undecided

    @property
    def advice(self) -> bool:
        return self.status == "advice"

    def to_dict(self) -> dict[str, object]:
        return {
            "id": self.id,
            "severity": self.severity,
            "status": self.status,
            "title": self.title,
            "message": self.message,
            "fix": self.fix,
            "source": self.source,
            "clause": self.clause,
        }


@record
class Rule(Generic[Ctx]):
    id: str
    severity: Severity
    title: str
    source: str
    fn: Callable[[Ctx], Outcome | list[Each]]
    allowable: bool = True  # False: failing guarantees a failed start, no `allow` accepts it
    clause: Clause | None = None  # the clause its failures refuse with (a problem may name another)
    on_demand: bool = False  # applied only where a command asks (`findings_of`), never by `evaluate(scope)`

    @property
    def scope(self) -> str:
        return self.id.split(".", 1)[0]

    def evaluate(self, ctx: Ctx) -> Finding:
        """The rule's one finding (the first, for a rule that checks many)."""
        return self.findings(ctx)[0]

    def findings(self, ctx: Ctx) -> list[Finding]:
        try:
            out = self.fn(ctx)
        except Exception as exc:  # a rule bug must not crash the command
            return [
                Finding(
                    self.id,
                    "error",
                    "fail",
                    self.title,
                    f"the rule itself failed: {type(exc).__name__}: {exc}",
                    "this is a bug in ascendctl; rerun with --debug and report it",
                    self.source,
                )
            ]
        if isinstance(out, Outcome):
            return [self._finding(self.id, out, self.source)]
        if not out:
            return [self._finding(self.id, passed("no broken constraint"), self.source)]
        return [self._finding(f"{self.id}.{e.key}", e.outcome, e.source or self.source) for e in out]

    def _finding(self, finding_id: str, out: Outcome, source: str) -> Finding:
        if out.kind == "advice":
            return Finding(finding_id, "info", "advice", self.title, out.message, out.fix, source, out.at)
        if out.kind in ("pass", "skip", "undecided"):
            status: Status = "pass" if out.kind == "pass" else "skip"
            return Finding(
                finding_id, self.severity, status, self.title, out.message, None, source,
                undecided=out.kind == "undecided",
            )  # fmt: skip
        severity = self.severity
        if out.severity is not None and _RANK[out.severity] < _RANK[severity]:
            severity = out.severity
        clause = out.clause or self.clause
        if severity == "error" and clause is None and self.scope == "plan":
            severity = (
                "warn"  # the policy: a plan refuses only with a clause (profile and host rules judge their input)
            )
        status = "fail" if severity == "error" else ("warn" if severity == "warn" else "pass")
        return Finding(
            finding_id, severity, status, self.title, out.message, out.fix, source, out.at,
            clause=clause if status == "fail" else None,
        )  # fmt: skip


RULES: dict[str, Rule[Any]] = {}


RuleFn = TypeVar("RuleFn", bound=Callable[..., "Outcome | list[Each]"])


def rule(
    rule_id: str,
    severity: Severity,
    title: str,
    *,
    source: str = "",
    allowable: bool = True,
    clause: Clause | None = None,
    on_demand: bool = False,
) -> Callable[[RuleFn], RuleFn]:
    """Register a rule function under `rule_id` (`profile.*`, `plan.*` or `host.*`, unique). `clause`: the policy
    clause its failures refuse with; an `engine-start` rule is never allowable."""
    if not _ID.match(rule_id):
        raise ValueError(f"rule id {rule_id!r} is not <scope>.<dotted-kebab-name> with scope in {get_args(Scope)}")

    def register(fn: RuleFn) -> RuleFn:
        if rule_id in RULES:
            raise ValueError(f"duplicate rule id {rule_id!r}")
        allowed = allowable and clause != "engine-start"
        RULES[rule_id] = Rule(rule_id, severity, title, source, fn, allowed, clause, on_demand)
        return fn

    return register


def rule_of(finding_id: str) -> Rule[Any] | None:
    """The registered rule a finding id belongs to: the id itself, or the rule it is one constraint of."""
    parts = finding_id.split(".")
    for n in range(len(parts), 1, -1):
        found = RULES.get(".".join(parts[:n]))
        if found is not None:
            return found
    return None


def is_id(text: str) -> bool:
    """Whether `text` is spelled like a finding id (`<scope>.<dotted-kebab-name>`)."""
    return _ID.match(text) is not None


def covers(allow_id: str, finding_id: str) -> bool:
    """Whether one `allow` entry names this finding: its id, or the id of a rule or constraint group it is in."""
    return finding_id == allow_id or finding_id.startswith(allow_id + ".")


def accepts(allow: Iterable[str], finding_id: str, clause: Clause | None = None) -> bool:
    """Whether an `allow` list accepts this finding: its id, or the id of a rule (or constraint group) it
    belongs to (`plan.matrix.combination` accepts every broken combination). Never an unallowable rule's, never
    an `engine-start` failure (the engine would not start whatever the profile accepts)."""
    owner = rule_of(finding_id)
    if clause == "engine-start" or (owner is not None and not owner.allowable):
        return False
    return any(covers(a, finding_id) for a in allow)


def kebab(text: str) -> str:
    """A constraint key from free text: lower case, runs of other characters as one `-`."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "unnamed"


def rules_of(scope: Scope) -> dict[str, Rule[Any]]:
    """The registered rules of one scope, in registration order (import the scope's module first)."""
    return {rid: r for rid, r in RULES.items() if r.scope == scope}


def evaluate(scope: Scope, ctx: object, rules: Mapping[str, Rule[Any]] | None = None) -> list[Finding]:
    """Apply every rule of `scope` (or the given rules) to `ctx`."""
    chosen: Iterable[Rule[Any]] = (rules if rules is not None else rules_of(scope)).values()
    return [f for r in chosen if not r.on_demand for f in r.findings(ctx)]


def findings_of(rule_id: str, ctx: object) -> list[Finding]:
    """One registered rule applied to `ctx` (an `on_demand` rule's caller asks for it by id)."""
    return RULES[rule_id].findings(ctx)


__all__ = [
    "CLAUSES",
    "RULES",
    "Clause",
    "Each",
    "Finding",
    "Outcome",
    "Rule",
    "Scope",
    "Severity",
    "Status",
    "accepts",
    "advise",
    "covers",
    "evaluate",
    "findings_of",
    "is_id",
    "kebab",
    "passed",
    "problem",
    "rule",
    "rule_of",
    "rules_of",
    "skipped",
    "undecided",
]
