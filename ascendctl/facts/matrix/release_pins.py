"""Release rows: ordering, pins (`latest-stable`, `latest`, versions) and compatibility with installed pins."""

from __future__ import annotations

import difflib
from collections.abc import Sequence

from packaging.version import Version

from ascendctl.core.errors import UserInputError
from ascendctl.facts.matrix.names import _suggest
from ascendctl.facts.matrix.schema import Release, SupportMatrix, in_range
from ascendctl_engine.versions import cann_matches, same_release
from ascendctl_engine.versions import parse as parse_version
from ascendctl_engine.versions import parse_or_none as _version_or_none

LATEST_STABLE = "latest-stable"
LATEST = "latest"


def releases(matrix: SupportMatrix, backend: str | None = None) -> list[Release]:
    """Release rows (of one backend, or all: npu, then cpu, then cuda), newest version first."""
    if backend is not None:
        _check_backend(backend)
    rows = sorted(
        (r for r in matrix.releases if backend is None or r.backend == backend), key=lambda r: r.key, reverse=True
    )
    return sorted(rows, key=lambda r: _BACKEND_ORDER[r.backend])


_BACKEND_ORDER = {"npu": 0, "cpu": 1, "cuda": 2}


def _check_backend(backend: str) -> None:
    if backend not in _BACKEND_ORDER:
        raise UserInputError(f"unknown backend {backend!r} (known: npu, cpu, cuda)")


def latest_stable(matrix: SupportMatrix, backend: str) -> Release:
    """The newest `final` release of a backend (what `release: latest-stable` means)."""
    finals = [r for r in releases(matrix, backend) if r.status == "final"]
    if not finals:
        raise UserInputError(f"the support matrix has no final release for backend {backend}")
    return finals[0]


def release_for_pin(matrix: SupportMatrix, backend: str, pin: str) -> Release:
    """The release row a pin names, for one backend.

    `pin` is `latest-stable` (newest final release of the backend), `latest` (newest release, rc included)
    or a version, with or without a leading `v` (`v0.13.0`, `0.13.0rc1`, `0.32.0`). An unknown pin raises
    `UserInputError` naming the nearest known versions.
    """
    text = pin.strip()
    if text == LATEST_STABLE:
        return latest_stable(matrix, backend)
    rows = releases(matrix, backend)
    if text == LATEST:
        if not rows:
            raise UserInputError(f"the support matrix has no release for backend {backend}")
        return rows[0]
    wanted = _version_or_none(text)
    if wanted is not None:
        for r in rows:
            if r.key == wanted:
                return r
    hint = _nearest_versions(rows, text, wanted)
    other = [r for r in matrix.releases if r.backend != backend and wanted is not None and r.key == wanted]
    extra = f" ({other[0].version} is a {other[0].backend} release)" if other else ""
    raise UserInputError(
        f"unknown {backend} release {pin!r}{extra}{_suggest(hint)} (`ascendctl matrix releases` lists them all)"
    )


def _nearest_versions(rows: Sequence[Release], text: str, wanted: Version | None) -> list[str]:
    """Did-you-mean for a version: the rows just below and above it, then look-alike spellings."""
    names = [r.version for r in rows]
    spelled = difflib.get_close_matches(text, names, n=3, cutoff=0.6)
    if not spelled and not text.startswith("v"):
        spelled = difflib.get_close_matches("v" + text, names, n=3, cutoff=0.6)
    if wanted is None or not rows:
        return spelled
    ordered = sorted(rows, key=lambda r: r.key)
    below = [r.version for r in ordered if r.key < wanted][-1:]
    above = [r.version for r in ordered if r.key > wanted][:1]
    same_line = [v for v in spelled if parse_version(v).release[:2] == wanted.release[:2]]
    return list(dict.fromkeys([*below, *above, *same_line]))[:4]


def compatible_releases(
    matrix: SupportMatrix,
    *,
    python: str | None = None,
    cann: str | None = None,
    torch_npu: str | None = None,
    backend: str | None = None,
) -> list[Release]:
    """Rows whose pins accept the given Python version, CANN version and torch-npu version (each optional).

    Python is checked against the row's range; CANN and torch-npu must equal the row's pin (CANN also
    matches the version another upstream source names, `cann_alt`; case is ignored: 8.3.RC2 == 8.3.rc2).
    """
    out = []
    for r in releases(matrix, backend):
        if python is not None and not in_range(r.python, python):
            continue
        if cann is not None and not _cann_matches(r, cann):
            continue
        if torch_npu is not None and not same_release(r.torch_npu, torch_npu):
            continue
        out.append(r)
    return out


def _cann_matches(row: Release, have: str) -> bool:
    """The one CANN rule (`versions.cann_matches`) against the row's CANN and the version another source names."""
    return cann_matches((row.cann, *(d.value for d in row.disagreements if d.field == "cann")), have)
