"""Argv token helpers shared by the builder, the docs generator, the parser-snapshot reader and the profile
rules: the canonical spelling of a `vllm serve` flag token and the flag tokens of an argv.

It lives outside `ascendctl_engine.adapters` so a caller that only needs token spelling (the profile rules of
`ascendctl validate`) does not import the adapters package, which loads every era module and the
parser-snapshot machinery (`ascendctl_engine.flags` re-exports it).

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


def flag_tokens(argv: Sequence[str]) -> list[str]:
    """The flag tokens of an argv (values such as `-1` or JSON strings are skipped)."""
    out: list[str] = []
    for token in argv:
        if token.startswith("-") and len(token) > 1 and not _is_number(token):
            name = canonical_flag(token)
            if name is not None:
                out.append(token)
    return out


def flag_value(argv: Sequence[str], flag: str, *, abbreviation: int | None = None) -> str | None:
    """The value given to `flag` (`--flag V` or `--flag=V`, any spelling `canonical_flag` folds) in an argv, the
    first one; None when the flag is absent. With `abbreviation`, a unique prefix of at least that many characters
    counts too, as argparse takes it (`--kv-cache-memory` for `--kv-cache-memory-bytes`)."""
    for n, token in enumerate(argv):
        name = canonical_flag(token)
        if name is None:
            continue
        if name != flag and not (abbreviation and len(name) >= abbreviation and flag.startswith(name)):
            continue
        if "=" in token:
            return token.split("=", 1)[1]
        return argv[n + 1] if n + 1 < len(argv) else None
    return None


def _is_number(token: str) -> bool:
    try:
        float(token)
    except ValueError:
        return False
    return True
