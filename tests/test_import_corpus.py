"""Every single-node `vllm serve` command of vllm-ascend's tutorials (tests/data/tutorial_commands.json) imported
and planned back: none crashes, an unreadable one is a clean located error, and docs/guides/import.md's coverage table
is the one this run computes (`python tests/import_corpus.py --write` rewrites it)."""

from __future__ import annotations

import pytest
from import_corpus import Outcome, coverage, doc_table, run_one, single_node_commands


@pytest.fixture(scope="module")
def outcomes() -> list[Outcome]:
    return [run_one(r) for r in single_node_commands()]


def test_every_command_imports_or_fails_cleanly(outcomes: list[Outcome]) -> None:
    assert len(outcomes) > 300
    for o in outcomes:
        if o.state == "unreadable":
            assert o.detail and "Traceback" not in o.detail, o


def test_most_tutorial_commands_are_reproduced(outcomes: list[Outcome]) -> None:
    reproduced = sum(1 for o in outcomes if o.state == "reproduced")
    # a ratchet: the share the importer reproduced when this test was written (raise it as the importer grows)
    assert reproduced / len(outcomes) >= 0.9, reproduced


def test_the_import_guide_states_this_coverage(outcomes: list[Outcome]) -> None:
    rows = coverage(outcomes)
    print("\n" + "\n".join(rows))
    assert doc_table() == rows, "docs/guides/import.md coverage is stale: run `python tests/import_corpus.py --write`"
