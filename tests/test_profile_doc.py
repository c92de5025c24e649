"""docs/profile-reference.md is generated from the schema: it lists every field, and it is current."""

from __future__ import annotations

from pathlib import Path

import pytest

from ascendctl.outputs import profile_doc
from ascendctl.outputs.profile_doc import PATH, main, render, rows
from ascendctl.schema.profile import Profile, profile_json_schema
from ascendctl.schema.shipped_schema import SHIPPED_SCHEMA, schema_text, shipped_schema_text

REPO = Path(__file__).resolve().parent.parent


def test_the_reference_is_current() -> None:
    assert (REPO / PATH).read_text(encoding="utf-8") == render(), (
        "stale: run python -m ascendctl.outputs.profile_doc --write"
    )


def test_the_shipped_json_schema_is_what_the_models_give() -> None:
    # `ascendctl schema` prints this file; the models are its owner
    assert shipped_schema_text() == schema_text(profile_json_schema()), (
        "stale: run python -m ascendctl.outputs.profile_doc --write"
    )


def test_check_names_each_stale_output(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(profile_doc, "PATH", tmp_path / "reference.md")
    monkeypatch.setattr(profile_doc, "SHIPPED_SCHEMA", tmp_path / "profile.schema.json")
    assert main(["--check"]) == 1
    assert capsys.readouterr().out.count("is stale") == 2
    assert main(["--write"]) == 0
    assert main(["--check"]) == 0
    (tmp_path / "profile.schema.json").write_text("{}\n", encoding="utf-8")
    assert main(["--check"]) == 1
    assert capsys.readouterr().out.strip() == f"{tmp_path / 'profile.schema.json'} is stale: run {profile_doc.COMMAND}"
    assert SHIPPED_SCHEMA.name == "profile.schema.json"


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
