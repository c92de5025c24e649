"""A file written whole or not at all: a temporary file beside it, checked, then one rename."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path


def write_atomic(path: Path, text: str, check: Callable[[Path], object] | None = None) -> None:
    """Write `text` to `path` (mode 0644) through a temporary file beside it; `check(tmp)` runs before the rename
    and may raise. OSError when the temporary file cannot be made; the temporary file never outlives a failure."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent if str(path.parent) else ".")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        Path(tmp).chmod(0o644)
        if check is not None:
            check(Path(tmp))
        Path(tmp).replace(path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
