"""The few support-matrix questions `check` asks, as pure functions over `SupportMatrix`.

Row selection for a profile's pin goes through `ascendctl.matrix.release_for_pin` (the matrix's own query);
the rest (the row of an installed version, which rows fit this host) is small enough to answer here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from packaging.specifiers import InvalidSpecifier, SpecifierSet

from ascendctl_engine.host.facts import HostFacts
from ascendctl_engine.versions import cann_matches
from ascendctl_engine.versions import parse_or_none as parse_version

if TYPE_CHECKING:
    from ascendctl.models.matrix import Release, SupportMatrix


def row_for_version(matrix: SupportMatrix, backend: str, version: str) -> Release | None:
    """The row of `backend` whose version equals `version` (tag or pip form; `0.32.0+cpu` matches 0.32.0)."""
    want = parse_version(version.split("+")[0]) if "+" in version else parse_version(version)
    if want is None:
        return None
    for row in matrix.releases:
        if row.backend == backend and parse_version(row.version) == want:
            return row
    return None


def select_release(matrix: SupportMatrix, backend: str, pin: str) -> tuple[Release | None, str | None]:
    """(row, None) for a profile's `release` pin, or (None, why) when the matrix has no such row."""
    try:
        from ascendctl import matrix as matrix_queries
    except ImportError:  # the query module is optional here: answer the two pin forms directly
        return _select_release_fallback(matrix, backend, pin)
    from ascendctl.errors import AscendctlError

    try:
        return matrix_queries.release_for_pin(matrix, backend, pin), None
    except (AscendctlError, LookupError, ValueError) as exc:
        return None, str(exc)


def _select_release_fallback(matrix: SupportMatrix, backend: str, pin: str) -> tuple[Release | None, str | None]:
    rows = [r for r in matrix.releases if r.backend == backend]
    if pin == "latest-stable":
        finals = [r for r in rows if r.status == "final"]
        if finals:
            return max(finals, key=lambda r: r.key), None
        return None, f"no final {backend} release in the support matrix"
    row = row_for_version(matrix, backend, pin)
    if row is None:
        return None, f"no {backend} release {pin!r} in the support matrix"
    return row, None


@dataclass(frozen=True)
class RowFit:
    row: Release
    problems: tuple[str, ...]  # empty: the row can run here as the host is

    @property
    def runnable(self) -> bool:
        return not self.problems


def _python_fits(spec: str, version: str | None) -> bool | None:
    if version is None:
        return None
    try:
        return SpecifierSet(spec).contains(version, prereleases=True)
    except InvalidSpecifier:
        return None


def fit_rows(matrix: SupportMatrix, facts: HostFacts, backend: str) -> list[RowFit]:
    """Every row of `backend`, newest first, with what would stop it from running on this host:
    the engine Python outside the row's range, CANN of another version, a family the row does not support."""
    from ascendctl.models.matrix import in_range

    py = facts.python.version if facts.python and not facts.python.error else None
    hardware = {h.id: h for h in matrix.hardware}
    out: list[RowFit] = []
    for row in matrix.releases:
        if row.backend != backend:
            continue
        problems: list[str] = []
        if _python_fits(row.python, py) is False:
            problems.append(f"Python {py} not in {row.python}")
        if backend == "npu":
            cann = facts.cann.version
            if cann and row.cann and not cann_matches((row.cann, row.cann_alt), cann):
                problems.append(f"needs CANN {row.cann}, host has {cann}")
            fam = facts.family
            if fam is not None and fam in hardware and not in_range(hardware[fam].releases, row.version):
                problems.append(f"{fam} not supported before {hardware[fam].first_release}")
        out.append(RowFit(row, tuple(problems)))
    out.sort(key=lambda f: f.row.key, reverse=True)
    return out
