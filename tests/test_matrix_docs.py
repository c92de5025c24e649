"""docs/compatibility.md and the JSON mirror are generated from the matrix; a stale copy fails here."""

from __future__ import annotations

from pathlib import Path

import pytest

from ascendctl.facts.matrix import load_matrix, release_for_pin
from ascendctl.outputs import matrix_docs
from ascendctl.outputs.matrix_docs import REGENERATE, expected_files, render_compatibility_md

REPO = Path(__file__).resolve().parents[1]


def test_checked_in_derived_files_are_fresh(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    for path, text in expected_files().items():
        current = path.read_text(encoding="utf-8") if path.exists() else ""
        assert current == text, f"{path} is stale: run `{REGENERATE}`"


def test_page_lists_every_release_with_its_pins() -> None:
    m = load_matrix()
    page = render_compatibility_md(m)
    for r in m.releases:
        assert f"| {r.version} |" in page
    v13 = release_for_pin(m, "npu", "v0.13.0")
    line = next(x for x in page.splitlines() if x.startswith("| v0.13.0 |"))
    assert f"| {v13.cann}¹ |" in line and "2.8.0.post2¹" in line  # disagreements are marked
    assert "- v0.18.0 `cann`: 8.5.0 per v0.18.0:README.md" in page
    assert "`release: latest-stable` means v0.23.0" in page


def test_check_mode_reports_a_stale_page(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(REPO)
    page = tmp_path / "compat.md"
    page.write_text("old\n")
    assert matrix_docs.main(["--check", "--path", str(page)]) == 1
    assert REGENERATE in capsys.readouterr().err
    assert page.read_text() == "old\n"
    assert matrix_docs.main(["--check", "--path", str(REPO / "docs" / "compatibility.md")]) == 0
