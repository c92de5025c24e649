"""The CLI process validates without third-party pydantic plugins.

pydantic asks its plugin loader for plugins each time it builds a validator (`pydantic/plugin/_schema_validator.py`
`create_schema_validator`: `from ._loader import get_plugins`). The loader (`pydantic/plugin/_loader.py`) imports
`importlib.metadata` and scans the entry points of every installed distribution for the `pydantic` group: about
15 ms of every command that validates a profile or a facts file (`plan`, in whole processes, alternating runs
with and without, on the development machine), the largest single cost after the dependencies' own import.

Those plugins are observability hooks (an installed tracing package that watches every validation). ascendctl's
validations are of its own files, and what it says about them is its own output, so the CLI process does not
load them: `disable()` (called when the app is built) registers a loader that finds none, before pydantic's own
loader is imported. pydantic documents the same choice as the environment variable `PYDANTIC_DISABLE_PLUGINS`,
which would still import the loader and which every engine process started from the CLI would inherit; the
engine processes are untouched here.

Where pydantic's loader is already imported (a test session, a host program), `disable` does nothing: pydantic
keeps asking the loader it has.
"""

from __future__ import annotations

import importlib.machinery
import sys
import types
from collections.abc import Iterable
from typing import Any, Final

# The module pydantic imports its plugin discovery from, and the one name it imports from it; tests/cli/
# test_pydantic_plugins.py reads pydantic's source to check that this is still all it asks for.
LOADER: Final = "pydantic.plugin._loader"
ASKED_FOR: Final = ("get_plugins",)


def _no_plugins() -> Iterable[Any]:
    return ()


def disable() -> bool:
    """Register the loader that finds no plugins, unless pydantic's own is already imported. True when done."""
    if LOADER in sys.modules:
        return False
    loader = types.ModuleType(
        LOADER, "pydantic's plugin loader for the ascendctl CLI: no plugins (see ascendctl.cli.pydantic_plugins)."
    )
    loader.get_plugins = _no_plugins  # type: ignore[attr-defined]
    # a spec, as every imported module has one (`importlib.util.find_spec` reads it), naming where the module is from
    loader.__spec__ = importlib.machinery.ModuleSpec(LOADER, None, origin=__name__)
    sys.modules[LOADER] = loader
    return True
