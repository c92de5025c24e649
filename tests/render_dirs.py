"""An output directory as a render test finds and leaves it: seeded with earlier files, read back whole."""

from __future__ import annotations

from pathlib import Path


def seed(directory: Path, files: dict[str, str]) -> dict[str, str]:
    """`directory` (made if missing) holding `files`, as an earlier render left them; returns them."""
    directory.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (directory / name).write_text(text)
    return files


def contents(directory: Path) -> dict[str, str]:
    """Every file of `directory` by name, with its text."""
    return {p.name: p.read_text() for p in sorted(directory.iterdir())}
