"""The strict base for everything a user writes, and the shared vocabulary of names."""

from pydantic import BaseModel, ConfigDict


class StrictModel(BaseModel):
    """User input: unknown keys are errors, objects are frozen, and values are never coerced across types
    (strict mode: the string "8" is not an int; an int is still accepted where a float is expected)."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, validate_default=True)


class LenientModel(BaseModel):
    """Data we did not write (captured host facts, tool output): extra keys are ignored."""

    model_config = ConfigDict(extra="ignore", frozen=True)


# The literal vocabularies live in one module (`ascendctl_engine.vocab`); re-exported here for the models.
from ascendctl_engine.vocab import (  # noqa: E402
    Backend,
    DType,
    EplbMode,
    GraphMode,
    HardwareFamily,
    Quantization,
    Task,
)

__all__ = [
    "Backend",
    "DType",
    "EplbMode",
    "GraphMode",
    "HardwareFamily",
    "LenientModel",
    "Quantization",
    "StrictModel",
    "Task",
]
