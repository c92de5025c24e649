"""The generated list of rule ids and diagnosis entries (docs/reference/rules.md) is complete and current."""

from __future__ import annotations

from pathlib import Path

import pytest

from ascendctl.core.findings import RULES
from ascendctl.outputs import rules_doc
from ascendctl_engine.phases import catalog

PAGE = Path(__file__).resolve().parents[1] / rules_doc.PATH


def test_the_page_is_current() -> None:
    text = PAGE.read_text(encoding="utf-8")
    assert rules_doc.replace_section(text, rules_doc.section()) == text, (
        "run python -m ascendctl.outputs.rules_doc --write"
    )


def test_every_rule_and_catalog_entry_is_listed() -> None:
    lines = "\n".join(rules_doc.section())
    assert RULES and all(f"| `{rule_id}` |" in lines for rule_id in RULES)
    assert all(f"| `{entry.key}` |" in lines for entry in catalog())


def test_check_reports_a_stale_page(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    stale = PAGE.read_text(encoding="utf-8").replace("| `host.npu.driver` |", "| `host.npu.gone` |")
    (tmp_path / rules_doc.PATH).parent.mkdir(parents=True)
    (tmp_path / rules_doc.PATH).write_text(stale, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert rules_doc.main(["--check"]) == 1
    assert rules_doc.main(["--write"]) == 0
    assert rules_doc.main(["--check"]) == 0
