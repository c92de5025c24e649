"""`ascendctl schema`: the profile's JSON Schema on stdout, usable by editors."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
import yaml
from typer.testing import CliRunner

from ascendctl.cli import app
from ascendctl.schema.profile import profile_json_schema

PROFILES = sorted((Path(__file__).resolve().parents[2] / "profiles").glob("*.yaml"))
runner = CliRunner()


def schema_from_cli() -> dict[str, object]:
    result = runner.invoke(app, ["schema"])
    assert result.exit_code == 0, result.output
    assert result.stderr == ""
    data = json.loads(result.stdout)
    assert isinstance(data, dict)
    return data


def test_schema_is_the_profile_schema() -> None:
    assert schema_from_cli() == profile_json_schema()


def test_schema_is_a_valid_json_schema() -> None:
    jsonschema.Draft202012Validator.check_schema(schema_from_cli())


def test_schema_output_is_stable() -> None:
    first = runner.invoke(app, ["schema"]).stdout
    assert first == runner.invoke(app, ["schema"]).stdout
    assert first == json.dumps(profile_json_schema(), indent=2, sort_keys=True) + "\n"


@pytest.mark.parametrize("path", PROFILES, ids=lambda p: p.name)
def test_shipped_profiles_match_cli_schema(path: Path) -> None:
    jsonschema.validate(yaml.safe_load(path.read_text()), schema_from_cli())


def test_schema_rejects_unknown_keys() -> None:
    data = yaml.safe_load(PROFILES[0].read_text())
    data["model"]["quantisation"] = "w8a8"
    with pytest.raises(jsonschema.ValidationError, match="quantisation"):
        jsonschema.validate(data, schema_from_cli())


def test_schema_help() -> None:
    result = runner.invoke(app, ["schema", "--help"])
    assert result.exit_code == 0
    assert "JSON Schema" in result.stdout
