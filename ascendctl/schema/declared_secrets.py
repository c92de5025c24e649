"""The secret sources a validated profile declares, found by walking it (`secret_sources`): the schema is walked,
so a source field added later is found without a list to update. What the rules do with them is described in
`ascendctl.schema.secrets`."""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import BaseModel

from ascendctl_engine.records import record
from ascendctl_engine.sections.secret_source import SecretSource


@record
class DeclaredSecret:
    """One secret source a profile declares, found by walking the profile (`secret_sources`)."""

    at: tuple[str | int, ...]  # its key path, e.g. ("server", "api_key"), ("runtime", "secrets", "HF_TOKEN")
    variable: str  # the variable it sets in the engine's environment
    source: SecretSource

    @property
    def label(self) -> str:
        return ".".join(str(p) for p in self.at)


def secret_sources(model: BaseModel, at: tuple[str | int, ...] = ()) -> list[DeclaredSecret]:
    """Every `SecretSource` in a validated profile (or any section of one), wherever the schema declares one:
    the schema is walked, so a source field added later is found without a list to update. The variable it
    sets: `VLLM_API_KEY` for the API key, the key of the mapping holding it otherwise (`runtime.secrets.NAME`)."""
    found: list[DeclaredSecret] = []

    def walk(value: object, path: tuple[str | int, ...]) -> None:
        if isinstance(value, SecretSource):
            variable = value.engine_variable or str(path[-1])
            found.append(DeclaredSecret(path, variable, value))
        elif isinstance(value, BaseModel):
            for name in type(value).model_fields:
                walk(getattr(value, name), (*path, name))
        elif isinstance(value, Mapping):
            for key, item in value.items():
                walk(item, (*path, str(key)))
        elif isinstance(value, (list, tuple)):
            for i, item in enumerate(value):
                walk(item, (*path, i))

    walk(model, at)
    return found
