"""The one `--facts FILE` reader (`plan`, `serve --dry-run`, `matrix --here`): a bounded read of the `host`
object of `ascendctl check --json` (or the whole report holding it) into the one host-facts model,
`ascendctl_engine.host.facts.HostFacts`. Bad input is a one-line `UserInputError` naming the file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, get_args

if TYPE_CHECKING:
    from ascendctl_engine.host.facts import HostFacts

MAX_FACTS_BYTES = 4 * 1024 * 1024


def read_facts_file(path: Path) -> HostFacts:
    from ascendctl.errors import UserInputError
    from ascendctl_engine.host.facts import HostFacts
    from ascendctl_engine.vocab import Backend

    try:
        with path.open("rb") as fh:
            raw = fh.read(MAX_FACTS_BYTES + 1)
    except OSError as exc:
        raise UserInputError(f"--facts {path}: cannot read: {exc.strerror or exc}") from None
    if len(raw) > MAX_FACTS_BYTES:
        raise UserInputError(f"--facts {path}: larger than {MAX_FACTS_BYTES // (1024 * 1024)} MiB")
    try:
        data = json.loads(raw.decode("utf-8-sig"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise UserInputError(f"--facts {path}: not valid JSON: {str(exc)[:200]}") from None
    if isinstance(data, dict) and isinstance(data.get("host"), dict):
        data = data["host"]
    if not isinstance(data, dict):
        raise UserInputError(f"--facts {path}: expected a JSON object (the `host` of `ascendctl check --json`)")
    backend = data.get("backend")
    if backend not in get_args(Backend):
        known = ", ".join(get_args(Backend))
        raise UserInputError(f"--facts {path}: backend: {backend!r} is not one of {known}")
    return HostFacts.from_dict(data)
