"""What every rule sees: the host facts, the support matrix, an optional profile and the release row.

All pure: building a context reads nothing; `effective_env` is the host's environment overlaid with the
profile's `runtime.env` (what the engine will actually get).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import field
from typing import TYPE_CHECKING, Literal

from ascendctl_engine.host.facts import HostFacts
from ascendctl_engine.records import record
from ascendctl_engine.vocab import Backend as TargetBackend

if TYPE_CHECKING:
    from ascendctl.check.fabric_view import FabricView
    from ascendctl.facts.matrix.schema import Hardware, Release, SupportMatrix
    from ascendctl.plan.lock import LockComparison
    from ascendctl.plan.types import Plan
    from ascendctl.schema.profile import Profile


ReleaseSource = Literal["profile", "installed", "none"]


@record
class CheckContext:
    facts: HostFacts
    matrix: SupportMatrix | None = None
    profile: Profile | None = None
    release: Release | None = None  # the row checked against (profile pin, else the installed engine's)
    release_source: ReleaseSource = "none"
    release_error: str | None = None  # why the profile's pin found no row
    matrix_error: str | None = None  # why the matrix could not be loaded
    profile_path: str | None = None
    extra_env: Mapping[str, str] = field(default_factory=dict)
    plan: Plan | None = None  # the profile planned against these host facts (None: no profile, or it cannot plan)
    fabric: FabricView | None = None  # `check --fabric`: this node's NPU NICs, peers and ports (`host.fabric.*`)
    lock: LockComparison | None = None  # `check --lock`: what drifted since the lock (`host.lock`)

    @property
    def env(self) -> Mapping[str, str]:
        """Host environment overlaid with the profile's `runtime.env`."""
        merged = dict(self.facts.env)
        if self.profile is not None:
            merged.update(self.profile.runtime.env)
        merged.update(self.extra_env)
        return merged

    @property
    def target(self) -> TargetBackend:
        """The backend being checked: the profile's; else the host's, or npu when CANN or vllm-ascend is
        installed on a host where no NPU was seen (a host without its driver is still meant to be an NPU
        host). A stray `torch-npu` alone does not make a CPU box an NPU host."""
        if self.profile is not None:
            return self.profile.target.backend
        if self.facts.backend != "cpu":
            return self.facts.backend
        ascend_software = self.facts.cann.version is not None or "vllm-ascend" in self.facts.packages
        return "npu" if ascend_software else "cpu"

    @property
    def family(self) -> str | None:
        """The hardware family in question: the profile's for npu profiles, else the host's."""
        if self.profile is not None and self.profile.target.hardware is not None:
            return self.profile.target.hardware
        return self.facts.family

    @property
    def hardware(self) -> Hardware | None:
        """The matrix's entry for `family` (its limits are the one statement of what the family can do)."""
        if self.matrix is None or self.family is None:
            return None
        return next((h for h in self.matrix.hardware if h.id == self.family), None)

    def pkg(self, name: str) -> str | None:
        return self.facts.packages.get(name)

    @property
    def python_ok(self) -> bool:
        return self.facts.python is not None and self.facts.python.error is None

    @property
    def graph_mode(self) -> str:
        """The graph mode the plan resolved; else the profile's intent; `auto` without a profile (vLLM captures
        graphs by default)."""
        if self.plan is not None:
            return str(self.plan.serving.settings.graph_mode.value)
        return self.profile.engine.graph.mode if self.profile is not None else "auto"
