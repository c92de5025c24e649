"""`matrix --here`: classify the release rows of the host's backend against its facts (CANN, Python, packages);
each row is judged by the one row-fit function (`row_fit.fit_row`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ascendctl.facts.matrix.release_pins import releases
from ascendctl.facts.matrix.row_fit import RowFit, _fit, _host_view
from ascendctl.facts.matrix.schema import SupportMatrix
from ascendctl_engine.host.facts import HostFacts
from ascendctl_engine.records import record


@record
class HostReport:
    """Host summary (detected hardware first) and the fit of every release row of the host's backend."""

    backend: str
    family: str | None
    soc_version: str | None
    devices: int
    driver: str | None
    cann: str | None
    python: str | None
    packages: Mapping[str, str]
    rows: list[RowFit]

    def to_dict(self) -> dict[str, Any]:
        return {
            "host": {
                "backend": self.backend,
                "hardware": {"family": self.family, "soc_version": self.soc_version, "devices": self.devices},
                "driver": self.driver,
                "cann": self.cann,
                "python": self.python,
                "packages": dict(self.packages),
            },
            "rows": [r.to_dict() for r in self.rows],
        }


def classify_host(matrix: SupportMatrix, facts: HostFacts | Mapping[str, Any]) -> HostReport:
    """Classify every release row of the host's backend as runnable / runnable-with-changes / incompatible.

    runnable: the host as it is (CANN, Python, installed engine packages) matches the row's pins.
    runnable-with-changes: it would after the listed changes (install/upgrade a package, switch CANN or Python).
    incompatible: the hardware cannot run the row at all (family not supported by the release, no NPU found).
    """
    if not isinstance(facts, HostFacts):
        facts = HostFacts.from_dict(facts)
    pkgs, family = _host_view(matrix, facts)
    rows = []
    for rel in releases(matrix, facts.backend):
        rows.append(_fit(matrix, rel, facts, family, pkgs))
    return HostReport(
        backend=facts.backend,
        family=family,
        soc_version=facts.soc_version,
        devices=len(facts.devices),
        driver=facts.driver.version,
        cann=facts.cann.version,
        python=facts.python.version if facts.python else None,
        packages=pkgs,
        rows=rows,
    )
