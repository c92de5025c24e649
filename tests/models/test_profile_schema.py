"""The profile schema: strict base model, a description on every field (walked in the JSON Schema)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pydantic
import pytest
import yaml

from ascendctl.schema.profile import API_VERSION, Profile, profile_json_schema
from ascendctl_engine.sections.base import LenientModel, StrictModel

PROFILES = sorted((Path(__file__).resolve().parents[2] / "profiles").glob("*.yaml"))


def properties(node: Any, where: str = "#") -> Iterator[tuple[str, str, dict[str, Any]]]:
    """Every (location, property name, property schema) of every object anywhere in the schema."""
    if isinstance(node, dict):
        props = node.get("properties")
        if isinstance(props, dict):
            for name, schema in props.items():
                yield where, name, schema
        for key, child in node.items():
            yield from properties(child, f"{where}/{key}")
    elif isinstance(node, list):
        for index, child in enumerate(node):
            yield from properties(child, f"{where}/{index}")


def test_every_property_has_a_description() -> None:
    schema = profile_json_schema()
    found = list(properties(schema))
    missing = [f"{where}.{name}" for where, name, prop in found if not str(prop.get("description", "")).strip()]
    assert missing == []
    # the walk really reached the nested definitions, not only the top level
    assert any(where.startswith("#/$defs/ApiKeySource") for where, _, _ in found)
    assert len({where for where, _, _ in found}) >= 15
    assert len(found) >= 80


def test_walker_notices_a_missing_description() -> None:
    class Undocumented(StrictModel):
        documented: int = pydantic.Field(0, description="has one")
        bare: int = 0

    names = [name for _, name, prop in properties(Undocumented.model_json_schema()) if "description" not in prop]
    assert names == ["bare"]


def test_every_model_in_the_schema_forbids_extra_keys() -> None:
    schema = profile_json_schema()
    objects = [schema, *schema["$defs"].values()]
    with_props = [o for o in objects if "properties" in o]
    assert len(with_props) >= 15
    assert all(o.get("additionalProperties") is False for o in with_props)


def test_schema_identity() -> None:
    schema = profile_json_schema()
    assert schema["$id"].endswith("profile-v1.json")
    assert schema["properties"]["apiVersion"]["const"] == API_VERSION
    assert set(schema["required"]) == {"apiVersion", "kind", "metadata", "model", "target"}


@pytest.mark.parametrize("path", PROFILES, ids=lambda p: p.name)
def test_shipped_profiles_validate_against_exported_schema(path: Path) -> None:
    # Editors use the exported schema: it must accept what the loader accepts.
    data = yaml.safe_load(path.read_text())
    jsonschema.validate(data, profile_json_schema())


def test_strict_model_forbids_extra_and_coercion() -> None:
    class M(StrictModel):
        n: int = pydantic.Field(description="n")
        x: float = pydantic.Field(0.0, description="x")

    assert M.model_validate({"n": 1, "x": 2}).x == 2.0  # int where a float is expected is fine
    with pytest.raises(pydantic.ValidationError) as exc:
        M.model_validate({"n": "1"})
    assert exc.value.errors()[0]["type"] == "int_type"
    with pytest.raises(pydantic.ValidationError) as exc:
        M.model_validate({"n": 1, "extra": True})
    assert exc.value.errors()[0]["type"] == "extra_forbidden"
    with pytest.raises(pydantic.ValidationError):
        M.model_validate({"n": 1}).n = 2  # type: ignore[misc]


def test_lenient_model_ignores_extra() -> None:
    class Facts(LenientModel):
        n: int

    assert Facts.model_validate({"n": "3", "other": 1}).n == 3


def test_profile_is_frozen() -> None:
    profile = Profile.model_validate(
        {"apiVersion": API_VERSION, "kind": "Profile", "metadata": {"name": "a"}, "model": {"source": "m"}}
        | {"target": {"backend": "cpu"}}
    )
    with pytest.raises(pydantic.ValidationError):
        profile.release = "v1"  # type: ignore[misc]
