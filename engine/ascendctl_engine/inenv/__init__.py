"""Scripts that run INSIDE an engine environment's interpreter (`<env>/bin/python <script>`).

Each file here is self-contained: standard library plus the engine environment's own packages, fetched
with `importlib.import_module` (ascendctl never imports them itself). None imports `ascendctl_engine`.
`script_path(name)` gives the file to run.
"""

from __future__ import annotations

from pathlib import Path


def script_path(name: str) -> Path:
    path = Path(__file__).with_name(f"{name}.py")
    if not path.is_file() or name.startswith("_"):
        raise FileNotFoundError(f"no in-environment script named {name!r}")
    return path
