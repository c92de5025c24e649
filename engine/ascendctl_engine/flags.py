"""Argv token helpers shared by the builder, the docs generator, the parser-snapshot reader and the profile
rules: the canonical spelling of a `vllm serve` flag token and the flag tokens of an argv.

It lives outside `ascendctl_engine.adapters` so a caller that only needs token spelling (the profile rules of
`ascendctl validate`) does not import the adapters package, which loads every era module and the
parser-snapshot machinery. Reading a whole argv into options (values, dotted keys, `--no-`) is
`ascendctl_engine.argv_items.parse_args`, built on these primitives.

Whether a release accepts a flag is not decided here: `acceptance.ReleaseAcceptance` asks the real-parser
snapshot of that release's vLLM pin.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

_FLAG = re.compile(r"^--?[A-Za-z]")


def canonical_flag(token: str) -> str | None:
    """The table key of an argv token: `--max_model_len=5` → `--max-model-len`,
    `--eplb-config.window_size` → `--eplb-config`, `-O3` → `-O`. None when the token is not a flag."""
    if not _FLAG.match(token):
        return None
    if token.startswith("--"):
        name = token[2:].split("=", 1)[0]
        head = name.split(".", 1)[0]
        return "--" + head.replace("_", "-")
    name = token[1:].split("=", 1)[0]
    if name.startswith("O") and (len(name) == 1 or name[1:].isdigit() or name[1] == "."):
        return "-O"
    return "-" + name.split(".", 1)[0]


def reads_as_flag(token: str) -> bool:
    """Whether an argv token is a flag (`--x`, `-tp`, `-O3`) rather than a value (`-1`, `-inf`, `{...}`)."""
    return _FLAG.match(token) is not None and not _is_number(token)


def flag_tokens(argv: Sequence[str]) -> list[str]:
    """The flag tokens of an argv (values such as `-1` or JSON strings are skipped)."""
    return [token for token in argv if reads_as_flag(token)]


def _is_number(token: str) -> bool:
    try:
        float(token)
    except ValueError:
        return False
    return True
