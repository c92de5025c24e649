"""docs/profile-reference.md is generated from the schema: it lists every field, and it is current."""

from __future__ import annotations

from pathlib import Path

from ascendctl.outputs.profile_doc import PATH, render, rows
from ascendctl.schema.profile import Profile

REPO = Path(__file__).resolve().parent.parent


def test_the_reference_is_current() -> None:
    assert (REPO / PATH).read_text(encoding="utf-8") == render(), (
        "stale: run python -m ascendctl.outputs.profile_doc --write"
    )


def test_every_field_of_every_section_is_listed_with_its_default() -> None:
    listed = {path: (kind, default) for path, kind, default, _ in rows(Profile)}
    assert listed["engine.scheduler.max_num_seqs"] == ("int (optional)", "unset")
    assert listed["server.port"][1] == "`8000`"
    assert (
        listed["engine.parallel.executor"][0] == "`mp` \\| `ray` \\| `uni`"
        or "`ray`" in listed["engine.parallel.executor"][0]
    )
    assert "network.nodes[].address" in listed and "runtime.secrets{NAME}.env" in listed
    # every leaf the schema declares appears, none invented
    assert len(listed) == len(list(rows(Profile))) and all(p.split(".")[0] in Profile.model_fields for p in listed)
