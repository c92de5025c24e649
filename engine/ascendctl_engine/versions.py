"""Version parsing and CANN version semantics, in one place (`ascendctl_engine.versions`; the control plane
imports it too). Everything that reads a version string — release tags, pip pins, host components — asks here.

- `parse` / `parse_or_none`: PEP 440 from a tag (`v0.13.0rc1`) or pip form (`0.13.0`), strictly or leniently;
- `strip_v`, `same_release` (public versions equal; a local label on one side only does not count), `release_tuple`
  (the first release numbers, for "built for the same torch" comparisons);
- CANN: `normalize_cann` (case/separator-insensitive spelling), `cann_release_key` (sortable: RCs and betas
  before the finals of the same line), `cann_below` (a CANN or HDK version older than a minimum; None when
  unknown) and `cann_matches` — the one rule for "does this host CANN satisfy the
  row's CANN": the same release, spelled any way (`8.3.RC2` = `8.3.rc2`), or that release plus a build suffix
  (`8.3.rc2.1`, `9.1.0-beta.1` for `9.1.0-beta`). A different patch (9.1.1 for a 9.1.0 row) is a different
  release: the matrix pins what upstream tested.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable

from packaging.version import InvalidVersion, Version

# The longest version string read (a pip version, a tag, a CANN or driver version is well under 64 characters):
# a longer one is not a version, and a 5,000-digit one would reach `int()`'s digit limit (a ValueError) in parsing.
MAX_VERSION_CHARS = 128
# one release number in a CANN key: at most 18 digits are read (more would be no CANN release)
_LEADING_NUMBER = re.compile(r"[0-9]{1,18}")


def strip_v(version: str) -> str:
    """`v0.13.0` → `0.13.0` (release tags carry a `v`, pip versions do not)."""
    text = version.strip()
    return text[1:] if text[:1] in ("v", "V") else text


@functools.lru_cache(maxsize=1024)  # versions are immutable; a plan parses the same few hundred tags repeatedly
def parse(text: str) -> Version:
    """A PEP 440 version from a tag or pip form; raises `InvalidVersion` (also for a string longer than
    `MAX_VERSION_CHARS`)."""
    if len(text) > MAX_VERSION_CHARS:
        raise InvalidVersion(f"a version string of {len(text)} characters (at most {MAX_VERSION_CHARS})")
    return Version(strip_v(text))


def parse_or_none(text: str | None) -> Version | None:
    """`parse`, or None when absent or unparseable (host components follow their own schemes: `8.3.RC2`,
    `25.5.1`, `26.0.rc1` parse; free text does not)."""
    if not text:
        return None
    try:
        return parse(text)
    except InvalidVersion:
        return None


def release_tuple(text: str | None, n: int = 3) -> tuple[int, ...] | None:
    """The first `n` release numbers (`2.7.1.post1` → (2, 7, 1), `2.7` → (2, 7, 0)); None when unparseable. For
    "built for the same torch" style comparisons that ignore post/local parts."""
    v = parse_or_none(text)
    if v is None:
        return None
    return (tuple(v.release) + (0,) * n)[:n]


def same_release(want: str | None, have: str | None) -> bool:
    """Whether two version strings name the same release (`0.32.0+cpu` = `0.32.0`; unparseable: text equality)."""
    if want is None or have is None:
        return False
    wv, hv = parse_or_none(want), parse_or_none(have)
    if wv is None or hv is None:
        return strip_v(want).lower() == strip_v(have).lower()
    if wv.local is None or hv.local is None:
        return wv.public == hv.public
    return wv == hv


def normalize_cann(version: str) -> str:
    """Case- and separator-insensitive form for comparisons: `8.3.RC2`, `8.3.rc2` → `8.3.rc2`;
    image-tag spellings such as `9.1.0-beta.1` → `9.1.0.beta.1`."""
    return version.strip().lower().replace("-", ".").lstrip("v")


def cann_release_key(version: str) -> tuple[int, int, int, int]:
    """A sortable key (major, minor, is_final, number): RCs and betas sort before the finals of the same
    major.minor (`8.3.RC1` < `8.3.RC2` < `8.3.0` < `8.3.1`). Unparseable parts count as 0."""
    parts = normalize_cann(version).split(".")

    def num(text: str) -> int:
        digits = _LEADING_NUMBER.match(text)
        return int(digits.group(0)) if digits else 0

    major = num(parts[0]) if parts else 0
    minor = num(parts[1]) if len(parts) > 1 else 0
    third = parts[2] if len(parts) > 2 else "0"
    if third.startswith("rc"):
        return (major, minor, 0, num(third[2:]))
    if any(p.startswith(("beta", "alpha", "rc")) for p in parts[3:]):
        return (major, minor, 0, 0)
    return (major, minor, 1, num(third))


def cann_below(version: str | None, threshold: str) -> bool | None:
    """Whether a CANN or HDK (driver) version is older than `threshold`, in CANN order (RCs before the final of
    their major.minor); None when the version is unknown."""
    if not version:
        return None
    return cann_release_key(version) < cann_release_key(threshold)


def cann_matches(wanted: Iterable[str | None], have: str) -> bool:
    """Whether the host's CANN `have` is one of the `wanted` releases (see the module docstring)."""
    h = normalize_cann(have)
    for want in wanted:
        if not want:
            continue
        w = normalize_cann(want)
        if h == w or h.startswith(w + "."):
            return True
    return False
