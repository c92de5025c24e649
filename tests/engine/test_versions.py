"""One module owns version parsing and the CANN match rule; every consumer gives the same answer."""

from __future__ import annotations

from ascendctl.check.matrix_view import fit_rows
from ascendctl.facts.matrix import compatible_releases, load_matrix, release_for_pin
from ascendctl_engine.host.facts import HostFacts
from ascendctl_engine.versions import cann_below, cann_matches, parse, parse_or_none, same_release, strip_v


def test_parsing() -> None:
    assert parse("v0.13.0rc1") == parse("0.13.0rc1") and strip_v("v0.9.1") == "0.9.1"
    assert parse_or_none("8.3.RC2") is not None and parse_or_none("not a version") is None
    assert same_release("0.32.0+cpu", "0.32.0") and not same_release("2.7.1", "2.7.1.post1")
    assert cann_below("8.3.RC1", "8.5.0") is True and cann_below(None, "8.5.0") is None
    assert cann_below("8.5.RC1", "8.5.0") is True and cann_below("25.5.1", "25.5.1") is False


def test_the_cann_rule() -> None:
    assert cann_matches(["8.3.RC2"], "8.3.rc2")  # spelling
    assert cann_matches(["9.1.0-beta"], "9.1.0-beta.1")  # a build suffix of the same release
    assert not cann_matches(["9.1.0"], "9.1.1")  # another patch is another release
    assert not cann_matches(["8.3.RC1"], "8.3.RC2")
    assert cann_matches([None, "8.3.RC2"], "8.3.RC2")


def test_matrix_views_and_check_agree_on_cann() -> None:
    m = load_matrix()
    v23 = release_for_pin(m, "npu", "v0.23.0")  # CANN 9.1.0 (the policy row's 9.0.1 is its alternative)
    for host_cann, fits in (("9.1.0", True), ("9.0.1", True), ("9.1.1", False)):
        listed = v23 in compatible_releases(m, cann=host_cann, backend="npu")
        facts = HostFacts.from_dict({"backend": "npu", "hardware": {"family": "a2"}, "cann": {"version": host_cann}})
        row_fit = next(f for f in fit_rows(m, facts, "npu") if f.release.version == "v0.23.0")
        checked = not any("CANN" in p for p in row_fit.host_changes)
        assert listed is fits and checked is fits, (host_cann, listed, checked)


def test_plan_reports_the_same_row_fit() -> None:
    from pathlib import Path

    from ascendctl.plan.planner import plan_profile
    from ascendctl.schema.loader import load_profile

    profile = load_profile(Path(__file__).resolve().parents[2] / "profiles" / "qwen3-32b-w8a8-a2.yaml")
    facts = HostFacts.from_dict({"backend": "npu", "hardware": {"family": "a2"}, "cann": {"version": "9.1.1"}})
    plan = plan_profile(profile, host=facts, release="v0.23.0")
    assert any(w.startswith("host: needs CANN 9.1.0, host has 9.1.1") for w in plan.warnings)
    ok = HostFacts.from_dict({"backend": "npu", "hardware": {"family": "a2"}, "cann": {"version": "9.1.0"}})
    assert not any(w.startswith("host: needs CANN") for w in plan_profile(profile, host=ok, release="v0.23.0").warnings)


def test_no_hard_coded_version_boundary_outside_the_eras() -> None:
    """`if version < "X"` lives in the era registry (engine/ascendctl_engine/adapters/) or here, nowhere else."""
    import ast
    from pathlib import Path

    repo = Path(__file__).resolve().parents[2]
    parsers = {"parse", "parse_version", "parse_or_none", "Version", "version_of", "below"}
    found = []
    for path in [*(repo / "ascendctl").rglob("*.py"), *(repo / "engine").rglob("*.py")]:
        rel = path.relative_to(repo).as_posix()
        if rel.startswith("engine/ascendctl_engine/adapters/") or rel == "engine/ascendctl_engine/versions.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            calls = [node] if isinstance(node, ast.Call) else []
            for call in calls:
                name = call.func.id if isinstance(call.func, ast.Name) else getattr(call.func, "attr", "")
                literal = [a for a in call.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
                if name in parsers and literal and any(ch.isdigit() for ch in literal[-1].value):
                    found.append(f"{rel}:{call.lineno} {name}({literal[-1].value!r})")
    assert not found, found
