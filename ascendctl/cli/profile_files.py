"""Writing a profile a command made (`import`, `init`): whole or not at all."""

from __future__ import annotations

from pathlib import Path

from ascendctl.core.errors import UserInputError
from ascendctl.core.files import write_atomic


def write_profile(path: Path, text: str, option: str = "--output") -> None:
    """Write the whole profile or nothing (`core.files.write_atomic`), refused in the option's words."""
    if path.is_dir():
        raise UserInputError(f"{option} {path}: is a directory")
    try:
        write_atomic(path, text)
    except OSError as exc:
        raise UserInputError(f"{option} {path}: {exc.strerror or exc}") from None
