"""Per-release model support: every release × model family of the extracts is judged by that release's own
table — the verdict equals the row's status — and a newer release's table never decides an older release."""

from __future__ import annotations

import pytest

from ascendctl.facts import upstream
from ascendctl.facts.matrix import load_matrix, release_for_pin
from ascendctl.facts.matrix.explainer import explain
from ascendctl.facts.matrix.model_tables import _model_status, family_rows, hardware_status, judge, row_hardware
from ascendctl_engine.versions import parse as parse_version

MATRIX = load_matrix()
TAGS = upstream.extract_tags()


@pytest.mark.parametrize("tag", TAGS)
def test_every_listed_family_gets_its_rows_status(tag: str) -> None:
    release = release_for_pin(MATRIX, "npu", tag)
    table = upstream.model_table(tag)
    assert table is not None
    checked = 0
    for fam in MATRIX.models:
        first: dict[str, str] = {}
        for row in family_rows(fam, table, MATRIX):  # the first row naming the family on a hardware decides
            for hw in row_hardware(row, release, MATRIX):
                first.setdefault(hw, hardware_status(row, hw))
        for hw, expected in first.items():
            status, reasons = _model_status(MATRIX, fam, release, hw)
            if fam.first_release and release.key < parse_version(fam.first_release):
                assert status == "unsupported"  # a recorded first release (knowledge) is earlier than this tag
                continue
            assert status == expected, (tag, fam.id, hw, reasons)
            assert reasons[0].reference.startswith(f"{tag}:"), reasons[0].reference
            checked += 1
    assert checked > 0


def test_a_family_a_table_does_not_list_is_absent_with_the_table_named() -> None:
    rel = release_for_pin(MATRIX, "npu", "v0.7.3")
    fam = next(f for f in MATRIX.models if f.id == "glm-5")
    status, reasons = _model_status(MATRIX, fam, rel, "a2")
    assert status == "absent"
    assert "v0.7.3's table" in reasons[0].message


def test_a_newer_table_never_decides_an_older_release() -> None:
    # DeepSeek V3.2 is supported in v0.23.0's table and experimental in v0.25.1rc1's.
    fam = next(f for f in MATRIX.models if f.id == "deepseek-v3.2")
    old = judge(MATRIX, fam, release_for_pin(MATRIX, "npu", "v0.23.0"), "a3")
    new = judge(MATRIX, fam, release_for_pin(MATRIX, "npu", "v0.25.1rc1"), "a3")
    assert (old.table_tag, old.status) == ("v0.23.0", "supported")
    assert (new.table_tag, new.status) == ("v0.25.1rc1", "experimental")
    v = explain(MATRIX, model="DeepSeek-V3.2", hardware="a3", release="v0.25.1rc1")
    assert v.supported and any("experimental" in r.message and "v0.25.1rc1's table" in r.message for r in v.reasons)


def test_gemma4_is_a_family_from_v0_24_0rc1() -> None:
    fam = next(f for f in MATRIX.models if f.id == "gemma4")
    assert judge(MATRIX, fam, release_for_pin(MATRIX, "npu", "v0.24.0rc1"), "a2").status == "experimental"
    assert judge(MATRIX, fam, release_for_pin(MATRIX, "npu", "v0.23.0"), "a2").status == "absent"


def test_the_overview_comes_from_the_newest_final_release() -> None:
    assert MATRIX.model_overview.startswith("v0.23.0.post1:")
    minimax = next(f for f in MATRIX.models if f.id == "minimax-m2")
    assert {tuple(s.hardware): s.status for s in minimax.support} == {
        ("a2", "a3"): "supported",
        ("950",): "experimental",  # "A2/A3/Ascend950 (Ascend950 experimental)"
    }


def test_plan_json_names_the_table_row_that_judged_the_model() -> None:
    from pathlib import Path

    from ascendctl.plan.planner import plan_profile
    from ascendctl.schema.loader import load_profile

    profile = load_profile(Path(__file__).resolve().parents[1] / "profiles" / "qwen3-32b-w8a8-a2.yaml")
    for release in ("v0.23.0", "v0.13.0"):
        model = plan_profile(profile, release=release).to_json()["model"]
        assert model["support_table"].startswith(f"{release}:docs/source/user_guide/"), model
