"""Field types that validate what a value *is* at the profile boundary, once, so no later step (a rendered
script, a unit, a manifest, an argv) has to wonder whether a string can end a line or a comment.

- `SingleLine`: no control characters (C0, DEL, C1), no Unicode line or paragraph separators, no lone
  surrogates — a name, a path, a flag value. Multi-line text is accepted only where a field says so.
- `EnvName`: a POSIX environment variable name (ASCII letters, digits, `_`; not starting with a digit).
- `IpAddress`, `BindHost` (an IP address or an RFC 1123 host name), `NicName` (Linux: 1–15 bytes, no `/`,
  no whitespace, not `.`/`..`), `DnsLabel` (RFC 1035: what a Kubernetes Service name must be).
- numbers: every float finite; counts and timeouts bounded by the widest field they reach (int32 for
  Kubernetes probe counts, a generous fixed bound for node and device counts).
- `ARGV_WORD`: marks (and checks) a value the planner may put into the engine's argv as a word of its own (a
  model source, a served name, a parser name, a path): one that starts with `-` is refused, or vLLM's parser
  would read it as an option (`--trust-remote-code` as a model source). The marker is the check: a field
  cannot be marked without being checked, and the JSON Schema carries it (`x-argv-word`), which the tests walk.
"""

import ipaddress
import re
import unicodedata
from typing import Annotated, Any

from pydantic import AfterValidator, Field, GetCoreSchemaHandler, GetJsonSchemaHandler
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import core_schema

INT32_MAX = 2**31 - 1
MAX_NODES = 1024  # generous: the largest published Ascend clusters are far smaller per deployment
MAX_DEVICES_PER_NODE = 1024  # a fixed bound where the matrix's hardware table has none (cpu, cuda)
MAX_PARALLEL = 65536
MAX_PORT = 65535  # TCP's last port: what a profile writes and what a plan derives from it
MAX_TEXT = 4096  # a single-line value longer than this is not a name or a path
# Timeouts: Kubernetes probes count ready_timeout / period in an int32, terminationGracePeriodSeconds is the
# drain + 30 s, and a sleep of more than a year is a typo; one bound serves them all.
MAX_TIMEOUT_S = 366 * 24 * 3600


def _single_line(value: str) -> str:
    for ch in value:
        cat = unicodedata.category(ch)
        # Cc: C0/C1 controls and DEL; Zl/Zp: U+2028/U+2029 (line breaks to YAML and to many editors);
        # Cs: a lone surrogate cannot be encoded as UTF-8 (it would crash any writer).
        if cat in ("Cc", "Zl", "Zp", "Cs"):
            raise ValueError(f"must be one line of text: contains {_describe(ch)}")
    return value


def _describe(ch: str) -> str:
    names = {"\n": "a newline", "\r": "a carriage return", "\t": "a tab", "\x00": "a NUL byte"}
    return names.get(ch, f"the control character U+{ord(ch):04X}")


_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _env_name(value: str) -> str:
    # The value is not echoed: a key pasted where a variable *name* belongs must not be printed back.
    if not _ENV_NAME.match(value):
        raise ValueError("not a valid environment variable name (ASCII letters, digits, _; not a digit first)")
    return value


def is_ip_address(text: str) -> bool:
    """An IPv4 or IPv6 address, as `ipaddress` reads one."""
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


def _ip_address(value: str) -> str:
    if not is_ip_address(value):
        raise ValueError(f"{value!r} is not an IPv4 or IPv6 address")
    return value


_HOST_LABEL = re.compile(r"^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?$")


def _bind_host(value: str) -> str:
    if is_ip_address(value):
        return value
    labels = value.rstrip(".").split(".")
    if len(value) > 253 or not all(_HOST_LABEL.match(label) for label in labels):
        raise ValueError(f"{value!r} is neither an IP address nor a host name (RFC 1123)")
    return value


def _nic_name(value: str) -> str:
    # Linux `dev_valid_name`: at most IFNAMSIZ-1 = 15 bytes, no '/', no whitespace, not "." or "..".
    raw = value.encode("utf-8", "surrogatepass")
    if not 1 <= len(raw) <= 15 or value in (".", "..") or "/" in value or any(c.isspace() for c in value):
        raise ValueError(f"{value!r} is not a network interface name (1-15 bytes, no '/', no whitespace)")
    return _single_line(value)


def _not_an_option(value: str) -> str:
    # The value is not echoed: it is refused for what it would do (`-x`), and may be anything pasted here.
    if value.startswith("-"):
        raise ValueError("must not start with `-`: it is passed to the engine as an argument of its own, which vLLM's "
                         "parser would read as an option")  # fmt: skip
    return value


# The JSON Schema keyword that marks an argv word (`ascendctl schema` prints it; tests find the fields by it).
ARGV_WORD_KEY = "x-argv-word"


class ArgvWordMarker:
    """`Annotated[str, ARGV_WORD]`: the value may become one word of the engine's argv, so it must not read as an
    option. Validates (after the type's own checks) and marks the JSON Schema, in one object."""

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
        return core_schema.no_info_after_validator_function(_not_an_option, handler(source))

    def __get_pydantic_json_schema__(
        self, schema: core_schema.CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        json_schema = handler.resolve_ref_schema(handler(schema))
        json_schema[ARGV_WORD_KEY] = True
        return json_schema


ARGV_WORD = ArgvWordMarker()

SingleLine = Annotated[str, Field(max_length=MAX_TEXT), AfterValidator(_single_line)]
NonEmptyLine = Annotated[str, Field(min_length=1, max_length=MAX_TEXT), AfterValidator(_single_line)]
# One line that may become a word of the engine's argv: a name or a path that must not read as an option.
ArgvLine = Annotated[NonEmptyLine, ARGV_WORD]
EnvName = Annotated[str, AfterValidator(_env_name)]
IpAddress = Annotated[str, AfterValidator(_ip_address)]
BindHost = Annotated[str, Field(min_length=1), AfterValidator(_bind_host), ARGV_WORD]  # `--host HOST`
NicName = Annotated[str, AfterValidator(_nic_name)]
# A model hub id `ORG/NAME` (Hugging Face and ModelScope alike): what `model.source` names after `hf:` / `modelscope:`
# and what the model caches are keyed by (`ascendctl.facts.model_inspect.locate_model_dir`).
HUB_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*$")
# RFC 1035 label: a Kubernetes Service (and every object ascendctl renders) can be named after it.
DnsLabel = Annotated[str, Field(pattern=r"^[a-z]([a-z0-9-]{0,61}[a-z0-9])?$")]
FiniteFloat = Annotated[float, Field(allow_inf_nan=False)]
