"""Where a package's checked-in data files are.

ascendctl and its engine package are installed as files (a wheel or an editable install, never imported from a
zip archive), so a package's data lies in the package's directory: what `importlib.resources.files` answers for
such a package too. Importing `importlib.resources` (which brings `tempfile` and `zipfile`) cost every command
some 3 ms of start-up for that answer.
"""

from __future__ import annotations

import importlib
from pathlib import Path


def package_dir(package: str) -> Path:
    """The directory of the regular package `package` (imported if it is not yet); its data files lie under it."""
    origin = importlib.import_module(package).__file__
    if origin is None:  # a namespace package has no one directory
        raise LookupError(f"{package} is not a regular package: its data has no one directory")
    return Path(origin).parent
