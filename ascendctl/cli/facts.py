"""The one `--facts FILE` reader (`plan`, `serve --dry-run`, `matrix --here`): a bounded read of the `host`
object of `ascendctl check --json` (or the whole report holding it) into the one host-facts model,
`ascendctl_engine.host.facts.HostFacts`. Bad input is a one-line `UserInputError` naming the file."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, get_args

if TYPE_CHECKING:
    from ascendctl_engine.host.facts import HostFacts

MAX_FACTS_BYTES = 4 * 1024 * 1024


def read_facts_file(path: Path) -> HostFacts:
    from ascendctl.core.errors import UserInputError
    from ascendctl_engine.host.facts import FactsError, HostFacts
    from ascendctl_engine.jsonio import JsonReadError, read_json_file
    from ascendctl_engine.vocab import Backend

    try:
        data = read_json_file(path, max_bytes=MAX_FACTS_BYTES)
    except JsonReadError as exc:
        reason = "cannot read: No such file or directory" if exc.missing else exc.reason
        raise UserInputError(f"--facts {path}: {reason}") from None
    if isinstance(data, dict) and isinstance(data.get("host"), dict):
        data = data["host"]
    if not isinstance(data, dict):
        raise UserInputError(f"--facts {path}: expected a JSON object (the `host` of `ascendctl check --json`)")
    backend = data.get("backend")
    if backend not in get_args(Backend):
        known = ", ".join(get_args(Backend))
        raise UserInputError(f"--facts {path}: backend: {backend!r} is not one of {known}")
    try:
        return HostFacts.from_dict(data)
    except FactsError as exc:  # a list given as a number, a count out of range, an overlong version
        raise UserInputError(f"--facts {path}: {exc.reason}") from None
