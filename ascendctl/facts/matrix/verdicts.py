"""Result types of `explain`: a `Reason` (finding + reference + level) and the `Verdict` that collects them."""

from __future__ import annotations

from dataclasses import field
from typing import Any, Literal

from ascendctl.core.findings import Clause
from ascendctl_engine.records import record

Level = Literal["ok", "warning", "error"]


@record
class Reason:
    """One finding of `explain`: what was checked, the reference behind it, and whether it blocks."""

    message: str
    reference: str
    level: Level = "ok"  # ok: a fact in favour; warning: works with caveats; error: blocks the combination
    # the constraint it is about, as a finding key below `plan.matrix` (`hardware`, `model`, `quantization`,
    # `combination.<atoms>`, ...): the id a profile's `allow` names to accept it
    constraint: str = "support"
    # an error's clause of the refusal policy (docs/refusal-policy.md): `explain` lowers an error without one to a
    # warning, and one a launch upstream runs at that tag contradicts
    clause: Clause | None = None

    @property
    def finding_id(self) -> str:
        return f"plan.matrix.{self.constraint}"

    def to_dict(self) -> dict[str, str]:
        out = {"level": self.level, "message": self.message, "reference": self.reference}
        if self.level != "ok":
            out["id"] = self.finding_id
        if self.level == "error" and self.clause is not None:
            out["clause"] = self.clause
        return out


@record
class Verdict:
    """Answer of `explain`: supported or not, with every reason (and its reference) and what to try instead."""

    supported: bool
    backend: str
    release: str
    hardware: str | None
    model: str | None  # the model family id the query resolved to
    quant: str
    reasons: list[Reason] = field(default_factory=list)
    suggestions: list[str] = field(default_factory=list)

    @property
    def problems(self) -> list[Reason]:
        return [r for r in self.reasons if r.level == "error"]

    @property
    def warnings(self) -> list[Reason]:
        return [r for r in self.reasons if r.level == "warning"]

    @property
    def headline(self) -> str:
        """The verdict in a word or three, never contradicting its own reasons: `supported`, `supported, with
        warnings` (a reason warns: experimental, untested, not verified, sources disagree) or `NOT supported`."""
        if not self.supported:
            return "NOT supported"
        return "supported, with warnings" if self.warnings else "supported"

    def to_dict(self) -> dict[str, Any]:
        return {
            "supported": self.supported,
            "headline": self.headline,
            "backend": self.backend,
            "release": self.release,
            "hardware": self.hardware,
            "model": self.model,
            "quant": self.quant,
            "reasons": [r.to_dict() for r in self.reasons],
            "suggestions": list(self.suggestions),
        }
