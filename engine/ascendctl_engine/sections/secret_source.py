"""Where a secret's value comes from (`{env: VAR}` or `{file: PATH}`); the name and value shapes it checks live in
`ascendctl_engine.secret_names`, what the rest of secret handling does is described in `ascendctl.schema.secrets`."""

from collections.abc import Mapping
from typing import Annotated, Any, ClassVar

from pydantic import BaseModel, Field, model_validator

from ascendctl_engine.secret_names import INLINE_REFUSED, POSIX_NAME_TEXT, is_posix_name
from ascendctl_engine.sections.base import StrictModel


class SecretSource(StrictModel):
    """Where one secret's value comes from at launch: exactly one of an env var or a file."""

    # The variable the engine gets the value as; None: the key of the mapping holding the source
    # (`runtime.secrets.NAME` sets NAME). `ascendctl.schema.declared_secrets.secret_sources` reads it.
    engine_variable: ClassVar[str | None] = None

    env: Annotated[
        str | None,
        Field(description="Environment variable of the shell that starts the engine holding the value."),
    ] = None
    file: Annotated[
        str | None, Field(min_length=1, description="File holding the value (first line), read at launch.")
    ] = None

    @model_validator(mode="before")
    @classmethod
    def _not_inline(cls, data: Any) -> Any:
        # Refused before the type check: pydantic's "should be a valid dictionary" error would quote the value.
        if not isinstance(data, (Mapping, BaseModel)):
            raise ValueError(INLINE_REFUSED)
        return data

    @model_validator(mode="after")
    def _exactly_one_source(self) -> "SecretSource":
        if (self.env is None) == (self.file is None):
            raise ValueError(f"set exactly one of `env` or `file` ({INLINE_REFUSED})")
        if self.env is not None and not is_posix_name(self.env):
            # The value is not quoted: a name that is not a name may be the secret itself, pasted here.
            raise ValueError(f"`env` names an environment variable ({POSIX_NAME_TEXT}); it never holds the value")
        return self
