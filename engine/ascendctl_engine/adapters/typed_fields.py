"""Which typed profile field owns an engine spelling: a `vllm serve` flag, an `--additional-config` key path or
an environment variable. The adapter module that spells a field claims its spellings here (one owner: the
module that emits them), so `validate` and `plan` can tell an operator who wrote the spelling by hand through
`engine.extra_args`, `engine.additional_config` or `runtime.env` which field says it instead.

    claim("serving.tool_call_parser", flags=("--tool-call-parser",))
    claim("engine.ascend.flashcomm1", env=("VLLM_ASCEND_ENABLE_FLASHCOMM1",))
    claim("engine.ascend.multistream_overlap_shared_expert", keys=("multistream_overlap_shared_expert",))

Flags are canonical (`--max-model-len`); keys are dotted `--additional-config` paths; env names exact.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

Kind = Literal["flag", "key", "env"]


@dataclass(frozen=True)
class Claim:
    field: str  # the profile field, dotted (`serving.reasoning_parser`)
    kind: Kind
    spelling: str


_CLAIMS: dict[tuple[Kind, str], Claim] = {}


def claim(field: str, *, flags: Iterable[str] = (), keys: Iterable[str] = (), env: Iterable[str] = ()) -> None:
    """Record that `field` is how a profile says these spellings (called at import by the adapter modules)."""
    groups: tuple[tuple[Kind, Iterable[str]], ...] = (("flag", flags), ("key", keys), ("env", env))
    for kind, spellings in groups:
        for spelling in spellings:
            existing = _CLAIMS.get((kind, spelling))
            if existing is not None and existing.field != field:
                raise ValueError(f"{kind} {spelling!r} is claimed by {existing.field} and {field}")
            _CLAIMS[(kind, spelling)] = Claim(field, kind, spelling)


def owner(kind: Kind, spelling: str) -> Claim | None:
    """The typed field that says `spelling`, if any. A key also matches through its parents (`a.b.c` → `a.b`)."""
    _load()
    found = _CLAIMS.get((kind, spelling))
    if found is None and kind == "key":
        parts = spelling.split(".")
        for n in range(len(parts) - 1, 0, -1):
            found = _CLAIMS.get((kind, ".".join(parts[:n])))
            if found is not None:
                break
    return found


def claims() -> list[Claim]:
    _load()
    return sorted(_CLAIMS.values(), key=lambda c: (c.field, c.kind, c.spelling))


def _load() -> None:
    # The claims are made when the adapter modules are imported; importing the package registers them all.
    import ascendctl_engine.adapters  # noqa: F401
