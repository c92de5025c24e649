"""The engine's own input/output types. `ascendctl` builds these; `ascendctl_engine` never imports `ascendctl`.

`EngineCommand` is the hand-off from planning to running: one process to start on one node, as an argv
list (never a shell string) plus the environment ascendctl sets on top of the inherited one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from ascendctl_engine.vocab import Role

REDACTED = "<redacted>"


@dataclass(frozen=True)
class SecretRef:
    """Where a secret comes from at launch time; its value is never stored in a plan, state or log."""

    env: str | None = None  # read from this variable of the launching environment
    file: str | None = None  # or from the first line of this file

    def describe(self) -> str:
        return f"env:{self.env}" if self.env else f"file:{self.file}"


@dataclass(frozen=True)
class EngineCommand:
    """One engine process on one node."""

    node: int  # 0 = head
    role: Role
    # argv[0] is the logical program ("vllm"); the launcher resolves it inside the engine environment.
    argv: tuple[str, ...]
    # Variables ascendctl sets (user overrides already applied); merged over the inherited environment.
    env: Mapping[str, str] = field(default_factory=dict)
    # Variables whose values are secrets, resolved only at launch (e.g. VLLM_API_KEY).
    secret_env: Mapping[str, SecretRef] = field(default_factory=dict)
    # Where readiness is polled; None for headless workers that serve no HTTP.
    health_url: str | None = None
    # Commands that must run on this node before `argv` (e.g. `ray start`), as argv lists.
    pre_commands: tuple[tuple[str, ...], ...] = ()

    def display_env(self) -> dict[str, str]:
        """The environment for printing: secrets shown as `<redacted>`."""
        shown = dict(self.env)
        shown.update(dict.fromkeys(self.secret_env, REDACTED))
        return shown
