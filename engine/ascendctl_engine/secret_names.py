"""The names and values that the secret rules read: a POSIX variable name, the API key's variable, the message
that refuses an inline secret, and the values that are switches rather than secrets.

Plain text and functions, no models: `check` on a host reads them (through `ascendctl.schema.secrets`) without
loading the profile's pydantic models; `ascendctl_engine.sections.secret_source.SecretSource` validates with them.
"""

import re

# A POSIX shell "Name" (ASCII only): renderers write it as `export NAME=` / `${NAME:?}` and cannot quote it.
POSIX_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
POSIX_NAME_TEXT = "[A-Za-z_][A-Za-z0-9_]*"

# The variable vLLM reads its API key from; the planner fills it from `server.api_key` only.
API_KEY_VAR = "VLLM_API_KEY"

INLINE_REFUSED = "secrets are never written inline: give {env: VAR} or {file: PATH}"


def is_posix_name(name: str) -> bool:
    return POSIX_NAME.fullmatch(name) is not None


# Values that switch something on or off hold no secret, whatever the name says: `HF_HUB_DISABLE_IMPLICIT_TOKEN=1`
# is a switch of huggingface_hub, not a token.
SWITCH_VALUES = frozenset({"", "0", "1", "true", "false", "yes", "no", "on", "off"})


def is_switch(value: object) -> bool:
    if isinstance(value, str):
        return value.strip().lower() in SWITCH_VALUES
    return isinstance(value, bool) or value in (0, 1)
