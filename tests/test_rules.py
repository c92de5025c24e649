"""The one rule registry: every rule of every scope in it, one id scheme, one finding type, no second system."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import ascendctl.check
import ascendctl.plan.plan_rules
import ascendctl.schema.profile_rules  # noqa: F401
from ascendctl.core.findings import RULES, Finding, Rule, evaluate, passed, problem, rule, rules_of, skipped, undecided

REPO = Path(__file__).resolve().parents[1]


def test_every_scope_has_rules_and_ids_follow_the_scheme() -> None:
    for scope in ("profile", "plan", "host"):
        assert len(rules_of(scope)) >= 8, scope  # type: ignore[arg-type]
    for rule_id, r in RULES.items():
        assert r.id == rule_id and r.scope in ("profile", "plan", "host")
        assert r.title and r.severity in ("error", "warn", "info")


@pytest.mark.parametrize("bad", ["npu.driver", "host", "host.Caps", "plan.x_y", "lint.x", "host..x"])
def test_an_id_outside_the_scheme_is_refused(bad: str) -> None:
    with pytest.raises(ValueError, match="not <scope>"):
        rule(bad, "warn", "t")


def test_a_duplicate_id_is_refused() -> None:
    with pytest.raises(ValueError, match="duplicate"):
        rule("plan.matrix", "error", "again")(lambda ctx: passed("x"))


def test_outcomes_become_findings() -> None:
    def make(outcome_fn):  # type: ignore[no-untyped-def]
        return Rule("plan.t", "warn", "title", "src", outcome_fn)

    ok = make(lambda c: passed("fine")).evaluate(None)
    assert (ok.status, ok.fix, ok.source, ok.notable) == ("pass", None, "src", False)
    na = make(lambda c: skipped("n/a")).evaluate(None)
    assert (na.status, na.undecided, na.notable) == ("skip", False, False)
    unknown = make(lambda c: undecided("no config")).evaluate(None)
    assert (unknown.status, unknown.undecided, unknown.notable) == ("skip", True, True)
    bad = make(lambda c: problem("m", "f", at=("model", "dtype"))).evaluate(None)
    assert (bad.status, bad.fix, bad.at, bad.notable) == ("warn", "f", ("model", "dtype"), True)
    assert set(bad.to_dict()) == {"id", "severity", "status", "title", "message", "fix", "source", "clause"}


def test_evaluate_runs_one_scope_only() -> None:
    from ascendctl.schema.profile import Profile

    profile = Profile.model_validate(
        {
            "apiVersion": "ascendctl/v1",
            "kind": "Profile",
            "metadata": {"name": "x"},
            "model": {"source": "m"},
            "target": {"backend": "cpu"},
        }
    )
    found = evaluate("profile", profile)
    assert found and all(isinstance(f, Finding) and f.id.startswith("profile.") for f in found)
    assert {f.status for f in found} <= {"pass", "skip"}


def _classes_and_functions(root: Path) -> set[str]:
    names: set[str] = set()
    for path in root.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.ClassDef, ast.FunctionDef)):
                names.add(node.name)
    return names


def test_no_second_rule_system_remains() -> None:
    # the three former systems (profile cross-field problems, plan lint, check results) are gone
    names = _classes_and_functions(REPO / "ascendctl") | _classes_and_functions(REPO / "engine")
    assert not names & {"LintFinding", "LintInput", "CheckResult", "cross_field_problems", "run_rules", "lint"}
    assert not (REPO / "ascendctl" / "plan_lint.py").exists()
    assert not (REPO / "ascendctl" / "profile_rules.py").exists()
    assert not (REPO / "ascendctl" / "checks" / "registry.py").exists()


def _calls_without_fix(name: str, fix_position: int) -> list[str]:
    """`name(...)` calls in ascendctl/ that give no fix (neither positional at `fix_position` nor `fix=`, nor None)."""
    out = []
    for path in sorted((REPO / "ascendctl").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == name):
                continue
            given = [k.value for k in node.keywords if k.arg == "fix"]
            if len(node.args) > fix_position:
                given.append(node.args[fix_position])
            if not given or all(isinstance(g, ast.Constant) and g.value is None for g in given):
                out.append(f"{path.relative_to(REPO)}:{node.lineno}")
    return out


def test_every_failing_outcome_says_how_to_fix_it() -> None:
    """Every problem a rule can report (`problem(message, fix)`, a plan verdict's `Broken(..., fix)`) carries the fix an
    operator applies — read from the source, so a new rule without one fails here, whatever input reaches it."""
    assert _calls_without_fix("problem", 1) == []
    assert _calls_without_fix("Broken", 4) == []
