"""What `serve` prints around a start, shared by the single-instance and the prefill/decode paths."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

if TYPE_CHECKING:
    from collections.abc import Callable

    from ascendctl_engine.phases import Diagnosis
    from ascendctl_engine.spec import EngineCommand
    from ascendctl_engine.supervisor import Failure, Supervisor, SupervisorResult


def run_supervised(supervisor: Supervisor, on_failure: Callable[[Failure], None] | None = None) -> SupervisorResult:
    """Run a supervisor to its end: a start that cannot launch, or an engine that failed, is exit 1 (after
    `on_failure` has shown it), a secret no engine can be given (a NUL byte in its key file) exit 2; a stop or an
    interruption is returned."""
    from ascendctl.core.errors import OperationFailed, UserInputError
    from ascendctl_engine.launcher import InvalidSecret, LaunchError
    from ascendctl_engine.state import AlreadyRunning

    try:
        result = supervisor.run()
    except InvalidSecret as exc:
        raise UserInputError(str(exc)) from None
    except (LaunchError, AlreadyRunning) as exc:
        raise OperationFailed(str(exc)) from None
    if result.outcome == "failed":
        assert result.failure is not None
        if on_failure is not None:
            on_failure(result.failure)
        raise OperationFailed(result.failure.reason)
    return result


def warmup_request(command: EngineCommand, endpoint: str | None) -> None:
    """One small request to `endpoint` (the command's, or the router's in front of it), its outcome said."""
    import os

    from ascendctl_engine.health import warmup
    from ascendctl_engine.launcher import resolve_secrets

    if endpoint is None:
        return
    key = resolve_secrets(command.secret_env, os.environ).get("VLLM_API_KEY")
    result = warmup(endpoint, key)
    if result.ok:
        typer.echo(f"ascendctl: warm-up request answered in {result.seconds:.2f}s (model {result.model})")
    else:
        typer.echo(f"warning: warm-up request failed: {result.error}", err=True)


def print_failure(tail: list[str], diagnoses: list[Diagnosis], log_path: Path) -> None:
    # The engine log has the profile's own secrets redacted already; a key the profile does not declare (a token in
    # an inherited variable the engine echoes) is redacted here as `diagnose` does.
    from ascendctl_engine.phases import PHASE_LABELS, UNKNOWN_PHASE
    from ascendctl_engine.redaction import redact_key_material

    if tail:
        typer.echo(f"--- last {len(tail)} log lines ({log_path}) ---", err=True)
        for line in tail:
            typer.echo(f"  {redact_key_material(line)}", err=True)
        typer.echo("---", err=True)
    for found in diagnoses:
        typer.echo(f"diagnosis [{found.key}]: {found.summary}", err=True)
        typer.echo(f"  fix: {found.fix}", err=True)
        typer.echo(f"  seen: {redact_key_material(found.line)}", err=True)
        if found.phase is not None and found.phase != UNKNOWN_PHASE:
            typer.echo(f"  failed in: {PHASE_LABELS[found.phase]}", err=True)
        typer.echo(f"  (source: {found.source})", err=True)
    if not diagnoses:
        typer.echo(f"diagnosis: no known failure pattern matched; read the full log: {log_path}", err=True)
