"""`ascendctl fit PROFILE [--facts HOSTFACTS] [--json]`: will the profile fit its devices."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ascendctl.cli.plan import AllowIdsOption, AllowOption, FactsOption, OverridesOption, ReleaseOption, build_plan


def fit(
    profile: Annotated[Path, typer.Argument(help="Profile YAML file.", show_default=False)],
    overrides: OverridesOption = None,
    release: ReleaseOption = None,
    allow: AllowIdsOption = None,
    allow_unsupported: AllowOption = False,
    facts: FactsOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the estimate as JSON (a stable contract).")] = False,
) -> None:
    """Estimate per-device memory, KV tokens and concurrency; exit 1 when the profile does not fit."""
    import json

    from ascendctl.core.errors import EXIT_FAILED, OperationFailed
    from ascendctl.plan.fit.report import render_fit

    plan = build_plan(
        profile, overrides or [], release=release, allow=allow, allow_unsupported=allow_unsupported, facts=facts
    )
    result = plan.fit
    if result is None:
        raise OperationFailed(f"cannot estimate the fit: {plan.fit_error}")
    if as_json:
        typer.echo(json.dumps(result.to_json(), indent=2))
    else:
        typer.echo("\n".join(render_fit(result, plan.deployment.name)))
    if result.verdict == "does-not-fit":
        raise typer.Exit(EXIT_FAILED)
