"""Where ascendctl keeps its data: engine environments, prepared models, download caches.

Rule (first match wins):
1. `$ASCENDCTL_HOME` when set and non-empty;
2. `$XDG_DATA_HOME/ascendctl` when `XDG_DATA_HOME` is set and non-empty (XDG Base Directory spec);
3. `~/.local/share/ascendctl`.

Layout under that data dir: `engines/<backend>-<release>/` (one venv each), `models/<name>/` (prepared
models), `cache/` (downloaded files we can fetch again).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

HOME_VAR = "ASCENDCTL_HOME"


def data_dir(environ: Mapping[str, str] | None = None) -> Path:
    """ascendctl's data dir for this environment (not created here)."""
    env = os.environ if environ is None else environ
    home = env.get(HOME_VAR, "").strip()
    if home:
        return Path(home).expanduser()
    xdg = env.get("XDG_DATA_HOME", "").strip()
    if xdg:
        return Path(xdg).expanduser() / "ascendctl"
    return Path.home() / ".local" / "share" / "ascendctl"


def engines_dir(root: Path | None = None) -> Path:
    return (root or data_dir()) / "engines"


def models_dir(root: Path | None = None) -> Path:
    return (root or data_dir()) / "models"


def cache_dir(root: Path | None = None) -> Path:
    return (root or data_dir()) / "cache"


def kv_shared_dir(deployment: str, root: Path | None = None) -> Path:
    """Where a prefill/decode deployment's shared-storage connector passes KV blocks (`disaggregation.connector:
    shared-storage` without a `shared_storage_path`)."""
    return (root or data_dir()) / "kv-shared" / deployment
