"""Every launch upstream's CI runs on hardware, imported and planned back (`tests/launch_corpus.py`): the newest two
release lines here (about 8 s), every line with `make corpus`, whose table docs/guides/import.md shows.

A launch that is not reproduced must be named below with the upstream evidence why; the escape hatches stay at
most 2 per 10 launches (pass-through variables not counted: `ascendctl.importer.hatches`).
"""

from __future__ import annotations

import pytest
from launch_corpus import NEWEST_LINES, Outcome, coverage, doc_table, not_loadable, run

# file → why upstream's own launch is not reproduced (the evidence is in the launch itself)
NOT_REPRODUCED = {
    # encoder/prefill/decode disaggregation: three processes (`--ec-transfer-config` producer, then a prefill/decode
    # pair) sharing a directory; no profile section plans an encoder instance (docs/guides/import.md: what has no field)
    "tests/e2e/weekly/single_node/configs/Qwen2.5-VL-7B-Instruct-EPD.yaml": "encoder disaggregation",
    "tests/e2e/nightly/single_node/models/configs/Qwen2.5-VL-7B-Instruct-EPD.yaml": "encoder disaggregation",
    # the decode scripts' `kv_connector_extra_config.decode` says DP 8 × TP 4, their own layout is 32 ranks of TP 1:
    # the plan derives the sizes from the layout
    "tests/e2e/weekly/multi_node/external_dp/config/DeepSeek_V3.2T_MTP3_PD.yaml": "connector sizes contradict layout",
    # node 1 of the prefill instance passes another `--additional-config` (no `enable_flashcomm1`, `enable_dsa_cp`
    # false) than its head: one instance runs one configuration
    "tests/e2e/nightly/multi_node/internal_dp/config/DeepSeek-V3_2-W8A8-EP.yaml": "nodes of one instance differ",
}


@pytest.fixture(scope="module")
def outcomes() -> list[Outcome]:
    return run(NEWEST_LINES)


def test_every_launch_imports_and_is_reproduced_unless_named(outcomes: list[Outcome]) -> None:
    assert len(outcomes) > 300
    unexpected = [f"{o.tag} {o.file}: {o.state}: {o.detail[:300]}" for o in outcomes
                  if o.state != "reproduced" and o.file not in NOT_REPRODUCED]  # fmt: skip
    assert not unexpected, "\n".join(unexpected)
    assert not [o for o in outcomes if o.refused], "a plan of an upstream launch is refused"


def test_escape_hatches_stay_at_two_per_ten_launches(outcomes: list[Outcome]) -> None:
    items = sum(len(o.hatches) for o in outcomes)
    assert items * 10 <= 2 * len(outcomes), (items, len(outcomes))


def test_the_import_guide_states_this_coverage(outcomes: list[Outcome]) -> None:
    rows = coverage(outcomes, not_loadable(NEWEST_LINES))
    mine = {row.split(" | ")[0]: row for row in rows[2:-1]}  # the newest lines' rows, without the total
    page = {row.split(" | ")[0]: row for row in doc_table()}
    stale = {line: row for line, row in mine.items() if page.get(line) != row}
    assert not stale, "docs/guides/import.md launch coverage is stale: run `make corpus`"
