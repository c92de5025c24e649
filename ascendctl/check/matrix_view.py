"""The few support-matrix questions `check` asks, as pure functions over `SupportMatrix`.

Row selection for a profile's pin goes through `ascendctl.facts.matrix.release_for_pin` (the matrix's own query);
the rest (the row of an installed version, which rows fit this host) is small enough to answer here.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from ascendctl.core.errors import AscendctlError
from ascendctl.facts.matrix import RowFit, release_for_pin
from ascendctl.facts.matrix.host_match import classify_host
from ascendctl_engine.host.facts import HostFacts
from ascendctl_engine.versions import parse_or_none as parse_version

if TYPE_CHECKING:
    from ascendctl.facts.matrix.schema import Release, SupportMatrix


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
        return release_for_pin(matrix, backend, pin), None
    except (AscendctlError, LookupError, ValueError) as exc:
        return None, str(exc)


def fit_rows(matrix: SupportMatrix, facts: HostFacts, backend: str) -> list[RowFit]:
    """Every row of `backend`, newest first, as the matrix's host classification (`host_match.classify_host`, the one
    row-fit function) judges it for this host; `check` counts a row as fitting when nothing about the host itself (CANN,
    Python, hardware family) stands in the way — engine packages can be installed."""
    return classify_host(matrix, replace(facts, backend=backend)).rows  # type: ignore[arg-type]
