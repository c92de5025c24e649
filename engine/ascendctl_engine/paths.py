"""Where ascendctl keeps its data: engine environments, prepared models, download caches.

Rule (first match wins):
1. `$ASCENDCTL_HOME` when set and non-empty;
2. `$XDG_DATA_HOME/ascendctl` when `XDG_DATA_HOME` is set and non-empty (XDG Base Directory spec);
3. `~/.local/share/ascendctl`.

Layout under that data dir: `engines/<backend>-<release>/` (one venv each), `models/<name>/` (prepared
models), `cache/` (downloaded files we can fetch again).

An `$ASCENDCTL_HOME` that exists and is not a directory (a file, a path through a file) is the user's to fix:
`HomeError`, which the CLI reports as one line naming the variable (exit 2), before anything is created under it.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from pathlib import Path

HOME_VAR = "ASCENDCTL_HOME"


class HomeError(Exception):
    """`$ASCENDCTL_HOME` names something that cannot be ascendctl's home directory, or a path from the environment
    or a profile cannot be expanded (one line)."""


def expand_user(text: str, source: str) -> Path:
    """`Path(text).expanduser()` for a path `source` names (an environment variable or a profile field, shown as
    `SOURCE=TEXT`; or a description with a space, shown as `SOURCE TEXT`): a `~user`
    that names no user, or a `~` with no home directory to stand for, is that input's error (`HomeError`, which the
    CLI reports in one line with exit 2), never the RuntimeError pathlib raises."""
    try:
        return Path(text).expanduser()
    except RuntimeError:
        shown = _one_line(text)
        head = shown.split("/", 1)[0]
        given = f"{source} {shown}" if " " in source else f"{source}={shown}"  # `key file ~x/k`, `HF_HOME=~x`
        raise HomeError(f"{given}: {head} names no home directory here; write the path out in full") from None


def _one_line(text: str) -> str:
    """A value as an error shows it: as written, or quoted with escapes when it holds what would break the line."""
    return text if text.isprintable() else repr(text)


def user_home(environ: Mapping[str, str] | None = None) -> Path:
    """The user's home directory: `$HOME` when set (it must be absolute: a relative one would put ascendctl's data
    under whatever directory a command runs in), else the password database's entry; `HomeError` otherwise."""
    env = os.environ if environ is None else environ
    text = env.get("HOME", "")
    if text:
        if not text.startswith("/"):
            raise HomeError(f"HOME={_one_line(text)}: not an absolute path; set HOME to your home directory")
        return Path(text)
    try:
        return Path.home()
    except RuntimeError:
        raise HomeError("HOME is unset and the password database names no home for this user; set HOME") from None


def home_dir(environ: Mapping[str, str] | None = None) -> Path | None:
    """`$ASCENDCTL_HOME` (`~` expanded) when set and non-empty; raises `HomeError` when it exists and is not a
    directory. A missing one is fine: it is created when something is first written under it."""
    env = os.environ if environ is None else environ
    home = env.get(HOME_VAR, "").strip()
    if not home:
        return None
    path = expand_user(home, HOME_VAR)
    fix = f"point {HOME_VAR} at a directory, or unset it"
    home = _one_line(home)
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        return path
    except NotADirectoryError:
        raise HomeError(f"{HOME_VAR}={home}: a folder on that path is a file; {fix}") from None
    except (OSError, ValueError) as exc:  # ValueError: a NUL byte in the path
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else "not a usable path"
        raise HomeError(f"{HOME_VAR}={home} cannot be used: {reason}; {fix}") from None
    if not stat.S_ISDIR(mode):
        raise HomeError(f"{HOME_VAR}={home} is a file, not a directory; {fix}")
    return path


def data_dir(environ: Mapping[str, str] | None = None) -> Path:
    """ascendctl's data dir for this environment (not created here)."""
    env = os.environ if environ is None else environ
    home = home_dir(env)
    if home is not None:
        return home
    xdg = env.get("XDG_DATA_HOME", "").strip()
    if xdg:
        return expand_user(xdg, "XDG_DATA_HOME") / "ascendctl"
    return user_home(env) / ".local" / "share" / "ascendctl"


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
