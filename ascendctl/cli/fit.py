"""`ascendctl fit PROFILE [--facts HOSTFACTS] [--workload LOAD] [--json]`: will the profile fit its devices."""

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from ascendctl.cli.plan import (
    AllowIdsOption,
    AllowOption,
    FactsOption,
    ModelConfigOption,
    OverridesOption,
    ReleaseOption,
    build_plan,
)

if TYPE_CHECKING:
    from ascendctl.plan.workload import Workload


def fit(
    profile: Annotated[Path, typer.Argument(help="Profile YAML file.", show_default=False)],
    overrides: OverridesOption = None,
    release: ReleaseOption = None,
    allow: AllowIdsOption = None,
    allow_unsupported: AllowOption = False,
    facts: FactsOption = None,
    model_config: ModelConfigOption = None,
    workload: Annotated[
        str | None,
        typer.Option(
            "--workload",
            help="Also judge this load: NAME, INPUT:OUTPUT:CONCURRENCY (e.g. 2k:256:16) or a FILE; does the KV "
            "cache hold it at once without preemption, and with how much headroom.",
            show_default=False,
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the estimate as JSON (a stable contract).")] = False,
) -> None:
    """Estimate per-device memory, KV tokens and concurrency; exit 1 when the profile does not fit."""
    import json

    from ascendctl.core.errors import EXIT_FAILED, OperationFailed
    from ascendctl.plan.fit.estimate import with_workload
    from ascendctl.plan.fit.report import render_fit

    load = _workload(workload)

    plan = build_plan(
        profile,
        overrides or [],
        release=release,
        allow=allow,
        allow_unsupported=allow_unsupported,
        facts=facts,
        model_config=model_config,
    )
    # One fit per role: the instances of a role group are planned from the same profile, so they fit alike.
    first = {i.role: i for i in reversed(plan.instances)}
    chosen = [i for i in plan.instances if first[i.role] is i]
    fits = [(i.role if plan.disaggregated else plan.deployment.name, i.fit, i.fit_error) for i in chosen]
    missing = [f"{name}: {error}" if plan.disaggregated else str(error) for name, fit, error in fits if fit is None]
    if missing:
        raise OperationFailed(f"cannot estimate the fit: {'; '.join(missing)}")
    results = [(name, with_workload(fit, load)) for name, fit, _ in fits if fit is not None]
    if as_json:
        if plan.disaggregated:
            typer.echo(json.dumps({name: fit.to_json() for name, fit in results}, indent=2))
        else:
            typer.echo(json.dumps(results[0][1].to_json(), indent=2))
    else:
        lines: list[str] = []
        for name, fit in results:
            lines += [*([""] if lines else []), *render_fit(fit, name)]
        typer.echo("\n".join(lines))
    if any(fit.verdict == "does-not-fit" for _, fit in results):
        raise typer.Exit(EXIT_FAILED)


def _workload(text: str | None) -> "Workload | None":
    """`--workload`'s load (UserInputError, exit 2, for one that does not parse)."""
    from ascendctl.plan.workload import parse_workload

    return parse_workload(text) if text else None
